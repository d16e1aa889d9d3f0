#include "tracks.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace heddle::core_detail::trace {

namespace {

// Spans that may overlap (operations of one engine, module waits of one stream) on as many lanes
// as they need, first fit by start time: on each lane they are disjoint, as spans on a track must
// be. Lanes are named `base`, `base 2`, `base 3`, ...
std::vector<track> lanes_of(std::vector<record>& spans, const std::string& base, pid_t& next_tid) {
  std::stable_sort(spans.begin(), spans.end(), [](const record& a, const record& b) { return a.t0 < b.t0; });
  std::vector<track> lanes;
  std::vector<std::uint64_t> lane_end;
  for (const record& r : spans) {
    std::size_t lane = 0;
    while (lane < lanes.size() && lane_end[lane] > r.t0) ++lane;
    if (lane == lanes.size()) {
      track l;
      l.tid = next_tid++;
      l.name = base;
      if (lane) l.name.append(" ").append(std::to_string(lane + 1));
      l.synthetic = true;
      lanes.push_back(std::move(l));
      lane_end.push_back(0);
    }
    lane_end[lane] = r.t1;
    lanes[lane].records.push_back(r);
  }
  return lanes;
}

// Takes the records `wanted` out of `t`.
template <class Pred>
std::vector<record> take(track& t, Pred&& wanted) {
  std::vector<record> out;
  std::erase_if(t.records, [&](const record& r) {
    if (!wanted(r)) return false;
    out.push_back(r);
    return true;
  });
  return out;
}

// A flow's family (successor, queue item, message), or -1 for a record that is no flow's end.
constexpr int message_family = 2;
int flow_family(kind k) noexcept {
  switch (k) {
    case kind::flow_begin: case kind::flow_end: return 0;
    case kind::item_begin: case kind::item_end: return 1;
    case kind::message_begin: case kind::message_end: return message_family;
    default: return -1;
  }
}
bool flow_begins(kind k) noexcept {
  return k == kind::flow_begin || k == kind::item_begin || k == kind::message_begin;
}

// Pairs each flow's start with the next end of the same family and id, in time order (an id may
// come back: a queue item's is its address), and numbers the pairs 1, 2, ...: the file's ids are
// unique. A start without an end or an end without a start (the session cut the flow) is dropped —
// but for a message's, whose other end may lie in another process's trace: it keeps its id
// (message_flow_id, above any number given here) for the merge of the nodes' traces.
void pair_flows(std::vector<track>& tracks) {
  struct end_ref {
    int family;
    std::uint64_t id, t0;
    bool begins;
    record* r;
  };
  std::vector<end_ref> ends;
  for (track& t : tracks)
    for (record& r : t.records)
      if (const int f = flow_family(r.k); f >= 0) ends.push_back({f, r.id, r.t0, flow_begins(r.k), &r});
  std::sort(ends.begin(), ends.end(), [](const end_ref& a, const end_ref& b) {
    if (a.family != b.family) return a.family < b.family;
    if (a.id != b.id) return a.id < b.id;
    if (a.t0 != b.t0) return a.t0 < b.t0;
    return a.begins && !b.begins;
  });
  constexpr kind dropped = kind::count_;
  auto drop = [](record* r) {
    if (flow_family(r->k) != message_family) r->k = dropped;
  };
  std::uint64_t next_id = 1;
  record* open = nullptr;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    const bool same = i > 0 && ends[i].family == ends[i - 1].family && ends[i].id == ends[i - 1].id;
    if (!same && open) {
      drop(open);
      open = nullptr;
    }
    if (ends[i].begins) {
      if (open) drop(open);
      open = ends[i].r;
    } else if (open) {
      open->id = ends[i].r->id = next_id++;
      open = nullptr;
    } else {
      drop(ends[i].r);
    }
  }
  if (open) drop(open);
  for (track& t : tracks) std::erase_if(t.records, [](const record& r) { return r.k == dropped; });
}

}  // namespace

std::vector<track> lay_out(snapshot& s) {
  std::sort(s.threads.begin(), s.threads.end(), [](const thread_snapshot& a, const thread_snapshot& b) {
    return a.tid < b.tid;
  });
  std::vector<track> tracks;
  pid_t next_tid = first_synthetic_tid;
  // Per framework stream: its events, and its modules' waits, from whichever thread recorded them.
  std::map<std::uint32_t, std::pair<std::vector<record>, std::vector<record>>> streams;
  for (thread_snapshot& th : s.threads) {
    track t;
    t.tid = th.tid;
    t.name = std::move(th.name);
    t.records = std::move(th.records);
    t.dropped = th.dropped;
    std::vector<record> ops = take(t, [](const record& r) { return r.k == kind::operation; });
    for (const record& r : take(t, [](const record& r) {
           return r.k == kind::event || r.k == kind::module_prefetch || r.k == kind::module_stall;
         }))
      (r.k == kind::event ? streams[r.arg].first : streams[r.arg].second).push_back(r);
    std::vector<track> lanes = lanes_of(ops, t.name + " operations", next_tid);
    tracks.push_back(std::move(t));
    for (track& l : lanes) tracks.push_back(std::move(l));
  }
  for (auto& [stream, spans] : streams) {
    const std::string name = "stream " + std::to_string(stream);
    // One event at a time per stream: one track, unless a stream's events overlap (they do not).
    for (track& l : lanes_of(spans.first, name, next_tid)) tracks.push_back(std::move(l));
    for (track& l : lanes_of(spans.second, name + " modules", next_tid)) tracks.push_back(std::move(l));
  }
  pair_flows(tracks);
  return tracks;
}

}  // namespace heddle::core_detail::trace
