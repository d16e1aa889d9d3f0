// SPDX-License-Identifier: Apache-2.0
// Conditions while a processor runs: per condition producer and interval of validity, one cell that
// is made once, on demand, and holds the record's data until the processor ends. The threaded
// processor prefetches: a module that reads conditions waits (without a thread) on the cells its
// event's interval needs, like on its producers (module_scheduler.cpp); transitions and the single-threaded
// processor make a cell in place when they need it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "graph.hpp"

namespace heddle::fw_detail {

struct es_cell {
  enum : std::uint8_t { empty, making, made, failed };
  std::mutex m;
  std::condition_variable done;
  std::uint8_t state = empty;
  std::vector<std::pair<void*, std::uint32_t>> waiters;  // (event, module) of the threaded processor
  std::vector<void*> data;                               // per item the producer declared
  std::vector<void (*)(void*) noexcept> destroy;
  std::exception_ptr error;  // failed: what produce threw, as a module_error's text

  ~es_cell() {
    for (std::size_t i = 0; i < data.size(); ++i)
      if (data[i]) destroy[i](data[i]);
  }
};

class es_state {
 public:
  using waiter = std::pair<void*, std::uint32_t>;
  // `deliver` is called for each waiter once its cell is made or failed (threaded processor).
  es_state(const graph& g, std::function<void(waiter)> deliver = {}) : g_(g), deliver_(std::move(deliver)) {}

  // Producer p's interval at (run, lumi); module_error-free: std::runtime_error naming the record
  // when (run, lumi) lies before its first interval.
  std::uint32_t interval(std::uint32_t producer, std::uint32_t run, std::uint32_t lumi) const;
  es_cell& cell(std::uint32_t producer, std::uint32_t interval);

  // Whether `c` is made or failed; otherwise `w` waits for it, and `start` says whether the caller
  // must make it (make(), as a task) because nobody is yet.
  bool ready_or_wait(es_cell& c, waiter w, bool& start);
  // Makes cell `c` of (producer, interval) and delivers its waiters.
  void make(std::uint32_t producer, std::uint32_t interval, es_cell& c) noexcept;
  // The cell made: makes it here if nobody has, waits if another thread is making it.
  es_cell& made(std::uint32_t producer, std::uint32_t interval);

  // The data of es_consumes token `consumed` of module m at (run, lumi), made. Throws the
  // producer's failure, std::logic_error if the producer did not make it.
  const void* data(std::uint32_t m, std::uint32_t consumed, std::uint32_t run, std::uint32_t lumi);

 private:
  const graph& g_;
  std::function<void(waiter)> deliver_;
  std::mutex m_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::unique_ptr<es_cell>> cells_;
};

}  // namespace heddle::fw_detail
