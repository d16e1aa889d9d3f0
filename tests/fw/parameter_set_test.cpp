// SPDX-License-Identifier: Apache-2.0
// A module's parameters (parameter_set) and input tags: every type and its JSON forms, fallbacks,
// nested sets and vectors of them, each error with its whole one-line message, the read tracking
// that finds unknown parameters, and reads from several threads at once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <heddle/fw/input_tag.hpp>
#include <heddle/fw/parameter_set.hpp>

#include "heddle/fw/detail/parameter_set_json.hpp"

namespace {

using namespace heddle::fw;
namespace fw_detail = heddle::fw_detail;
using strings = std::vector<std::string>;

const std::string where = "reco.json: process.producers[3] 'jets'";

parameter_set set_of(std::string_view text) { return parameter_set::from_json(text, where); }

// The message of the exception `f` throws as E, or "" if it throws none.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

// ---- the types ----------------------------------------------------------------------------------

static_assert(parameter_type<bool> && parameter_type<std::int32_t> && parameter_type<std::uint32_t> &&
              parameter_type<std::int64_t> && parameter_type<std::uint64_t> && parameter_type<std::size_t> &&
              parameter_type<long long> && parameter_type<unsigned long long> && parameter_type<double> &&
              parameter_type<float> && parameter_type<std::string> && parameter_type<input_tag> &&
              parameter_type<parameter_set>);
static_assert(parameter_type<std::vector<bool>> && parameter_type<std::vector<parameter_set>> &&
              parameter_type<std::vector<input_tag>> && parameter_type<std::vector<std::uint64_t>>);
// Other types do not compile (the call is refused by its constraint, not at link time).
static_assert(!parameter_type<short> && !parameter_type<char> && !parameter_type<long double> &&
              !parameter_type<const char*> && !parameter_type<std::vector<std::vector<int>>>);
// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class T>
concept gettable = requires(const parameter_set& p) { p.get<T>("x"); };
template <class T, class F>
concept gettable_with = requires(const parameter_set& p, F fallback) { p.get<T>("x", fallback); };
template <class F>
concept gettable_deduced = requires(const parameter_set& p, F fallback) { p.get("x", fallback); };
// clang-format on
static_assert(!gettable<short> && !gettable<std::vector<char>> && gettable<std::vector<std::string>>);
static_assert(!gettable_deduced<const char*> && gettable_deduced<std::string> && gettable_deduced<double>);
static_assert(gettable_with<std::string, const char*>);  // get<std::string>("name", "default")

TEST(ParameterSet, ReadsEveryType) {
  const parameter_set ps = set_of(R"({
    "on": true, "off": false,
    "i": -7, "u": 4000000000, "big": 18446744073709551615, "neg64": -9223372036854775808,
    "x": 2.5, "whole": 1e3, "n": 3,
    "s": "hello", "tag": "tracks:pixel", "plain": "hits",
    "cuts": {"ptMin": 5.0, "inner": {"depth": 2}},
    "bins": [0, 1, 2, 3], "ws": [-1.5, 2], "flags": [true, false, true], "names": ["a", "b"],
    "tags": ["a", "b:c"], "sets": [{"k": 1}, {"k": 2}], "none": []
  })");
  EXPECT_TRUE(ps.get<bool>("on"));
  EXPECT_FALSE(ps.get<bool>("off"));
  EXPECT_EQ(ps.get<int>("i"), -7);
  EXPECT_EQ(ps.get<long>("i"), -7L);
  EXPECT_EQ(ps.get<long long>("i"), -7LL);
  EXPECT_EQ(ps.get<std::uint32_t>("u"), 4000000000u);
  EXPECT_EQ(ps.get<unsigned long>("u"), 4000000000ul);
  EXPECT_EQ(ps.get<std::uint64_t>("big"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(ps.get<unsigned long long>("big"), std::numeric_limits<unsigned long long>::max());
  EXPECT_EQ(ps.get<std::int64_t>("neg64"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(ps.get<std::size_t>("n"), 3u);
  EXPECT_EQ(ps.get<int>("whole"), 1000);  // a whole float is an integer
  EXPECT_EQ(ps.get<unsigned>("whole"), 1000u);
  EXPECT_DOUBLE_EQ(ps.get<double>("x"), 2.5);
  EXPECT_FLOAT_EQ(ps.get<float>("x"), 2.5f);
  EXPECT_DOUBLE_EQ(ps.get<double>("n"), 3.0);  // an integer is a number
  EXPECT_FLOAT_EQ(ps.get<float>("i"), -7.0f);
  EXPECT_EQ(ps.get<std::string>("s"), "hello");
  EXPECT_EQ(ps.get<input_tag>("tag"), input_tag("tracks", "pixel"));
  EXPECT_EQ(ps.get<input_tag>("plain"), input_tag("hits"));
  const parameter_set cuts = ps.get<parameter_set>("cuts");
  EXPECT_DOUBLE_EQ(cuts.get<double>("ptMin"), 5.0);
  EXPECT_EQ(cuts.get<parameter_set>("inner").get<int>("depth"), 2);
  EXPECT_EQ(ps.get<std::vector<unsigned>>("bins"), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_EQ(ps.get<std::vector<std::int64_t>>("bins"), (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(ps.get<std::vector<double>>("ws"), (std::vector<double>{-1.5, 2.0}));
  EXPECT_EQ(ps.get<std::vector<float>>("ws"), (std::vector<float>{-1.5f, 2.0f}));
  EXPECT_EQ(ps.get<std::vector<bool>>("flags"), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(ps.get<std::vector<std::string>>("names"), (strings{"a", "b"}));
  EXPECT_EQ(ps.get<std::vector<input_tag>>("tags"), (std::vector<input_tag>{input_tag("a"), input_tag("b", "c")}));
  const auto sets = ps.get<std::vector<parameter_set>>("sets");
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].get<int>("k"), 1);
  EXPECT_EQ(sets[1].get<int>("k"), 2);
  EXPECT_TRUE(ps.get<std::vector<int>>("none").empty());
  EXPECT_TRUE(ps.get<std::vector<parameter_set>>("none").empty());
}

TEST(ParameterSet, IntegerRangesAreEachTypesOwn) {
  const parameter_set ps = set_of(R"({"imax": 2147483647, "imin": -2147483648, "over": 2147483648, "under": -2147483649,
                                      "umax": 4294967295, "uover": 4294967296, "minus": -1, "e20": 1e20, "m1e19": -1e19})");
  EXPECT_EQ(ps.get<int>("imax"), std::numeric_limits<int>::max());
  EXPECT_EQ(ps.get<int>("imin"), std::numeric_limits<int>::min());
  EXPECT_EQ(ps.get<long>("over"), 2147483648L);
  EXPECT_EQ(ps.get<unsigned>("umax"), std::numeric_limits<unsigned>::max());
  EXPECT_EQ(
      message_of<parameter_error>([&] { (void)ps.get<int>("over"); }),
      where +
          ": parameter 'over': out of range (expected integer in [-2147483648, 2147483647], found number 2147483648)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<int>("under"); }),
            where + ": parameter 'under': out of range (expected integer in [-2147483648, 2147483647], found number "
                    "-2147483649)");
  EXPECT_EQ(
      message_of<parameter_error>([&] { (void)ps.get<unsigned>("uover"); }),
      where +
          ": parameter 'uover': out of range (expected unsigned integer in [0, 4294967295], found number 4294967296)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::uint64_t>("minus"); }),
            where + ": parameter 'minus': out of range (expected unsigned integer in [0, 18446744073709551615], found "
                    "number -1)");
  // Whole floats beyond 64 bits: refused, not wrapped or saturated.
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::uint64_t>("e20"); }),
            where + ": parameter 'e20': out of range (expected unsigned integer in [0, 18446744073709551615], found "
                    "number 1e+20)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::int64_t>("m1e19", 0); }),
            where + ": parameter 'm1e19': out of range (expected integer in [-9223372036854775808, "
                    "9223372036854775807], found number -1e+19)");
  EXPECT_EQ(set_of(R"({"v": -9.223372036854775808e18})").get<std::int64_t>("v"),
            std::numeric_limits<std::int64_t>::min());
}

TEST(ParameterSet, NumbersAreNotConvertedFromOtherTypes) {
  const parameter_set ps = set_of(R"({"s": "3", "half": 2.5, "one": 1, "t": true, "null": null, "huge": 1e39})");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<int>("s"); }),
            where + ": parameter 's': wrong type (expected integer, found string \"3\")");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<double>("s"); }),
            where + ": parameter 's': wrong type (expected number, found string \"3\")");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<int>("half"); }),
            where + ": parameter 'half': not a whole number (expected integer, found number 2.5)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<bool>("one"); }),
            where + ": parameter 'one': wrong type (expected boolean, found number 1)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<int>("t"); }),
            where + ": parameter 't': wrong type (expected integer, found boolean true)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::string>("null"); }),
            where + ": parameter 'null': wrong type (expected string, found null)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::string>("one"); }),
            where + ": parameter 'one': wrong type (expected string, found number 1)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<float>("huge"); }),
            where + ": parameter 'huge': out of range (expected number of magnitude at most 3.4028234663852886e+38, "
                    "found number 1e+39)");
  EXPECT_DOUBLE_EQ(ps.get<double>("huge"), 1e39);
}

