// SPDX-License-Identifier: Apache-2.0
// The frame of every active message on every backend: a fixed 32-byte header, then the payload.
// A receiver decodes the header before it trusts anything in it: magic, version, kind, and a
// payload length within the backend's limit and within what arrived. Large arguments do not
// stretch a message: they travel as data transfers (put/get), so the limit can stay small.
// Thread safety: headers are values and the calls below functions of their arguments only: all
// thread-safe.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

#include "heddle/am/serialize.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/strategy.hpp"

namespace heddle::offload {

// A call's strategy on the wire: a heddle::strategy, or by_rule_code for a call made with none (the
// default rule, docs/am.md "Calls": the target decides per function).
inline constexpr std::uint8_t by_rule_code = strategy_count;

enum class message_kind : std::uint16_t {
  hello = 1,        // first message of a connection: node id, node count, registry hash
  call = 2,         // run handler `handler` with the payload as arguments; reply with call_id
  post = 3,         // the same, no reply (ping)
  reply_value = 4,  // the result of call `call_id`
  reply_error = 5,  // call `call_id` threw: the payload is the exception's message
  goodbye = 6,      // the sender's session ends
  put = 7,          // data transfer into buffer: payload = buffer id, byte offset, the bytes; reply with call_id
  get = 8,  // data transfer out of a buffer: payload = buffer id, byte offset, byte count; the reply carries the bytes
  clock_probe = 9,   // traced sessions: the sender's steady-clock time (ns), for node 0 to answer at once
  clock_reply = 10,  // node 0's answer: the probe's time, then node 0's at its receipt
  tree_call =
      11,  // a call to every node along a tree (detail/tree.hpp): payload = ranks, then arguments; reply with call_id
  object_call = 12,     // a method call on an object of the target (remote.hpp): payload = object id, then arguments;
                        // reply with call_id
  object_release = 13,  // the caller's last remote_ptr of an object is gone: payload = object id
};
inline constexpr std::uint16_t message_kind_count = 13;

// The object id that starts an object_call or object_release payload; decode_error if it is missing.
inline std::uint64_t object_id_of(std::span<const std::byte> payload) {
  if (payload.size() < sizeof(std::uint64_t))
    throw decode_error("heddle::offload: an object message of " + std::to_string(payload.size()) +
                       " bytes, without its object id");
  std::uint64_t id;
  std::memcpy(&id, payload.data(), sizeof id);
  return id;
}

// Flags of a message.
// The payload travels apart from the frame, as the backend arranges: in a shared-memory transfer
// segment the payload names (shm), or as a second message that follows the frame (mpi).
inline constexpr std::uint8_t message_out_of_line = 1;
inline constexpr std::uint8_t message_flags_known = message_out_of_line;
// Never on the wire (decode rejects it): set by a transport on a frame it delivers when it read the
// payload's placeable part straight into the place its sink named (transport.hpp, frame_sink::place).
inline constexpr std::uint8_t message_placed = 0x80;
static_assert((message_placed & message_flags_known) == 0, "a local flag must never be accepted from the wire");
HEDDLE_EXPORT const char* to_string(message_kind k) noexcept;

struct message_header {
  static constexpr std::uint32_t magic_value = 0x414c4448;  // "HDLA" on a little-endian wire
  static constexpr std::uint16_t version_value = 2;         // 2: the trace sequence (was a reserved 0)
  static constexpr std::size_t size = 32;

  message_kind kind = message_kind::call;
  std::uint8_t strategy = 0;  // how the target starts a call: a heddle::strategy, or by_rule_code
  std::uint8_t flags = 0;
  std::uint32_t handler = 0;
  std::uint64_t call_id = 0;
  std::uint64_t payload_bytes = 0;
  // Traced senders number their frames to each peer, 1 to 65535 and round again (0: untraced), so
  // that a trace pairs each send with its receipt (heddle/core/detail/trace.hpp: message flows).
  std::uint16_t sequence = 0;

  // The 32 bytes on the wire: four little-endian words, the first two packed (magic, version,
  // kind; handler, strategy, flags, sequence), so that a frame's header is four stores and a
  // receipt four loads, on both sides of every call.
  using words = std::array<std::uint64_t, 4>;
  constexpr words pack() const noexcept {
    return {fixed_bits | std::uint64_t{static_cast<std::uint16_t>(kind)} << 48,
            std::uint64_t{handler} | std::uint64_t{strategy} << 32 | std::uint64_t{flags} << 40 |
                std::uint64_t{sequence} << 48,
            call_id, payload_bytes};
  }
  void encode(std::byte* out) const noexcept {
    const words w = pack();
    std::memcpy(out, w.data(), size);
  }
  static constexpr std::uint64_t call_id_of(const words& w) noexcept { return w[2]; }
  // The header pack() made, unchecked: for words this process packed (a transport's short path),
  // never for words from the wire (decode).
  static constexpr message_header unpack(const words& w) noexcept {
    message_header h;
    h.kind = static_cast<message_kind>(w[0] >> 48);
    h.handler = static_cast<std::uint32_t>(w[1]);
    h.strategy = static_cast<std::uint8_t>(w[1] >> 32);
    h.flags = static_cast<std::uint8_t>(w[1] >> 40);
    h.sequence = static_cast<std::uint16_t>(w[1] >> 48);
    h.call_id = w[2];
    h.payload_bytes = w[3];
    return h;
  }

