// SPDX-License-Identifier: Apache-2.0
// The pipeline experiment: oneTBB's text_filter example. A text file (generated in /tmp at the
// start) is read in chunks by a serial input filter, each chunk's words get a capital first letter
// in a parallel filter, and a serial_in_order filter writes the chunks to an output file in order.
// heddle::parallel_pipeline against tbb::parallel_pipeline and a serial loop, and a heddle variant
// whose input filter returns the future of an asynchronous read (heddle::io::pread) instead of
// reading on the worker. The output file (its size and a hash of its bytes, read back after each
// run) must equal the serial one's.
#include <fcntl.h>
#include <tbb/parallel_pipeline.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <heddle/heddle.hpp>

#include "experiment.hpp"
#include "heddle_runtimes.hpp"
#include "report.hpp"
#include "table.hpp"
#include "tbb_arenas.hpp"

namespace heddle::bench::algorithms {

namespace pipeline_experiment {
namespace {

constexpr std::size_t chunk_bytes = 32 * 1024;

// A chunk: bytes[0] is the byte before it in the file (whether its first letter starts a word),
// its own bytes follow from bytes[1]. Both are read by one pread of [offset - 1, offset + len).
struct chunk {
  std::uint64_t offset = 0;
  std::size_t len = 0;
  std::vector<char> bytes = std::vector<char>(chunk_bytes + 1);
  char* data() { return bytes.data() + 1; }
  const char* data() const { return bytes.data() + 1; }
  // Where the read goes, and how many bytes it asks for.
  std::span<std::byte> read_span() {
    const std::size_t skip = offset > 0 ? 0 : 1;  // the file's first chunk has no byte before
    bytes[0] = ' ';
    return {reinterpret_cast<std::byte*>(bytes.data() + skip), len + 1 - skip};
  }
  std::uint64_t read_offset() const { return offset > 0 ? offset - 1 : 0; }
};

class fd_guard {
 public:
  explicit fd_guard(int fd, const std::string& what) : fd_(fd) {
    if (fd < 0) throw std::system_error(errno, std::generic_category(), what);
  }
  ~fd_guard() { ::close(fd_); }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Words of 1-12 lowercase letters separated by spaces, a newline every 10 or so.
void generate(const std::string& path, std::size_t bytes) {
  fd_guard out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), "pipeline: create " + path);
  std::vector<char> buf;
  buf.reserve(1 << 20);
  std::uint64_t s = 42;
  auto next = [&s] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return s >> 33;
  };
  std::size_t written = 0;
  while (written < bytes) {
    buf.clear();
    while (buf.size() < (1 << 20) - 16) {
      const auto len = 1 + next() % 12;
      for (std::uint64_t i = 0; i < len; ++i) buf.push_back(char('a' + next() % 26));
      buf.push_back(next() % 10 == 0 ? '\n' : ' ');
    }
    const std::size_t n = std::min(buf.size(), bytes - written);
    if (::write(out.get(), buf.data(), n) != ssize_t(n)) throw std::runtime_error("pipeline: cannot write " + path);
    written += n;
  }
}

void capitalize(chunk& c) {
  char prev = c.bytes[0];
  for (std::size_t i = 0; i < c.len; ++i) {
    char& ch = c.data()[i];
    if ((prev == ' ' || prev == '\n') && ch >= 'a' && ch <= 'z') ch = char(ch - 'a' + 'A');
    prev = ch;
  }
}

// What a run leaves in the output file: its size and an FNV-1a hash of its bytes (taken after the
// timed run, by reading the file back).
struct output {
  std::uint64_t bytes = 0, hash = 1469598103934665603ULL;
  bool operator==(const output&) const = default;
};

output digest(int fd) {
  output o;
  std::vector<char> buf(1 << 20);
  for (;;) {
    const ssize_t r = ::pread(fd, buf.data(), buf.size(), off_t(o.bytes));
    if (r < 0) throw std::runtime_error("pipeline: cannot read the output back");
    if (r == 0) return o;
    for (ssize_t i = 0; i < r; ++i) o.hash = (o.hash ^ std::uint8_t(buf[std::size_t(i)])) * 1099511628211ULL;
    o.bytes += std::uint64_t(r);
  }
}

// The state of one run: the files, a ring of chunks (an item's chunk is chunks[seq % ring]: the
// output filter is serial_in_order, so item i leaves before item i + ring enters), the next offset.
struct text_job {
  int in = -1, out = -1;
  std::uint64_t size = 0;
  std::vector<chunk> chunks;
  std::uint64_t next_offset = 0, next_seq = 0;
  output result;