// ---- absent parameters and fallbacks ------------------------------------------------------------

TEST(ParameterSet, AnAbsentParameterIsAnErrorNamingWhatIsThere) {
  const parameter_set ps = set_of(R"({"ptMin": 5, "etaMax": 2.4})");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<double>("ptmin"); }),
            where + ": parameter 'ptmin': missing (expected number, found only: etaMax, ptMin)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)parameter_set().get<std::vector<double>>("bins"); }),
            "parameters: parameter 'bins': missing (expected list of numbers, found an empty set)");
  try {
    (void)ps.get<int>("nope");
    FAIL() << "no exception";
  } catch (const config_error& e) {  // a parameter_error is a configuration error
    const auto* pe = dynamic_cast<const parameter_error*>(&e);
    ASSERT_NE(pe, nullptr);
    EXPECT_EQ(pe->where(), where);
    EXPECT_EQ(pe->name(), "nope");
  }
}

TEST(ParameterSet, FallbacksReplaceOnlyAbsentParameters) {
  const parameter_set ps = set_of(R"({"n": 4, "s": "x", "bins": [1, "two"]})");
  EXPECT_EQ(ps.get<int>("n", 9), 4);
  EXPECT_EQ(ps.get<int>("m", 9), 9);
  EXPECT_EQ(ps.get<std::string>("t", "dflt"), "dflt");
  EXPECT_EQ(ps.get<input_tag>("src", input_tag("gen")), input_tag("gen"));
  EXPECT_EQ(ps.get<std::vector<int>>("v", {1, 2}), (std::vector<int>{1, 2}));
  EXPECT_EQ(ps.get<parameter_set>("cuts", parameter_set()).names(), strings{});
  // Present but unreadable: the error, never the fallback.
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<double>("s", 1.0); }),
            where + ": parameter 's': wrong type (expected number, found string \"x\")");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::vector<int>>("bins", {}); }),
            where + ": parameter 'bins[1]': wrong type (expected integer, found string \"two\")");
}

