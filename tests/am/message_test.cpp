// SPDX-License-Identifier: Apache-2.0
// The message frame: what is encoded decodes the same, and every malformed header, or frame whose
// payload disagrees with its header, is rejected with a message that says what is wrong.
#include <gtest/gtest.h>
#include <reproduce.hpp>

#include <array>
#include <heddle/am/message.hpp>
#include <random>
#include <vector>

namespace {

using namespace heddle::offload;

std::array<std::byte, message_header::size> encoded(const message_header& h) {
  std::array<std::byte, message_header::size> b{};
  h.encode(b.data());
  return b;
}

std::string error_of(std::span<const std::byte> b, std::uint64_t limit = 1 << 20) {
  try {
    message_header::decode(b, limit);
  } catch (const decode_error& e) {
    return e.what();
  }
  return "";
}

TEST(Message, HeadersRoundTrip) {
  for (auto kind : {message_kind::hello, message_kind::call, message_kind::post, message_kind::reply_value,
                    message_kind::reply_error, message_kind::goodbye, message_kind::put, message_kind::get}) {
    const message_header h{.kind = kind,
                           .strategy = 3,
                           .flags = message_out_of_line,
                           .handler = 17,
                           .call_id = 0x1234567890abcdefull,
                           .payload_bytes = 4096};
    const auto b = encoded(h);
    const message_header d = message_header::decode(b, 1 << 20);
    EXPECT_EQ(d.kind, kind);
    EXPECT_EQ(d.strategy, 3u);
    EXPECT_EQ(d.flags, message_out_of_line);
    EXPECT_EQ(d.handler, 17u);
    EXPECT_EQ(d.call_id, 0x1234567890abcdefull);
    EXPECT_EQ(d.payload_bytes, 4096u);
  }
}

TEST(Message, MalformedHeadersAreRejected) {
  const message_header h{.kind = message_kind::call, .handler = 3, .call_id = 9, .payload_bytes = 100};
  auto b = encoded(h);
  EXPECT_NE(error_of(std::span(b.data(), 31)).find("truncated message header: 31 of 32 bytes"), std::string::npos);
  EXPECT_NE(error_of(b, 99).find("oversized message: 100 bytes of payload, the limit is 99"), std::string::npos);
  auto bad_magic = b;
  bad_magic[0] = std::byte{0};
  EXPECT_NE(error_of(bad_magic).find("not a heddle message"), std::string::npos);
  auto bad_version = b;
  bad_version[4] = std::byte{9};
  EXPECT_NE(error_of(bad_version).find("message version 9"), std::string::npos);
  auto bad_kind = b;
  bad_kind[6] = std::byte{42};
  EXPECT_NE(error_of(bad_kind).find("unknown message kind 42"), std::string::npos);
  auto bad_strategy = b;
  bad_strategy[12] = std::byte{5};  // 4: a call by the default rule (by_rule_code)
  EXPECT_NE(error_of(bad_strategy).find("unknown call strategy 5"), std::string::npos);
  auto bad_flags = b;
  bad_flags[13] = std::byte{0x80};
  EXPECT_NE(error_of(bad_flags).find("unknown message flags 0x00000080"), std::string::npos);
}

TEST(Message, TheTraceSequenceTravels) {
  const message_header h{.kind = message_kind::post, .handler = 3, .payload_bytes = 8, .sequence = 0xbeef};
  const auto b = encoded(h);
  EXPECT_EQ(message_header::decode(b, 1 << 20).sequence, 0xbeef);
}

// A frame in one piece: header, then `arrived` payload bytes; decode_frame's error, or "".
std::string frame_error_of(const message_header& h, std::size_t arrived) {
  std::vector<std::byte> frame(message_header::size + arrived, std::byte{7});
  h.encode(frame.data());
  try {
    const message_header d = message_header::decode_frame(frame, 1 << 20);
    EXPECT_EQ(d.payload_bytes, h.payload_bytes);
  } catch (const decode_error& e) {
    return e.what();
  }
  return "";
}

TEST(Message, FramesOfTheWrongLengthAreRejected) {
  const message_header in_line{.kind = message_kind::call, .handler = 3, .call_id = 9, .payload_bytes = 100};
  EXPECT_EQ(frame_error_of(in_line, 100), "");
  EXPECT_EQ(frame_error_of(in_line, 99),
            "a frame whose header says 100 bytes of payload, with 99 bytes after its header");
  EXPECT_EQ(frame_error_of(in_line, 101),
            "a frame whose header says 100 bytes of payload, with 101 bytes after its header");
  EXPECT_EQ(frame_error_of(in_line, 0),
            "a frame whose header says 100 bytes of payload, with 0 bytes after its header");
  // Out of line: the frame brings the payload's head, the rest follows apart.
  message_header out_of_line = in_line;
  out_of_line.flags = message_out_of_line;
  EXPECT_EQ(frame_error_of(out_of_line, 0), "");
  EXPECT_EQ(frame_error_of(out_of_line, 100), "");
  EXPECT_EQ(frame_error_of(out_of_line, 101),
            "an out-of-line frame whose header says 100 bytes of payload, with 101 bytes after its header");
  // The header's own checks come first.
  const message_header oversized{.kind = message_kind::call, .payload_bytes = (1 << 20) + 1};
  EXPECT_NE(frame_error_of(oversized, 3).find("oversized message"), std::string::npos);
}

TEST(Message, RandomHeadersNeverCrash) {
  std::mt19937 rng(static_cast<std::mt19937::result_type>(heddle_test::seed("frames", 11)));
  std::uniform_int_distribution<int> byte(0, 255);
  int accepted = 0;
  for (int i = 0; i < 100000; ++i) {
    auto b = encoded({.kind = message_kind::call, .handler = 1, .call_id = 1, .payload_bytes = 1});
    // Flip a few bytes of a valid header.
    for (int k = 0; k < 3; ++k) b[byte(rng) % b.size()] = std::byte(byte(rng));
    try {
      const message_header h = message_header::decode(b, 1 << 20);
      EXPECT_LE(h.payload_bytes, 1u << 20);
      ++accepted;
    } catch (const decode_error&) {
    }
  }
  EXPECT_GT(accepted, 0);  // flips in handler or call id leave a valid header
}

}  // namespace
