// SPDX-License-Identifier: Apache-2.0
// Conditions: the source's intervals, condition producers' declarations, and the cells that hold
// each interval's data while a processor runs (es_state.hpp).
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "es_state.hpp"
#include "heddle/core/detail/exception_text.hpp"
#include "heddle/fw/conditions.hpp"
#include "heddle/fw/detail/parameter_set_json.hpp"
#include "heddle/fw/errors.hpp"
#include "heddle/fw/es_producer.hpp"
#include "heddle/fw/event_setup.hpp"
#include "json_position.hpp"
#include "module_access.hpp"
#include "type_name.hpp"

namespace heddle::fw {

// --- the conditions source

void conditions::add(const std::string& record, iov_start start, parameter_set payload) {
  if (start.run == 0 || start.lumi == 0)
    throw std::invalid_argument("heddle::fw::conditions::add: runs and lumis count from 1");
  auto& list = records_[record];
  if (!list.empty() && !(list.back().start < start))
    throw std::invalid_argument("heddle::fw::conditions::add: record " + record + ": interval (run " +
                                std::to_string(start.run) + ", lumi " + std::to_string(start.lumi) +
                                ") does not start after the previous one");
  list.push_back({start, std::move(payload)});
}

const std::vector<conditions::interval>& conditions::intervals(const std::string& record) const {
  static const std::vector<interval> none;
  auto it = records_.find(record);
  return it == records_.end() ? none : it->second;
}

std::vector<std::string> conditions::records() const {
  std::vector<std::string> names;
  for (const auto& [name, list] : records_) names.push_back(name);
  return names;
}

conditions conditions::from_json(std::string_view text, const std::string& file) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    const auto [line, column] = fw_detail::line_column(text, e.byte);
    std::string why = e.what();  // "[json.exception.parse_error.101] parse error at line L, column C: why"
    if (auto pos = why.find(": "); pos != std::string::npos) why = why.substr(pos + 2);
    throw config_error(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": malformed JSON: " + why);
  } catch (const nlohmann::json::exception& e) {  // a number beyond a double
    throw config_error(file + ": malformed JSON: " + e.what());
  }
  auto fail = [&](const std::string& where, const std::string& what) {
    throw config_error(file + ": " + where + ": " + what);
  };
  if (!doc.is_object() || !doc.contains("records") || !doc["records"].is_object())
    fail("(top level)", "expected an object with \"records\": { \"RecordName\": [intervals] }");
  for (const auto& [key, value] : doc.items())
    if (key != "records") fail("(top level)", "unknown key '" + key + "' (known here: records)");
  conditions c;
  for (const auto& [record, list] : doc["records"].items()) {
    const std::string at = "records." + record;
    if (!list.is_array() || list.empty()) fail(at, "expected a non-empty array of intervals");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string ai = at + "[" + std::to_string(i) + "]";
      const nlohmann::json& v = list[i];
      if (!v.is_object()) fail(ai, std::string("expected an object, found ") + v.type_name());
      for (const auto& [key, value] : v.items())
        if (key != "firstRun" && key != "firstLumi" && key != "payload")
          fail(ai, "unknown key '" + key + "' (known here: firstRun, firstLumi, payload)");
      auto number = [&](const char* key, bool required) -> std::uint32_t {
        auto it = v.find(key);
        if (it == v.end()) {
          if (required) fail(ai, std::string("missing required key '") + key + "'");
          return 1;
        }
        if (!it->is_number_unsigned() || it->get<std::uint64_t>() < 1 || it->get<std::uint64_t>() > UINT32_MAX)
          fail(ai + "." + key, "expected a run or lumi number (1 to 4294967295), found " + it->dump());
        return static_cast<std::uint32_t>(it->get<std::uint64_t>());
      };
      const iov_start start{number("firstRun", true), number("firstLumi", false)};
      auto payload = v.find("payload");
      const nlohmann::json empty = nlohmann::json::object();
      parameter_set ps = fw_detail::make_parameter_set(payload == v.end() ? empty : *payload,
                                                       file + ": " + ai + ".payload");
      try {
        c.add(record, start, std::move(ps));
      } catch (const std::invalid_argument&) {
        fail(ai, "interval starts (run " + std::to_string(start.run) + ", lumi " + std::to_string(start.lumi) +
                     ") at or before the previous one: intervals are listed in increasing order");
      }
    }
  }
  return c;
}

conditions conditions::from_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error(path + ": cannot open conditions file");
  std::ostringstream text;
  text << in.rdbuf();
  return from_json(text.str(), path);
}

// --- condition producers

es_producer::~es_producer() = default;

std::uint32_t es_producer::declare(std::string label, const std::type_info& record, const fw_detail::product_ops* ops) {
  if (frozen_)
    throw std::logic_error("heddle::fw::es_producer::es_produces: '" + label_ +
                           "' is in a process already: declare in the constructor");
  if (!produced_.empty() && *produced_.front().record != record)
    throw std::logic_error("heddle::fw::es_producer::es_produces: a producer makes data of one record (" +
                           fw_detail::type_name(*produced_.front().record) + "), not also of " +
                           fw_detail::type_name(record));
  for (const fw_detail::es_produced& p : produced_)
    if (p.label == label && *p.ops->type == *ops->type)
      throw std::logic_error("heddle::fw::es_producer::es_produces: " + fw_detail::type_name(*ops->type) + " '" +
                             label + "' declared twice");
  produced_.push_back({std::move(label), &record, ops});
  return static_cast<std::uint32_t>(produced_.size() - 1);
}