// ---- vectors ------------------------------------------------------------------------------------

TEST(ParameterSet, AVectorsBadElementIsNamedByItsIndex) {
  const parameter_set ps = set_of(R"({"bins": [0, 1, 2, -3], "tags": ["a", "b::c"], "n": 3, "mixed": [1, 2.5]})");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::vector<unsigned>>("bins"); }),
            where +
                ": parameter 'bins[3]': out of range (expected unsigned integer in [0, 4294967295], found number -3)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::vector<double>>("n"); }),
            where + ": parameter 'n': wrong type (expected list of numbers, found number 3)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::vector<parameter_set>>("bins"); }),
            where + ": parameter 'bins[0]': wrong type (expected parameter set (a JSON object), found number 0)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::vector<input_tag>>("tags"); }),
            where + ": parameter 'tags[1]': invalid input tag: more than one ':' (expected input tag \"label\" or "
                    "\"label:instance\", found string \"b::c\")");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<std::vector<int>>("mixed"); }),
            where + ": parameter 'mixed[1]': not a whole number (expected integer, found number 2.5)");
  EXPECT_EQ(ps.get<std::vector<double>>("mixed"), (std::vector<double>{1.0, 2.5}));
}

TEST(ParameterSet, LongValuesAreShortenedInMessages) {
  std::string many = "[";
  for (int i = 0; i < 100; ++i) {
    if (i) many += ',';  // appended piecewise: g++ 12 warns (-Wrestrict) wrongly about "," + s
    many += std::to_string(i);
  }
  const parameter_set ps = set_of(R"({"v": )" + many + R"(], "s": "xééééééééééééééééééééééééééééééééé"})");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<int>("v"); }),
            where +
                ": parameter 'v': wrong type (expected integer, found array [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,1...)");
  // Cut on a character boundary: "é" is two bytes; the 37th byte is the middle of the 18th é, so
  // the quote, the x and 17 of them are kept.
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<int>("s"); }),
            where + ": parameter 's': wrong type (expected integer, found string \"xééééééééééééééééé...)");
}

