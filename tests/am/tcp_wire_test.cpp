// SPDX-License-Identifier: Apache-2.0
// What a tcp node does with a peer that misbehaves on the wire: a connection with the wrong secret
// is refused and logged, a frame that does not decode or that the connection's end cuts short
// drops the peer (every call waiting on it fails, naming it) instead of being acted on; a reply
// that does not decode as its call's result fails that call (decode_error); a frame
// that arrives a byte at a time is put back together, and frames that arrive together (large ones
// among them) are cut apart. The peer here is a forked process
// speaking the protocol by hand.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <heddle/am.hpp>
#include <initializer_list>
#include <string>
#include <vector>

namespace tcp_wire_test {
namespace {

namespace off = heddle::offload;
namespace am_detail = heddle::am_detail;

int scale(int a, std::string s) { return a * static_cast<int>(s.size()); }
// Registered here, answered by the fake node 1: it sends the call's payload back as the reply,
// which is what echo's reply is (a call's payload is its arguments' encoding, here one string).
std::string echo(std::string s) { return s; }
void nothing() {}

int listen_any(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 8) != 0) return -1;
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  port = ntohs(sa.sin_port);
  return fd;
}

// The forked peer: only system calls and stack buffers (the parent has threads).
int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  return ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 ? fd : -1;
}
bool put_all(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = ::write(fd, c, n);
    if (w <= 0) return false;
    c += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}
bool get_all(int fd, void* p, std::size_t n) {
  char* c = static_cast<char*>(p);
  while (n) {
    const ssize_t r = ::read(fd, c, n);
    if (r <= 0) return false;
    c += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}
void greet(int fd, const char* secret) {
  const std::uint32_t node = 1, len = static_cast<std::uint32_t>(std::strlen(secret));
  put_all(fd, "HDLT", 4);
  put_all(fd, &node, 4);
  put_all(fd, &len, 4);
  put_all(fd, secret, len);
}

struct hello_payload {
  std::uint32_t node, nodes;
  std::uint64_t hash, count;
  std::int64_t pid;
};

// Sends a frame, all at once or a byte at a time with a pause after each, so that the reader
// gets it in as many reads.
bool put_frame(int fd, const off::message_header& h, const void* payload, bool byte_by_byte) {
  std::byte header[off::message_header::size];
  h.encode(header);
  if (!byte_by_byte) return put_all(fd, header, sizeof header) && put_all(fd, payload, h.payload_bytes);
  const auto dribble = [fd](const void* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      if (!put_all(fd, static_cast<const char*>(p) + i, 1)) return false;
      ::usleep(500);
    }
    return true;
  };
  return dribble(header, sizeof header) && dribble(payload, h.payload_bytes);
}

// Node 1, by hand, up to where calls can come: connects with the secret, says hello (a byte at a
// time if asked) and reads node 0's hello. Exits with `status` if node 0 does not answer.
int join_as_node1(int port, std::uint64_t hash, std::uint64_t count, bool byte_by_byte, int status) {
  const int fd = connect_to(port);
  const int one = 1;  // every byte its own segment: no coalescing while earlier ones are unacknowledged
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  greet(fd, "s3cret");
  const hello_payload hello{1, 2, hash, count, ::getpid()};
  put_frame(fd, off::message_header{.kind = off::message_kind::hello, .payload_bytes = sizeof hello}, &hello,
            byte_by_byte);
  std::byte in[off::message_header::size + sizeof(hello_payload)];
  if (!get_all(fd, in, sizeof in)) ::_exit(status);
  return fd;
}

// Reads node 0's call into `payload` (at most `room` bytes); its header, or exits with `status`.
off::message_header get_call(int fd, std::byte* payload, std::size_t room, int status) {
  std::byte header[off::message_header::size];
  if (!get_all(fd, header, sizeof header)) ::_exit(status);
  const off::message_header h = off::message_header::decode(header, room);
  if (h.kind != off::message_kind::call || !get_all(fd, payload, h.payload_bytes)) ::_exit(status);
  return h;
}

