// SPDX-License-Identifier: Apache-2.0
// The session's receiver threads: one polls the transport whenever no caller does, and sleeps in
// the transport when the wire is quiet (who polls when: progress.hpp); the other stands by.
//
// Why a class of its own: the loop is the scheduling of the receive side, not its work. A frame it
// finds goes from the transport's poll to the engine (frame_sink::deliver) exactly as a polling
// caller's does, so the call path is the same whoever polls, and none of the loop's state (the
// threads, their roles, the stop flag, the naps) is the engine's.
//
// Held calls (the default strategy's short functions, docs/am.md): during a frame's delivery on the
// receiving thread, the engine may hold a call (hold()); once the transport's poll returns, this
// thread gives the progress lock back and runs it (run_held), then takes the lock again. Meanwhile
// the standby thread looks every standby_tick: when it finds the same held call still running at
// two looks in a row, it takes the receiving role (the progress lock, the loop) and the thread
// stuck in the call stands by once the call returns. So a function that blocks or runs long on the
// receiving thread holds up the target's message handling for two ticks at most (plus the standby's
// wake-up); while no thread stands by (the one replaced is still in its call), no call is held. The
// standby ticks only while held calls come: it sleeps until the first, and again after quiet_ticks
// without one, until the next.
//
// Thread safety: start() and stop() are called by the thread that opens and closes the session,
// never concurrently; may_hold() and hold() on the receiving thread only, inside deliver.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

#include "heddle/core/export.hpp"
#include "progress.hpp"
#include "transport.hpp"

namespace heddle::am_detail {

// True on a receiver thread while it polls in its receiving turn (not while it runs a held call).
inline constinit thread_local bool receiving_turn HEDDLE_DETAIL_TLS_MODEL = false;

class receiver {
 public:
  // How often the standby looks at a held call, and how many looks without a new one it makes
  // before it sleeps until the next.
  static constexpr std::chrono::microseconds standby_tick{1000};
  static constexpr unsigned quiet_ticks = 100;

  // Polls `wire` with `lock` (the progress lock) held, for `spin` after the last frame, then sleeps
  // in the transport. `between_polls` runs on the receiving thread between its turns (every 64 idle
  // looks, after each nap and sleep): the engine's look at its peers, which keeps its own pace.
  // `run_held` runs a held call, on the receiving thread, without the lock.
  receiver(transport& wire, progress& lock, std::chrono::nanoseconds spin, std::function<void()> between_polls,
           std::function<void()> run_held);
  ~receiver();  // stops the threads if they run
  receiver(const receiver&) = delete;
  receiver& operator=(const receiver&) = delete;

  // Starts the threads (once: the transport is started and delivers to the engine).
  void start();
  // Stops the threads, if they run, and joins them (after a held call still running returns): the
  // transport is interrupted and the naps woken. When it returns, no frame is delivered by them.
  void stop();

  // Inside a frame's delivery: whether this thread may hold a call (the receiving thread, in its
  // turn, with none held yet and a thread standing by to take over should the call last).
  bool may_hold() const noexcept { return receiving_turn && !held_ && standby_ready_.load(std::memory_order_acquire); }
  // The call the engine keeps is run (run_held) once the poll that delivered it returns.
  void hold() noexcept { held_ = true; }

 private:
  void thread_main(int me);
  // The receiving role: returns when the session stops or a held call outlasted the standby's
  // patience and the other thread took the role.
  void receive(int me);
  // Gives the lock back, runs the held call (marked running for the standby), and says whether
  // this thread still has the receiving role.
  bool run_held_call(int me);
  // The standby role: returns when the session stops or this thread took the receiving role.
  void stand_by(int me);
  void wake_standby() noexcept;

  transport& wire_;
  progress& progress_;
  const std::chrono::nanoseconds spin_;
  const std::function<void()> between_polls_;
  const std::function<void()> run_held_;
  std::atomic<bool> stop_{false};
  bool held_ = false;         // the receiving thread's: a call held during the last poll
  std::atomic<int> role_{0};  // which thread receives; only the standby changes it
  std::atomic<bool> standby_ready_{false};
  // Per thread: odd while it runs a held call, counting its calls (the standby compares two looks).
  alignas(64) std::atomic<std::uint64_t> running_[2]{};
  alignas(64) std::atomic<std::uint32_t> standby_asleep_{0};  // 1: sleeping until a held call comes
  std::atomic<std::uint32_t> tick_{0};                        // never changes: a futex to nap on
  std::thread threads_[2];
};

}  // namespace heddle::am_detail