// ---- nested sets --------------------------------------------------------------------------------

TEST(ParameterSet, NestedSetsSayWhereTheyAre) {
  const parameter_set ps =
      set_of(R"({"cuts": {"ptMin": "5", "eta": {"max": 2.4}}, "jets": [{"r": 0.4}, {"r": "wide"}]})");
  const parameter_set cuts = ps.get<parameter_set>("cuts");
  EXPECT_EQ(cuts.where(), where + ".cuts");
  EXPECT_EQ(cuts.get<parameter_set>("eta").where(), where + ".cuts.eta");
  EXPECT_EQ(cuts.names(), (strings{"eta", "ptMin"}));
  EXPECT_EQ(cuts.dump(), R"({"eta":{"max":2.4},"ptMin":"5"})");
  // A nested parameter is named from the module's set, whose place the message starts with.
  EXPECT_EQ(message_of<parameter_error>([&] { (void)cuts.get<double>("ptMin"); }),
            where + ": parameter 'cuts.ptMin': wrong type (expected number, found string \"5\")");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)cuts.get<parameter_set>("eta").get<int>("max"); }),
            where + ": parameter 'cuts.eta.max': not a whole number (expected integer, found number 2.4)");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)cuts.get<parameter_set>("eta").get<int>("min"); }),
            where + ": parameter 'cuts.eta.min': missing (expected integer, found only: max)");
  const auto jets = ps.get<std::vector<parameter_set>>("jets");
  EXPECT_EQ(jets[1].where(), where + ".jets[1]");
  EXPECT_DOUBLE_EQ(jets[0].get<double>("r"), 0.4);
  EXPECT_EQ(message_of<parameter_error>([&] { (void)jets[1].get<double>("r"); }),
            where + ": parameter 'jets[1].r': wrong type (expected number, found string \"wide\")");
  try {
    (void)cuts.get<double>("ptMin");
  } catch (const parameter_error& e) {
    EXPECT_EQ(e.where(), where);
    EXPECT_EQ(e.name(), "cuts.ptMin");
  }
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<parameter_set>("jets"); }),
            where + ": parameter 'jets': wrong type (expected parameter set (a JSON object), found array "
                    "[{\"r\":0.4},{\"r\":\"wide\"}])");
}

