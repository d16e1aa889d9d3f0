// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <algorithm>
#include <cinttypes>

namespace heddle::fw::tool {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

void progress_bar::show(std::uint64_t done) {
  if (!enabled_ || total_ == 0) return;
  constexpr int width = 40;
  const double f = std::min(1.0, double(done) / double(total_));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  char bar[width + 1];
  const int full = static_cast<int>(f * width);
  for (int i = 0; i < width; ++i) bar[i] = i < full ? '=' : (i == full ? '>' : ' ');
  bar[width] = 0;
  std::fprintf(stderr, "\r[%s] %" PRIu64 "/%" PRIu64 " events  %.1f ev/s ", bar, done, total_,
               s > 0 ? double(done) / s : 0.0);
  std::fflush(stderr);
  drawn_ = true;
}

void progress_bar::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r%*s\r", 90, "");
  std::fflush(stderr);
  drawn_ = false;
}

namespace {
struct counts {
  std::size_t producers = 0, filters = 0, analyzers = 0, outputs = 0;
};
counts count_modules(const process& p) {
  counts c;
  for (std::size_t i = 0; i < p.num_modules(); ++i) {
    const module_role role = p.module(i).role();
    if (role == module_role::producer) ++c.producers;
    else if (role == module_role::filter) ++c.filters;
    else if (role == module_role::analyzer) ++c.analyzers;
    else ++c.outputs;
  }
  return c;
}
}  // namespace

void print_report(std::FILE* out, const run_description& what, const run_report& r) {
  const counts c = count_modules(what.proc);
  std::fprintf(out, "heddle-fw: %s: %zu producers, %zu filters, %s%zu output modules, %zu paths\n", what.config.c_str(),
               c.producers, c.filters, c.analyzers ? (std::to_string(c.analyzers) + " analyzers, ").c_str() : "",
               c.outputs, what.proc.num_paths());
  std::fprintf(out, "  processor         %s, %u worker thread%s, wait %s, time scale %g\n", what.processor.c_str(),
               r.workers, r.workers == 1 ? "" : "s", to_string(what.timing.wait), what.timing.time_scale);
  std::fprintf(out, "  events            %" PRIu64 " in %zu run%s", r.events, r.runs.size(),
               r.runs.size() == 1 ? "" : "s");
  if (what.options.first_event != 0) std::fprintf(out, ", from event %" PRIu64, what.options.first_event);
  std::fprintf(out, "\n");
  std::fprintf(out, "  events in flight  %" PRIu64 " (peak %" PRIu64 ")\n", what.options.events_in_flight,
               r.peak_in_flight);
  if (what.options.events_per_lumi != 0 || what.options.concurrent_lumis > 1) {
    std::uint64_t lumis = 0;
    for (const run_checksum& x : r.runs) lumis += x.lumis;
    std::fprintf(out, "  lumis             %" PRIu64 ", %u open at once%s%s%s\n", lumis, r.concurrent_lumis,
                 r.lumis_limited_by.empty() ? "" : " (limited to 1 by the one:: or stream module '",
                 r.lumis_limited_by.c_str(), r.lumis_limited_by.empty() ? "" : "')");
  }
  std::fprintf(out, "  wall              %.3f s\n", r.wall_s);
  std::fprintf(out, "  cpu               %.3f s\n", r.cpu_s);
  std::fprintf(out, "  events/s          %.2f\n", r.events_per_s());
  std::fprintf(out, "  peak RSS          %.1f MiB\n", double(r.peak_rss_bytes) / (1 << 20));
  std::fprintf(out, "  OS threads        %u (peak)\n", r.os_threads);
  std::fprintf(out, "  checksum          %s\n", hex(r.checksum).c_str());
}

nlohmann::json report_json(const run_description& what, const run_report& r) {
  nlohmann::json runs = nlohmann::json::array();
  for (const run_checksum& x : r.runs)
    runs.push_back({{"run", x.run}, {"events", x.events}, {"lumis", x.lumis}, {"checksum", hex(x.checksum)}});
  return {
      {"config", what.config},
      {"processor", what.processor},
      {"wait", to_string(what.timing.wait)},
      {"time_scale", what.timing.time_scale},
      {"workers", r.workers},
      {"events_in_flight", what.options.events_in_flight},
      {"peak_in_flight", r.peak_in_flight},
      {"first_event", what.options.first_event},
      {"events", r.events},
      {"wall_s", r.wall_s},
      {"cpu_s", r.cpu_s},
      {"events_per_s", r.events_per_s()},
      {"checksum", hex(r.checksum)},
      {"events_checksum", hex(r.events_checksum)},
      {"peak_rss_bytes", r.peak_rss_bytes},
      {"threads", r.os_threads},
      {"concurrent_lumis", r.concurrent_lumis},
      {"lumis_limited_by", r.lumis_limited_by},
      {"runs", runs},
  };
}

void write_timeline(std::ostream& out, const process& p, const timeline& t) {
  const auto entries = t.entries();
  const std::int64_t t0 = entries.empty() ? 0 : entries.front().start_ns;
  out << "module,label,event,start_s,end_s\n";
  char buf[64];
  for (const timeline_entry& e : entries) {
    std::snprintf(buf, sizeof buf, "%.9f,%.9f", double(e.start_ns - t0) * 1e-9, double(e.end_ns - t0) * 1e-9);
    out << e.module << ",\"" << p.spec(e.module).label << "\"," << e.event << ',' << buf << '\n';
  }
}

}  // namespace heddle::fw::tool
