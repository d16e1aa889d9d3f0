// SPDX-License-Identifier: Apache-2.0
// A C++ type's name as its programmer wrote it (demangled), for messages about products.
#pragma once

#include <string>
#include <typeinfo>

namespace heddle::fw_detail {
std::string type_name(const std::type_info& t);
}
