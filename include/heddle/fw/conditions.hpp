// SPDX-License-Identifier: Apache-2.0
// Conditions: data that changes rarely (calibrations, alignments, corrections), grouped in records
// (a record is a C++ tag type, struct JetRecord {};) and valid for intervals of runs and luminosity
// blocks, as CMS's EventSetup. The intervals of each record, and a payload per interval, come from
// a conditions source (a JSON file, or set in C++); a record no source names has one interval for
// the whole job and an empty payload. Condition producers (es_producer.hpp) make the record's data
// from the interval's payload, on demand, once per interval.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "heddle/core/export.hpp"
#include "heddle/fw/parameter_set.hpp"

namespace heddle::fw {

// Where an interval of validity starts: it holds from (run, lumi) up to the next one's start.
struct iov_start {
  std::uint32_t run = 1;
  std::uint32_t lumi = 1;
  friend auto operator<=>(const iov_start&, const iov_start&) = default;
};

// A value, as a std::map: its const calls are thread-safe beside each other, add() is not beside
// any other call on the same object. A process takes a copy (process::set_conditions).
class HEDDLE_EXPORT conditions {
 public:
  struct interval {
    iov_start start;
    parameter_set payload;
  };

  // Reads a conditions file:
  //   { "records": { "JetRecord": [ { "firstRun": 1, "firstLumi": 1, "payload": { ... } }, ... ] } }
  // Records are named as their C++ type is written, with its namespaces ("reco::JetRecord");
  // "firstLumi" defaults to 1. config_error naming the file and the place on malformed JSON, a
  // missing or mistyped key, or intervals not in increasing order. Thread-safe.
  static conditions from_json_file(const std::string& path);
  // The same from text; `file` names it in messages. Thread-safe.
  static conditions from_json(std::string_view text, const std::string& file);

  // Adds an interval of `record` (starts must increase; std::invalid_argument otherwise). Not
  // thread-safe: no other call on this object meanwhile.
  void add(const std::string& record, iov_start start, parameter_set payload);

  // The record's intervals, in order; empty if the record has none. Thread-safe (const).
  const std::vector<interval>& intervals(const std::string& record) const;
  // The records' names, sorted. Thread-safe (const).
  std::vector<std::string> records() const;

 private:
  std::map<std::string, std::vector<interval>> records_;
};

}  // namespace heddle::fw

// The fw layer's internals (heddle::fw_detail) name these unqualified.
namespace heddle::fw_detail {
using fw::conditions;
using fw::iov_start;
}  // namespace heddle::fw_detail
