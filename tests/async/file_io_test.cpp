// SPDX-License-Identifier: Apache-2.0
// File I/O through the file engine (heddle::io::pread, pwrite), with each backend: io_uring and
// the fallback pool of I/O threads. A 64 MiB file read in chunks with many reads in flight at once
// (all chunks at once, and windows of continuation chains) and checked word by word and by
// checksum; pwrite then pread back; short reads and the end of the file; errors with their errno;
// choosing the backend (use_file_backend, HEDDLE_FILE_IO); a runtime destroyed with reads in flight.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/heddle.hpp>

#include "async_test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle_test::scaled;
using heddle_test::watchdog;
using heddle_test::unique_fd;
using heddle_test::check_sys;
using heddle_test::describe;
using heddle_test::outcome_text;
namespace io = heddle::io;

// ---------------------------------------------------------------------------------------------
// Helpers.

// The file's content: 64-bit word i is word_at(i), so any chunk can be checked on its own.
constexpr std::uint64_t seed = 0x5eed'f11e'0000'0001ull;
std::uint64_t word_at(std::uint64_t i) { return heddle_test::mix(i ^ seed); }
// An order-independent checksum: the sum over words of a hash of (index, value).
std::uint64_t word_sum(std::uint64_t i, std::uint64_t v) { return heddle_test::mix(v + i * 0x9e3779b97f4a7c15ull); }

// Checks a chunk that starts at byte `offset` (a multiple of 8); returns the number of wrong words
// and adds the chunk's checksum to *sum.
std::size_t check_chunk(const std::byte* p, std::size_t bytes, std::uint64_t offset, std::uint64_t* sum) {
  std::size_t wrong = 0;
  std::uint64_t s = 0;
  for (std::size_t k = 0; k + 8 <= bytes; k += 8) {
    std::uint64_t v;
    std::memcpy(&v, p + k, 8);
    const std::uint64_t i = (offset + k) / 8;
    wrong += v != word_at(i);
    s += word_sum(i, v);
  }
  *sum += s;
  return wrong;
}

// A temporary directory for the test's files, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/heddle-file-io-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp");
    path_ = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Takes the file's pages out of the page cache (where the file system allows it: ext4, xfs... do,
// tmpfs does not). pread serves a read of cached data on the calling thread and hands the others to
// its backend: the backends' tests read files whose data are not cached, so that the backend
// serves them.
void drop_from_page_cache(int fd) {
  check_sys(::fdatasync(fd), "fdatasync");  // dirty pages stay cached: write them first
  if (const int e = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); e != 0)
    throw std::system_error(e, std::generic_category(), "posix_fadvise");
}

