// SPDX-License-Identifier: Apache-2.0
// Waiting for child processes through the process engine (heddle::io::wait_process): exit codes of
// /bin/true, /bin/false and `sh -c 'exit 7'`, children killed by signals, children that exited
// before the wait began, many children at once, successors with every strategy, pids that are not
// our children, the child reaped afterwards, and a runtime destroyed with waits pending.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/heddle.hpp>

#include "async_test_support.hpp"

extern char** environ;

namespace process_test {
namespace {

using namespace std::chrono_literals;
using heddle_test::scaled;
using heddle_test::watchdog;
using heddle_test::unique_fd;
using heddle_test::check_sys;
using heddle_test::describe;
using heddle_test::outcome_text;
namespace io = heddle::io;

// ---------------------------------------------------------------------------------------------
// Helpers.

struct pipe_fds {
  unique_fd r, w;
};
pipe_fds make_pipe() {
  int p[2];
  check_sys(::pipe2(p, O_CLOEXEC), "pipe2");
  return {unique_fd(p[0]), unique_fd(p[1])};
}

// A child that the test cleans up if it is still ours when the scope ends (killed and reaped).
class child {
 public:
  child() = default;
  explicit child(pid_t pid) : pid_(pid) {}
  child(child&& o) noexcept : pid_(std::exchange(o.pid_, -1)) {}
  child& operator=(child&& o) noexcept {
    if (this != &o) {
      cleanup();
      pid_ = std::exchange(o.pid_, -1);
    }
    return *this;
  }
  ~child() { cleanup(); }
  pid_t pid() const { return pid_; }

 private:
  void cleanup() {
    if (pid_ <= 0) return;
    siginfo_t info{};
    // Still our child (running, or exited and not yet reaped)? Then kill it and reap it.
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }
  pid_t pid_ = -1;
};

// posix_spawn of argv (argv[0] a path), with stdin/stdout taken from the given descriptors.
child spawn(const std::vector<std::string>& argv, int stdin_fd = -1, int stdout_fd = -1) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (stdin_fd >= 0) posix_spawn_file_actions_adddup2(&fa, stdin_fd, STDIN_FILENO);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&fa, stdout_fd, STDOUT_FILENO);
  // Default dispositions and no blocked signals in the child, whatever the test program inherited
  // (a background job ignores SIGINT, for one).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "posix_spawn " + argv[0]);
  return child(pid);
}

child sh(const std::string& script, int stdin_fd = -1, int stdout_fd = -1) {
  return spawn({"/bin/sh", "-c", script}, stdin_fd, stdout_fd);
}

// Waits (without reaping) until the child has exited: it is a zombie then.
void wait_until_exited(pid_t pid) {
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
}

// A wait status as text: "exit 7", "signal 9", or the raw number.
std::string status_text(int s) {
  if (WIFEXITED(s)) return "exit " + std::to_string(WEXITSTATUS(s));
  if (WIFSIGNALED(s)) return "signal " + std::to_string(WTERMSIG(s)) + (WCOREDUMP(s) ? " (core)" : "");
  return "status " + std::to_string(s);
}

// The status of a finished wait, as text; the outcome if it failed.
std::string waited(heddle::future<int>& f) {
  const std::string o = outcome_text(f);
  return o == "ok" ? status_text(*f) : o;
}

// True once `pid` is no longer our child (reaped).
bool reaped(pid_t pid) {
  int s;
  return ::waitpid(pid, &s, WNOHANG) < 0 && errno == ECHILD;
}

// ---------------------------------------------------------------------------------------------
// Exit statuses.

TEST(Process, ExitStatusesOfTrueFalseAndExit7) {
  watchdog dog("Process.ExitStatusesOfTrueFalseAndExit7", 60s);
  heddle::runtime rt(2);
  child t = spawn({"/bin/true"});
  child f = spawn({"/bin/false"});
  child e = sh("exit 7");
  auto wt = io::wait_process(rt, t.pid());
  auto wf = io::wait_process(rt, f.pid());
  auto we = io::wait_process(rt, e.pid());
  ASSERT_EQ(waited(wt), "exit 0");
  ASSERT_EQ(waited(wf), "exit 1");
  ASSERT_EQ(waited(we), "exit 7");
  EXPECT_TRUE(WIFEXITED(*wt));
  EXPECT_EQ(WEXITSTATUS(*we), 7);
  EXPECT_FALSE(WIFSIGNALED(*we));
  // Each child is reaped by the wait.
  EXPECT_TRUE(reaped(t.pid()));
  EXPECT_TRUE(reaped(f.pid()));
  EXPECT_TRUE(reaped(e.pid()));
}