  // Checks and decodes a header; `max_payload` is the backend's limit. decode_error says what is
  // wrong (the transport adds which peer sent it). Every frame of every backend passes here: the
  // checks are a handful of compares on the four words, inlined where the frame arrives; what went
  // wrong is worked out and reported out of line (reject), only for a frame that fails them.
  static message_header decode(std::span<const std::byte> in, std::uint64_t max_payload) {
    if (in.size() < size) [[unlikely]]
      reject_truncated(in.size());
    words w;
    std::memcpy(w.data(), in.data(), size);
    if (!acceptable(w, max_payload)) [[unlikely]]
      reject(w[0], w[1], w[3], max_payload);  // in registers
    return unpack(w);
  }

  // Decodes a frame that arrived in one piece with its payload (an mpi message): the header as
  // decode does, then its length against what came after it. An in-line frame carries exactly its
  // payload; an out-of-line one at most that much (the rest follows as the backend arranges). A
  // frame cut short or with bytes past its payload is a decode_error before anything reads it.
  static message_header decode_frame(std::span<const std::byte> in, std::uint64_t max_payload) {
    const message_header h = decode(in, max_payload);
    const std::size_t arrived = in.size() - size;
    if ((h.flags & message_out_of_line) ? h.payload_bytes < arrived : h.payload_bytes != arrived) [[unlikely]]
      reject_length(h.flags & message_out_of_line, h.payload_bytes, arrived);
    return h;
  }

 private:
  static_assert(std::endian::native == std::endian::little,
                "the wire's words are the host's: little-endian hosts only");
  static constexpr std::uint64_t fixed_bits = magic_value | std::uint64_t{version_value} << 32;
  // decode's checks on the wire's words: magic and version, a known kind, strategy and flags, a
  // payload within the limit (reject names the first that fails, in this order).
  static constexpr bool acceptable(const words& w, std::uint64_t max_payload) noexcept {
    const auto k = static_cast<std::uint16_t>(w[0] >> 48);
    return (w[0] & 0xffff'ffff'ffff) == fixed_bits && k >= 1 && k <= message_kind_count &&
           static_cast<std::uint8_t>(w[1] >> 32) <= by_rule_code &&
           (static_cast<std::uint8_t>(w[1] >> 40) & ~message_flags_known) == 0 && w[3] <= max_payload;
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void reject_truncated(std::size_t bytes) {
    throw decode_error("truncated message header: " + std::to_string(bytes) + " of " + std::to_string(size) + " bytes");
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void reject(std::uint64_t w0, std::uint64_t w1, std::uint64_t w3,
                                                            std::uint64_t max_payload) {
    const message_header h = unpack({w0, w1, 0, w3});
    const auto k = static_cast<std::uint16_t>(w0 >> 48);
    if ((w0 & 0xffff'ffff'ffff) != fixed_bits) {
      const auto magic = static_cast<std::uint32_t>(w0);
      if (magic != magic_value) throw decode_error("not a heddle message (magic " + hex(magic) + ")");
      throw decode_error("message version " + std::to_string(static_cast<std::uint16_t>(w0 >> 32)) +
                         ", this process speaks " + std::to_string(version_value));
    }
    if (k < 1 || k > message_kind_count) throw decode_error("unknown message kind " + std::to_string(k));
    if (h.strategy > by_rule_code) throw decode_error("unknown call strategy " + std::to_string(h.strategy));
    if (h.flags & ~message_flags_known) throw decode_error("unknown message flags " + hex(h.flags));
    throw decode_error("oversized message: " + std::to_string(h.payload_bytes) + " bytes of payload, the limit is " +
                       std::to_string(max_payload));
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void reject_length(bool out_of_line, std::uint64_t payload_bytes,
                                                                   std::size_t arrived) {
    throw decode_error(std::string(out_of_line ? "an out-of-line frame" : "a frame") + " whose header says " +
                       std::to_string(payload_bytes) + " bytes of payload, with " + std::to_string(arrived) +
                       " bytes after its header");
  }
  static std::string hex(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
  }
};
// The wire layout encode() writes: 16 bytes of magic, version, kind, handler, strategy, flags and
// trace sequence, then the call id and the payload length: the 32-byte header docs/am.md states.
static_assert(message_header::size == 16 + sizeof(message_header::call_id) + sizeof(message_header::payload_bytes),
              "a frame's header is 32 bytes on the wire (docs/am.md)");

inline const char* to_string(message_kind k) noexcept {
  switch (k) {
    case message_kind::hello: return "hello";
    case message_kind::call: return "call";
    case message_kind::post: return "post";
    case message_kind::reply_value: return "reply_value";
    case message_kind::reply_error: return "reply_error";
    case message_kind::goodbye: return "goodbye";
    case message_kind::put: return "put";
    case message_kind::get: return "get";
    case message_kind::clock_probe: return "clock_probe";
    case message_kind::clock_reply: return "clock_reply";
    case message_kind::tree_call: return "tree_call";
    case message_kind::object_call: return "object_call";
    case message_kind::object_release: return "object_release";
  }
  return "?";
}

}  // namespace heddle::offload

// The am layer's internals (heddle::am_detail) name these unqualified.
namespace heddle::am_detail {
using offload::message_flags_known;
using offload::message_header;
using offload::message_kind;
using offload::message_kind_count;
using offload::message_out_of_line;
using offload::message_placed;
}  // namespace heddle::am_detail