// Writes the reference content (plain system calls), takes it out of the page cache and returns
// its checksum.
std::uint64_t write_reference_file(const std::string& path, std::size_t bytes) {
  unique_fd fd(check_sys(::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600), "open"));
  std::vector<std::uint64_t> block(1 << 17);  // 1 MiB
  std::uint64_t sum = 0, word = 0;
  for (std::size_t off = 0; off < bytes; off += block.size() * 8) {
    const std::size_t words = std::min(block.size(), (bytes - off) / 8);
    for (std::size_t k = 0; k < words; ++k, ++word) {
      block[k] = word_at(word);
      sum += word_sum(word, block[k]);
    }
    const char* p = reinterpret_cast<const char*>(block.data());
    std::size_t left = words * 8;
    while (left > 0) {
      ssize_t n = ::write(fd.get(), p, left);
      if (n < 0 && errno == EINTR) continue;
      check_sys(static_cast<int>(n < 0 ? -1 : 0), "write");
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  drop_from_page_cache(fd.get());
  return sum;
}

const char* backend_name(io::file_backend b) { return b == io::file_backend::io_uring ? "io_uring" : "threads"; }

// Whether this kernel lets the process make an io_uring (the backend's own test of it).
bool kernel_has_io_uring() {
#ifdef SYS_io_uring_setup
  struct {
    std::uint32_t sq_entries, cq_entries, flags, sq_thread_cpu, sq_thread_idle, features, wq_fd, resv[3];
    std::uint64_t sq_off[5], cq_off[5];
  } params{};
  static_assert(sizeof(params) == 120);
  const long fd = ::syscall(SYS_io_uring_setup, 4, &params);
  if (fd < 0) return false;
  ::close(static_cast<int>(fd));
  return true;
#else
  return false;
#endif
}

// The io_uring backend is there when heddle was built with liburing (HEDDLE_TEST_HAVE_LIBURING, from
// the build) and the kernel lets the process make a ring; why not, otherwise.
bool io_uring_usable() { return HEDDLE_TEST_HAVE_LIBURING && kernel_has_io_uring(); }
const char* why_no_io_uring() {
  return HEDDLE_TEST_HAVE_LIBURING ? "the kernel refuses io_uring here" : "heddle was built without liburing";
}

// Reads [offset, offset + buf.size()) completely through the engine: short reads are continued.
void pread_fully(heddle::runtime& rt, int fd, std::span<std::byte> buf, std::uint64_t offset) {
  while (!buf.empty()) {
    const std::size_t n = *io::pread(rt, fd, buf, offset);
    if (n == 0 || n > buf.size()) throw std::runtime_error("pread returned " + std::to_string(n));
    buf = buf.subspan(n);
    offset += n;
  }
}

// ---------------------------------------------------------------------------------------------
// Every backend.

class FileIoBackend : public ::testing::TestWithParam<io::file_backend> {
 protected:
  void SetUp() override {
    rt_ = std::make_unique<heddle::runtime>(2);
    try {
      io::use_file_backend(*rt_, GetParam());
    } catch (const std::system_error& e) {
      if (GetParam() == io::file_backend::io_uring && !io_uring_usable())
        GTEST_SKIP() << why_no_io_uring() << ": " << e.what();
      throw;
    }
    ASSERT_EQ(io::file_backend_of(*rt_), GetParam());
  }
  void TearDown() override { rt_.reset(); }

  heddle::runtime& rt() { return *rt_; }
  std::unique_ptr<heddle::runtime> rt_;
  temp_dir dir_;
};

// Each backend the build has (without liburing, the I/O threads alone).
#if HEDDLE_TEST_HAVE_LIBURING
INSTANTIATE_TEST_SUITE_P(Backends, FileIoBackend,
                         ::testing::Values(io::file_backend::io_uring, io::file_backend::threads),
                         [](const auto& info) { return std::string(backend_name(info.param)); });
#else
INSTANTIATE_TEST_SUITE_P(Backends, FileIoBackend, ::testing::Values(io::file_backend::threads),
                         [](const auto& info) { return std::string(backend_name(info.param)); });
#endif

// All chunks of a 64 MiB file in flight at once, straight into one buffer.
TEST_P(FileIoBackend, BigFileAllChunksInFlightAtOnce) {
  watchdog dog("FileIoBackend.BigFileAllChunksInFlightAtOnce", 120s);
  const std::size_t size = scaled<std::size_t>(64 << 20, 8 << 20);
  const std::size_t chunk = 64 << 10;
  const std::string path = dir_.file("big");
  const std::uint64_t want_sum = write_reference_file(path, size);
  unique_fd fd(check_sys(::open(path.c_str(), O_RDONLY | O_CLOEXEC), "open"));

  std::vector<std::byte> data(size);
  std::vector<heddle::future<std::size_t>> reads;
  for (std::size_t off = 0; off < size; off += chunk)
    reads.push_back(io::pread(rt(), fd.get(), std::span(data).subspan(off, chunk), off));
  ASSERT_EQ(reads.size(), size / chunk);
  std::size_t short_reads = 0;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    ASSERT_EQ(outcome_text(reads[i]), "ok") << "chunk " << i;
    const std::size_t n = *reads[i];
    ASSERT_GE(n, 1u);
    ASSERT_LE(n, chunk);
    if (n < chunk) {  // allowed, if unusual for a regular file: read the rest
      ++short_reads;
      pread_fully(rt(), fd.get(), std::span(data).subspan(i * chunk + n, chunk - n), i * chunk + n);
    }
  }
  std::uint64_t sum = 0;
  EXPECT_EQ(check_chunk(data.data(), size, 0, &sum), 0u) << "words differ from the file";
  EXPECT_EQ(sum, want_sum) << "checksum";
  EXPECT_EQ(::lseek(fd.get(), 0, SEEK_CUR), 0) << "pread moved the file position";
  RecordProperty("short_reads", static_cast<int>(short_reads));
}

// The same file through a fixed number of continuation chains, each with its own buffer: chain k
// reads chunks k, k + W, k + 2W... and checks each chunk on a worker before reading the next.
struct windowed_reader {
  heddle::runtime* rt;
  int fd;
  std::size_t size, chunk, window;
  std::atomic<std::size_t> wrong{0}, chunks_read{0}, short_reads{0};
  std::atomic<std::uint64_t> sum{0};
  std::atomic<std::size_t> max_in_flight{0}, in_flight{0};

  struct lane {
    windowed_reader* r;
    std::vector<std::byte> buf;
    std::mutex m;
    heddle::future<void> tail;  // the newest step (made under m)
    bool finished = false;
    std::string failure;

