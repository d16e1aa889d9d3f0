// SPDX-License-Identifier: Apache-2.0
#include "tracks.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace heddle::core_detail::trace {

namespace {

// Spans that may overlap (the operations one thread completed, say) on as many lanes
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

// Pairs each flow's start with the next finish of the same family and id, in time order (an id may
// come back: a queued item's is its address), and numbers the pairs 1, 2, ...: the file's ids are
// unique. A start without a finish or a finish without a start (the session cut the flow) is
// dropped — but for a kind that keeps it, whose other end may lie in another process's trace: it
// keeps its id (above any number given here) for the merge of the processes' traces.
void pair_flows(std::vector<track>& tracks, const kind_table& kinds) {
  struct end_ref {
    std::uint16_t family;
    std::uint64_t id, t0;
    bool begins;
    record* r;
  };
  std::vector<end_ref> ends;
  for (track& t : tracks)
    for (record& r : t.records)
      if (const kind_format* f = kinds.find(r.k); f && f->flow != flow_end::none)
        ends.push_back({static_cast<std::uint16_t>(f->flow_family), r.id, r.t0, f->flow == flow_end::start, &r});
  std::sort(ends.begin(), ends.end(), [](const end_ref& a, const end_ref& b) {
    if (a.family != b.family) return a.family < b.family;
    if (a.id != b.id) return a.id < b.id;
    if (a.t0 != b.t0) return a.t0 < b.t0;
    return a.begins && !b.begins;
  });
  constexpr kind dropped = kind::core_count_;
  auto drop = [&kinds](record* r) {
    if (!kinds.find(r->k)->keep_unpaired) r->k = dropped;
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

// A set of lanes: the kinds that share a name (and, for keyed lanes, a key), in the order of
// their first kind's number.
struct lane_set {
  std::string name;
  std::uint16_t first_kind = 0xffff;
  std::vector<record> spans;
};

// Adds `r` to the set named `name` in `sets`.
void add_to(std::vector<lane_set>& sets, std::string name, const record& r) {
  auto it = std::find_if(sets.begin(), sets.end(), [&](const lane_set& l) { return l.name == name; });
  if (it == sets.end()) it = sets.insert(sets.end(), lane_set{std::move(name), 0xffff, {}});
  it->first_kind = std::min(it->first_kind, static_cast<std::uint16_t>(r.k));
  it->spans.push_back(r);
}

void sort_sets(std::vector<lane_set>& sets) {
  std::stable_sort(sets.begin(), sets.end(),
                   [](const lane_set& a, const lane_set& b) { return a.first_kind < b.first_kind; });
}

}  // namespace

std::vector<track> lay_out(snapshot& s, const kind_table& kinds) {
  std::sort(s.threads.begin(), s.threads.end(),
            [](const thread_snapshot& a, const thread_snapshot& b) { return a.tid < b.tid; });
  std::vector<track> tracks;
  pid_t next_tid = first_synthetic_tid;
  // Keyed lanes, from whichever thread recorded them: per name of the tracks (in the order of their
  // first kind), per key, the sets of lanes of that key.
  struct keyed {
    std::uint16_t first_kind = 0xffff;
    std::map<std::uint32_t, std::vector<lane_set>> keys;
  };
  std::map<std::string, keyed> keyed_sets;
  for (thread_snapshot& th : s.threads) {
    track t;
    t.tid = th.tid;
    t.name = std::move(th.name);
    t.records = std::move(th.records);
    t.dropped = th.dropped;
    std::vector<lane_set> beside;
    std::erase_if(t.records, [&](const record& r) {
      const kind_format* f = kinds.find(r.k);
      if (!f || f->place == placement::thread) return false;
      if (f->place == placement::thread_lanes) {
        add_to(beside, t.name + " " + f->lanes, r);
      } else {
        keyed& k = keyed_sets[f->lanes];
        k.first_kind = std::min(k.first_kind, static_cast<std::uint16_t>(r.k));
        std::string name = std::string(f->lanes) + " " + std::to_string(r.arg);
        if (f->suffix) name.append(" ").append(f->suffix);
        add_to(k.keys[r.arg], std::move(name), r);
      }
      return true;
    });
    sort_sets(beside);
    tracks.push_back(std::move(t));
    for (lane_set& set : beside)
      for (track& l : lanes_of(set.spans, set.name, next_tid)) tracks.push_back(std::move(l));
  }
  std::vector<keyed*> by_kind;
  for (auto& [name, k] : keyed_sets) by_kind.push_back(&k);
  std::stable_sort(by_kind.begin(), by_kind.end(),
                   [](const keyed* a, const keyed* b) { return a->first_kind < b->first_kind; });
  for (keyed* k : by_kind)
    for (auto& [key, sets] : k->keys) {
      sort_sets(sets);
      for (lane_set& set : sets)
        for (track& l : lanes_of(set.spans, set.name, next_tid)) tracks.push_back(std::move(l));
    }
  pair_flows(tracks, kinds);
  return tracks;
}

}  // namespace heddle::core_detail::trace