// Node 1's end: takes node 0's goodbye (its session ends), says goodbye (a byte at a time if
// asked), waits until node 0 closes the connection, and exits 0 (6 or 7 if a step fails).
[[noreturn]] void goodbye_then_exit(int fd, bool byte_by_byte) {
  std::byte header[off::message_header::size];
  if (!get_all(fd, header, sizeof header) || off::message_header::decode(header, 0).kind != off::message_kind::goodbye)
    ::_exit(6);
  if (!put_frame(fd, {.kind = off::message_kind::goodbye}, nullptr, byte_by_byte)) ::_exit(7);
  char c;
  (void)!::read(fd, &c, 1);
  ::_exit(0);
}

off::session_options node0_options(int listener, int port) {
  off::session_options o;
  o.transport = off::backend::tcp;
  o.node = 0;
  o.nodes = 2;
  o.peers = {"127.0.0.1:" + std::to_string(port), "127.0.0.1:1"};
  o.listen_fd = listener;
  o.secret = "s3cret";
  o.connect_timeout = std::chrono::seconds(20);
  o.shutdown_timeout = std::chrono::seconds(2);
  return o;
}

int exit_status(pid_t child) {
  int status = 0;
  if (::waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Node 1, by hand: a wrong secret first, then the right one, a proper hello, then garbage in
// answer to the first call.
[[noreturn]] void fake_node1(int port, std::uint64_t hash, std::uint64_t count) {
  int bad = connect_to(port);
  greet(bad, "not the secret");
  char c;
  (void)!::read(bad, &c, 1);  // node 0 closes it
  ::close(bad);
  const int fd = join_as_node1(port, hash, count, false, 3);
  std::byte in[off::message_header::size];
  if (!get_all(fd, in, sizeof in)) ::_exit(4);  // the header of node 0's call
  const char junk[off::message_header::size] = "this is not a heddle frame";
  put_all(fd, junk, sizeof junk);
  (void)!::read(fd, &c, 1);  // until node 0 drops the connection
  ::_exit(0);
}

// A hand-written node 1 in a child process, node(port, registry hash, registry size) run there;
// node 0 is the test, listening on `listener`. child < 0 or listener < 0: it could not start.
struct fake_peer {
  int listener = -1;
  int port = 0;
  pid_t child = -1;
};
template <class Node>
fake_peer start_fake_node1(Node node) {
  fake_peer p;
  p.listener = listen_any(p.port);
  if (p.listener < 0) return p;
  am_detail::registry& reg = am_detail::registry::instance();
  const std::uint64_t hash = reg.hash(), count = reg.size();
  p.child = ::fork();
  if (p.child == 0) node(p.port, hash, count);  // never returns
  return p;
}

// f fails with peer_lost naming node 1, and its text holds each of `parts`.
template <class T>
void expect_node1_lost(heddle::future<T>& f, std::initializer_list<std::string> parts) {
  try {
    f.get();
    ADD_FAILURE() << "a call returned although node 1 was lost";
  } catch (const off::peer_lost& e) {
    EXPECT_EQ(e.node(), 1u);
    const std::string w = e.what();
    EXPECT_NE(w.find("node 1"), std::string::npos) << w;
    for (const std::string& part : parts) EXPECT_NE(w.find(part), std::string::npos) << w;
  }
}

TEST(TcpWire, WrongSecretIsRefusedAndCorruptFrameDropsThePeer) {
  const auto [listener, port, child] = start_fake_node1(fake_node1);
  ASSERT_GE(listener, 0);
  ASSERT_GE(child, 0);

  testing::internal::CaptureStderr();
  {
    off::session s(node0_options(listener, port));
    heddle::future<int> f = off::async(1, heddle::f2f<&scale>(2, std::string("ab")));
    expect_node1_lost(f, {"corrupt frame", "not a heddle message"});  // a call answered with garbage
    EXPECT_THROW(off::sync(1, heddle::f2f<&scale>(1, std::string("x"))), off::peer_lost);
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("refused a connection from 127.0.0.1: wrong secret"), std::string::npos) << err;
  EXPECT_EQ(exit_status(child), 0);
}

// Node 1 answers the call with `sent` bytes of a reply frame whose header promises 64 bytes of
// payload, then closes the connection.
[[noreturn]] void fake_node1_cut_short(int port, std::uint64_t hash, std::uint64_t count, std::size_t sent) {
  const int fd = join_as_node1(port, hash, count, false, 3);
  std::byte call[256];
  const off::message_header h = get_call(fd, call, sizeof call, 4);
  std::byte reply[off::message_header::size + 64] = {};
  off::message_header{.kind = off::message_kind::reply_value, .call_id = h.call_id, .payload_bytes = 64}.encode(reply);
  if (!put_all(fd, reply, sent)) ::_exit(5);
  ::close(fd);
  ::_exit(0);
}

// The call waiting for the cut frame fails with peer_lost naming node 1 and saying where the
// frame ended (`why`); so does every call after it.
void expect_cut_short_frame_loses_the_peer(std::size_t sent, const std::string& why) {
  const auto [listener, port, child] = start_fake_node1([sent](int p, std::uint64_t hash, std::uint64_t n) {
    fake_node1_cut_short(p, hash, n, sent);
  });
  ASSERT_GE(listener, 0);
  ASSERT_GE(child, 0);
  {
    off::session s(node0_options(listener, port));
    heddle::future<std::string> f = off::async(1, heddle::f2f<&echo>(std::string("cut short")));
    expect_node1_lost(f, {"it closed its connection in the middle of a " + why});  // a truncated frame
    EXPECT_THROW(off::sync(1, heddle::f2f<&echo>(std::string("after"))), off::peer_lost);
  }
  EXPECT_EQ(exit_status(child), 0);
}

TEST(TcpWire, HeaderThenShortPayloadThenEndOfFileLosesThePeer) {
  expect_cut_short_frame_loses_the_peer(off::message_header::size + 10, "reply_value frame (10 of 64 payload bytes)");
}

TEST(TcpWire, PartOfAHeaderThenEndOfFileLosesThePeer) {
  expect_cut_short_frame_loses_the_peer(20, "frame header (20 of 32 bytes)");
}

// Node 1 sends its hello, its reply and its goodbye a byte at a time; the reply is the call's
// own payload (echo's answer).
[[noreturn]] void fake_node1_byte_by_byte(int port, std::uint64_t hash, std::uint64_t count) {
  const int fd = join_as_node1(port, hash, count, true, 3);
  std::byte call[1024];
  const off::message_header h = get_call(fd, call, sizeof call, 4);
  if (!put_frame(fd, {.kind = off::message_kind::reply_value, .call_id = h.call_id, .payload_bytes = h.payload_bytes},
                 call, true))
    ::_exit(5);
  goodbye_then_exit(fd, true);
}

TEST(TcpWire, FrameArrivingAByteAtATimeIsReassembled) {
  const auto [listener, port, child] = start_fake_node1(fake_node1_byte_by_byte);
  ASSERT_GE(listener, 0);
  ASSERT_GE(child, 0);
  std::string text;  // every byte value, so that a byte lost, doubled or moved changes the result
  for (int i = 0; i < 300; ++i) text += static_cast<char>(i * 7);
  testing::internal::CaptureStderr();
  {
    off::session s(node0_options(listener, port));
    EXPECT_EQ(off::sync(1, heddle::f2f<&echo>(text)), text);
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "");  // node 1's goodbye came: the session ended without a complaint
  EXPECT_EQ(exit_status(child), 0);
}

// Node 1 answers two calls of a void function with replies of 5 bytes, which a void result is not.
[[noreturn]] void fake_node1_bytes_for_void(int port, std::uint64_t hash, std::uint64_t count) {
  const int fd = join_as_node1(port, hash, count, false, 3);
  std::byte call[64];
  const std::byte extra[5]{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}, std::byte{5}};
  for (int i = 0; i < 2; ++i) {
    const off::message_header h = get_call(fd, call, sizeof call, 4);
    if (!put_frame(fd, {.kind = off::message_kind::reply_value, .call_id = h.call_id, .payload_bytes = sizeof extra},
                   extra, false))
      ::_exit(5);
  }
  goodbye_then_exit(fd, false);
}

// A void call's reply is empty, which its completion checks on its short way (pending_result): a
// reply with bytes in it fails the call with decode_error, through sync and through a future.
TEST(TcpWire, ReplyWithBytesToAVoidCallFailsIt) {
  const auto [listener, port, child] = start_fake_node1(fake_node1_bytes_for_void);
  ASSERT_GE(listener, 0);
  ASSERT_GE(child, 0);
  const auto expect_left_over = [](auto&& call) {
    try {
      call();
      ADD_FAILURE() << "a void call whose reply held 5 bytes returned";
    } catch (const off::decode_error& e) {
      EXPECT_NE(std::string(e.what()).find("5 bytes left over after the call result"), std::string::npos) << e.what();
    }
  };
  {
    off::session s(node0_options(listener, port));
    expect_left_over([] { off::sync(1, heddle::f2f<&nothing>(), heddle::strategy::short_task); });
    expect_left_over([] { off::async(1, heddle::f2f<&nothing>()).get(); });
  }
  EXPECT_EQ(exit_status(child), 0);
}

// Node 1 takes `calls` echo calls, then answers them all in one write, in reverse order: frames
// back to back, so that one read of node 0's takes several of them, or the start of one too large
// for a single read (a reply larger than a connection's staging area, read partly from it and
// partly straight where it goes).
constexpr int coalesced_calls = 12;
[[noreturn]] void fake_node1_coalesced(int port, std::uint64_t hash, std::uint64_t count) {
  const int fd = join_as_node1(port, hash, count, false, 3);
  static std::byte calls[coalesced_calls][300'000];
  static off::message_header headers[coalesced_calls];
  static std::byte out[coalesced_calls * (300'000 + off::message_header::size)];
  for (int i = 0; i < coalesced_calls; ++i) headers[i] = get_call(fd, calls[i], sizeof calls[i], 4);
  std::size_t at = 0;
  for (int i = coalesced_calls - 1; i >= 0; --i) {
    const off::message_header r{.kind = off::message_kind::reply_value,
                                .call_id = headers[i].call_id,
                                .payload_bytes = headers[i].payload_bytes};
    r.encode(out + at);
    at += off::message_header::size;
    std::memcpy(out + at, calls[i], r.payload_bytes);
    at += r.payload_bytes;
  }
  if (!put_all(fd, out, at)) ::_exit(5);
  goodbye_then_exit(fd, false);
}

TEST(TcpWire, FramesThatArriveTogetherAreCutApart) {
  const auto [listener, port, child] = start_fake_node1(fake_node1_coalesced);
  ASSERT_GE(listener, 0);
  ASSERT_GE(child, 0);
  // Small texts, and three larger than one read takes (64 KiB) at different places in the stream.
  std::vector<std::string> texts;
  for (int i = 0; i < coalesced_calls; ++i) {
    const std::size_t bytes = i == 2 ? 70'000 : i == 5 ? 250'000 : i == 9 ? 65'536 : 10 + i;
    std::string t(bytes, '\0');
    for (std::size_t k = 0; k < bytes; ++k) t[k] = static_cast<char>(k * 13 + i);
    texts.push_back(std::move(t));
  }
  testing::internal::CaptureStderr();
  {
    off::session s(node0_options(listener, port));
    std::vector<heddle::future<std::string>> replies;
    for (const std::string& t : texts) replies.push_back(off::async(1, heddle::f2f<&echo>(t)));
    for (int i = 0; i < coalesced_calls; ++i) EXPECT_EQ(replies[i].get(), texts[i]) << "reply " << i;
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "");
  EXPECT_EQ(exit_status(child), 0);
}

}  // namespace

}  // namespace tcp_wire_test
