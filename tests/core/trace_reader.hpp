// SPDX-License-Identifier: Apache-2.0
// Reads a trace file back for the tests of every layer: its events, per-thread tracks, and the
// structural rules every heddle trace keeps (docs/trace.md): timestamps monotone per thread, spans
// (X, and B/E pairs) properly nested per thread, every flow's start before its end.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace heddle_test {

// A scratch path for a test's trace, unique to the process: "<tmp>/heddle_trace_<pid>_<name>".
inline std::string trace_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("heddle_trace_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

struct trace_file {
  nlohmann::json doc;
  std::vector<nlohmann::json> events;  // traceEvents, in file order

  explicit trace_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    doc = nlohmann::json::parse(in);
    for (auto& e : doc.at("traceEvents")) events.push_back(e);
  }

  // Events matching ph (any if empty), cat and name (any if empty).
  std::vector<nlohmann::json> select(const std::string& ph, const std::string& cat,
                                     const std::string& name = "") const {
    std::vector<nlohmann::json> out;
    for (auto& e : events)
      if ((ph.empty() || e.at("ph") == ph) && (cat.empty() || e.value("cat", "") == cat) &&
          (name.empty() || e.value("name", "") == name))
        out.push_back(e);
    return out;
  }
  std::size_t count(const std::string& ph, const std::string& cat, const std::string& name = "") const {
    return select(ph, cat, name).size();
  }

  // Thread names by (pid, tid).
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names() const {
    std::map<std::pair<std::int64_t, std::int64_t>, std::string> out;
    for (auto& e : events)
      if (e.at("ph") == "M" && e.at("name") == "thread_name")
        out[{e.at("pid").get<std::int64_t>(), e.at("tid").get<std::int64_t>()}] = e.at("args").at("name");
    return out;
  }
  std::string thread_of(const nlohmann::json& e) const {
    auto names = thread_names();
    auto it = names.find({e.at("pid").get<std::int64_t>(), e.at("tid").get<std::int64_t>()});
    return it == names.end() ? std::string() : it->second;
  }
};

// Nanoseconds from a µs value with three decimals, exactly.
inline std::int64_t trace_ns(const nlohmann::json& v) {
  return static_cast<std::int64_t>(v.get<double>() * 1000.0 + 0.5);
}

// Checks the structural rules; each broken one is a test failure naming the event.
inline void expect_well_formed(const trace_file& t) {
  struct open_span {
    std::int64_t end;
    std::string name;
  };
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> last_ts;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<open_span>> stacks;  // X and B/E
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> b_open;
  std::map<std::string, std::int64_t> flow_start;
  std::vector<std::pair<std::string, std::int64_t>> flow_ends;
  auto names = t.thread_names();
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    const auto& e = t.events[i];
    const std::string ph = e.at("ph");
    if (ph == "M") continue;
    const std::pair<std::int64_t, std::int64_t> track{e.at("pid").get<std::int64_t>(), e.at("tid").get<std::int64_t>()};
    EXPECT_TRUE(names.count(track)) << "event " << i << " (" << e.dump() << ") is on a thread without a name";
    const std::int64_t ts = trace_ns(e.at("ts"));
    auto [it, fresh] = last_ts.try_emplace(track, ts);
    EXPECT_LE(it->second, ts) << "event " << i << " goes back in time on its thread: " << e.dump();
    it->second = ts;
    auto& stack = stacks[track];
    while (!stack.empty() && stack.back().end <= ts && ph != "E") stack.pop_back();
    if (ph == "X") {
      const std::int64_t end = ts + trace_ns(e.at("dur"));
      if (!stack.empty()) {
        EXPECT_LE(end, stack.back().end) << "event " << i << " (" << e.dump() << ") overlaps the end of "
                                         << stack.back().name << " without nesting in it";
      }
      stack.push_back({end, e.at("name")});
    } else if (ph == "B") {
      b_open[track].push_back(ts);
      stack.push_back({INT64_MAX, e.at("name")});
    } else if (ph == "E") {
      auto& open = b_open[track];
      EXPECT_FALSE(open.empty()) << "event " << i << ": an E without its B: " << e.dump();
      if (!open.empty()) open.pop_back();
      while (!stack.empty() && stack.back().end != INT64_MAX) {
        EXPECT_LE(stack.back().end, ts) << "event " << i << " ends a B/E span inside " << stack.back().name;
        stack.pop_back();
      }
      if (!stack.empty()) stack.pop_back();
    } else if (ph == "s") {
      flow_start[e.at("cat").get<std::string>() + "/" + e.at("id").dump()] = ts;
    } else if (ph == "f") {
      flow_ends.push_back({e.at("cat").get<std::string>() + "/" + e.at("id").dump(), ts});
    }
  }
  for (auto& [track, open] : b_open) EXPECT_TRUE(open.empty()) << "a B without its E on tid " << track.second;
  for (auto& [id, ts] : flow_ends) {
    auto it = flow_start.find(id);
    EXPECT_NE(it, flow_start.end()) << "flow " << id << " ends without a start";
    if (it != flow_start.end()) {
      EXPECT_LE(it->second, ts) << "flow " << id << " ends before it starts";
    }
  }
}

}  // namespace heddle_test