  text_job(int in_fd, int out_fd, std::uint64_t file_size, std::size_t ring)
      : in(in_fd), out(out_fd), size(file_size), chunks(ring) {
    if (::lseek(out, 0, SEEK_SET) != 0 || ::ftruncate(out, 0) != 0) throw std::runtime_error("pipeline: reset output");
  }
  // The next chunk to read (its place in the file), or nullptr at the end.
  chunk* claim() {
    if (next_offset >= size) return nullptr;
    chunk* c = &chunks[next_seq++ % chunks.size()];
    c->offset = next_offset;
    c->len = std::min<std::uint64_t>(chunk_bytes, size - next_offset);
    next_offset += c->len;
    return c;
  }
  void read_sync(chunk& c) const {
    const std::span<std::byte> to = c.read_span();
    std::size_t got = 0;
    while (got < to.size()) {
      const ssize_t r = ::pread(in, to.data() + got, to.size() - got, off_t(c.read_offset() + got));
      if (r <= 0) throw std::runtime_error("pipeline: read failed");
      got += std::size_t(r);
    }
  }
  void write(const chunk& c) {
    if (::write(out, c.data(), c.len) != ssize_t(c.len)) throw std::runtime_error("pipeline: write failed");
    result.bytes += c.len;
  }
};

output run_serial(int in, int out, std::uint64_t size) {
  text_job job(in, out, size, 1);
  while (chunk* c = job.claim()) {
    job.read_sync(*c);
    capitalize(*c);
    job.write(*c);
  }
  return job.result;
}

output run_heddle(heddle::runtime& rt, int in, int out, std::uint64_t size, std::size_t tokens) {
  text_job job(in, out, size, tokens);
  heddle::parallel_pipeline(
      rt, tokens,
      heddle::make_filter<void, chunk*>(heddle::filter_mode::serial_in_order, [&](heddle::flow_control& fc) -> chunk* {
        chunk* c = job.claim();
        if (!c) fc.stop();
        else job.read_sync(*c);
        return c;
      }) & heddle::make_filter<chunk*, chunk*>(heddle::filter_mode::parallel, [](chunk* c) {
        capitalize(*c);
        return c;
      }) & heddle::make_filter<chunk*, void>(heddle::filter_mode::serial_in_order, [&](chunk* c) { job.write(*c); }));
  return job.result;
}

// The same, with the read as a future: the input filter starts io::pread (the runtime's file
// engine) and returns at once; the chunk enters the transform when its bytes are there.
output run_heddle_async(heddle::runtime& rt, int in, int out, std::uint64_t size, std::size_t tokens) {
  text_job job(in, out, size, tokens);
  heddle::parallel_pipeline(
      rt, tokens,
      heddle::make_filter<void, chunk*>(heddle::filter_mode::serial_in_order,
                                        [&](heddle::flow_control& fc) -> heddle::future<chunk*> {
                                          chunk* c = job.claim();
                                          if (!c) {
                                            fc.stop();
                                            return heddle::make_ready_future<chunk*>(nullptr);
                                          }
                                          // The same single read as the other variants, by the file engine. Its
                                          // successor only checks the count: short_task runs it on the engine's thread,
                                          // no task in between.
                                          const std::span<std::byte> to = c->read_span();
                                          return heddle::io::pread(rt, in, to, c->read_offset())
                                              .then(heddle::strategy::short_task,
                                                    [c, want = to.size()](std::size_t got) {
                                                      if (got != want) throw std::runtime_error("pipeline: short read");
                                                      return c;
                                                    });
                                        }) &
          heddle::make_filter<chunk*, chunk*>(heddle::filter_mode::parallel,
                                              [](chunk* c) {
                                                capitalize(*c);
                                                return c;
                                              }) &
          heddle::make_filter<chunk*, void>(heddle::filter_mode::serial_in_order, [&](chunk* c) { job.write(*c); }));
  return job.result;
}

output run_tbb(int in, int out, std::uint64_t size, std::size_t tokens) {
  text_job job(in, out, size, tokens);
  tbb::parallel_pipeline(
      tokens, tbb::make_filter<void, chunk*>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) -> chunk* {
                chunk* c = job.claim();
                if (!c) fc.stop();
                else job.read_sync(*c);
                return c;
              }) & tbb::make_filter<chunk*, chunk*>(tbb::filter_mode::parallel, [](chunk* c) {
                capitalize(*c);
                return c;
              }) & tbb::make_filter<chunk*, void>(tbb::filter_mode::serial_in_order, [&](chunk* c) { job.write(*c); }));
  return job.result;
}