    void read_chunk(std::size_t index, std::size_t done) {
      const std::size_t off = index * r->chunk;
      if (off >= r->size) {
        std::lock_guard lock(m);
        finished = true;
        return;
      }
      const std::size_t len = std::min(r->chunk, r->size - off);
      std::lock_guard lock(m);
      const std::size_t now = ++r->in_flight;
      std::size_t seen = r->max_in_flight.load();
      while (now > seen && !r->max_in_flight.compare_exchange_weak(seen, now)) {
      }
      tail = io::pread(*r->rt, r->fd, std::span(buf).subspan(done, len - done), off + done)
                 .then(heddle::strategy::normal, [this, index, done, len, off](std::size_t n) {
                   r->in_flight--;
                   if (n == 0 || done + n > len) throw std::runtime_error("pread returned " + std::to_string(n));
                   if (done + n < len) {
                     r->short_reads++;
                     return read_chunk(index, done + n);
                   }
                   std::uint64_t s = 0;
                   r->wrong += check_chunk(buf.data(), len, off, &s);
                   r->sum += s;
                   r->chunks_read++;
                   read_chunk(index + r->window, 0);
                 });
    }
    std::string join() {
      for (;;) {
        heddle::future<void> f;
        {
          std::lock_guard lock(m);
          if (finished && !tail.valid()) return "finished";
          f = std::move(tail);
        }
        if (!f.valid()) return "chain stalled";
        const std::string o = outcome_text(f);
        if (o != "ok") return o;
      }
    }
  };
};

TEST_P(FileIoBackend, BigFileThroughWindowsOfContinuationChains) {
  watchdog dog("FileIoBackend.BigFileThroughWindowsOfContinuationChains", 120s);
  const std::size_t size = scaled<std::size_t>(64 << 20, 8 << 20);
  const std::string path = dir_.file("big");
  const std::uint64_t want_sum = write_reference_file(path, size);
  unique_fd fd(check_sys(::open(path.c_str(), O_RDONLY | O_CLOEXEC), "open"));

  windowed_reader r;
  r.rt = &rt();
  r.fd = fd.get();
  r.size = size;
  r.chunk = 128 << 10;
  r.window = 32;
  std::vector<std::unique_ptr<windowed_reader::lane>> lanes;
  for (std::size_t k = 0; k < r.window; ++k) {
    auto l = std::make_unique<windowed_reader::lane>();
    l->r = &r;
    l->buf.resize(r.chunk);
    lanes.push_back(std::move(l));
  }
  for (std::size_t k = 0; k < r.window; ++k) lanes[k]->read_chunk(k, 0);
  for (auto& l : lanes) EXPECT_EQ(l->join(), "finished");
  EXPECT_EQ(r.chunks_read.load(), size / r.chunk);
  EXPECT_EQ(r.wrong.load(), 0u) << "words differ from the file";
  EXPECT_EQ(r.sum.load(), want_sum) << "checksum";
  EXPECT_GT(r.max_in_flight.load(), 1u);
  RecordProperty("max_in_flight", static_cast<int>(r.max_in_flight.load()));
  RecordProperty("short_reads", static_cast<int>(r.short_reads.load()));
}

TEST_P(FileIoBackend, PwriteThenPreadBack) {
  watchdog dog("FileIoBackend.PwriteThenPreadBack", 120s);
  const std::string path = dir_.file("written");
  unique_fd fd(check_sys(::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600), "open"));
  // Records of an odd size at odd offsets, all written at once, in a scrambled order.
  const std::size_t record = 4099, count = scaled<std::size_t>(2000, 300);
  std::vector<std::byte> src(record * count);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(heddle_test::mix(i) & 0xff);
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = (i * 7919) % count;  // 7919 is prime: a permutation
  std::vector<heddle::future<std::size_t>> writes(count);
  for (std::size_t i : order)
    writes[i] = io::pwrite(rt(), fd.get(), std::span<const std::byte>(src).subspan(i * record, record), i * record);
  for (std::size_t i = 0; i < count; ++i) {
    ASSERT_EQ(outcome_text(writes[i]), "ok") << "record " << i;
    std::size_t n = *writes[i];
    ASSERT_GE(n, 1u);
    while (n < record) {  // a short write: write the rest
      n += *io::pwrite(rt(), fd.get(), std::span<const std::byte>(src).subspan(i * record + n, record - n),
                       i * record + n);
    }
  }
  struct stat st {};
  check_sys(::fstat(fd.get(), &st), "fstat");
  EXPECT_EQ(static_cast<std::size_t>(st.st_size), src.size());
  EXPECT_EQ(::lseek(fd.get(), 0, SEEK_CUR), 0) << "pwrite moved the file position";

  // Back through plain pread (the reference) and through the engine, in other chunks.
  std::vector<std::byte> plain(src.size());
  ASSERT_EQ(::pread(fd.get(), plain.data(), plain.size(), 0), static_cast<ssize_t>(plain.size()));
  EXPECT_TRUE(plain == src) << "the file differs from what was written";
  std::vector<std::byte> back(src.size());
  std::vector<heddle::future<std::size_t>> reads;
  const std::size_t chunk = 10000;
  for (std::size_t off = 0; off < back.size(); off += chunk)
    reads.push_back(io::pread(rt(), fd.get(), std::span(back).subspan(off, std::min(chunk, back.size() - off)), off));
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const std::size_t off = i * chunk, len = std::min(chunk, back.size() - off);
    ASSERT_EQ(outcome_text(reads[i]), "ok");
    if (*reads[i] < len)
      pread_fully(rt(), fd.get(), std::span(back).subspan(off + *reads[i], len - *reads[i]), off + *reads[i]);
  }
  EXPECT_TRUE(back == src) << "pread gave back other bytes than pwrite wrote";

  // Overwriting in place, then reading the same range back in a continuation.
  std::vector<std::byte> patch(5000, std::byte{0xab});
  std::vector<std::byte> check(5000);
  auto round_trip = io::pwrite(rt(), fd.get(), patch, 12345).then(heddle::strategy::normal, [&](std::size_t n) {
    return io::pread(rt(), fd.get(), std::span(check).first(n), 12345);
  });
  const std::size_t n = std::move(round_trip).get();  // then unwraps the pread's future
  ASSERT_GE(n, 1u);
  EXPECT_TRUE(std::all_of(check.begin(), check.begin() + static_cast<std::ptrdiff_t>(n),
                          [](std::byte b) { return b == std::byte{0xab}; }));
}

