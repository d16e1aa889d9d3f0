// SPDX-License-Identifier: Apache-2.0
// Fuzzes what a node does with bytes from a peer: the frame decoder (header, and its length
// against the bytes that came with it), the registry's handler lookup, the argument decoders of
// handlers with every built-in type, the decoders of broadcasts' frames (a tree call's ranks, a
// reply's entries; heddle/am/detail/tree.hpp) for a session of 8 nodes, and remote objects' frames
// (an object id, then a method's arguments). Any input must end in a decoded call or a
// decode_error/unknown_handler: never a crash, an overlong read or a huge allocation; and a frame
// whose payload is not as long as its header says is never decoded further.
//
// Built two ways: with libFuzzer (`make fuzz`: clang -fsanitize=fuzzer,address,undefined, at
// least a million inputs), and as a plain program (frame_fuzzer_replay) that ctest runs over the
// kept corpus (tests/am/fuzz/corpus/), in every build. `frame_fuzzer_replay --write-seeds DIR`
// writes the valid frames the corpus started from, and frames of the wrong length made from them.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <heddle/am/detail/tree.hpp>
#include <heddle/am/functor.hpp>
#include <heddle/am/message.hpp>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace off = heddle::offload;
namespace am_detail = heddle::am_detail;

// Handlers of every shape a message can carry; they touch what they get.
std::size_t sink = 0;
void takes_scalars(int a, double b, char c, std::uint64_t d) {
  sink += static_cast<std::size_t>(a) + (b > 0) + static_cast<std::size_t>(c) + d;
}
void takes_string(std::string s) { sink += s.size(); }
void takes_vectors(std::vector<double> v, std::vector<std::string> w) { sink += v.size() + w.size(); }
void takes_map(std::map<std::string, std::vector<int>> m) { sink += m.size(); }
void takes_nested(
    std::tuple<std::optional<std::string>, std::pair<int, std::vector<std::uint8_t>>, std::array<std::string, 3>> t) {
  sink += std::get<2>(t)[1].size();
}
std::vector<std::string> returns(std::optional<int> n) {
  return std::vector<std::string>(static_cast<std::size_t>(n.value_or(0) & 15), "x");
}

template <class Call>
std::vector<std::byte> frame(const Call& call, off::message_kind kind = off::message_kind::call) {
  off::writer args;
  call.write_args(args);
  off::message_header h{.kind = kind, .handler = Call::index(), .call_id = 7, .payload_bytes = args.size()};
  std::vector<std::byte> out(off::message_header::size);
  h.encode(out.data());
  out.insert(out.end(), args.data().begin(), args.data().end());
  return out;
}

// A tree call for ranks [first, first + count) with the call's arguments after the range.
template <class Call>
std::vector<std::byte> tree_frame(const Call& call, std::uint32_t first, std::uint32_t count) {
  off::writer args;
  call.write_args(args);
  std::vector<std::byte> out(off::message_header::size + am_detail::tree_range::bytes);
  const off::message_header h{.kind = off::message_kind::tree_call,
                              .handler = Call::index(),
                              .call_id = 9,
                              .payload_bytes = am_detail::tree_range::bytes + args.size()};
  h.encode(out.data());
  am_detail::tree_range{first, count}.encode(out.data() + off::message_header::size);
  out.insert(out.end(), args.data().begin(), args.data().end());
  return out;
}

// A method call's frame on object `id` (the fuzzer has no objects: a function's handler stands in).
template <class Call>
std::vector<std::byte> object_frame(const Call& call, std::uint64_t id) {
  off::writer args;
  call.write_args(args);
  std::vector<std::byte> out(off::message_header::size + sizeof id);
  const off::message_header h{.kind = off::message_kind::object_call,
                              .handler = Call::index(),
                              .call_id = 11,
                              .payload_bytes = sizeof id + args.size()};
  h.encode(out.data());
  std::memcpy(out.data() + off::message_header::size, &id, sizeof id);
  out.insert(out.end(), args.data().begin(), args.data().end());
  return out;
}

// The replies of a whole tree from node 0 (nodes 1 to 7), as the origin gathers them: a string from
// most, a throw from node 4, node 5 lost.
std::vector<std::byte> tree_reply() {
  off::writer entries;
  const std::string threw = "it threw", lost = "it was lost";
  for (std::uint32_t n : {3, 1, 2, 7, 4, 6, 5}) {
    off::writer v;
    off::write(v, std::string(n, 'x'));
    using am_detail::tree_outcome;
    if (n == 4) am_detail::append_tree_entry(entries, n, tree_outcome::threw, std::as_bytes(std::span(threw)));
    else if (n == 5) am_detail::append_tree_entry(entries, n, tree_outcome::lost, std::as_bytes(std::span(lost)));
    else am_detail::append_tree_entry(entries, n, tree_outcome::value, v.data());
  }
  const off::message_header h{.kind = off::message_kind::reply_value, .call_id = 9, .payload_bytes = entries.size()};
  std::vector<std::byte> out(off::message_header::size);
  h.encode(out.data());
  out.insert(out.end(), entries.data().begin(), entries.data().end());
  return out;
}