void es_context::check(std::uint32_t index, const std::type_info& type) const {
  const auto& declared = fw_detail::es_access::declared(producer_);
  if (index >= declared.size() || *declared[index].ops->type != type)
    throw std::logic_error("heddle::fw::es_context::emplace: condition producer '" + producer_.label() +
                           "' used a token it did not get");
}

void es_context::store(std::uint32_t index, void* data, void (*destroy)(void*) noexcept) {
  if (cell_.data[index]) {
    destroy(data);
    throw std::logic_error("heddle::fw::es_context::emplace: condition producer '" + producer_.label() +
                           "' made item " + std::to_string(index) + " twice for one interval");
  }
  cell_.data[index] = data;
  cell_.destroy[index] = destroy;
}

// --- cells

}  // namespace heddle::fw

namespace heddle::fw_detail {

std::uint32_t es_state::interval(std::uint32_t producer, std::uint32_t run, std::uint32_t lumi) const {
  const es_node& p = g_.es_nodes[producer];
  if (p.intervals.empty()) return 0;
  const iov_start at{run, lumi};
  auto it = std::upper_bound(p.intervals.begin(), p.intervals.end(), at,
                             [](const iov_start& a, const conditions::interval& i) { return a < i.start; });
  if (it == p.intervals.begin())
    throw std::runtime_error("no conditions for record " + p.record_name + " at run " + std::to_string(run) +
                             ", lumi " + std::to_string(lumi) + " (its first interval starts at run " +
                             std::to_string(p.intervals.front().start.run) + ", lumi " +
                             std::to_string(p.intervals.front().start.lumi) + ")");
  return static_cast<std::uint32_t>(it - p.intervals.begin() - 1);
}

es_cell& es_state::cell(std::uint32_t producer, std::uint32_t interval) {
  std::lock_guard lock(m_);
  std::unique_ptr<es_cell>& c = cells_[{producer, interval}];
  if (!c) {
    c = std::make_unique<es_cell>();
    const std::size_t items = es_access::declared(*g_.es_nodes[producer].impl).size();
    c->data.assign(items, nullptr);
    c->destroy.assign(items, nullptr);
  }
  return *c;
}

bool es_state::ready_or_wait(es_cell& c, waiter w, bool& start) {
  std::lock_guard lock(c.m);
  start = false;
  if (c.state == es_cell::made || c.state == es_cell::failed) return true;
  c.waiters.push_back(w);
  if (c.state == es_cell::empty) {
    c.state = es_cell::making;
    start = true;
  }
  return false;
}

void es_state::make(std::uint32_t producer, std::uint32_t interval, es_cell& c) noexcept {
  const es_node& p = g_.es_nodes[producer];
  std::exception_ptr error;
  try {
    static const parameter_set empty;
    const bool sourced = !p.intervals.empty();
    es_access::produce(*p.impl, c, sourced ? p.intervals[interval].start : iov_start{},
                       sourced ? p.intervals[interval].payload : empty);
  } catch (...) {
    const iov_start s = p.intervals.empty() ? iov_start{} : p.intervals[interval].start;
    error = std::make_exception_ptr(std::runtime_error("condition producer '" + p.label + "' failed for record " +
                                                       p.record_name + ", interval from run " + std::to_string(s.run) +
                                                       ", lumi " + std::to_string(s.lumi) + ": " +
                                                       core_detail::exception_text(std::current_exception())));
  }
  std::vector<waiter> waiters;
  {
    std::lock_guard lock(c.m);
    c.error = error;
    c.state = error ? es_cell::failed : es_cell::made;
    waiters.swap(c.waiters);
  }
  c.done.notify_all();
  for (const waiter& w : waiters) deliver_(w);
}

es_cell& es_state::made(std::uint32_t producer, std::uint32_t interval) {
  es_cell& c = cell(producer, interval);
  {
    std::unique_lock lock(c.m);
    if (c.state == es_cell::making)
      c.done.wait(lock, [&] { return c.state == es_cell::made || c.state == es_cell::failed; });
    if (c.state != es_cell::empty) return c;
    c.state = es_cell::making;
  }
  make(producer, interval, c);
  return c;
}

const void* es_state::data(std::uint32_t m, std::uint32_t consumed, std::uint32_t run, std::uint32_t lumi) {
  const node& n = g_.nodes[m];
  const es_item item = g_.es_items[n.es_consumed[consumed]];
  es_cell& c = made(item.producer, interval(item.producer, run, lumi));
  if (c.state == es_cell::failed) std::rethrow_exception(c.error);
  if (!c.data[item.index]) {
    const es_produced& what = es_access::declared(*g_.es_nodes[item.producer].impl)[item.index];
    throw std::logic_error("condition producer '" + g_.es_nodes[item.producer].label + "' did not make " +
                           type_name(*what.ops->type) + " of record " + g_.es_nodes[item.producer].record_name +
                           (what.label.empty() ? "" : " labelled '" + what.label + "'") + ", which module '" +
                           n.spec.label + "' reads");
  }
  return c.data[item.index];
}

}  // namespace heddle::fw_detail

namespace heddle::fw {

const void* event_setup::data(std::uint32_t consumed, const std::type_info& type, const std::type_info& record) const {
  const fw_detail::node& n = graph_.nodes[module_];
  const auto& declared = n.declared().es_consumes;
  if (consumed >= declared.size() || *declared[consumed].type != type || *declared[consumed].record != record)
    throw std::logic_error("heddle::fw::event_setup::get: module '" + n.spec.label + "' used a token it did not get");
  if (!es_) throw std::logic_error("heddle::fw::event_setup::get: no conditions here");
  return es_->data(module_, consumed, run_, lumi_);
}

}  // namespace heddle::fw
