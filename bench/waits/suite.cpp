// SPDX-License-Identifier: Apache-2.0
// The waits suite: what an outstanding wait costs in heddle (memory per operation, starts and
// completions per second) against one thread per wait, for timers and for idle sockets. See
// waits.hpp for the workloads. Every run happens in a child process forked for it, so that each
// starts from a clean heap (heddle's record slabs and glibc's thread stacks are reused within a
// process, which would hide the cost of a second run); the runs are still interleaved in the
// harness's shuffled order.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "probes.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "waits.hpp"

namespace heddle::bench::waits {

namespace {

enum class kind { timers, sockets };
enum class impl { heddle, threads };

constexpr const char* heddle_name = "heddle";
constexpr const char* threads_name = "thread per wait";

struct def {
  kind k;
  impl how;
  std::uint64_t n;
  std::string config() const {
    return std::string(k == kind::timers ? "timers" : "sockets") + " n=" + std::to_string(n);
  }
  std::string name() const { return how == impl::heddle ? heddle_name : threads_name; }
  std::string key() const { return name() + " " + config(); }
};

struct stat {
  double median = 0, min = 0, max = 0;
};
stat stat_of(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}

// One figure of one run.
using metric = double (*)(const run_result&);
double bytes_per_op(const run_result& r) { return r.rss_bytes / double(r.n); }
double bytes_with_kstack_per_op(const run_result& r) { return (r.rss_bytes + r.kernel_stack_bytes) / double(r.n); }
double rss_total_mib(const run_result& r) { return r.rss_total_bytes / double(1 << 20); }
double rss_peak_mib(const run_result& r) { return r.rss_peak_bytes / double(1 << 20); }
double heap_per_op(const run_result& r) { return r.heap_bytes / double(r.n); }
double slab_per_op(const run_result& r) { return r.slab_bytes / double(r.n); }
double kstack_per_op(const run_result& r) { return r.kernel_stack_bytes / double(r.n); }
double starts_per_s(const run_result& r) { return double(r.n) / r.start_s; }
double completions_per_s(const run_result& r) { return double(r.n) / r.completion_s; }
double cpu_us_per_completion(const run_result& r) { return r.completion_cpu_s * 1e6 / double(r.n); }
double idle_cpu_ms_per_s(const run_result& r) { return r.idle_cpu_s * 1e3 / r.idle_s; }
double lateness_min_ms(const run_result& r) { return r.lateness_min_s * 1e3; }
double lateness_p50_ms(const run_result& r) { return r.lateness_p50_s * 1e3; }
double lateness_max_ms(const run_result& r) { return r.lateness_max_s * 1e3; }

// The metrics of the timed runs of one variant (the warm-up run is not collected): runs[i] is the
// variant's run in round i of run_interleaved, so two variants' runs[i] were measured in the same round.
struct collected {
  int calls = 0;
  std::vector<run_result> runs;

