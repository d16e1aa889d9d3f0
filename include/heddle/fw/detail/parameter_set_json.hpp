// SPDX-License-Identifier: Apache-2.0
// How the configuration reader, which parses with nlohmann-json, makes a module's parameter_set,
// and how a module that reads its keys with the reader's tables (config_keys.hpp: the study's timing
// modules) sees the JSON behind its set, without printing and parsing the object again. Not
// installed: nlohmann-json is not part of the public headers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "heddle/core/export.hpp"
#include "heddle/fw/parameter_set.hpp"

namespace heddle::fw_detail {

// The set of `object` (moved in where the caller passes an rvalue; the caller leaves out "@label" and "@type"), where()
// `where`, e.g. "reco.json: process.producers[3] 'jets'". Throws config_error "<where>: expected a JSON object, found
// <type>" if `object` is not an object. Exported for the tests of the shared build.
HEDDLE_EXPORT parameter_set make_parameter_set(nlohmann::json object, std::string where);

// The JSON object behind `set` (for a nested set, its part of the document). Marks nothing read: a
// reader marks what it takes with set.exists(name). Valid while `set` or a copy of it lives.
// Thread-safe (the document is immutable).
HEDDLE_EXPORT const nlohmann::json& json_of(const parameter_set& set) noexcept;

}  // namespace heddle::fw_detail
