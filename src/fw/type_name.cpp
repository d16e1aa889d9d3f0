// SPDX-License-Identifier: Apache-2.0
#include "type_name.hpp"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace heddle::fw_detail {

std::string type_name(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  std::string s = status == 0 && name ? name.get() : t.name();
  // The standard library's long spellings, as a programmer writes them.
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{
            "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string"},
        {"std::__cxx11::", "std::"},
        // a type of a file's own (a test's record, say) is named as its file writes it
        {"(anonymous namespace)::", ""}}) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at)) {
      s.replace(at, from.size(), to);
      at += to.size();
    }
  }
  // ", std::allocator<X> >" after a vector's element type says nothing.
  for (std::size_t at = s.find(", std::allocator<"); at != std::string::npos; at = s.find(", std::allocator<", at)) {
    int depth = 0;
    std::size_t end = at + 2;
    for (; end < s.size(); ++end) {
      if (s[end] == '<') ++depth;
      else if (s[end] == '>' && --depth == 0) break;
    }
    if (end >= s.size()) break;
    s.erase(at, end + 1 - at);
  }
  // The demangler's "> >" (and "std::string >" once the allocators are gone), as C++11 writes it.
  for (std::size_t at = s.find(" >"); at != std::string::npos; at = s.find(" >", at)) s.erase(at, 1);
  return s;
}

}  // namespace heddle::fw_detail
