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
