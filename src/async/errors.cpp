// SPDX-License-Identifier: Apache-2.0
#include "heddle/async/errors.hpp"

namespace heddle::io {

namespace {

class io_category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "heddle.io"; }
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::end_of_file: return "end of file";
    }
    return "unknown heddle.io error";
  }
};

}  // namespace

const std::error_category& category() noexcept {
  static const io_category c;
  return c;
}

}  // namespace heddle::io

// The key functions of the async layer's exceptions: defined here, once, so that their type_info
// and vtable live in this library alone and a throw in one library (or plugin) is caught by
// type in another (heddle/core/export.hpp).
namespace heddle {

operation_cancelled::~operation_cancelled() = default;

}  // namespace heddle