// A read of data the page cache holds completes on the calling thread: its future is ready when
// pread returns, with what pread(2) gives (the bytes, a short count at the end, end_of_file past
// it). An O_DIRECT descriptor's reads still go to the backend, and give the same bytes.
TEST_P(FileIoBackend, CachedReadsCompleteOnTheCallingThread) {
  watchdog dog("FileIoBackend.CachedReadsCompleteOnTheCallingThread", 60s);
  const std::string path = dir_.file("cached");
  write_reference_file(path, 10000);
  unique_fd fd(check_sys(::open(path.c_str(), O_RDONLY | O_CLOEXEC), "open"));
  std::vector<std::byte> warm(10000);
  ASSERT_EQ(::pread(fd.get(), warm.data(), warm.size(), 0), 10000);  // into the page cache
  iovec probe{warm.data(), 1};
  if (::preadv2(fd.get(), &probe, 1, 0, RWF_NOWAIT) < 0)
    GTEST_SKIP() << "this kernel or file system has no RWF_NOWAIT reads (" << std::strerror(errno) << ")";

  std::vector<std::byte> buf(4096);
  for (std::uint64_t off : {0u, 4096u, 104u}) {
    auto f = io::pread(rt(), fd.get(), buf, off);
    ASSERT_TRUE(f.is_ready()) << "offset " << off;
    ASSERT_EQ(*f, 4096u);
    EXPECT_EQ(std::memcmp(buf.data(), warm.data() + off, 4096), 0) << "offset " << off;
  }
  auto tail = io::pread(rt(), fd.get(), buf, 8192);
  ASSERT_TRUE(tail.is_ready());
  EXPECT_EQ(*tail, 10000u - 8192u);
  auto past = io::pread(rt(), fd.get(), buf, 10000);
  ASSERT_TRUE(past.is_ready());
  EXPECT_EQ(outcome_text(past), "end_of_file");

  // Only the first page cached (no read-ahead): a read over it and the next gets both pages, as
  // pread(2) would, not the cached part alone.
  drop_from_page_cache(fd.get());
  ASSERT_EQ(::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_RANDOM), 0);
  ASSERT_EQ(::pread(fd.get(), warm.data(), 4096, 0), 4096);
  std::vector<std::byte> two(8192);
  auto both = io::pread(rt(), fd.get(), two, 0);
  ASSERT_EQ(outcome_text(both), "ok");
  EXPECT_EQ(*both, 8192u);
  EXPECT_EQ(std::memcmp(two.data(), warm.data(), 8192), 0);

  const int direct = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (direct < 0) return;  // a file system without O_DIRECT (tmpfs): nothing more to see
  unique_fd d(direct);
  auto* aligned = static_cast<std::byte*>(std::aligned_alloc(4096, 4096));
  std::unique_ptr<std::byte, decltype(&std::free)> owner(aligned, &std::free);
  auto r = io::pread(rt(), d.get(), std::span(aligned, 4096), 4096);
  ASSERT_EQ(outcome_text(r), "ok");
  ASSERT_EQ(*r, 4096u);
  EXPECT_EQ(std::memcmp(aligned, warm.data() + 4096, 4096), 0);
}

