// Fuzzes what a node does with bytes from a peer: the frame header's decoder, the registry's
// handler lookup, and the argument decoders of handlers with every built-in type. Any input must
// end in a decoded call or a decode_error/unknown_handler: never a crash, an overlong read or a
// huge allocation.
//
// Built two ways: with libFuzzer (`make fuzz`: clang -fsanitize=fuzzer,address,undefined, at
// least a million inputs), and as a plain program (frame_fuzzer_replay) that ctest runs over the
// kept corpus (tests/am/fuzz/corpus/), in every build. `frame_fuzzer_replay --write-seeds DIR`
// writes the valid frames the corpus started from.
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <heddle/am/functor.hpp>
#include <heddle/am/message.hpp>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace off = heddle::offload;

// Handlers of every shape a message can carry; they touch what they get.
std::size_t sink = 0;
void takes_scalars(int a, double b, char c, std::uint64_t d) { sink += static_cast<std::size_t>(a) + (b > 0) + static_cast<std::size_t>(c) + d; }
void takes_string(std::string s) { sink += s.size(); }
void takes_vectors(std::vector<double> v, std::vector<std::string> w) { sink += v.size() + w.size(); }
void takes_map(std::map<std::string, std::vector<int>> m) { sink += m.size(); }
void takes_nested(std::tuple<std::optional<std::string>, std::pair<int, std::vector<std::uint8_t>>, std::array<std::string, 3>> t) {
  sink += std::get<2>(t)[1].size();
}
std::vector<std::string> returns(std::optional<int> n) { return std::vector<std::string>(static_cast<std::size_t>(n.value_or(0) & 15), "x"); }

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

std::vector<std::vector<std::byte>> seeds() {
  using namespace std::string_literals;
  return {
      frame(heddle::f2f(&takes_scalars, 1, 2.5, 'c', std::uint64_t{9})),
      frame(heddle::f2f(&takes_string, "hello"s), off::message_kind::post),
      frame(heddle::f2f(&takes_vectors, std::vector<double>{1, 2, 3}, std::vector<std::string>{"a", "bc"})),
      frame(heddle::f2f(&takes_map, std::map<std::string, std::vector<int>>{{"k", {1, 2}}, {"l", {}}})),
      frame(heddle::f2f(&takes_nested, std::tuple<std::optional<std::string>, std::pair<int, std::vector<std::uint8_t>>,
                                                  std::array<std::string, 3>>{"o"s, {4, {1, 2, 3}}, {"x", "yy", "zzz"}})),
      frame(heddle::f2f(&returns, std::optional<int>(3))),
  };
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  try {
    const off::message_header h = off::message_header::decode(in, std::uint64_t{1} << 20);
    const std::span<const std::byte> payload = in.subspan(off::message_header::size);
    if (h.payload_bytes != payload.size()) return 0;  // a transport has already cut the frame to its length
    if (h.kind == off::message_kind::call || h.kind == off::message_kind::post) {
      const off::detail::handler_fn fn = off::detail::registry::instance().at(h.handler);
      off::reader r(payload);
      off::writer result;
      fn(r, result);
    }
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
    for (const auto& s : seeds()) {
      std::ofstream(fs::path(argv[2]) / ("seed-" + std::to_string(i++)), std::ios::binary)
          .write(reinterpret_cast<const char*>(s.data()), static_cast<std::streamsize>(s.size()));
    }
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
    const off::message_header h = off::message_header::decode(s, 1 << 20);
    off::reader r(std::span<const std::byte>(s).subspan(off::message_header::size));
    off::writer out;
    off::detail::registry::instance().at(h.handler)(r, out);
  }
  std::printf("frame_fuzzer_replay: %zu inputs, no crash\n", files);
  return files > 0 ? 0 : 1;
}
#endif
