// SPDX-License-Identifier: Apache-2.0
// How the configuration reader, which parses with nlohmann-json, makes a module's parameter_set
// without printing and parsing its object again. Private to heddle::fw: nlohmann-json is not part
// of the public headers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "heddle/core/export.hpp"
#include "heddle/fw/parameter_set.hpp"

namespace heddle::fw_detail {

// The set of `object` (copied; the caller leaves out "@label" and "@type"), where() `where`, e.g.
// "reco.json: process.producers[3] 'jets'". Throws config_error "<where>: expected a JSON object,
// found <type>" if `object` is not an object. Exported for the tests of the shared build.
HEDDLE_EXPORT parameter_set make_parameter_set(const nlohmann::json& object, std::string where);

}  // namespace heddle::fw_detail