TEST(Process, ExitCodesFrom0To255) {
  watchdog dog("Process.ExitCodesFrom0To255", 120s);
  heddle::runtime rt(2);
  std::vector<int> codes;
  for (int code = 0; code < 256; code += code < 10 ? 1 : 11) codes.push_back(code);
  codes.push_back(255);
  std::vector<child> kids;
  std::vector<heddle::future<int>> waits;
  for (int code : codes) {
    kids.push_back(sh("exit " + std::to_string(code)));
    waits.push_back(io::wait_process(rt, kids.back().pid()));
  }
  for (std::size_t i = 0; i < codes.size(); ++i) EXPECT_EQ(waited(waits[i]), "exit " + std::to_string(codes[i]));
}

TEST(Process, ForkAndExec) {
  watchdog dog("Process.ForkAndExec", 60s);
  heddle::runtime rt(2);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", "exit 42", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  child c(pid);
  auto w = io::wait_process(rt, pid);
  EXPECT_EQ(waited(w), "exit 42");
  EXPECT_TRUE(reaped(pid));
}

TEST(Process, KilledBySignals) {
  watchdog dog("Process.KilledBySignals", 60s);
  heddle::runtime rt(2);
  for (int sig : {SIGKILL, SIGTERM, SIGINT, SIGUSR1}) {
    SCOPED_TRACE("signal " + std::to_string(sig));
    child c = spawn({"/bin/sleep", "30"});
    auto w = io::wait_process(rt, c.pid());
    EXPECT_FALSE(w.is_ready());  // it sleeps for 30 s unless killed
    ASSERT_EQ(::kill(c.pid(), sig), 0);
    ASSERT_EQ(outcome_text(w), "ok");
    EXPECT_TRUE(WIFSIGNALED(*w)) << status_text(*w);
    EXPECT_EQ(WTERMSIG(*w), sig);
    EXPECT_FALSE(WIFEXITED(*w));
    EXPECT_TRUE(reaped(c.pid()));
  }
  // A child that kills itself.
  child self = sh("kill -USR2 $$; exit 3");
  auto w = io::wait_process(rt, self.pid());
  EXPECT_EQ(waited(w), "signal " + std::to_string(SIGUSR2));
}

TEST(Process, WaitIsPendingUntilTheChildExits) {
  watchdog dog("Process.WaitIsPendingUntilTheChildExits", 60s);
  heddle::runtime rt(2);
  auto in = make_pipe();
  // The child cannot exit before it reads its exit code from us.
  child c = sh("read code; exit $code", in.r.get());
  in.r.reset();
  auto w = io::wait_process(rt, c.pid());
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(w.is_ready());
  ASSERT_EQ(::write(in.w.get(), "42\n", 3), 3);
  EXPECT_EQ(waited(w), "exit 42");
}

TEST(Process, ChildThatExitedBeforeTheWait) {
  watchdog dog("Process.ChildThatExitedBeforeTheWait", 60s);
  heddle::runtime rt(2);
  child c = sh("exit 5");
  wait_until_exited(c.pid());  // a zombie now, not reaped
  auto w = io::wait_process(rt, c.pid());
  EXPECT_EQ(waited(w), "exit 5");
  EXPECT_TRUE(reaped(c.pid()));
}

// A stopped child has not exited: the wait goes on until it really ends.
TEST(Process, StoppedChildIsStillWaitedFor) {
  watchdog dog("Process.StoppedChildIsStillWaitedFor", 60s);
  heddle::runtime rt(2);
  child c = spawn({"/bin/sleep", "30"});
  auto w = io::wait_process(rt, c.pid());
  ASSERT_EQ(::kill(c.pid(), SIGSTOP), 0);
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(c.pid()), &info, WSTOPPED | WNOWAIT), 0);
  ASSERT_EQ(::kill(c.pid(), SIGCONT), 0);
  std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(w.is_ready()) << "the wait ended while the child was stopped or continued";
  ASSERT_EQ(::kill(c.pid(), SIGKILL), 0);
  EXPECT_EQ(waited(w), "signal " + std::to_string(SIGKILL));
}