// The pipeline's own cost: n small items (a long each) through a serial input, a parallel square
// and a serial_in_order sum, nothing else to do.
long items_heddle(heddle::runtime& rt, long n, std::size_t tokens) {
  long next = 0, sum = 0;
  heddle::parallel_pipeline(rt, tokens,
                            heddle::make_filter<void, long>(heddle::filter_mode::serial_in_order,
                                                            [&](heddle::flow_control& fc) -> long {
                                                              if (next == n) fc.stop();
                                                              return next++;
                                                            }) &
                                heddle::make_filter<long, long>(heddle::filter_mode::parallel,
                                                                [](long v) { return v * v % 1000003; }) &
                                heddle::make_filter<long, void>(heddle::filter_mode::serial_in_order,
                                                                [&](long v) { sum = (sum * 31 + v) % 1000000007; }));
  return sum;
}
long items_tbb(long n, std::size_t tokens) {
  long next = 0, sum = 0;
  tbb::parallel_pipeline(tokens, tbb::make_filter<void, long>(tbb::filter_mode::serial_in_order,
                                                              [&](tbb::flow_control& fc) -> long {
                                                                if (next == n) fc.stop();
                                                                return next++;
                                                              }) &
                                     tbb::make_filter<long, long>(tbb::filter_mode::parallel,
                                                                  [](long v) { return v * v % 1000003; }) &
                                     tbb::make_filter<long, void>(tbb::filter_mode::serial_in_order,
                                                                  [&](long v) { sum = (sum * 31 + v) % 1000000007; }));
  return sum;
}

void run_items(const options& opt, nlohmann::json& report, const std::vector<unsigned>& threads) {
  const long n = opt.pick<long>(10'000, 200'000, 1'000'000, 4'000'000);
  std::printf("## pipeline overhead: %ld items of one long through a serial input, a parallel square and a "
              "serial_in_order sum, 4 tokens per thread\n\n",
              n);
  long want = 0;
  for (long v = 0; v < n; ++v) want = (want * 31 + v * v % 1000003) % 1000000007;
  auto runtimes = std::make_shared<heddle_runtimes>(threads);
  auto arenas = std::make_shared<tbb_arenas>(threads);
  std::vector<variant> vs;
  for (unsigned t : threads) {
    const std::size_t tokens = 4 * t;
    vs.push_back({"heddle", t, {}, [=] {
                    return timed([&] { return items_heddle((*runtimes)[t], n, tokens); },
                                 expect_equal(want, "pipeline items: heddle"));
                  }});
    vs.push_back({"oneTBB", t, {}, [=] {
                    return timed(
                        [&] {
                          long r = 0;
                          (*arenas)[t].execute([&] { r = items_tbb(n, tokens); });
                          return r;
                        },
                        expect_equal(want, "pipeline items: oneTBB"));
                  }});
  }
  auto rs = run_interleaved(vs, opt.reps);
  std::printf("%s\n", markdown_table(rs, "oneTBB").c_str());
  auto ratio = [&](unsigned t) { return paired_ratio(find(rs, "heddle", t), find(rs, "oneTBB", t)); };
  auto th = [](unsigned t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); };
  const unsigned head = headline_threads(threads);
  add_figure(report, "pipeline_items_vs_tbb", ratio(head),
             "heddle / oneTBB parallel_pipeline on small items (the pipeline's own cost), per round, " + th(head) +
                 " (most without oversubscription)");
  for (unsigned t : threads)
    add_figure(report, "pipeline_items_" + std::to_string(t) + "t_vs_tbb", ratio(t),
               "heddle / oneTBB parallel_pipeline on small items, per round, " + th(t));
  add_suite(report, "pipeline_items", rs, {{"items", n}, {"reps", opt.reps}});
}