TEST_P(FileIoBackend, ShortReadsAndTheEndOfTheFile) {
  watchdog dog("FileIoBackend.ShortReadsAndTheEndOfTheFile", 60s);
  const std::string path = dir_.file("small");
  write_reference_file(path, 10000);
  unique_fd fd(check_sys(::open(path.c_str(), O_RDONLY | O_CLOEXEC), "open"));
  std::vector<std::byte> buf(8192);
  auto part = io::pread(rt(), fd.get(), buf, 8192);  // 1808 bytes left
  ASSERT_EQ(outcome_text(part), "ok");
  EXPECT_EQ(*part, 10000u - 8192u);
  std::uint64_t sum = 0;
  EXPECT_EQ(check_chunk(buf.data(), *part, 8192, &sum), 0u);
  auto at_end = io::pread(rt(), fd.get(), buf, 10000);
  EXPECT_EQ(outcome_text(at_end), "end_of_file");
  auto past_end = io::pread(rt(), fd.get(), buf, std::uint64_t{1} << 40);
  EXPECT_EQ(outcome_text(past_end), "end_of_file");
  // An empty read is no end of file.
  auto empty = io::pread(rt(), fd.get(), std::span<std::byte>{}, 0);
  ASSERT_EQ(outcome_text(empty), "ok");
  EXPECT_EQ(*empty, 0u);
  // The error is io::errc::end_of_file.
  auto again = io::pread(rt(), fd.get(), buf, 10000);
  try {
    again.get();
    ADD_FAILURE() << "no error at the end of the file";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), io::errc::end_of_file);
  }
  // An empty file: the first read is at its end.
  unique_fd empty_file(check_sys(::open(dir_.file("empty").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600), "open"));
  auto nothing = io::pread(rt(), empty_file.get(), buf, 0);
  EXPECT_EQ(outcome_text(nothing), "end_of_file");
}

TEST_P(FileIoBackend, ErrorsCarryTheErrno) {
  watchdog dog("FileIoBackend.ErrorsCarryTheErrno", 60s);
  const std::string path = dir_.file("errors");
  write_reference_file(path, 4096);
  std::vector<std::byte> buf(512);
  // A descriptor that is certainly not open (open ones take the lowest free numbers).
  const int closed = check_sys(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 15000), "F_DUPFD");
  ::close(closed);
  for (int fd : {closed, -1}) {
    SCOPED_TRACE("fd " + std::to_string(fd));
    auto r = io::pread(rt(), fd, buf, 0);
    EXPECT_EQ(outcome_text(r), "EBADF");
    auto w = io::pwrite(rt(), fd, buf, 0);
    EXPECT_EQ(outcome_text(w), "EBADF");
  }
  {
    SCOPED_TRACE("read-only and write-only descriptors");
    unique_fd ro(check_sys(::open(path.c_str(), O_RDONLY | O_CLOEXEC), "open"));
    auto w = io::pwrite(rt(), ro.get(), buf, 0);
    EXPECT_EQ(outcome_text(w), "EBADF");
    unique_fd wo(check_sys(::open(path.c_str(), O_WRONLY | O_CLOEXEC), "open"));
    auto r = io::pread(rt(), wo.get(), buf, 0);
    EXPECT_EQ(outcome_text(r), "EBADF");
  }
  {
    SCOPED_TRACE("a directory");
    unique_fd d(check_sys(::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open"));
    auto r = io::pread(rt(), d.get(), buf, 0);
    EXPECT_EQ(outcome_text(r), "EISDIR");
  }
  {
    SCOPED_TRACE("a descriptor closed after use");
    unique_fd f(check_sys(::open(path.c_str(), O_RDONLY | O_CLOEXEC), "open"));
    auto r0 = io::pread(rt(), f.get(), buf, 0);
    EXPECT_EQ(outcome_text(r0), "ok");
    const int number = f.get();
    f.reset();
    auto r = io::pread(rt(), number, buf, 0);
    EXPECT_EQ(outcome_text(r), "EBADF");
  }
  {
    SCOPED_TRACE("an offset beyond off_t");
    unique_fd f(check_sys(::open(path.c_str(), O_RDWR | O_CLOEXEC), "open"));
    auto r = io::pread(rt(), f.get(), buf, std::uint64_t{1} << 63);
    EXPECT_EQ(outcome_text(r), "EINVAL");
    auto w = io::pwrite(rt(), f.get(), buf, std::uint64_t{1} << 63);
    EXPECT_EQ(outcome_text(w), "EINVAL");
  }
}

// pread(2) and pwrite(2) refuse offset -1 (as off_t) with EINVAL; io_uring takes -1 to mean "the
// file position", so an engine that passed the offset through would read and write at the
// position, and move it.
TEST_P(FileIoBackend, OffsetMinusOneIsNoFilePosition) {
  watchdog dog("FileIoBackend.OffsetMinusOneIsNoFilePosition", 60s);
  const std::string path = dir_.file("position");
  write_reference_file(path, 4096);
  unique_fd f(check_sys(::open(path.c_str(), O_RDWR | O_CLOEXEC), "open"));
  std::vector<std::byte> buf(512);
  auto r = io::pread(rt(), f.get(), buf, ~std::uint64_t{0});
  EXPECT_EQ(outcome_text(r), "EINVAL");
  auto w = io::pwrite(rt(), f.get(), buf, ~std::uint64_t{0});
  EXPECT_EQ(outcome_text(w), "EINVAL");
  EXPECT_EQ(::lseek(f.get(), 0, SEEK_CUR), 0) << "the file position moved";
  struct stat st {};
  check_sys(::fstat(f.get(), &st), "fstat");
  EXPECT_EQ(st.st_size, 4096) << "the file changed size";
}

// pread and pwrite on what has no offsets (a pipe, a socket) fail with ESPIPE, as pread(2) does;
// io_uring alone would read and write them, ignoring the offset, when they have data or space.
TEST_P(FileIoBackend, UnseekableDescriptorsGiveESPIPE) {
  watchdog dog("FileIoBackend.UnseekableDescriptorsGiveESPIPE", 60s);
  for (int kind = 0; kind < 2; ++kind) {
    SCOPED_TRACE(kind == 0 ? "pipe" : "socketpair");
    int p[2];
    if (kind == 0) check_sys(::pipe2(p, O_CLOEXEC), "pipe2");
    else check_sys(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p), "socketpair");
    unique_fd rd(p[0]), wr(p[1]);
    ASSERT_EQ(::write(wr.get(), "data", 4), 4);  // with data waiting (io_uring fails an empty pipe itself)
    std::vector<std::byte> buf(16);
    auto r = io::pread(rt(), rd.get(), buf, 0);
    EXPECT_EQ(outcome_text(r), "ESPIPE");
    auto w = io::pwrite(rt(), wr.get(), buf, 0);
    EXPECT_EQ(outcome_text(w), "ESPIPE");
    char back[4];
    EXPECT_EQ(::read(rd.get(), back, 4), 4) << "the data was taken";
  }
}