// ---------------------------------------------------------------------------------------------
// Many at once, successors, and where the wait is started.

TEST(Process, ManyChildrenAtOnce) {
  watchdog dog("Process.ManyChildrenAtOnce", 120s);
  heddle::runtime rt(2);
  const int n = scaled(120, 40);
  auto in = make_pipe();
  std::vector<child> kids;
  std::vector<heddle::future<int>> waits;
  // Every child reads one line from the shared pipe before it exits with its own code: all n
  // waits are pending together until the pipe closes.
  for (int i = 0; i < n; ++i) {
    kids.push_back(sh("read line; exit " + std::to_string(i % 256), in.r.get()));
    waits.push_back(io::wait_process(rt, kids.back().pid()));
  }
  in.r.reset();
  for (auto& w : waits) EXPECT_FALSE(w.is_ready());
  in.w.reset();  // every read sees the end of the pipe
  auto all = heddle::when_all(std::move(waits));
  ASSERT_EQ(outcome_text(all), "ok");
  for (int i = 0; i < n; ++i) EXPECT_EQ(status_text((*all)[i]), "exit " + std::to_string(i % 256)) << "child " << i;
  for (auto& k : kids) EXPECT_TRUE(reaped(k.pid()));

  // A second wave that exits at once, racing the registration of its waits, mixed with kills.
  std::vector<child> wave;
  std::vector<heddle::future<int>> wave_waits;
  std::vector<std::string> expect;
  for (int i = 0; i < n; ++i) {
    switch (i % 4) {
      // Formatted by hand: a table, one row a line.
      // clang-format off
      case 0: wave.push_back(spawn({"/bin/true"})); expect.push_back("exit 0"); break;
      case 1: wave.push_back(spawn({"/bin/false"})); expect.push_back("exit 1"); break;
      case 2: wave.push_back(sh("exit 7")); expect.push_back("exit 7"); break;
      // clang-format on
      default:
        wave.push_back(spawn({"/bin/sleep", "30"}));
        expect.push_back("signal " + std::to_string(SIGKILL));
        break;
    }
    wave_waits.push_back(io::wait_process(rt, wave.back().pid()));
    if (i % 4 == 3) ::kill(wave.back().pid(), SIGKILL);
  }
  for (int i = 0; i < n; ++i) EXPECT_EQ(waited(wave_waits[i]), expect[i]) << "child " << i;
}

TEST(Process, SuccessorsWithEveryStrategy) {
  watchdog dog("Process.SuccessorsWithEveryStrategy", 60s);
  heddle::runtime rt(2);
  for (heddle::strategy s :
       {heddle::strategy::normal, heddle::strategy::express, heddle::strategy::short_task, heddle::strategy::asap}) {
    SCOPED_TRACE(heddle::to_string(s));
    auto in = make_pipe();
    child c = sh("read code; exit $code", in.r.get());
    in.r.reset();
    auto code = io::wait_process(rt, c.pid()).then(s, [](int status) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    });
    EXPECT_FALSE(code.is_ready());
    ASSERT_EQ(::write(in.w.get(), "9\n", 2), 2);
    ASSERT_EQ(outcome_text(code), "ok");
    EXPECT_EQ(*code, 9);
  }
  const auto st = rt.stats();
  for (heddle::strategy s :
       {heddle::strategy::normal, heddle::strategy::express, heddle::strategy::short_task, heddle::strategy::asap})
    EXPECT_EQ(st.latency(s).count, 1u) << heddle::to_string(s);
}

TEST(Process, WaitStartedInAWorkerTask) {
  watchdog dog("Process.WaitStartedInAWorkerTask", 60s);
  heddle::runtime rt(1);
  auto in = make_pipe();
  child c = sh("read code; exit $code", in.r.get());
  in.r.reset();
  // The only worker starts the wait (the overload without a runtime), lets another task release
  // the child, and forces the wait: it runs the releasing task or sleeps, never waits in waitid.
  auto r = rt.task([&] {
    auto w = io::wait_process(c.pid());
    auto release = heddle::task([&] { return ::write(in.w.get(), "11\n", 3); });
    const int status = *w;
    EXPECT_EQ(*release, 3);
    return status;
  });
  ASSERT_EQ(outcome_text(r), "ok");
  EXPECT_EQ(status_text(*r), "exit 11");
}

