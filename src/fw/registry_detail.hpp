// SPDX-License-Identifier: Apache-2.0
// What the plugin loader asks the registry about the library it just opened.
#pragma once

#include <string>
#include <vector>

namespace heddle::fw_detail {

// The file the code at `address` was loaded from (the path given to dlopen, or the program's).
std::string library_of(const void* address);

// What `library` registered as it loaded.
struct library_registrations {
  // Every name it registers, sorted, those another library registered first included: what its
  // line in a plugin cache lists.
  std::vector<std::string> names;
  // Registrations that can never work (an empty name): the library is unusable.
  std::vector<std::string> errors;
  // Names another library (or the program) registered first, naming both: the library cannot be
  // used beside that one.
  std::vector<std::string> duplicates;
};
library_registrations registrations_of(const std::string& library);

}  // namespace heddle::fw_detail
