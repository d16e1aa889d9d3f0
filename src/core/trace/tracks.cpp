#include "tracks.hpp"

#include <algorithm>
#include <utility>

namespace heddle::core_detail::trace {

namespace {

// Puts `t`'s operations on lanes, first fit by start time. (Their publications, and the flows to
// their successors, stay on the thread's own track.)
std::vector<track> operation_lanes(track& t, pid_t& next_tid) {
  std::vector<record> ops;
  std::erase_if(t.records, [&](const record& r) {
    if (r.k != kind::operation) return false;
    ops.push_back(r);
    return true;
  });
  if (ops.empty()) return {};
  std::stable_sort(ops.begin(), ops.end(), [](const record& a, const record& b) { return a.t0 < b.t0; });
  std::vector<track> lanes;
  std::vector<std::uint64_t> lane_end;
  for (const record& op : ops) {
    std::size_t lane = 0;
    while (lane < lanes.size() && lane_end[lane] > op.t0) ++lane;
    if (lane == lanes.size()) {
      track l;
      l.tid = next_tid++;
      l.name = t.name;
      l.name += " operations";
      if (lane) l.name.append(" ").append(std::to_string(lane + 1));
      l.synthetic = true;
      lanes.push_back(std::move(l));
      lane_end.push_back(0);
    }
    lane_end[lane] = op.t1;
    lanes[lane].records.push_back(op);
  }
  return lanes;
}

// A flow's family (successor, queue item) and end, or -1 for a record that is no flow's.
int flow_family(kind k) noexcept {
  switch (k) {
    case kind::flow_begin: case kind::flow_end: return 0;
    case kind::item_begin: case kind::item_end: return 1;
    default: return -1;
  }
}
bool flow_begins(kind k) noexcept { return k == kind::flow_begin || k == kind::item_begin; }

// Pairs each flow's start with the next end of the same family and id, in time order (an id may
// come back: a queue item's is its address), and numbers the pairs 1, 2, ...: the file's ids are
// unique. A start without an end or an end without a start (the session cut the flow) is dropped.
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
  std::uint64_t next_id = 1;
  record* open = nullptr;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    const bool same = i > 0 && ends[i].family == ends[i - 1].family && ends[i].id == ends[i - 1].id;
    if (!same && open) {
      open->k = dropped;
      open = nullptr;
    }
    if (ends[i].begins) {
      if (open) open->k = dropped;
      open = ends[i].r;
    } else if (open) {
      open->id = ends[i].r->id = next_id++;
      open = nullptr;
    } else {
      ends[i].r->k = dropped;
    }
  }
  if (open) open->k = dropped;
  for (track& t : tracks) std::erase_if(t.records, [](const record& r) { return r.k == dropped; });
}

}  // namespace

std::vector<track> lay_out(snapshot& s) {
  std::sort(s.threads.begin(), s.threads.end(), [](const thread_snapshot& a, const thread_snapshot& b) {
    return a.tid < b.tid;
  });
  std::vector<track> tracks;
  pid_t next_tid = first_synthetic_tid;
  for (thread_snapshot& th : s.threads) {
    track t;
    t.tid = th.tid;
    t.name = std::move(th.name);
    t.records = std::move(th.records);
    t.dropped = th.dropped;
    std::vector<track> lanes = operation_lanes(t, next_tid);
    tracks.push_back(std::move(t));
    for (track& l : lanes) tracks.push_back(std::move(l));
  }
  pair_flows(tracks);
  return tracks;
}

}  // namespace heddle::core_detail::trace
