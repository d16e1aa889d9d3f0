#include "tracks.hpp"

#include <algorithm>
#include <unordered_set>
#include <utility>

namespace heddle::core_detail::trace {

namespace {

// Puts `t`'s operations on lanes, first fit by start time. The flows a completion began right
// after the operation's record, in the thread's record order (the successors it released), go with
// the operation, at its end.
std::vector<track> operation_lanes(track& t, pid_t& next_tid) {
  struct op_with_flows {
    record op;
    std::vector<record> flows;
  };
  std::vector<op_with_flows> ops;
  std::vector<record> own;
  own.reserve(t.records.size());
  bool after_op = false;  // the records since the last operation's are its flows
  for (const record& r : t.records) {
    if (r.k == kind::operation) {
      ops.push_back({r, {}});
      after_op = true;
    } else if (r.k == kind::flow_begin && after_op) {
      record moved = r;
      moved.t0 = ops.back().op.t1;
      ops.back().flows.push_back(moved);
    } else {
      own.push_back(r);
      after_op = false;
    }
  }
  t.records = std::move(own);
  if (ops.empty()) return {};
  std::stable_sort(ops.begin(), ops.end(), [](const op_with_flows& a, const op_with_flows& b) { return a.op.t0 < b.op.t0; });
  std::vector<track> lanes;
  std::vector<std::uint64_t> lane_end;
  for (op_with_flows& o : ops) {
    std::size_t lane = 0;
    while (lane < lanes.size() && lane_end[lane] > o.op.t0) ++lane;
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
    lane_end[lane] = o.op.t1;
    lanes[lane].records.push_back(o.op);
    for (const record& f : o.flows) lanes[lane].records.push_back(f);
  }
  return lanes;
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
  // Flows with both ends in the session.
  std::unordered_set<std::uint64_t> begun, ended;
  for (const track& t : tracks)
    for (const record& r : t.records) {
      if (r.k == kind::flow_begin) begun.insert(r.id);
      if (r.k == kind::flow_end) ended.insert(r.id);
    }
  for (track& t : tracks)
    std::erase_if(t.records, [&](const record& r) {
      return (r.k == kind::flow_begin && !ended.count(r.id)) || (r.k == kind::flow_end && !begun.count(r.id));
    });
  return tracks;
}

}  // namespace heddle::core_detail::trace
