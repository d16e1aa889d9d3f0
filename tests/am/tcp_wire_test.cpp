// What a tcp node does with a peer that misbehaves on the wire: a connection with the wrong secret
// is refused and logged, and a frame that does not decode drops the peer (every call waiting on it
// fails, naming it) instead of being acted on. The peer here is a forked process speaking the
// protocol by hand.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <heddle/am.hpp>
#include <string>

namespace {

namespace off = heddle::offload;

int scale(int a, std::string s) { return a * static_cast<int>(s.size()); }

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

// Node 1, by hand: a wrong secret first, then the right one, a proper hello, then garbage in
// answer to the first call.
[[noreturn]] void fake_node1(int port, std::uint64_t hash, std::uint64_t count) {
  int bad = connect_to(port);
  greet(bad, "not the secret");
  char c;
  (void)!::read(bad, &c, 1);  // node 0 closes it
  ::close(bad);
  const int fd = connect_to(port);
  greet(fd, "s3cret");
  const hello_payload hello{1, 2, hash, count, ::getpid()};
  std::byte header[off::message_header::size];
  off::message_header{.kind = off::message_kind::hello, .payload_bytes = sizeof hello}.encode(header);
  put_all(fd, header, sizeof header);
  put_all(fd, &hello, sizeof hello);
  std::byte in[off::message_header::size + sizeof(hello_payload)];
  if (!get_all(fd, in, sizeof in)) ::_exit(3);           // node 0's hello
  if (!get_all(fd, in, off::message_header::size)) ::_exit(4);  // the header of node 0's call
  const char junk[off::message_header::size] = "this is not a heddle frame";
  put_all(fd, junk, sizeof junk);
  (void)!::read(fd, &c, 1);  // until node 0 drops the connection
  ::_exit(0);
}

TEST(TcpWire, WrongSecretIsRefusedAndCorruptFrameDropsThePeer) {
  int port = 0;
  const int listener = listen_any(port);
  ASSERT_GE(listener, 0);
  off::detail::registry& reg = off::detail::registry::instance();
  const std::uint64_t hash = reg.hash(), count = reg.size();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) fake_node1(port, hash, count);

  off::session_options o;
  o.transport = off::backend::tcp;
  o.node = 0;
  o.nodes = 2;
  o.peers = {"127.0.0.1:" + std::to_string(port), "127.0.0.1:1"};
  o.listen_fd = listener;
  o.secret = "s3cret";
  o.connect_timeout = std::chrono::seconds(20);
  o.shutdown_timeout = std::chrono::seconds(2);
  testing::internal::CaptureStderr();
  {
    off::session s(o);
    heddle::future<int> f = off::async(1, heddle::f2f(&scale, 2, std::string("ab")));
    try {
      f.get();
      FAIL() << "a call answered with garbage returned";
    } catch (const off::peer_lost& e) {
      EXPECT_EQ(e.node(), 1u);
      const std::string w = e.what();
      EXPECT_NE(w.find("node 1"), std::string::npos) << w;
      EXPECT_NE(w.find("corrupt frame"), std::string::npos) << w;
      EXPECT_NE(w.find("not a heddle message"), std::string::npos) << w;
    }
    EXPECT_THROW(off::sync(1, heddle::f2f(&scale, 1, std::string("x"))), off::peer_lost);
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("refused a connection from 127.0.0.1: wrong secret"), std::string::npos) << err;
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