TEST(Process, DefaultRuntimeOverloadFromAPlainThread) {
  watchdog dog("Process.DefaultRuntimeOverloadFromAPlainThread", 60s);
  child c = sh("exit 13");
  auto w = io::wait_process(c.pid());
  EXPECT_EQ(waited(w), "exit 13");
}

// The child's output through the fd engine, its status through the process engine.
TEST(Process, OutputThroughAPipeAndTheExitStatus) {
  watchdog dog("Process.OutputThroughAPipeAndTheExitStatus", 60s);
  heddle::runtime rt(2);
  auto out = make_pipe();
  child c = sh("i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done; exit 3", -1, out.w.get());
  out.w.reset();
  auto status = io::wait_process(rt, c.pid());
  std::string text;
  std::string buf(4096, '\0');
  for (;;) {
    auto r = io::read(rt, out.r.get(), std::as_writable_bytes(std::span(buf.data(), buf.size())));
    const std::string o = outcome_text(r);
    if (o == "end_of_file") break;
    ASSERT_EQ(o, "ok");
    text.append(buf.data(), *r);
  }
  EXPECT_EQ(waited(status), "exit 3");
  std::string want;
  for (int i = 0; i < 2000; ++i) want += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(text, want);
}

// ---------------------------------------------------------------------------------------------
// Errors.

TEST(Process, PidThatIsNotOurChild) {
  watchdog dog("Process.PidThatIsNotOurChild", 60s);
  heddle::runtime rt(2);
  auto expect_not_child = [&](pid_t pid, const char* what) {
    SCOPED_TRACE(what);
    auto w = io::wait_process(rt, pid);
    const std::string o = outcome_text(w);
    EXPECT_TRUE(o == "ECHILD" || o == "ESRCH") << o;
  };
  expect_not_child(1, "init");
  expect_not_child(::getppid(), "our parent");
  expect_not_child(::getpid(), "ourselves");
  expect_not_child(0x3fffffff, "a pid beyond pid_max");
  // A grandchild: the child of our child is not ours.
  auto in = make_pipe();
  auto out = make_pipe();
  child c = sh("sleep 30 & echo $!; read x; kill $!", in.r.get(), out.w.get());
  in.r.reset();
  out.w.reset();
  std::string line;
  char ch;
  while (::read(out.r.get(), &ch, 1) == 1 && ch != '\n') line += ch;
  ASSERT_FALSE(line.empty());
  expect_not_child(static_cast<pid_t>(std::stoi(line)), "a grandchild");
  in.w.reset();  // the child kills its sleeper and exits
  auto w = io::wait_process(rt, c.pid());
  EXPECT_EQ(outcome_text(w), "ok");
  // A child already reaped (by an earlier wait) is no longer ours.
  child done = sh("exit 0");
  auto first = io::wait_process(rt, done.pid());
  EXPECT_EQ(waited(first), "exit 0");
  expect_not_child(done.pid(), "a child reaped by an earlier wait");
  // The error is a std::system_error with the errno.
  auto init = io::wait_process(rt, 1);
  try {
    init.get();
    ADD_FAILURE() << "waiting for init succeeded";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().category(), std::generic_category());
    EXPECT_TRUE(e.code().value() == ECHILD || e.code().value() == ESRCH) << e.code().value();
  }
}

TEST(Process, PidsThatAreNoPids) {
  watchdog dog("Process.PidsThatAreNoPids", 60s);
  heddle::runtime rt(2);
  for (pid_t pid : {0, -1, -12345}) {
    SCOPED_TRACE("pid " + std::to_string(pid));
    auto w = io::wait_process(rt, pid);
    // Whatever the errno, a std::system_error, never a wait for "any child".
    const std::string o = outcome_text(w);
    EXPECT_TRUE(o == "ECHILD" || o == "ESRCH" || o == "EINVAL") << o;
  }
}

