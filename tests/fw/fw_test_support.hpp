// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the framework's tests: the configurations by path (the study's, and the
// project's own), and modules made from a function (probes) that count and record what the
// framework does with them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <heddle/fw.hpp>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace fw_test {

// folder/name. (Appended to rather than joined with operator+, on which GCC 12 warns falsely: -Warray-bounds.)
inline std::string in_folder(const char* folder, const std::string& name) {
  std::string path = folder;
  path += '/';
  path += name;
  return path;
}
// The CMS study's configurations lie beside the repository (HEDDLE_CMS_DATA, from
// tests/fw/CMakeLists.txt), not in it: a clone of the project alone lacks them, so a test that
// reads one starts with FW_TEST_NEEDS_CMS and skips without it.
inline std::string cms(const std::string& name) { return in_folder(HEDDLE_CMS_DATA, name); }
// The project's own small configurations (tests/fw/configs/): what the framework's own behaviour
// is tested on, so that those tests run everywhere.
inline std::string own(const std::string& name) { return in_folder(HEDDLE_FW_CONFIGS, name); }

// Skips the current test, saying why, when the study's file `name` (under HEDDLE_CMS_DATA) is
// absent. A macro: GTEST_SKIP() returns from the test function itself.
#define FW_TEST_NEEDS_CMS(name)                                                                            \
  do {                                                                                                     \
    const std::string fw_test_file_ = fw_test::cms(name);                                                  \
    if (!std::filesystem::exists(fw_test_file_))                                                           \
      GTEST_SKIP() << fw_test_file_                                                                        \
                   << " is absent: the CMS study's configurations are not part of the repository (CI and " \
                      "developers have them in ../shared/data/cms beside it; -DHEDDLE_CMS_DATA=DIR names " \
                      "another folder)";                                                                   \
  } while (0)

inline const char* const hipileup = "reco_hipileup_5_2_0_busywait_perfectIO.json";
inline const char* const minbias = "reco_minbias_busywait.json";

// What a probe's function sees: the event and its inputs, each an std::int64_t.
class inputs {
 public:
  inputs(const heddle::fw::event& e, const std::vector<heddle::fw::get_token<std::int64_t>>& tokens) noexcept
      : e_(e), tokens_(tokens) {}
  const heddle::fw::event& event() const noexcept { return e_; }
  std::uint64_t number() const noexcept { return e_.id().event; }
  std::uint32_t run() const noexcept { return e_.id().run; }
  std::size_t size() const noexcept { return tokens_.size(); }
  // The k-th input (event::get: product_error if its producer did not make it).
  std::int64_t operator[](std::size_t k) const { return e_.get(tokens_.at(k)); }
  std::int64_t sum() const {
    std::int64_t s = 0;
    for (const auto& t : tokens_) s += e_.get(t);
    return s;
  }

 private:
  const heddle::fw::event& e_;
  const std::vector<heddle::fw::get_token<std::int64_t>>& tokens_;
};

using body = std::function<std::int64_t(const inputs&)>;

// How a probe appears: its label and role, the products it reads (input tags of std::int64_t
// products), and its kind: global:: unless `one`, then one:: on its own queue or, with
// `resources`, on theirs ("" names the legacy resource, uses_resource()).
struct probe_decl {
  std::string label;
  heddle::fw::module_role role = heddle::fw::module_role::producer;
  std::vector<std::string> inputs;
  bool one = false;
  std::vector<std::string> resources;
  std::vector<std::string> select_paths;  // output modules
};

inline probe_decl decl(std::string label, heddle::fw::module_role role = heddle::fw::module_role::producer,
                       std::vector<std::string> inputs = {}) {
  return {std::move(label), role, std::move(inputs), false, {}, {}};
}
// A one:: probe: on its own queue, or on `resources` ("" for the legacy resource).
inline probe_decl one_decl(std::string label, heddle::fw::module_role role = heddle::fw::module_role::producer,
                           std::vector<std::string> inputs = {}, std::vector<std::string> resources = {}) {
  return {std::move(label), role, std::move(inputs), true, std::move(resources), {}};
}