// A buffer of 4 GiB or more is no end of file: the read has the file's bytes (or, as any read may,
// fewer than asked, but at least one while the file has data at the offset).
TEST_P(FileIoBackend, HugeBufferIsNoEndOfFile) {
  watchdog dog("FileIoBackend.HugeBufferIsNoEndOfFile", 60s);
  const std::string path = dir_.file("small");
  write_reference_file(path, 4096);
  unique_fd fd(check_sys(::open(path.c_str(), O_RDONLY | O_CLOEXEC), "open"));
  // Address space only: the kernel touches the pages it reads into (one here).
  const std::size_t four_gib = std::size_t{1} << 32, len = four_gib + 4096;
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) GTEST_SKIP() << "cannot map 4 GiB of address space here";
  for (std::size_t size : {four_gib, four_gib + 16}) {
    SCOPED_TRACE("buffer of " + std::to_string(size) + " bytes");
    auto r = io::pread(rt(), fd.get(), std::span(static_cast<std::byte*>(p), size), 0);
    ASSERT_EQ(outcome_text(r), "ok");
    EXPECT_GE(*r, 1u);
    EXPECT_LE(*r, 4096u);
    std::uint64_t sum = 0;
    EXPECT_EQ(check_chunk(static_cast<const std::byte*>(p), *r, 0, &sum), 0u);
  }
  ::munmap(p, len);
}

// Tasks on the workers start file operations with the overloads that take no runtime, and chain
// a pread after their pwrite.
TEST_P(FileIoBackend, OperationsFromWorkerTasks) {
  watchdog dog("FileIoBackend.OperationsFromWorkerTasks", 60s);
  const std::string path = dir_.file("tasks");
  unique_fd fd(check_sys(::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600), "open"));
  const int n = 64;
  const std::size_t len = 3000;
  std::vector<std::vector<std::byte>> out(n, std::vector<std::byte>(len)), in(n, std::vector<std::byte>(len));
  for (int i = 0; i < n; ++i) std::fill(out[i].begin(), out[i].end(), static_cast<std::byte>(i + 1));
  heddle::task_group g(rt());
  std::atomic<int> good{0};
  std::vector<heddle::future<bool>> checks;
  for (int i = 0; i < n; ++i)
    g.run([&, i] {
      auto f = io::pwrite(fd.get(), out[i], i * len).then(heddle::strategy::normal, [&, i](std::size_t w) {
        return io::pread(fd.get(), std::span(in[i]).first(w), i * len);
      });
      // Forcing on a worker helps or sleeps; it never waits in the system call itself.
      const std::size_t k = std::move(f).get();  // then unwraps the pread's future
      if (k >= 1 && std::all_of(in[i].begin(), in[i].begin() + static_cast<std::ptrdiff_t>(k),
                                [i](std::byte b) { return b == static_cast<std::byte>(i + 1); }))
        good++;
    });
  g.wait();
  EXPECT_EQ(good.load(), n);
}