// Two waits on one child: one reaps it and gets the status, the other finds it no longer ours.
TEST(Process, TwoWaitsOnOneChild) {
  watchdog dog("Process.TwoWaitsOnOneChild", 60s);
  heddle::runtime rt(2);
  auto in = make_pipe();
  child c = sh("read x; exit 4", in.r.get());
  in.r.reset();
  auto a = io::wait_process(rt, c.pid());
  auto b = io::wait_process(rt, c.pid());
  in.w.reset();
  const std::string oa = waited(a), ob = waited(b);
  const bool a_won = oa == "exit 4", b_won = ob == "exit 4";
  EXPECT_NE(a_won, b_won) << oa << " / " << ob;
  const std::string& loser = a_won ? ob : oa;
  EXPECT_TRUE(loser == "ECHILD" || loser == "ESRCH") << loser;
}

// ---------------------------------------------------------------------------------------------
// A runtime destroyed with waits pending: they fail with task_cancelled, nothing hangs, and the
// children are left alone (not killed, not reaped).

TEST(Process, RuntimeDestroyedWithWaitsPending) {
  watchdog dog("Process.RuntimeDestroyedWithWaitsPending", 60s);
  auto rt = std::make_unique<heddle::runtime>(2);
  auto in = make_pipe();
  std::vector<child> kids;
  std::vector<heddle::future<int>> waits;
  for (int i = 0; i < 8; ++i) {
    kids.push_back(sh("read x; exit " + std::to_string(20 + i), in.r.get()));
    waits.push_back(io::wait_process(*rt, kids.back().pid()));
  }
  in.r.reset();
  auto succ = io::wait_process(*rt, kids[0].pid()).then(heddle::strategy::normal, [](int s) { return s; });
  for (auto& w : waits) EXPECT_FALSE(w.is_ready());
  rt.reset();
  for (auto& w : waits) EXPECT_EQ(outcome_text(w), "task_cancelled");
  EXPECT_EQ(outcome_text(succ), "task_cancelled");
  // The children still run; released now, they exit and we reap them ourselves.
  in.w.reset();
  for (int i = 0; i < 8; ++i) {
    int s = 0;
    ASSERT_EQ(::waitpid(kids[i].pid(), &s, 0), kids[i].pid()) << std::strerror(errno);
    EXPECT_EQ(status_text(s), "exit " + std::to_string(20 + i));
  }
}

// Children exit while the runtime stops: each wait either has the status (and reaped the child)
// or failed with task_cancelled and left the child to us, its status intact: no status is lost.
TEST(Process, ChildrenExitingWhileTheRuntimeStops) {
  watchdog dog("Process.ChildrenExitingWhileTheRuntimeStops", 120s);
  const int rounds = scaled(8, 3), n = 12;
  int got_status = 0, cancelled = 0;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto in = make_pipe();
    std::vector<child> kids;
    for (int i = 0; i < n; ++i) kids.push_back(sh("read x; exit " + std::to_string(30 + i), in.r.get()));
    in.r.reset();
    auto rt = std::make_unique<heddle::runtime>(2);
    std::vector<heddle::future<int>> waits;
    for (auto& k : kids) waits.push_back(io::wait_process(*rt, k.pid()));
    std::thread releaser([&] {
      if (round % 2) std::this_thread::sleep_for(std::chrono::milliseconds(round));
      in.w.reset();
    });
    if (round % 2 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(round));
    rt.reset();
    releaser.join();
    for (int i = 0; i < n; ++i) {
      const std::string o = outcome_text(waits[i]);
      if (o == "ok") {
        ++got_status;
        EXPECT_EQ(status_text(*waits[i]), "exit " + std::to_string(30 + i));
        EXPECT_TRUE(reaped(kids[i].pid()));
      } else {
        ASSERT_EQ(o, "task_cancelled");
        ++cancelled;
        int st = 0;
        ASSERT_EQ(::waitpid(kids[i].pid(), &st, 0), kids[i].pid())
            << "a cancelled wait reaped its child: " << std::strerror(errno);
        EXPECT_EQ(status_text(st), "exit " + std::to_string(30 + i));
      }
    }
  }
  RecordProperty("waits_with_status", got_status);
  RecordProperty("waits_cancelled", cancelled);
}

}  // namespace

}  // namespace process_test
