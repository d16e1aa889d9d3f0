// SPDX-License-Identifier: Apache-2.0
#include "probes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace heddle::bench::waits {

namespace {

long read_long_file(const char* path) {
  std::ifstream in(path);
  long v = -1;
  in >> v;
  return v;
}

}  // namespace

std::size_t rss_bytes() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  unsigned long size = 0, resident = 0;
  if (std::sscanf(buf, "%lu %lu", &size, &resident) != 2) return 0;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::size_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    unsigned long kb = 0;
    if (std::sscanf(line.c_str(), "VmHWM: %lu kB", &kb) == 1) return kb * 1024;
  }
  return 0;
}

std::size_t heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

std::size_t kernel_stack_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    std::size_t kb = 0;
    std::string unit;
    in >> kb >> unit;
    if (key == "KernelStack:") return kb * 1024;
  }
  return 0;
}

double others_cpu_seconds() {
  const long self = static_cast<long>(gettid());
  double sum = 0;
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  char path[300], buf[128];
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.' || std::atol(e->d_name) == self) continue;
    std::snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // the thread is gone
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = 0;
    sum += double(std::strtoull(buf, nullptr, 10)) * 1e-9;
  }
  closedir(d);
  return sum;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

snapshot snapshot::take(std::size_t depot_slabs) {
  snapshot s;
  s.heap = heap_bytes();
  s.kernel_stack = kernel_stack_bytes();
  s.slabs = depot_slabs;
  s.rss = rss_bytes();
  return s;
}

void store_delta(run_result& r, const snapshot& before, const snapshot& after) {
  auto d = [](std::size_t a, std::size_t b) { return double(a) - double(b); };
  r.rss_bytes = d(after.rss, before.rss);
  r.rss_total_bytes = double(after.rss);
  r.heap_bytes = d(after.heap, before.heap);
  r.kernel_stack_bytes = d(after.kernel_stack, before.kernel_stack);
  r.slab_bytes = d(after.slabs, before.slabs) * 64 * 1024;
}

std::size_t socketpairs_that_fit(std::size_t wanted) {
  constexpr std::size_t reserve = 64;
  std::size_t open_fds = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d)) open_fds += e->d_name[0] != '.';
    closedir(d);
  }
  const std::size_t need = 2 * wanted + open_fds + reserve;
  try {
    raise_fd_limit(need);
    return wanted;
  } catch (const std::runtime_error&) {
  }
  rlimit l{};
  getrlimit(RLIMIT_NOFILE, &l);
  rlimit most{l.rlim_max, l.rlim_max};
  setrlimit(RLIMIT_NOFILE, &most);
  const std::size_t limit = l.rlim_max == RLIM_INFINITY ? need : std::size_t(l.rlim_max);
  std::size_t n = limit > open_fds + reserve ? (limit - open_fds - reserve) / 2 : 0;
  const std::size_t step = n >= 1000 ? 100 : 10;
  n = std::min(wanted, n / step * step);
  return n;
}

std::size_t threads_that_fit(std::size_t wanted, std::string& why) {
  constexpr long margin = 1000;
  long tasks = 0;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    double l1, l5, l15;
    long running = 0;
    if (std::fscanf(f, "%lf %lf %lf %ld/%ld", &l1, &l5, &l15, &running, &tasks) != 5) tasks = 0;
    std::fclose(f);
  }
  std::size_t n = wanted;
  auto bound = [&](const char* name, long limit, long used, long per_thread) {
    if (limit <= 0) return;
    const long room = (limit - used - margin) / per_thread;
    const std::size_t fit = room > 0 ? std::size_t(room) / 100 * 100 : 0;
    if (fit < n) {
      n = fit;
      why = std::string(name) + " " + std::to_string(limit) + " with " + std::to_string(used) + " in use";
    }
  };
  bound("kernel.pid_max", read_long_file("/proc/sys/kernel/pid_max"), tasks, 1);
  bound("kernel.threads-max", read_long_file("/proc/sys/kernel/threads-max"), tasks, 1);
  bound("vm.max_map_count", read_long_file("/proc/sys/vm/max_map_count"), 0, 2);
  // A pids controller on this process's cgroup ("max" reads as no limit), v2 then v1.
  for (const char* dir : {"/sys/fs/cgroup", "/sys/fs/cgroup/pids"}) {
    const long max = read_long_file((std::string(dir) + "/pids.max").c_str());
    if (max > 0) {
      bound("the cgroup's pids.max", max, read_long_file((std::string(dir) + "/pids.current").c_str()), 1);
      break;
    }
  }
  return n;
}

void raise_thread_limit() {
  rlimit l{};
  getrlimit(RLIMIT_NPROC, &l);
  rlimit want{RLIM_INFINITY, RLIM_INFINITY};
  if (setrlimit(RLIMIT_NPROC, &want) != 0) {
    want = {l.rlim_max, l.rlim_max};
    setrlimit(RLIMIT_NPROC, &want);
  }
}