  stat of(metric f) const {
    std::vector<double> v;
    for (auto& r : runs) v.push_back(f(r));
    return stat_of(v);
  }
  // f's median over the rounds with its 95 % interval (harness.hpp: estimate).
  estimate figure(metric f) const {
    std::vector<double> v;
    for (auto& r : runs) v.push_back(f(r));
    return median_with_interval(std::move(v));
  }
  stat bytes_per_op() const { return of(waits::bytes_per_op); }
  stat rss_total_mib() const { return of(waits::rss_total_mib); }
  stat rss_peak_mib() const { return of(waits::rss_peak_mib); }
  stat heap_per_op() const { return of(waits::heap_per_op); }
  stat slab_per_op() const { return of(waits::slab_per_op); }
  stat kstack_per_op() const { return of(waits::kstack_per_op); }
  stat starts_per_s() const { return of(waits::starts_per_s); }
  stat completions_per_s() const { return of(waits::completions_per_s); }
  stat cpu_us_per_completion() const { return of(waits::cpu_us_per_completion); }
  stat idle_cpu_ms_per_s() const { return of(waits::idle_cpu_ms_per_s); }
  stat lateness_min_ms() const { return of(waits::lateness_min_ms); }
  stat lateness_p50_ms() const { return of(waits::lateness_p50_ms); }
  stat lateness_max_ms() const { return of(waits::lateness_max_ms); }
  int late_memory_reads() const {
    int c = 0;
    for (auto& r : runs) c += !r.measured_before_due;
    return c;
  }
};

// fa(a's run) / fb(b's run) of the same round, for every round: the median with its 95 % interval.
// a and b must be variants of the same run_interleaved call (std::logic_error otherwise).
estimate paired_runs(const collected& a, metric fa, const collected& b, metric fb) {
  if (a.runs.size() != b.runs.size() || a.runs.empty())
    throw std::logic_error("heddle-bench: waits: two variants were not measured in the same rounds");
  std::vector<double> per_round(a.runs.size());
  for (std::size_t i = 0; i < per_round.size(); ++i) per_round[i] = fa(a.runs[i]) / fb(b.runs[i]);
  return median_with_interval(std::move(per_round));
}

std::string cell(const stat& s) { return si(s.median) + " (" + si(s.min) + "–" + si(s.max) + ")"; }
std::string fixed(double x, int decimals) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", decimals, x);
  return b;
}
nlohmann::json stat_json(const stat& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

void run(const options& opt, nlohmann::json& report) {
  const unsigned workers = headline_threads(opt.threads_or({2}));
  const std::uint64_t timers_n = opt.pick<std::uint64_t>(2'000, 100'000, 100'000, 1'000'000);
  const std::uint64_t timers_threads_wanted = opt.pick<std::uint64_t>(200, 2'000, 10'000, 10'000);
  std::string thread_bound;
  const std::uint64_t timers_threads_n = threads_that_fit(timers_threads_wanted, thread_bound);
  const std::uint64_t sockets_wanted = opt.pick<std::uint64_t>(500, 10'000, 10'000, 100'000);
  const std::uint64_t sockets_threads_wanted = opt.pick<std::uint64_t>(100, 2'000, 10'000, 10'000);
  // Two descriptors per socketpair: where RLIMIT_NOFILE cannot be raised far enough (no
  // CAP_SYS_RESOURCE), as many pairs as fit.
  const std::uint64_t sockets_n = socketpairs_that_fit(sockets_wanted);
  const std::uint64_t sockets_threads_n = std::min<std::uint64_t>({sockets_threads_wanted, sockets_n,
                                                                   timers_threads_n});
  if (sockets_n < 2)
    throw std::runtime_error("waits: RLIMIT_NOFILE leaves room for " + std::to_string(sockets_n) + " socketpairs");
  if (timers_threads_n < 2)
    throw std::runtime_error("waits: no room for the thread-per-wait baseline: " + thread_bound);
  const double idle_s = opt.pick(0.05, 0.25, 1.0, 1.0);
  // The deadline of every timer is this long after the first start: long enough for every start
  // (and the memory reading after them) to come first on a busy 2-core machine. A run that read
  // its memory after the deadline is marked in the table.
  auto lead_s = [](impl how, std::uint64_t n) {
    return how == impl::heddle ? 0.05 + 6e-6 * double(n) : 0.1 + 250e-6 * double(n);
  };
  const double wait_timeout_s = 60;

  std::printf("## waits: outstanding timers and idle sockets on %u heddle workers against one thread per wait "
              "(%zu KiB stacks); %d interleaved repetitions after a warm-up, each run in a child process forked "
              "for it %s\n\n",
              workers, thread_stack_bytes / 1024, opt.reps, opt.scale_name());

  if (sockets_n < sockets_wanted) {
    rlimit l{};
    getrlimit(RLIMIT_NOFILE, &l);
    std::printf("Sockets: %llu socketpairs instead of %llu: RLIMIT_NOFILE's hard limit here is %llu and this process "
                "may not raise it (no CAP_SYS_RESOURCE); each pair takes two descriptors.\n\n",
                (unsigned long long)sockets_n, (unsigned long long)sockets_wanted, (unsigned long long)l.rlim_max);
  }

  if (timers_threads_n < timers_threads_wanted)
    std::printf("Thread per wait: %llu threads instead of %llu (%s).\n\n", (unsigned long long)timers_threads_n,
                (unsigned long long)timers_threads_wanted, thread_bound.c_str());

  std::vector<def> defs;
  for (auto [k, n, nb] : {std::tuple{kind::timers, timers_n, timers_threads_n},
                          std::tuple{kind::sockets, sockets_n, sockets_threads_n}}) {
    defs.push_back({k, impl::heddle, n});
    if (nb != n) defs.push_back({k, impl::heddle, nb});
    defs.push_back({k, impl::threads, nb});
  }

  std::map<std::string, collected> col;
  std::vector<variant> vs;
  for (const def& d : defs) {
    collected* c = &col[d.key()];
    const unsigned shown_threads = d.how == impl::heddle ? workers : unsigned(d.n);
    vs.push_back({d.name(), shown_threads, d.config(), [d, c, workers, idle_s, lead_s, wait_timeout_s] {
                    std::function<run_result()> f;
                    double budget = wait_timeout_s + 60;
                    if (d.k == kind::timers) {
                      const timer_params p{d.n, workers, lead_s(d.how, d.n), wait_timeout_s};
                      budget += p.lead_s;
                      f = [p, how = d.how] { return how == impl::heddle ? timers_heddle(p) : timers_threads(p); };
                    } else {
                      const socket_params p{d.n, workers, idle_s, wait_timeout_s};
                      budget += p.idle_s;
                      f = [p, how = d.how] { return how == impl::heddle ? sockets_heddle(p) : sockets_threads(p); };
                    }
                    const run_result r = in_child(f, budget, d.key());
                    if (c->calls++ > 0) c->runs.push_back(r);
                    return r.completion_s;
                  }});
  }
  const auto rs = run_interleaved(vs, opt.reps);

  nlohmann::json metrics = nlohmann::json::array();
  for (const def& d : defs) {
    const collected& c = col[d.key()];
    nlohmann::json samples = nlohmann::json::array();
    for (auto& r : c.runs)
      samples.push_back({{"start_s", r.start_s},
                         {"rss_bytes", r.rss_bytes},
                         {"rss_total_bytes", r.rss_total_bytes},
                         {"rss_peak_bytes", r.rss_peak_bytes},
                         {"heap_bytes", r.heap_bytes},
                         {"slab_bytes", r.slab_bytes},
                         {"kernel_stack_bytes", r.kernel_stack_bytes},
                         {"completion_s", r.completion_s},
                         {"completion_cpu_s", r.completion_cpu_s},
                         {"idle_s", r.idle_s},
                         {"idle_cpu_s", r.idle_cpu_s},
                         {"lateness_min_s", r.lateness_min_s},
                         {"lateness_p50_s", r.lateness_p50_s},
                         {"lateness_max_s", r.lateness_max_s},
                         {"measured_before_due", r.measured_before_due}});
    nlohmann::json m{{"variant", d.name()},
                     {"wait", d.k == kind::timers ? "timer" : "socket"},
                     {"n", d.n},
                     {"workers", d.how == impl::heddle ? workers : 0},
                     {"rss_bytes_per_op", stat_json(c.bytes_per_op())},
                     {"rss_total_mib", stat_json(c.rss_total_mib())},
                     {"rss_peak_mib", stat_json(c.rss_peak_mib())},
                     {"heap_bytes_per_op", stat_json(c.heap_per_op())},
                     {"slab_bytes_per_op", stat_json(c.slab_per_op())},
                     {"kernel_stack_bytes_per_op", stat_json(c.kstack_per_op())},
                     {"starts_per_s", stat_json(c.starts_per_s())},
                     {"completions_per_s", stat_json(c.completions_per_s())},
                     {"cpu_us_per_completion", stat_json(c.cpu_us_per_completion())},
                     {"samples", samples}};
    if (d.k == kind::timers) {
      m["lateness_min_ms"] = stat_json(c.lateness_min_ms());
      m["lateness_p50_ms"] = stat_json(c.lateness_p50_ms());
      m["lateness_max_ms"] = stat_json(c.lateness_max_ms());
      m["lead_s"] = lead_s(d.how, d.n);
      m["memory_read_after_deadline"] = c.late_memory_reads();
    } else {
      m["idle_cpu_ms_per_s"] = stat_json(c.idle_cpu_ms_per_s());
    }
    metrics.push_back(std::move(m));
  }

  auto get = [&](kind k, impl how, std::uint64_t n) -> const collected& { return col.at(def{k, how, n}.key()); };

  // ---- timers
  std::printf("### timers: every wait due at the same instant, a lead time after the first start\n\n");
  std::printf("| variant | waits | started/s | RSS B/wait | RSS MiB, all pending | peak RSS MiB | heap B/wait | "
              "records B/wait | kernel stack B/wait | completions/s | CPU µs/completion | start − deadline: first ms | "
              "p50 ms | max ms |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  int late_reads = 0;
  for (const def& d : defs) {
    if (d.k != kind::timers) continue;
    const collected& c = get(d.k, d.how, d.n);
    late_reads += c.late_memory_reads();
    std::printf("| %s | %s | %s | %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", d.name().c_str(),
                si(double(d.n)).c_str(), si(c.starts_per_s().median).c_str(), cell(c.bytes_per_op()).c_str(),
                c.late_memory_reads() ? " *" : "", fixed(c.rss_total_mib().median, 1).c_str(),
                fixed(c.rss_peak_mib().median, 1).c_str(), si(c.heap_per_op().median).c_str(),
                d.how == impl::heddle ? si(c.slab_per_op().median).c_str() : "–", si(c.kstack_per_op().median).c_str(),
                cell(c.completions_per_s()).c_str(), fixed(c.cpu_us_per_completion().median, 2).c_str(),
                fixed(c.lateness_min_ms().median, 2).c_str(), fixed(c.lateness_p50_ms().median, 2).c_str(),
                fixed(c.lateness_max_ms().median, 2).c_str());
  }
  std::printf("\nMedians (min–max) of %d runs. started/s: waits started per second (heddle: by tasks on %u workers, "
              "%s: pthread_create until every thread is in its sleep). RSS, heap (mallinfo2) and, for heddle, its "
              "record slabs: growth from before the first start to every wait pending, per wait. RSS MiB, all "
              "pending: the whole process's RSS at that moment (the runtime and its engines, or the threads' "
              "process, and what the forked child shares with heddle-bench); peak RSS: its largest RSS over the "
              "run (VmHWM at the end). Kernel stack: "
              "/proc/meminfo KernelStack growth (machine-wide) per wait: a thread's kernel stack, not in RSS (nor "
              "is the rest of its kernel state). completions/s: waits / (deadline → last successor's end). CPU "
              "µs/completion: the process's CPU time (all threads) from every wait started to the last successor's "
              "end, per wait. start − deadline: when the successors started after the deadline (the first, the median, "
              "the last).%s\n\n",
              opt.reps, workers, threads_name,
              late_reads ? " *: in some runs the memory was read after the deadline (a busy machine): the figure may "
                           "be low."
                         : "");

  // ---- sockets
  std::printf("### sockets: one 1-byte read pending on each socketpair; after an idle window, one byte written to "
              "every pair\n\n");
  std::printf("| variant | waits | started/s | RSS B/wait | RSS MiB, all pending | peak RSS MiB | heap B/wait | "
              "records B/wait | kernel stack B/wait | idle CPU ms/s | completions/s | CPU µs/completion |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const def& d : defs) {
    if (d.k != kind::sockets) continue;
    const collected& c = get(d.k, d.how, d.n);
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", d.name().c_str(),
                si(double(d.n)).c_str(), si(c.starts_per_s().median).c_str(), cell(c.bytes_per_op()).c_str(),
                fixed(c.rss_total_mib().median, 1).c_str(), fixed(c.rss_peak_mib().median, 1).c_str(),
                si(c.heap_per_op().median).c_str(), d.how == impl::heddle ? si(c.slab_per_op().median).c_str() : "–",
                si(c.kstack_per_op().median).c_str(), fixed(c.idle_cpu_ms_per_s().median, 2).c_str(),
                cell(c.completions_per_s()).c_str(), fixed(c.cpu_us_per_completion().median, 2).c_str());
  }
  std::printf("\nAs above; the socketpairs themselves are made before the first snapshot (both variants need them). "
              "idle CPU: CPU time per second of wall time of every thread but the measuring one (which sleeps; "
              "from /proc/self/task/*/schedstat) while every read waits and nothing is written (%.2f s, from 20 ms "
              "after the last start). completions/s: reads / (first write → last successor's end), the writes (one "
              "thread, in order) included. Kernel objects (sockets, epoll entries) are not in RSS.\n\n",
              idle_s);

  // ---- ratios: absolute figures at heddle's own count, comparisons at the baseline's count
  const collected& th = get(kind::timers, impl::heddle, timers_n);
  const collected& thb = get(kind::timers, impl::heddle, timers_threads_n);
  const collected& tt = get(kind::timers, impl::threads, timers_threads_n);
  const collected& sh = get(kind::sockets, impl::heddle, sockets_n);
  const collected& shb = get(kind::sockets, impl::heddle, sockets_threads_n);
  const collected& st = get(kind::sockets, impl::threads, sockets_threads_n);
  const std::string tn = std::to_string(timers_n), tb = std::to_string(timers_threads_n);
  const std::string sn = std::to_string(sockets_n), sb = std::to_string(sockets_threads_n);
  // Absolute figures: the median over the rounds of each run's figure; comparisons: heddle's run over
  // the threads' run of the same round, the median of those per-round ratios. Both with 95 % intervals.
  auto vs_threads = [](const collected& h, const collected& t, metric f) { return paired_runs(h, f, t, f); };

  add_figure(report, "waits_timer_bytes_per_op", th.figure(bytes_per_op),
             "heddle: RSS bytes per outstanding timer, " + tn + " timers");
  add_figure(report, "waits_timer_heap_bytes_per_op", th.figure(heap_per_op),
             "heddle: malloc bytes per outstanding timer, " + tn + " timers");
  add_figure(report, "waits_timer_starts_per_s", th.figure(starts_per_s),
             "heddle: timers started per second, " + tn + " timers");
  add_figure(report, "waits_timer_completions_per_s", th.figure(completions_per_s),
             "heddle: timer successors completed per second after the deadline, " + tn + " timers");
  add_figure(report, "waits_timer_first_late_ms", th.figure(lateness_min_ms),
             "heddle: the first successor's start after the deadline, ms, " + tn + " timers due together");
  add_figure(report, "waits_timer_threads_bytes_per_op", tt.figure(bytes_per_op),
             "thread per wait: RSS bytes per sleeping thread, " + tb + " threads");
  add_figure(report, "waits_timer_threads_kernel_stack_bytes_per_op", tt.figure(kstack_per_op),
             "thread per wait: kernel stack bytes per sleeping thread (not in RSS), " + tb + " threads");
  add_figure(report, "waits_timer_threads_completions_per_s", tt.figure(completions_per_s),
             "thread per wait: sleeps completed per second after the deadline, " + tb + " threads");
  add_figure(report, "waits_timer_threads_first_late_ms", tt.figure(lateness_min_ms),
             "thread per wait: the first thread's wake-up after the deadline, ms, " + tb + " threads");
  add_figure(report, "waits_timer_bytes_per_op_vs_threads", vs_threads(thb, tt, bytes_per_op),
             "heddle RSS per timer / RSS per sleeping thread, per round, " + tb + " each (lower: heddle smaller)");
  add_figure(report, "waits_timer_bytes_per_op_vs_threads_with_kernel_stacks",
             paired_runs(thb, bytes_per_op, tt, bytes_with_kstack_per_op),
             "heddle RSS per timer / (RSS + kernel stack) per sleeping thread, per round, " + tb + " each");
  add_figure(report, "waits_timer_peak_rss_mib", th.figure(rss_peak_mib),
             "heddle: the process's peak RSS, MiB, " + tn + " timers (runtime and engines included)");
  add_figure(report, "waits_timer_threads_peak_rss_mib", tt.figure(rss_peak_mib),
             "thread per wait: the process's peak RSS, MiB, " + tb + " threads");
  add_figure(report, "waits_timer_peak_rss_vs_threads", vs_threads(thb, tt, rss_peak_mib),
             "heddle's peak RSS / the threads', per round, " + tb + " each (lower: heddle smaller)");
  add_figure(report, "waits_timer_starts_per_s_vs_threads", vs_threads(thb, tt, starts_per_s),
             "heddle starts per second / thread starts per second, per round, " + tb + " each (higher: heddle faster)");
  add_figure(report, "waits_timer_completions_per_s_vs_threads", vs_threads(thb, tt, completions_per_s),
             "heddle completions per second / threads', per round, " + tb + " each (higher: heddle faster)");

  add_figure(report, "waits_socket_bytes_per_op", sh.figure(bytes_per_op),
             "heddle: RSS bytes per pending read, " + sn + " sockets");
  add_figure(report, "waits_socket_heap_bytes_per_op", sh.figure(heap_per_op),
             "heddle: malloc bytes per pending read, " + sn + " sockets");
  add_figure(report, "waits_socket_starts_per_s", sh.figure(starts_per_s),
             "heddle: reads started per second, " + sn + " sockets");
  add_figure(report, "waits_socket_idle_cpu_ms_per_s", sh.figure(idle_cpu_ms_per_s),
             "heddle: process CPU ms per idle second with every read pending, " + sn + " sockets");
  add_figure(report, "waits_socket_completions_per_s", sh.figure(completions_per_s),
             "heddle: reads completed per second from the first write, " + sn + " sockets");
  add_figure(report, "waits_socket_threads_bytes_per_op", st.figure(bytes_per_op),
             "thread per wait: RSS bytes per blocked reader, " + sb + " sockets");
  add_figure(report, "waits_socket_threads_kernel_stack_bytes_per_op", st.figure(kstack_per_op),
             "thread per wait: kernel stack bytes per blocked reader (not in RSS), " + sb + " sockets");
  add_figure(report, "waits_socket_threads_idle_cpu_ms_per_s", st.figure(idle_cpu_ms_per_s),
             "thread per wait: process CPU ms per idle second, " + sb + " sockets");
  add_figure(report, "waits_socket_threads_completions_per_s", st.figure(completions_per_s),
             "thread per wait: reads completed per second from the first write, " + sb + " sockets");
  add_figure(report, "waits_socket_bytes_per_op_vs_threads", vs_threads(shb, st, bytes_per_op),
             "heddle RSS per pending read / RSS per blocked reader, per round, " + sb +
                 " each (lower: heddle smaller)");
  add_figure(report, "waits_socket_bytes_per_op_vs_threads_with_kernel_stacks",
             paired_runs(shb, bytes_per_op, st, bytes_with_kstack_per_op),
             "heddle RSS per pending read / (RSS + kernel stack) per blocked reader, per round, " + sb + " each");
  add_figure(report, "waits_socket_peak_rss_mib", sh.figure(rss_peak_mib),
             "heddle: the process's peak RSS, MiB, " + sn + " sockets (runtime and engines included)");
  add_figure(report, "waits_socket_threads_peak_rss_mib", st.figure(rss_peak_mib),
             "thread per wait: the process's peak RSS, MiB, " + sb + " sockets");
  add_figure(report, "waits_socket_peak_rss_vs_threads", vs_threads(shb, st, rss_peak_mib),
             "heddle's peak RSS / the threads', per round, " + sb + " each (lower: heddle smaller)");
  add_figure(report, "waits_socket_starts_per_s_vs_threads", vs_threads(shb, st, starts_per_s),
             "heddle starts per second / thread starts per second, per round, " + sb + " each (higher: heddle faster)");
  add_figure(report, "waits_socket_completions_per_s_vs_threads", vs_threads(shb, st, completions_per_s),
             "heddle completions per second / threads', per round, " + sb + " each (higher: heddle faster)");
  std::printf("\n");

  add_suite(report, "waits", rs,
            {{"reps", opt.reps},
             {"workers", workers},
             {"thread_stack_bytes", thread_stack_bytes},
             {"idle_s", idle_s},
             {"rows_are",
              "completion time per run: deadline (timers) or first write (sockets) to the last successor's end"},
             {"metrics", metrics},
             {"plot_rows", false}});
}

const registration reg{{"waits", 30,
                        "100,000 outstanding timers and 10,000 idle sockets on 2 workers: memory per wait, starts "
                        "and completions per second, against one thread per wait",
                        &run}};

}  // namespace

}  // namespace heddle::bench::waits
