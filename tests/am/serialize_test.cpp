// SPDX-License-Identifier: Apache-2.0
// Serialisation of active-message arguments: every built-in type round-trips, and a truncated or
// corrupt buffer throws decode_error instead of reading past its end or allocating wildly.
#include <gtest/gtest.h>
#include <reproduce.hpp>

#include <heddle/am/serialize.hpp>
#include <random>

namespace {

using namespace heddle::offload;

template <class T>
T round_trip(const T& v) {
  writer w;
  write(w, v);
  reader r(w.data());
  T back = read<T>(r);
  EXPECT_EQ(r.remaining(), 0u);
  return back;
}

struct point {
  double x, y;
  int tag;
  bool operator==(const point&) const = default;
};

// A user type with its own serializer: a name and a list of points.
struct track {
  std::string name;
  std::vector<point> hits;
  bool operator==(const track&) const = default;
};

}  // namespace

template <>
struct heddle::offload::serializer<track> {
  static void write(writer& w, const track& t) {
    offload::write(w, t.name);
    offload::write(w, t.hits);
  }
  static track read(reader& r) {
    track t;
    t.name = offload::read<std::string>(r);
    t.hits = offload::read<std::vector<point>>(r);
    return t;
  }
};

namespace {

TEST(Serialize, BuiltInTypesRoundTrip) {
  EXPECT_EQ(round_trip(42), 42);
  EXPECT_EQ(round_trip(-1.5), -1.5);
  EXPECT_EQ(round_trip(point{1, 2, 3}), (point{1, 2, 3}));
  EXPECT_EQ(round_trip(std::string("hello, node")), "hello, node");
  EXPECT_EQ(round_trip(std::string()), "");
  EXPECT_EQ(round_trip(std::vector<int>{1, 2, 3}), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(round_trip(std::vector<std::string>{"a", "", "ccc"}), (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(round_trip(std::array<std::string, 2>{"x", "y"}), (std::array<std::string, 2>{"x", "y"}));
  EXPECT_EQ(round_trip(std::array<int, 3>{4, 5, 6}), (std::array<int, 3>{4, 5, 6}));
  // An array's encoding is its elements' alone: none for an empty one (which is a byte large).
  {
    writer w;
    write(w, std::array<int, 3>{4, 5, 6});
    EXPECT_EQ(w.data().size(), 3 * sizeof(int));
    writer empty;
    write(empty, std::array<std::uint8_t, 0>{});
    write(empty, std::array<std::string, 0>{});
    EXPECT_EQ(empty.data().size(), 0u);
  }
  EXPECT_EQ(round_trip(std::array<std::uint8_t, 0>{}), (std::array<std::uint8_t, 0>{}));
  EXPECT_EQ(round_trip(std::array<std::string, 0>{}), (std::array<std::string, 0>{}));
  EXPECT_EQ(round_trip(std::pair<std::string, int>{"k", 7}), (std::pair<std::string, int>{"k", 7}));
  EXPECT_EQ(round_trip(std::tuple<int, std::string, double>{1, "two", 3.0}),
            (std::tuple<int, std::string, double>{1, "two", 3.0}));
  EXPECT_EQ(round_trip(std::optional<std::string>("maybe")), std::optional<std::string>("maybe"));
  EXPECT_EQ(round_trip(std::optional<std::string>()), std::nullopt);
  const std::map<std::string, std::vector<int>> m{{"a", {1}}, {"b", {}}, {"c", {2, 3}}};
  EXPECT_EQ(round_trip(m), m);
  const track t{"muon", {{0, 1, 2}, {3, 4, 5}}};
  EXPECT_EQ(round_trip(t), t);
  EXPECT_EQ(round_trip(std::vector<track>{t, t}), (std::vector<track>{t, t}));
}

TEST(Serialize, SeveralValuesReadBackInOrder) {
  writer w;
  write(w, 1);
  write(w, std::string("two"));
  write(w, 3.0);
  reader r(w.data());
  EXPECT_EQ(read<int>(r), 1);
  EXPECT_EQ(read<std::string>(r), "two");
  EXPECT_EQ(read<double>(r), 3.0);
  EXPECT_THROW(read<int>(r), decode_error);
}

TEST(Serialize, EveryTruncationIsRejected) {
  const std::map<std::string, std::vector<track>> value{{"event", {{"e", {{1, 2, 3}}}, {"f", {}}}}, {"empty", {}}};
  writer w;
  write(w, value);
  const auto& bytes = w.data();
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    reader r(std::span(bytes.data(), n));
    EXPECT_THROW((read<std::map<std::string, std::vector<track>>>(r)), decode_error) << "prefix of " << n << " bytes";
  }
}

TEST(Serialize, CorruptCountsAreRejectedBeforeAllocating) {
  writer w;
  const std::uint64_t huge = std::uint64_t{1} << 60;
  w.bytes(&huge, sizeof huge);
  w.bytes("abc", 3);
  for (int kind = 0; kind < 3; ++kind) {
    reader r(w.data());
    try {
      if (kind == 0) read<std::string>(r);
      if (kind == 1) read<std::vector<double>>(r);
      if (kind == 2) read<std::vector<std::string>>(r);
      ADD_FAILURE() << "a count of 2^60 was accepted";
    } catch (const decode_error& e) {
      EXPECT_NE(std::string(e.what()).find("exceeds the 3 bytes left"), std::string::npos) << e.what();
    }
  }
  // An optional's flag or a bool other than 0 or 1 (with the bytes of a whole value after it: the
  // check is on the flag, not on the length), a map with a repeated key.
  writer o;
  const std::uint8_t flag = 7;
  o.bytes(&flag, 1);
  write(o, std::uint64_t{0});
  for (int kind = 0; kind < 4; ++kind) {
    reader ro(o.data());
    try {
      if (kind == 0) read<std::optional<int>>(ro);
      if (kind == 1) read<bool>(ro);
      if (kind == 2) read<std::pair<bool, int>>(ro);
      if (kind == 3) read<std::array<bool, 2>>(ro);
      ADD_FAILURE() << "a flag of 7 was accepted (kind " << kind << ")";
    } catch (const decode_error& e) {
      EXPECT_NE(std::string(e.what()).find("of value 7"), std::string::npos) << e.what();
    }
  }
  writer m;
  const std::uint64_t two = 2;
  m.bytes(&two, sizeof two);
  for (int i = 0; i < 2; ++i) {
    write(m, 5);
    write(m, 6);
  }
  reader rm(m.data());
  EXPECT_THROW((read<std::map<int, int>>(rm)), decode_error);
}

TEST(Serialize, RandomBytesNeverCrash) {
  std::mt19937 rng(static_cast<std::mt19937::result_type>(heddle_test::seed("values", 7)));
  std::uniform_int_distribution<int> byte(0, 255), length(0, 64);
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::byte> junk(length(rng));
    for (auto& b : junk) b = std::byte(byte(rng));
    reader r(junk);
    try {
      read<std::tuple<std::string, std::vector<point>, std::optional<std::map<int, std::string>>>>(r);
    } catch (const decode_error&) {
    }
  }
}

}  // namespace
