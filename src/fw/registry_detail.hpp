// What the plugin loader asks the registry about the library it just opened.
#pragma once

#include <string>
#include <vector>

namespace heddle::fw::detail {

// The file the code at `address` was loaded from (the path given to dlopen, or the program's).
std::string library_of(const void* address);
// The registration problems of `library` (empty names, names another library registered first).
std::vector<std::string> registration_problems(const std::string& library);
// The names `library` registered.
std::vector<std::string> names_registered_by(const std::string& library);

}  // namespace heddle::fw::detail