// Destroying the runtime with reads in flight: nothing hangs; each read has its bytes or failed
// with task_cancelled, and the kernel writes nothing into the buffer of a read after it completed.
TEST_P(FileIoBackend, RuntimeDestroyedWithReadsInFlight) {
  watchdog dog("FileIoBackend.RuntimeDestroyedWithReadsInFlight", 120s);
  const std::size_t size = scaled<std::size_t>(32 << 20, 4 << 20);
  const std::size_t chunk = 64 << 10;
  const std::string path = dir_.file("inflight");
  write_reference_file(path, size);
  unique_fd fd(check_sys(::open(path.c_str(), O_RDONLY | O_CLOEXEC), "open"));
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    drop_from_page_cache(fd.get());  // the last round's reads cached the file: in flight means uncached
    auto rt2 = std::make_unique<heddle::runtime>(2);
    io::use_file_backend(*rt2, GetParam());
    std::vector<std::byte> data(size);
    std::vector<heddle::future<std::size_t>> reads;
    for (std::size_t off = 0; off < size; off += chunk)
      reads.push_back(io::pread(*rt2, fd.get(), std::span(data).subspan(off, chunk), off));
    if (round == 1) std::this_thread::sleep_for(2ms);  // some done, some not
    rt2.reset();
    int ok = 0, cancelled = 0;
    std::vector<std::size_t> cancelled_chunks;
    for (std::size_t i = 0; i < reads.size(); ++i) {
      const std::string o = outcome_text(reads[i]);
      if (o == "ok") {
        ++ok;
        std::uint64_t sum = 0;
        EXPECT_EQ(check_chunk(data.data() + i * chunk, *reads[i], i * chunk, &sum), 0u) << "chunk " << i;
      } else {
        EXPECT_EQ(o, "task_cancelled") << "chunk " << i;
        ++cancelled;
        cancelled_chunks.push_back(i);
      }
    }
    EXPECT_EQ(ok + cancelled, static_cast<int>(reads.size()));
    // Nothing is written into a cancelled read's buffer afterwards.
    for (std::size_t i : cancelled_chunks) std::memset(data.data() + i * chunk, 0x5a, chunk);
    std::this_thread::sleep_for(20ms);
    for (std::size_t i : cancelled_chunks)
      ASSERT_TRUE(std::all_of(data.begin() + static_cast<std::ptrdiff_t>(i * chunk),
                              data.begin() + static_cast<std::ptrdiff_t>((i + 1) * chunk),
                              [](std::byte b) { return b == std::byte{0x5a}; }))
          << "chunk " << i << " was written after its read failed";
    RecordProperty("cancelled_round_" + std::to_string(round), cancelled);
  }
}

// ---------------------------------------------------------------------------------------------
// Choosing the backend.

TEST(FileIo, UseFileBackendOnlyBeforeTheFirstOperation) {
  watchdog dog("FileIo.UseFileBackendOnlyBeforeTheFirstOperation", 60s);
  temp_dir dir;
  write_reference_file(dir.file("f"), 4096);
  unique_fd fd(check_sys(::open(dir.file("f").c_str(), O_RDONLY | O_CLOEXEC), "open"));
  std::vector<std::byte> buf(4096);
  for (io::file_backend first : {io::file_backend::threads, io::file_backend::io_uring}) {
    if (first == io::file_backend::io_uring && !io_uring_usable()) continue;
    SCOPED_TRACE(backend_name(first));
    heddle::runtime rt(2);
    io::use_file_backend(rt, first);
    EXPECT_EQ(io::file_backend_of(rt), first);
    EXPECT_EQ(*io::pread(rt, fd.get(), buf, 0), 4096u);
    const io::file_backend other = first == io::file_backend::threads ? io::file_backend::io_uring
                                                                      : io::file_backend::threads;
    EXPECT_THROW(io::use_file_backend(rt, other), std::logic_error);
    EXPECT_EQ(io::file_backend_of(rt), first);
    EXPECT_EQ(*io::pread(rt, fd.get(), buf, 0), 4096u);  // still served, by the first backend
  }
  // file_backend_of chooses the default when nothing was chosen: a later switch is refused too.
  heddle::runtime rt(1);
  const io::file_backend chosen = io::file_backend_of(rt);
  const io::file_backend other = chosen == io::file_backend::threads ? io::file_backend::io_uring
                                                                     : io::file_backend::threads;
  EXPECT_THROW(io::use_file_backend(rt, other), std::logic_error);
}

#if HEDDLE_TEST_HAVE_LIBURING
TEST(FileIo, DefaultBackendIsIoUringWhereTheKernelHasIt) {
  if (const char* v = std::getenv("HEDDLE_FILE_IO"); v && *v) GTEST_SKIP() << "HEDDLE_FILE_IO=" << v << " is set";
  if (!io_uring_usable()) GTEST_SKIP() << why_no_io_uring();
  heddle::runtime rt(1);
  EXPECT_EQ(io::file_backend_of(rt), io::file_backend::io_uring);
}
#endif