std::vector<std::vector<std::byte>> seeds() {
  using namespace std::string_literals;
  return {
      frame(heddle::f2f<&takes_scalars>(1, 2.5, 'c', std::uint64_t{9})),
      frame(heddle::f2f<&takes_string>("hello"s), off::message_kind::post),
      frame(heddle::f2f<&takes_vectors>(std::vector<double>{1, 2, 3}, std::vector<std::string>{"a", "bc"})),
      frame(heddle::f2f<&takes_map>(std::map<std::string, std::vector<int>>{{"k", {1, 2}}, {"l", {}}})),
      frame(heddle::f2f<&takes_nested>(
          std::tuple<std::optional<std::string>, std::pair<int, std::vector<std::uint8_t>>, std::array<std::string, 3>>{
              "o"s, {4, {1, 2, 3}}, {"x", "yy", "zzz"}})),
      frame(heddle::f2f<&returns>(std::optional<int>(3))),
      tree_frame(heddle::f2f<&takes_string>("tree"s), 2, 3),
      tree_reply(),
      object_frame(heddle::f2f<&takes_scalars>(3, 1.5, 'o', std::uint64_t{4}), 42),
  };
}

// Frames whose payload disagrees with their header, from the seeds: cut short, with bytes past
// the end, and out of line with more bytes in the frame than the whole payload. Each must be a
// decode_error.
std::vector<std::pair<std::string, std::vector<std::byte>>> wrong_lengths() {
  const auto s = seeds();
  std::vector<std::byte> short_call(s[0].begin(), s[0].end() - 3);
  std::vector<std::byte> long_post = s[1];
  long_post.insert(long_post.end(), 5, std::byte{0x2a});
  std::vector<std::byte> out_of_line = s[2];
  out_of_line[13] = std::byte{off::message_out_of_line};  // the flags
  const std::uint64_t less = out_of_line.size() - off::message_header::size - 1;
  std::memcpy(out_of_line.data() + 24, &less, sizeof less);  // payload_bytes
  return {
      {"length-short-call", short_call}, {"length-long-post", long_post}, {"length-out-of-line-overlong", out_of_line}};
}

// What a node does with a frame's payload once the header is decoded: a call's arguments decoded by
// its handler (a tree call's after its ranks), a reply's bytes decoded as a broadcast's entries.
void run_frame(const off::message_header& h, std::span<const std::byte> payload) {
  constexpr std::uint32_t nodes = 8;
  if (h.kind == off::message_kind::tree_call) {
    (void)am_detail::tree_range::decode(payload, nodes);
    payload = payload.subspan(am_detail::tree_range::bytes);
  }
  if (h.kind == off::message_kind::object_call || h.kind == off::message_kind::object_release) {
    (void)off::object_id_of(payload);
    payload = payload.subspan(sizeof(std::uint64_t));
  }
  if (h.kind == off::message_kind::call || h.kind == off::message_kind::post ||
      h.kind == off::message_kind::tree_call || h.kind == off::message_kind::object_call) {
    const am_detail::handler_fn fn = am_detail::registry::instance().at(h.handler);
    off::reader r(payload);
    off::writer result;
    fn(r, result);
  }
  if (h.kind == off::message_kind::reply_value) {
    std::vector<am_detail::tree_entry> by_node(nodes);
    am_detail::decode_tree_entries(payload, 0, by_node);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  try {
    // The input is a frame as it arrived in one piece (an mpi message), of any length.
    const off::message_header h = off::message_header::decode_frame(in, std::uint64_t{1} << 20);
    const std::span<const std::byte> payload = in.subspan(off::message_header::size);
    if (payload.size() > h.payload_bytes ||
        (!(h.flags & off::message_out_of_line) && payload.size() != h.payload_bytes)) {
      std::fprintf(stderr, "frame_fuzzer: a frame of %zu payload bytes whose header says %llu was accepted\n",
                   payload.size(), static_cast<unsigned long long>(h.payload_bytes));
      std::abort();
    }
    // An out-of-line frame brings here at most the head of its payload: the handler's decoder
    // gets only that, and must find arguments cut short as it finds any others.
    run_frame(h, payload);
  } catch (const off::decode_error&) {
  } catch (const off::unknown_handler&) {
  }
  return 0;
}

#ifndef HEDDLE_LIBFUZZER
// The replay driver: every file of the directories given, through the fuzz target.
int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc == 3 && std::string(argv[1]) == "--write-seeds") {
    int i = 0;
    const auto write = [&](const std::string& name, const std::vector<std::byte>& bytes) {
      std::ofstream(fs::path(argv[2]) / name, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    };
    for (const auto& s : seeds()) write("seed-" + std::to_string(i++), s);
    for (const auto& [name, bytes] : wrong_lengths()) write(name, bytes);
    return 0;
  }
  std::size_t files = 0;
  for (int a = 1; a < argc; ++a) {
    for (const auto& e : fs::directory_iterator(argv[a])) {
      std::ifstream f(e.path(), std::ios::binary);
      const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++files;
    }
  }
  // The seeds must still decode and run: the corpus keeps testing the real paths.
  for (const auto& s : seeds()) {
    const off::message_header h = off::message_header::decode_frame(s, 1 << 20);
    run_frame(h, std::span<const std::byte>(s).subspan(off::message_header::size));
  }
  // And the frames of the wrong length are refused for their length.
  for (const auto& [name, bytes] : wrong_lengths()) {
    try {
      off::message_header::decode_frame(bytes, 1 << 20);
      std::fprintf(stderr, "frame_fuzzer_replay: %s was accepted\n", name.c_str());
      return 1;
    } catch (const off::decode_error& e) {
      if (std::string(e.what()).find("whose header says") == std::string::npos) {
        std::fprintf(stderr, "frame_fuzzer_replay: %s refused for another reason: %s\n", name.c_str(), e.what());
        return 1;
      }
    }
  }
  std::printf("frame_fuzzer_replay: %zu inputs, no crash\n", files);
  return files > 0 ? 0 : 1;
}
#endif