TEST(ParameterSet, ANestedSetOutlivesItsParent) {
  parameter_set inner;
  {
    const parameter_set outer = set_of(R"({"a": {"b": {"c": [1, 2, 3]}}})");
    inner = outer.get<parameter_set>("a").get<parameter_set>("b");
  }
  EXPECT_EQ(inner.get<std::vector<int>>("c"), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(inner.where(), where + ".a.b");
  EXPECT_TRUE(inner.unread().empty());
}

// ---- the empty set, dump, the reader's entry ----------------------------------------------------

TEST(ParameterSet, TheEmptySet) {
  const parameter_set ps;
  EXPECT_EQ(ps.where(), "parameters");
  EXPECT_TRUE(ps.names().empty());
  EXPECT_TRUE(ps.unread().empty());
  EXPECT_FALSE(ps.exists("x"));
  EXPECT_EQ(ps.dump(), "{}");
  EXPECT_EQ(ps.get<int>("x", 3), 3);
  EXPECT_EQ(parameter_set::from_json(" {} ").names(), strings{});
}

TEST(ParameterSet, DumpIsCompactSortedJson) {
  const parameter_set ps = set_of("{\n  \"b\": [1, 2],\n  \"a\": {\"x\": \"y\"}\n}");
  EXPECT_EQ(ps.dump(), R"({"a":{"x":"y"},"b":[1,2]})");
  EXPECT_EQ(parameter_set::from_json(ps.dump()).dump(), ps.dump());
  EXPECT_TRUE(ps.unread().size() == 2) << "dump reads nothing";
}

TEST(ParameterSet, TheConfigurationReaderMakesSetsFromItsJson) {
  const nlohmann::json module = nlohmann::json::parse(R"({"src": "tracks", "ptMin": 1.5})");
  const parameter_set ps = fw_detail::make_parameter_set(module, where);
  EXPECT_EQ(ps.where(), where);
  EXPECT_EQ(ps.get<input_tag>("src"), input_tag("tracks"));
  EXPECT_EQ(ps.unread(), strings{"ptMin"});
  EXPECT_EQ(message_of<config_error>([&] { (void)fw_detail::make_parameter_set(nlohmann::json::array(), where); }),
            where + ": expected a JSON object, found array");
}

// ---- malformed text -----------------------------------------------------------------------------

TEST(ParameterSet, MalformedJsonSaysLineAndColumn) {
  const std::string syntax = message_of<config_error>([] {
    (void)parameter_set::from_json("{\n  \"a\": 1,\n  \"b\": tru\n}", "jets.json");
  });
  // The literal "tru" ends at the line break, the character nlohmann reports (as the reader does).
  EXPECT_EQ(syntax.rfind("jets.json:3:11: malformed JSON: ", 0), 0u) << syntax;
  EXPECT_NE(syntax.find("invalid literal"), std::string::npos) << syntax;
  EXPECT_EQ(message_of<config_error>([] { (void)parameter_set::from_json("\n  [1, 2]", "jets.json"); }),
            "jets.json:2:3: expected a JSON object, found array");
  EXPECT_EQ(message_of<config_error>([] { (void)parameter_set::from_json("3"); }),
            "parameters:1:1: expected a JSON object, found number");
  EXPECT_EQ(message_of<config_error>([] {
              (void)parameter_set::from_json("");
            }).rfind("parameters:1:1: malformed JSON: ", 0),
            0u);
  EXPECT_EQ(message_of<config_error>([] {
              (void)parameter_set::from_json(R"({"a": 1} x)");
            }).rfind("parameters:1:10: malformed JSON: ", 0),
            0u);
  EXPECT_EQ(message_of<config_error>([] { (void)parameter_set::from_json("{\"a\": 1,\n \"b\": 1e400}"); }),
            "parameters:2:7: malformed JSON: number overflow parsing '1e400'");
  EXPECT_EQ(message_of<config_error>([] { (void)parameter_set::from_json("{\"a\": \"\xff\"}"); })
                .rfind("parameters:1:8: malformed JSON: syntax error while parsing value - invalid string: ill-formed "
                       "UTF-8 byte",
                       0),
            0u);
}

// ---- unread parameters --------------------------------------------------------------------------

TEST(ParameterSet, UnreadListsWhatNoGetOrExistsLookedAt) {
  const parameter_set ps = set_of(R"({
    "src": "tracks", "ptMin": 5, "ptmin": 5, "debug": false, "bins": [1, 2],
    "cuts": {"eta": 2.4, "phi": 3.1, "deep": {"x": 1, "y": 2}}, "empty": {}, "emptyRead": {},
    "jets": [{"r": 0.4, "unused": 1}], "a-b": 1
  })");
  EXPECT_EQ(ps.unread(), (strings{"a-b", "bins", "cuts.deep.x", "cuts.deep.y", "cuts.eta", "cuts.phi", "debug", "empty",
                                  "emptyRead", "jets", "ptMin", "ptmin", "src"}));
  (void)ps.get<input_tag>("src");
  (void)ps.get<double>("ptMin");
  EXPECT_TRUE(ps.exists("debug"));  // exists looks at it too
  EXPECT_FALSE(ps.exists("absent"));
  (void)ps.get<int>("nope", 0);  // a fallback for an absent name marks nothing
  (void)ps.names();              // names() reads nothing
  (void)ps.get<parameter_set>("emptyRead");
  const parameter_set cuts = ps.get<parameter_set>("cuts");
  (void)cuts.get<double>("eta");
  const parameter_set deep = parameter_set(cuts).get<parameter_set>("deep");  // through a copy
  (void)deep.get<int>("y");
  const auto jets = ps.get<std::vector<parameter_set>>("jets");  // a vector is one parameter
  (void)jets[0].get<double>("r");
  EXPECT_THROW((void)ps.get<int>("bins"), parameter_error);  // looked at, even though it failed
  EXPECT_EQ(ps.unread(), (strings{"a-b", "cuts.deep.x", "cuts.phi", "empty", "ptmin"}));
  // A nested set's unread() covers its part of the document, named from itself, read through
  // any set: the top-level set or another copy.
  EXPECT_EQ(cuts.unread(), (strings{"deep.x", "phi"}));
  EXPECT_EQ(deep.unread(), strings{"x"});
  (void)ps.get<parameter_set>("cuts").get<parameter_set>("deep").get<int>("x");
  EXPECT_TRUE(deep.unread().empty());
  EXPECT_EQ(ps.unread(), (strings{"a-b", "cuts.phi", "empty", "ptmin"}));
}