#if !HEDDLE_TEST_HAVE_LIBURING
// Built without liburing, files are served by I/O threads, and asking for io_uring says why not.
TEST(FileIo, WithoutLiburingTheThreadsServeAndIoUringIsRefused) {
  heddle::runtime rt(1);
  try {
    io::use_file_backend(rt, io::file_backend::io_uring);
    ADD_FAILURE() << "use_file_backend(io_uring) succeeded in a build without liburing";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("built without liburing"), std::string::npos) << e.what();
  }
  EXPECT_EQ(io::file_backend_of(rt), io::file_backend::threads);
  temp_dir dir;
  write_reference_file(dir.file("f"), 4096);
  unique_fd fd(check_sys(::open(dir.file("f").c_str(), O_RDONLY | O_CLOEXEC), "open"));
  std::vector<std::byte> buf(4096);
  EXPECT_EQ(*io::pread(rt, fd.get(), buf, 0), 4096u);
}
#endif

// HEDDLE_FILE_IO=threads picks the fallback for runtimes that did not choose. (This test changes
// the environment only while no other thread of the test reads it.)
TEST(FileIo, EnvironmentSelectsTheThreadsBackend) {
  watchdog dog("FileIo.EnvironmentSelectsTheThreadsBackend", 60s);
  const char* old = std::getenv("HEDDLE_FILE_IO");
  const std::string saved = old ? old : "";
  const bool had = old != nullptr;
  ::setenv("HEDDLE_FILE_IO", "threads", 1);
  {
    temp_dir dir;
    write_reference_file(dir.file("f"), 8192);
    unique_fd fd(check_sys(::open(dir.file("f").c_str(), O_RDONLY | O_CLOEXEC), "open"));
    heddle::runtime rt(2);
    std::vector<std::byte> buf(8192);
    EXPECT_EQ(*io::pread(rt, fd.get(), buf, 0), 8192u);
    EXPECT_EQ(io::file_backend_of(rt), io::file_backend::threads);
    std::uint64_t sum = 0;
    EXPECT_EQ(check_chunk(buf.data(), buf.size(), 0, &sum), 0u);
    // An explicit choice still wins over the environment.
    if (io_uring_usable()) {
      heddle::runtime rt2(1);
      io::use_file_backend(rt2, io::file_backend::io_uring);
      EXPECT_EQ(io::file_backend_of(rt2), io::file_backend::io_uring);
      EXPECT_EQ(*io::pread(rt2, fd.get(), buf, 0), 8192u);
    }
  }
  if (had) ::setenv("HEDDLE_FILE_IO", saved.c_str(), 1);
  else ::unsetenv("HEDDLE_FILE_IO");
}

#if HEDDLE_TEST_HAVE_LIBURING
TEST(FileIo, TwoRuntimesWithDifferentBackendsOnOneFile) {
  if (!io_uring_usable()) GTEST_SKIP() << why_no_io_uring();
  watchdog dog("FileIo.TwoRuntimesWithDifferentBackendsOnOneFile", 120s);
  temp_dir dir;
  const std::size_t size = scaled<std::size_t>(16 << 20, 2 << 20), chunk = 256 << 10;
  const std::uint64_t want = write_reference_file(dir.file("shared"), size);
  unique_fd fd(check_sys(::open(dir.file("shared").c_str(), O_RDONLY | O_CLOEXEC), "open"));
  heddle::runtime a(1), b(1);
  io::use_file_backend(a, io::file_backend::io_uring);
  io::use_file_backend(b, io::file_backend::threads);
  std::vector<std::byte> da(size), db(size);
  std::vector<heddle::future<std::size_t>> fa, fb;
  for (std::size_t off = 0; off < size; off += chunk) {
    fa.push_back(io::pread(a, fd.get(), std::span(da).subspan(off, chunk), off));
    fb.push_back(io::pread(b, fd.get(), std::span(db).subspan(off, chunk), off));
  }
  for (std::size_t i = 0; i < fa.size(); ++i) {
    const std::size_t off = i * chunk;
    if (const std::size_t n = *fa[i]; n < chunk)
      pread_fully(a, fd.get(), std::span(da).subspan(off + n, chunk - n), off + n);
    if (const std::size_t n = *fb[i]; n < chunk)
      pread_fully(b, fd.get(), std::span(db).subspan(off + n, chunk - n), off + n);
  }
  std::uint64_t sa = 0, sb = 0;
  EXPECT_EQ(check_chunk(da.data(), size, 0, &sa), 0u);
  EXPECT_EQ(check_chunk(db.data(), size, 0, &sb), 0u);
  EXPECT_EQ(sa, want);
  EXPECT_EQ(sb, want);
}
#endif

TEST(FileIo, DefaultRuntimeOverloadsFromAPlainThread) {
  watchdog dog("FileIo.DefaultRuntimeOverloadsFromAPlainThread", 60s);
  temp_dir dir;
  unique_fd fd(check_sys(::open(dir.file("d").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600), "open"));
  const std::string text = "through the default runtime";
  EXPECT_EQ(*io::pwrite(fd.get(), std::as_bytes(std::span(text.data(), text.size())), 100), text.size());
  std::string back(text.size(), '\0');
  EXPECT_EQ(*io::pread(fd.get(), std::as_writable_bytes(std::span(back.data(), back.size())), 100), text.size());
  EXPECT_EQ(back, text);
}

}  // namespace