void run_pipeline(const options& opt, nlohmann::json& report) {
  const std::size_t bytes = opt.pick<std::size_t>(256 << 10, 16 << 20, 128 << 20, 512 << 20);
  const auto threads = opt.threads_or({1, 2, 4});
  const std::string in_path = "/tmp/heddle-bench-pipeline-" + std::to_string(::getpid()) + ".txt";
  const std::string out_path = in_path + ".out";
  std::printf("## pipeline: oneTBB's text_filter (read %zu KiB chunks, capitalise words in parallel, write in "
              "order), %zu MiB file in /tmp, 4 tokens per thread, %d interleaved repetitions after a warm-up %s\n\n",
              chunk_bytes >> 10, bytes >> 20, opt.reps, opt.scale_name());
  generate(in_path, bytes);
  struct unlink_files {
    std::string a, b;
    ~unlink_files() {
      ::unlink(a.c_str());
      ::unlink(b.c_str());
    }
  } cleanup{in_path, out_path};
  fd_guard in(::open(in_path.c_str(), O_RDONLY), "pipeline: open " + in_path);
  fd_guard out(::open(out_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644), "pipeline: open " + out_path);
  if (run_serial(in.get(), out.get(), bytes).bytes != bytes)
    throw std::runtime_error("pipeline: the serial run wrote the wrong size");
  const output want = digest(out.get());
  if (want.bytes != bytes) throw std::runtime_error("pipeline: the serial output has the wrong size");

  auto runtimes = std::make_shared<heddle_runtimes>(threads);
  auto arenas = std::make_shared<tbb_arenas>(threads);
  const int fi = in.get(), fo = out.get();
  auto once = [want, fo](const std::string& who, auto&& body) {
    return timed([&] { return body(); },
                 [&](const output&) {
                   if (!(digest(fo) == want))
                     throw std::runtime_error("pipeline: " + who + " wrote a different output");
                 });
  };
  std::vector<variant> vs;
  vs.push_back({"serial", 1, {}, [=] { return once("serial", [&] { return run_serial(fi, fo, bytes); }); }});
  for (unsigned t : threads) {
    const std::size_t tokens = 4 * t;
    vs.push_back({"heddle", t, {}, [=] {
                    return once("heddle", [&] { return run_heddle((*runtimes)[t], fi, fo, bytes, tokens); });
                  }});
    vs.push_back({"heddle async read", t, {}, [=] {
                    return once("heddle async read",
                                [&] { return run_heddle_async((*runtimes)[t], fi, fo, bytes, tokens); });
                  }});
    vs.push_back({"oneTBB", t, {}, [=] {
                    return once("oneTBB", [&] {
                      output r;
                      (*arenas)[t].execute([&] { r = run_tbb(fi, fo, bytes, tokens); });
                      return r;
                    });
                  }});
  }
  auto rs = run_interleaved(vs, opt.reps);
  std::printf("%s\n", markdown_table(rs, "oneTBB").c_str());
  const unsigned head = headline_threads(threads);
  auto ratio = [&](const char* who, unsigned t) { return paired_ratio(find(rs, who, t), find(rs, "oneTBB", t)); };
  auto th = [](unsigned t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); };
  add_figure(report, "pipeline_vs_tbb", ratio("heddle", head),
             "heddle::parallel_pipeline / tbb::parallel_pipeline, text filter, per round, " + th(head) +
                 " (most without oversubscription)",
             at_most(1.0));
  add_figure(report, "pipeline_async_vs_tbb", ratio("heddle async read", head),
             "heddle::parallel_pipeline with an io::pread future as input / tbb::parallel_pipeline, per round, " +
                 th(head),
             at_most(1.0));
  for (unsigned t : threads) {
    const std::string ts = std::to_string(t) + "t";
    add_figure(report, "pipeline_" + ts + "_vs_tbb", ratio("heddle", t),
               "heddle / oneTBB pipeline, per round, " + th(t));
    add_figure(report, "pipeline_async_" + ts + "_vs_tbb", ratio("heddle async read", t),
               "heddle with io::pread input / oneTBB pipeline, per round, " + th(t));
  }
  add_suite(report, "pipeline", rs, {{"bytes", bytes}, {"chunk_bytes", chunk_bytes}, {"reps", opt.reps}});
  run_items(opt, report, threads);
}

const experiment_registration reg{{"pipeline", 60, &run_pipeline}};

}  // namespace
}  // namespace pipeline_experiment

}  // namespace heddle::bench::algorithms
