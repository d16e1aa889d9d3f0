// SPDX-License-Identifier: Apache-2.0
// The processors: the multi-threaded one, which keeps many events in flight on a heddle runtime,
// and the single-threaded reference (the study's baseline), which runs one event at a time and
// each producer recursively where it is first asked for, with no queues at all. Both give the
// same checksum for the same process and events.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "heddle/core/export.hpp"
#include "heddle/fw/process.hpp"
#include "heddle/fw/timeline.hpp"

namespace heddle::fw {

struct run_options {
  unsigned threads = 0;                // workers; 0: heddle::default_thread_count()
  std::uint64_t events_in_flight = 1;  // events processed at once (threaded processor)
  // The events processed: indices [first_event, first_event + events) of a job numbered from 0,
  // each with exactly the (run, lumi, event) id, so the products and checksum share, it has as that
  // index of a job from 0 with the same events_per_run and events_per_lumi. A job that starts or
  // ends inside a run or lumi begins or ends it there, with its ids: the lumi boundaries of jobs
  // splitting [0, N) between them are the whole job's, plus the split points. first_event + events
  // may not pass 2^64 - 1, nor any event's run or lumi number 2^32 - 1 (check_run_options).
  std::uint64_t first_event = 0;
  std::uint64_t events = 1;
  std::uint64_t events_per_run = 0;  // 0: every event in run 1
  // Luminosity blocks of this many events, counted from 1 in each run (a run whose size is not a
  // multiple ends with a shorter one); 0: one lumi per run. Each event's id().lumi says which.
  std::uint64_t events_per_lumi = 0;
  // Lumis open at once in the threaded processor (CMS's numberOfConcurrentLuminosityBlocks; 0
  // counts as 1): with N > 1 the events of the next lumi start while the last events of the
  // previous ones finish. Limited to 1 when the process has a one:: or stream module
  // (run_report::lumis_limited_by). Runs stay a barrier: no lumi of run R+1 begins before R ended.
  unsigned concurrent_lumis = 1;
  // How long an idle worker keeps looking for work before it sleeps. Longer than the runtime's
  // default: with few events in flight a module's consumers are often made ready just after a
  // worker ran out of work, and waking a sleeping thread costs tens of microseconds each time.
  std::chrono::nanoseconds idle_spin = std::chrono::microseconds(500);
  timeline* record = nullptr;  // every module execution, when given (from the framework's threads)
  // Called on the calling thread about every 100 ms, and once at the end, with events done.
  std::function<void(std::uint64_t done)> progress;
};

// A run's share of the report: its events' checksum shares plus its lumis' and its own products'
// (run_report::checksum).
struct run_checksum {
  std::uint32_t run;
  std::uint64_t events;
  std::uint64_t checksum;  // its events' and, per lumi, its luminosity-block products', and its run products'
  std::uint32_t lumis = 0;
};

struct run_report {
  std::uint64_t events = 0;  // events done
  // A sum, modulo 2^64, of shares: one per event (what each module that ran made, every path's
  // decision, mixed with the event's number), one per lumi (its luminosity-block products), one per
  // run (its run products); the same for any processor, thread count or order of events. So the
  // checksums of jobs that split a range of events between them (run_options::first_event) add up to
  // the whole range's where no lumi with luminosity-block products, nor run with run products, is
  // split between two of them (a split lumi's products are made twice, each from its part's events).
  std::uint64_t checksum = 0;
  // The events' shares of checksum alone, which add up over any split of a range of events.
  std::uint64_t events_checksum = 0;
  std::vector<run_checksum> runs;
  double wall_s = 0;
  double cpu_s = 0;  // user + system of the whole process during the run
  std::uint64_t peak_rss_bytes = 0;
  unsigned os_threads = 0;  // the most OS threads the process had during the run
  unsigned workers = 0;     // worker threads (1 for the single-threaded processor)
  std::uint64_t peak_in_flight = 0;
  unsigned concurrent_lumis = 1;  // lumis the processor let be open at once (1 single-threaded)
  std::string lumis_limited_by;   // the one:: or stream module that limited them to 1, if one did
  double events_per_s() const noexcept { return wall_s > 0 ? double(events) / wall_s : 0; }
};

// Throws config_error for options no processor can run: first_event + events past 2^64 - 1, or an
// event whose run or lumi number (run_options::events_per_run, events_per_lumi) would pass 2^32 - 1.
// The processors call it before they start; a tool may call it first to fail before its own work.
// Thread-safe.
HEDDLE_EXPORT void check_run_options(const run_options& options);

// Both throw config_error for a process that does not finalize or options check_run_options
// refuses, and module_error once the run has stopped cleanly after a module threw (events in
// flight finish, no new one starts).
// Thread safety: one run of a process at a time (a run changes the process: it finalizes it, makes
// stream modules' instances, tells the modules job_failed), from any thread. Runs of different
// processes may go on at once on different threads; each report's cpu_s, peak_rss_bytes and
// os_threads, which measure the whole OS process, then mix both runs. Both block until the run is over: run_threaded's
// thread sleeps (waking for progress) while the events run on a runtime of its own, started and
// stopped by the call (run_options::threads workers; from a worker of another runtime, that worker
// runs nothing meanwhile); run_single_threaded runs every module call on the calling thread.
HEDDLE_EXPORT run_report run_threaded(process& p, const run_options& options);
HEDDLE_EXPORT run_report run_single_threaded(process& p, const run_options& options);

}  // namespace heddle::fw

// The fw layer's internals (heddle::fw_detail) name these unqualified.
namespace heddle::fw_detail {
using fw::run_checksum;
using fw::run_options;
}  // namespace heddle::fw_detail