thread_set::~thread_set() { join(); }

void* thread_set::main(void* arg) {
  auto* a = static_cast<start_arg*>(arg);
  a->set->body_(a->i);
  return nullptr;
}

void thread_set::reserve(std::size_t n) {
  if (args_.size() < n) args_.resize(n);
  if (threads_.size() < n) threads_.resize(n);
}

void thread_set::start(std::size_t n) {
  reserve(n);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, thread_stack_bytes);
  for (std::size_t i = 0; i < n; ++i) {
    args_[i] = {this, i};
    const int rc = pthread_create(&threads_[i], &attr, &main, &args_[i]);
    if (rc != 0) {
      pthread_attr_destroy(&attr);
      throw std::runtime_error("waits: pthread_create refused thread " + std::to_string(i) + " of " +
                               std::to_string(n) + ": " + std::strerror(rc) + " (limits: kernel.threads-max " +
                               std::to_string(read_long_file("/proc/sys/kernel/threads-max")) + ", kernel.pid_max " +
                               std::to_string(read_long_file("/proc/sys/kernel/pid_max")) + ", vm.max_map_count " +
                               std::to_string(read_long_file("/proc/sys/vm/max_map_count")) +
                               ", RLIMIT_NPROC, the cgroup's pids.max)");
    }
    ++started_;
  }
  pthread_attr_destroy(&attr);
}

void thread_set::join() {
  for (std::size_t i = 0; i < started_; ++i) pthread_join(threads_[i], nullptr);
  started_ = 0;
}

run_result in_child(const std::function<run_result()>& f, double timeout_s, const std::string& what) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "waits: pipe2");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::system_error(err, std::generic_category(), "waits: fork");
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_result r;
    try {
      r = f();
      r.rss_peak_bytes = double(peak_rss_bytes());
    } catch (const std::exception& e) {
      set_error(r, e.what());
    } catch (...) {
      set_error(r, "an exception that is not a std::exception");
    }
    const char* p = reinterpret_cast<const char*>(&r);
    std::size_t left = sizeof r;
    while (left > 0) {
      const ssize_t w = ::write(fds[1], p, left);
      if (w <= 0) _exit(3);
      p += w;
      left -= std::size_t(w);
    }
    // No destructors of what the parent made (other suites' runtimes, oneTBB's threads): just go.
    _exit(0);
  }
  ::close(fds[1]);
  run_result r;
  char* p = reinterpret_cast<char*>(&r);
  std::size_t got = 0;
  const auto deadline = clock::now() +
                        std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
  bool timed_out = false;
  while (got < sizeof r) {
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int pr = poll(&pfd, 1, int(std::min<long long>(left_ms, 1000)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    const ssize_t n = ::read(fds[0], p + got, sizeof r - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child is gone
    got += std::size_t(n);
  }
  ::close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    throw std::runtime_error("waits: " + what + ": no result after " + std::to_string(timeout_s) +
                             " s; the child process was killed");
  if (WIFSIGNALED(status))
    throw std::runtime_error("waits: " + what + ": the child process died of signal " +
                             std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")");
  if (got < sizeof r || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("waits: " + what + ": the child process exited with status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + " without a result");
  r.error[sizeof r.error - 1] = 0;
  if (r.error[0]) throw std::runtime_error("waits: " + what + ": " + r.error);
  return r;
}

std::string si(double x) {
  char b[48];
  const double a = std::fabs(x);
  if (a >= 1e9) std::snprintf(b, sizeof b, "%.2f G", x * 1e-9);
  else if (a >= 1e6) std::snprintf(b, sizeof b, "%.2f M", x * 1e-6);
  else if (a >= 1e4) std::snprintf(b, sizeof b, "%.0f k", x * 1e-3);
  else if (a >= 1e3) std::snprintf(b, sizeof b, "%.1f k", x * 1e-3);
  else if (a < 0.5) std::snprintf(b, sizeof b, "0");  // bytes per wait: machine-wide noise, not a cost
  else if (a >= 100) std::snprintf(b, sizeof b, "%.0f", x);
  else std::snprintf(b, sizeof b, "%.3g", x);
  return b;
}

void store_lateness(run_result& r, std::vector<std::int64_t> start_ns, std::int64_t deadline_ns) {
  if (start_ns.empty()) return;
  const auto mid = start_ns.begin() + std::ptrdiff_t(start_ns.size() / 2);
  std::nth_element(start_ns.begin(), mid, start_ns.end());
  r.lateness_p50_s = double(*mid - deadline_ns) * 1e-9;
  r.lateness_min_s = double(*std::min_element(start_ns.begin(), start_ns.end()) - deadline_ns) * 1e-9;
  r.lateness_max_s = double(*std::max_element(start_ns.begin(), start_ns.end()) - deadline_ns) * 1e-9;
}

void set_error(run_result& r, const std::string& message) {
  std::snprintf(r.error, sizeof r.error, "%s", message.c_str());
}

}  // namespace heddle::bench::waits