// The part of a probe its kind does not change: its function, its input tokens and its calls. A
// producer puts the function's result (one std::int64_t, the default instance); a filter passes
// the event where it is not 0; analyzers and output modules only call it.
class probe {
 public:
  mutable std::atomic<long> calls{0};

 protected:
  explicit probe(body f) : f_(std::move(f)) {}
  std::int64_t run_body(const heddle::fw::event& e) const {
    calls.fetch_add(1, std::memory_order_relaxed);
    return f_(inputs(e, tokens_));
  }
  std::vector<heddle::fw::get_token<std::int64_t>> tokens_;
  heddle::fw::put_token<std::int64_t> out_;

 private:
  body f_;
};

namespace probes {
using namespace heddle::fw;

// Declares a probe's inputs (and, for a producer, its product) on module M under construction.
#define FW_TEST_PROBE_DECLARE(d)                                                    \
  for (const std::string& in : (d).inputs)                                          \
    tokens_.push_back(this->template consumes<std::int64_t>(input_tag::parse(in))); \
  if ((d).role == module_role::producer) out_ = this->template produces<std::int64_t>()

class global_producer final : public global::EDProducer<>, public probe {
 public:
  global_producer(const probe_decl& d, body f) : probe(std::move(f)) { FW_TEST_PROBE_DECLARE(d); }
  void produce(event& e, const event_setup&) const override { e.emplace(out_, run_body(e)); }
};
class global_filter final : public global::EDFilter<>, public probe {
 public:
  global_filter(const probe_decl& d, body f) : probe(std::move(f)) { FW_TEST_PROBE_DECLARE(d); }
  bool filter(event& e, const event_setup&) const override { return run_body(e) != 0; }
};
class global_analyzer final : public global::EDAnalyzer<>, public probe {
 public:
  global_analyzer(const probe_decl& d, body f) : probe(std::move(f)) { FW_TEST_PROBE_DECLARE(d); }
  void analyze(const event& e, const event_setup&) const override { run_body(e); }
};
class global_output final : public global::OutputModule<>, public probe {
 public:
  global_output(const probe_decl& d, body f) : probe(std::move(f)) { FW_TEST_PROBE_DECLARE(d); }
  void write(const event& e) const override { run_body(e); }
};

// one:: probes: on their own queue, or their resources' ("" for the legacy one).
#define FW_TEST_PROBE_RESOURCES(d) \
  for (const std::string& r : (d).resources) r.empty() ? this->uses_resource() : this->uses_resource(r)

class one_producer final : public one::EDProducer<>, public probe {
 public:
  one_producer(const probe_decl& d, body f) : probe(std::move(f)) {
    FW_TEST_PROBE_DECLARE(d);
    FW_TEST_PROBE_RESOURCES(d);
  }
  void produce(event& e, const event_setup&) override { e.emplace(out_, run_body(e)); }
};
class one_filter final : public one::EDFilter<>, public probe {
 public:
  one_filter(const probe_decl& d, body f) : probe(std::move(f)) {
    FW_TEST_PROBE_DECLARE(d);
    FW_TEST_PROBE_RESOURCES(d);
  }
  bool filter(event& e, const event_setup&) override { return run_body(e) != 0; }
};
class one_analyzer final : public one::EDAnalyzer<>, public probe {
 public:
  one_analyzer(const probe_decl& d, body f) : probe(std::move(f)) {
    FW_TEST_PROBE_DECLARE(d);
    FW_TEST_PROBE_RESOURCES(d);
  }
  void analyze(const event& e, const event_setup&) override { run_body(e); }
};
class one_output final : public one::OutputModule<>, public probe {
 public:
  one_output(const probe_decl& d, body f) : probe(std::move(f)) {
    FW_TEST_PROBE_DECLARE(d);
    FW_TEST_PROBE_RESOURCES(d);
  }
  void write(const event& e) override { run_body(e); }
};
#undef FW_TEST_PROBE_DECLARE
#undef FW_TEST_PROBE_RESOURCES

template <class M>
probe* add(heddle::fw::process& p, const probe_decl& d, body f) {
  auto& m = p.add_module({d.label, "fw_test::probe", "", d.select_paths},
                         [d, f = std::move(f)] { return std::make_unique<M>(d, f); });
  return static_cast<M*>(&m);
}
}  // namespace probes

