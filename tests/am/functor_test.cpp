// SPDX-License-Identifier: Apache-2.0
// Functors and the handler registry: a call travels as (handler index, serialised arguments), the
// registry's order and hash are the same for every process built from the same sources, and an
// index from the wire is bounds-checked.
#include <gtest/gtest.h>

#include <cctype>
#include <heddle/am/functor.hpp>
#include <string>
#include <string_view>
#include <type_traits>

namespace {

int scale(int a, std::string s) { return a * static_cast<int>(s.size()); }
std::vector<int> repeat(const std::vector<int>& v, int times) {
  std::vector<int> out;
  for (int i = 0; i < times; ++i) out.insert(out.end(), v.begin(), v.end());
  return out;
}
int log_count = 0;
void log_line(std::string) { ++log_count; }

// Two overloads: f2f names one by its pointer type.
int twice(int a) { return 2 * a; }
std::string twice(const std::string& s) { return s + s; }
int negate(int a) noexcept { return -a; }

// A const reference in, a struct out; the struct holds a string, so it travels by its serializer.
struct word_stats {
  std::string upper;
  std::uint32_t vowels = 0;
  bool operator==(const word_stats&) const = default;
};
word_stats describe(const std::string& word) {
  word_stats out;
  for (char c : word) {
    out.upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (std::string_view("aeiou").find(c) != std::string_view::npos) ++out.vowels;
  }
  return out;
}

}  // namespace

template <>
struct heddle::offload::serializer<word_stats> {
  static void write(writer& w, const word_stats& v) {
    offload::write(w, v.upper);
    offload::write(w, v.vowels);
  }
  static word_stats read(reader& r) {
    word_stats v;
    v.upper = offload::read<std::string>(r);
    v.vowels = offload::read<std::uint32_t>(r);
    return v;
  }
};

namespace {

using namespace heddle::offload;
namespace am_detail = heddle::am_detail;

// What a transport does: index and arguments on one side, the registry's handler on the other.
template <class F>
auto travel(const F& call) {
  writer w;
  call.write_args(w);
  const std::uint32_t index = F::index();
  reader args(w.data());
  writer result;
  am_detail::registry::instance().at(index)(args, result);
  EXPECT_EQ(args.remaining(), 0u);
  reader r(result.data());
  return read_result<typename F::result_type>(r);
}

TEST(Functor, ACallTravelsThroughTheRegistry) {
  EXPECT_EQ(travel(heddle::f2f<&scale>(3, std::string("four"))), 12);
  EXPECT_EQ(travel(heddle::f2f<&repeat>(std::vector<int>{1, 2}, 2)), (std::vector<int>{1, 2, 1, 2}));
  travel(heddle::f2f<&log_line>(std::string("hi")));
  EXPECT_EQ(log_count, 1);
  // Run in place, the same result.
  EXPECT_EQ(heddle::f2f<&scale>(2, std::string("abc"))(), 6);
}

TEST(Functor, TheTypeHoldsTheFunctionsAddress) {
  static_assert(
      std::is_same_v<decltype(heddle::f2f<&scale>(1, std::string())), function_call<decltype(&scale), &scale>>);
  static_assert(std::is_same_v<decltype(heddle::f2f<&log_line>(std::string()))::result_type, void>);
  // The stored arguments are the parameters' decayed types, whatever was passed.
  static_assert(std::is_same_v<decltype(heddle::f2f<&describe>("x"))::args_type, std::tuple<std::string>>);
}

TEST(Functor, AnOverloadIsNamedByItsPointerType) {
  const auto by_int = heddle::f2f<static_cast<int (*)(int)>(&twice)>(21);
  const auto by_string = heddle::f2f<static_cast<std::string (*)(const std::string&)>(&twice)>(std::string("ab"));
  EXPECT_EQ(travel(by_int), 42);
  EXPECT_EQ(travel(by_string), "abab");
  // Same name, different types: two handlers.
  EXPECT_NE(decltype(by_int)::index(), decltype(by_string)::index());
  // A noexcept function, named as a plain pointer the same way.
  EXPECT_EQ(travel(heddle::f2f<static_cast<int (*)(int)>(&negate)>(5)), -5);
}

TEST(Functor, AConstReferenceInAndAStructOut) {
  const std::string word = "heddle";
  const word_stats expect{"HEDDLE", 2};
  EXPECT_EQ(travel(heddle::f2f<&describe>(word)), expect);
  EXPECT_EQ(heddle::f2f<&describe>(word)(), expect);
  // The argument was copied into the functor: the caller's string may change or die meanwhile.
  std::string changing = "abc";
  const auto call = heddle::f2f<&describe>(changing);
  changing = "zzzz";
  EXPECT_EQ(travel(call), (word_stats{"ABC", 1}));
}

TEST(Functor, EveryFunctorTypeHasItsOwnIndexAndTheOrderIsByName) {
  auto& reg = am_detail::registry::instance();
  const std::uint32_t a = decltype(heddle::f2f<&scale>(1, std::string()))::index();
  const std::uint32_t b = decltype(heddle::f2f<&repeat>(std::vector<int>{}, 1))::index();
  const std::uint32_t c = decltype(heddle::f2f<&log_line>(std::string()))::index();
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_NE(a, c);
  EXPECT_GE(reg.size(), 3u);
  EXPECT_NE(reg.hash(), 0u);
  EXPECT_EQ(reg.hash(), reg.hash());
  // The names carry the function: two functions with the same signature differ.
  EXPECT_NE(am_detail::type_name<decltype(heddle::f2f<&scale>(1, std::string()))>().find("scale"),
            std::string_view::npos);
}

TEST(Functor, AnIndexFromTheWireIsChecked) {
  auto& reg = am_detail::registry::instance();
  try {
    reg.at(static_cast<std::uint32_t>(reg.size()));
    FAIL();
  } catch (const unknown_handler& e) {
    EXPECT_NE(std::string(e.what()).find("unknown handler index"), std::string::npos) << e.what();
  }
  EXPECT_THROW(reg.index_of("no such functor"), unknown_handler);
}

TEST(Functor, TruncatedArgumentsAreRejected) {
  writer w;
  heddle::f2f<&scale>(3, std::string("four")).write_args(w);
  const auto& bytes = w.data();
  const auto index = decltype(heddle::f2f<&scale>(1, std::string()))::index();
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    reader args(std::span(bytes.data(), n));
    writer result;
    EXPECT_THROW(am_detail::registry::instance().at(index)(args, result), decode_error) << n;
  }
}

}  // namespace