TEST(ParameterSet, SetsParsedSeparatelyTrackSeparately) {
  const std::string text = R"({"a": 1, "b": 2})";
  const parameter_set one = set_of(text);
  const parameter_set two = set_of(text);
  (void)one.get<int>("a");
  EXPECT_EQ(one.unread(), strings{"b"});
  EXPECT_EQ(two.unread(), (strings{"a", "b"}));
}

// ---- several threads ----------------------------------------------------------------------------

TEST(ParameterSet, ConcurrentGetsReturnTheValuesAndTrackEveryRead) {
#if defined(HEDDLE_TEST_SANITIZED)
  constexpr int rounds = 2000;
#else
  constexpr int rounds = 20000;
#endif
  constexpr int threads = 4;
  // Each thread reads the shared parameters and its own: the read tracking sees writes from all.
  std::string text =
      R"({"n": 42, "x": 0.5, "s": "abc", "tag": "a:b", "bins": [1, 2, 3], "cuts": {"ptMin": 7, "sub": {"k": -1}})";
  for (int t = 0; t < threads; ++t) text += ", \"own" + std::to_string(t) + "\": " + std::to_string(100 + t);
  text += "}";
  const parameter_set ps = set_of(text);
  const parameter_set copy = ps;  // copies share the tracking
  std::atomic<int> wrong{0};
  std::atomic<int> unread_sizes_bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const parameter_set& mine = t % 2 ? copy : ps;
      const std::string own = "own" + std::to_string(t);
      for (int i = 0; i < rounds; ++i) {
        bool ok = mine.get<int>("n") == 42 && mine.get<double>("x") == 0.5 && mine.get<std::string>("s") == "abc" &&
                  mine.get<input_tag>("tag") == input_tag("a", "b") &&
                  mine.get<std::vector<unsigned>>("bins") == std::vector<unsigned>{1, 2, 3} && mine.exists("cuts") &&
                  mine.get<int>(own) == 100 + t && mine.get<int>("absent", -5) == -5;
        const parameter_set cuts = mine.get<parameter_set>("cuts");
        ok = ok && cuts.get<unsigned>("ptMin") == 7 && cuts.get<parameter_set>("sub").get<long>("k") == -1;
        if (!ok) wrong.fetch_add(1, std::memory_order_relaxed);
        if (i % 64 == 0 && mine.unread().size() > static_cast<std::size_t>(threads - 1)) {
          unread_sizes_bad.fetch_add(1, std::memory_order_relaxed);  // only others' "ownN" may be unread
        }
        try {
          (void)mine.get<int>("s");
          wrong.fetch_add(1, std::memory_order_relaxed);
        } catch (const parameter_error& e) {
          if (e.name() != "s") wrong.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(unread_sizes_bad.load(), 0);
  EXPECT_TRUE(ps.unread().empty()) << ::testing::PrintToString(ps.unread());
}

// ---- input tags ---------------------------------------------------------------------------------

TEST(InputTag, ParsesAndEncodesBothForms) {
  const input_tag plain = input_tag::parse("tracks");
  EXPECT_EQ(plain.label, "tracks");
  EXPECT_EQ(plain.instance, "");
  EXPECT_EQ(plain.encode(), "tracks");
  const input_tag full = input_tag::parse("hltPixel/Tracks:pixel_1");
  EXPECT_EQ(full.label, "hltPixel/Tracks");
  EXPECT_EQ(full.instance, "pixel_1");
  EXPECT_EQ(full.encode(), "hltPixel/Tracks:pixel_1");
  for (const char* text : {"a", "a:b", "ak4PFJets:jets", "x/y:z.w"}) {
    EXPECT_EQ(input_tag::parse(text).encode(), text);
    EXPECT_EQ(input_tag::parse(input_tag::parse(text).encode()), input_tag::parse(text));
  }
  EXPECT_EQ(input_tag("a", "b"), input_tag::parse("a:b"));
  EXPECT_NE(input_tag("a", "b"), input_tag("a"));
  EXPECT_EQ(input_tag().encode(), "");
  std::ostringstream os;
  os << input_tag("jets", "ak4") << ' ' << input_tag("hits");
  EXPECT_EQ(os.str(), "jets:ak4 hits");
}

TEST(InputTag, RefusesEachBadForm) {
  auto error = [](std::string_view text) {
    return message_of<std::invalid_argument>([&] { (void)input_tag::parse(text); });
  };
  EXPECT_EQ(error(""), "invalid input tag \"\": empty (expected \"label\" or \"label:instance\")");
  EXPECT_EQ(error(":x"), "invalid input tag \":x\": empty label (expected \"label\" or \"label:instance\")");
  EXPECT_EQ(error(":"), "invalid input tag \":\": empty label (expected \"label\" or \"label:instance\")");
  EXPECT_EQ(error("a:"),
            "invalid input tag \"a:\": empty instance after ':' (expected \"label\" or \"label:instance\")");
  EXPECT_EQ(error("a:b:c"),
            "invalid input tag \"a:b:c\": more than one ':' (expected \"label\" or \"label:instance\")");
  EXPECT_EQ(error("a b"), "invalid input tag \"a b\": whitespace (expected \"label\" or \"label:instance\")");
  EXPECT_EQ(error(" a"), "invalid input tag \" a\": whitespace (expected \"label\" or \"label:instance\")");
  EXPECT_EQ(error("a:b\t"), "invalid input tag \"a:b\t\": whitespace (expected \"label\" or \"label:instance\")");
  EXPECT_EQ(error("a\n:b"), "invalid input tag \"a\n:b\": whitespace (expected \"label\" or \"label:instance\")");
  // The constructors keep parse(encode()) exact: the same characters are refused. One string is
  // the text form, parsed, as CMS's InputTag reads it.
  EXPECT_THROW(input_tag(""), std::invalid_argument);
  EXPECT_THROW(input_tag("", "x"), std::invalid_argument);
  EXPECT_EQ(input_tag("a:b"), input_tag("a", "b"));
  EXPECT_EQ(input_tag(std::string("a:b")), input_tag("a", "b"));
  EXPECT_THROW(input_tag("a:b:c"), std::invalid_argument);
  EXPECT_THROW(input_tag("a", "b:c"), std::invalid_argument);
  EXPECT_THROW(input_tag("a b"), std::invalid_argument);
  EXPECT_THROW(input_tag("a", " "), std::invalid_argument);
  EXPECT_EQ(message_of<std::invalid_argument>([] { (void)input_tag("a", "b:c"); }),
            "invalid input tag \"a:b:c\": ':' inside label or instance (expected \"label\" or \"label:instance\")");
}

TEST(InputTag, AParameterThatIsNoTagSaysWhy) {
  const parameter_set ps = set_of(R"({"src": "a:", "n": 3})");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<input_tag>("src"); }),
            where + ": parameter 'src': invalid input tag: empty instance after ':' (expected input tag \"label\" or "
                    "\"label:instance\", found string \"a:\")");
  EXPECT_EQ(message_of<parameter_error>([&] { (void)ps.get<input_tag>("n"); }),
            where + ": parameter 'n': wrong type (expected input tag (a string \"label\" or \"label:instance\"), found "
                    "number 3)");
}

}  // namespace