// Adds a probe module to `p`; returns it (owned by the process).
inline probe* add_probe(heddle::fw::process& p, const probe_decl& d, body f) {
  using heddle::fw::module_role;
  switch (d.role) {
    case module_role::producer:
      return d.one ? probes::add<probes::one_producer>(p, d, std::move(f))
                   : probes::add<probes::global_producer>(p, d, std::move(f));
    case module_role::filter:
      return d.one ? probes::add<probes::one_filter>(p, d, std::move(f))
                   : probes::add<probes::global_filter>(p, d, std::move(f));
    case module_role::analyzer:
      return d.one ? probes::add<probes::one_analyzer>(p, d, std::move(f))
                   : probes::add<probes::global_analyzer>(p, d, std::move(f));
    case module_role::output:
      return d.one ? probes::add<probes::one_output>(p, d, std::move(f))
                   : probes::add<probes::global_output>(p, d, std::move(f));
  }
  return nullptr;
}

inline heddle::fw::run_options options(std::uint64_t events, std::uint64_t in_flight, unsigned threads = 2) {
  heddle::fw::run_options o;
  o.events = events;
  o.events_in_flight = in_flight;
  o.threads = threads;
  return o;
}

// The message of the config_error that finalize() throws, "" if it finalizes.
inline std::string finalize_error(heddle::fw::process& p) {
  try {
    p.finalize();
  } catch (const heddle::fw::config_error& e) {
    return e.what();
  }
  return "";
}

// How many of something run at once, and the most that did.
struct concurrency {
  std::atomic<int> now{0}, most{0};
  void enter() {
    const int n = now.fetch_add(1) + 1;
    int m = most.load();
    while (n > m && !most.compare_exchange_weak(m, n)) {
    }
  }
  void leave() { now.fetch_sub(1); }
};

// Makes "self:n" in every event: the event's number.
class event_maker final : public heddle::fw::global::EDProducer<> {
 public:
  event_maker() { token_ = produces<std::uint64_t>("n"); }
  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override { e.emplace(token_, e.id().event); }

 private:
  heddle::fw::put_token<std::uint64_t> token_;
};

// Makes the luminosity-block product "self:n" at each lumi's end: the lumi's number; with
// `put_at_begin`, tries to make it in begin_luminosity_block too (a misuse the framework refuses).
class lumi_maker final : public heddle::fw::global::EDProducer<> {
 public:
  explicit lumi_maker(bool put_at_begin = false) : put_at_begin_(put_at_begin) {
    token_ = produces<std::uint64_t>("n", heddle::fw::transition::end_luminosity_block);
  }
  void produce(heddle::fw::event&, const heddle::fw::event_setup&) const override {}
  void begin_luminosity_block(const heddle::fw::luminosity_block& l, const heddle::fw::event_setup&) override {
    if (put_at_begin_) const_cast<heddle::fw::luminosity_block&>(l).emplace(token_, 1u);
  }
  void end_luminosity_block(heddle::fw::luminosity_block& l, const heddle::fw::event_setup&) override {
    l.emplace(token_, l.number());
  }

 private:
  heddle::fw::put_token<std::uint64_t> token_;
  bool put_at_begin_;
};

}  // namespace fw_test
