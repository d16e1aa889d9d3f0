// SPDX-License-Identifier: Apache-2.0
// What a module declared in its constructor, as the framework reads it at finalize().
#pragma once

#include <cstdint>
#include <string>
#include <typeinfo>
#include <vector>

#include "heddle/fw/detail/product_ops.hpp"
#include "heddle/fw/input_tag.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw_detail {

struct consumed {
  input_tag tag;
  const std::type_info* type;
  branch_type where = in_event;
};

struct produced {
  std::string instance;
  const product_ops* ops;
  transition when = transition::event;
};

struct es_consumed {
  const std::type_info* type;
  const std::type_info* record;
  std::string label;
};

struct declarations {
  std::vector<consumed> consumes;
  std::vector<produced> produces;
  std::vector<es_consumed> es_consumes;
  std::vector<std::string> resources;  // one:: modules' shared resources, sorted, unique
  bool frozen = false;                 // added to a process: no more declarations
};

// The shared resource of legacy modules (one:: modules that call uses_resource() without a name):
// every such module runs one at a time with every other, as thread-unsafe code must.
inline constexpr const char* legacy_resource = "heddle::legacy";

}  // namespace heddle::fw_detail
