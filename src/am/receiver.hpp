// SPDX-License-Identifier: Apache-2.0
// The session's receiver thread: it polls the transport whenever no caller does, and sleeps in the
// transport when the wire is quiet (who polls when: progress.hpp).
//
// Why a class of its own: the loop is the scheduling of the receive side, not its work. A frame it
// finds goes from the transport's poll to the engine (frame_sink::deliver) exactly as a polling
// caller's does, so the call path is the same whoever polls, and none of the loop's state (the
// thread, its stop flag, its naps) is the engine's.
//
// Thread safety: start() and stop() are called by the thread that opens and closes the session,
// never concurrently; the loop itself runs on the thread start() makes.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "progress.hpp"
#include "transport.hpp"

namespace heddle::am_detail {

class receiver {
 public:
  // Polls `wire` with `lock` (the progress lock) held, for `spin` after the last frame, then sleeps
  // in the transport. `between_polls` runs on the receiver thread between its turns (every 64 idle
  // looks, after each nap and sleep): the engine's look at its peers, which keeps its own pace.
  receiver(transport& wire, progress& lock, std::chrono::nanoseconds spin, std::function<void()> between_polls);
  ~receiver();  // stops the thread if it runs
  receiver(const receiver&) = delete;
  receiver& operator=(const receiver&) = delete;

  // Starts the thread (once: the transport is started and delivers to the engine).
  void start();
  // Stops the thread, if it runs, and joins it: the transport is interrupted and a nap woken. When
  // it returns, no frame is delivered by this thread.
  void stop();

 private:
  void loop();

  transport& wire_;
  progress& progress_;
  const std::chrono::nanoseconds spin_;
  const std::function<void()> between_polls_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace heddle::am_detail
