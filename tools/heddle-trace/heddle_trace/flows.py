# SPDX-License-Identifier: Apache-2.0
"""Flow events (ph s → f) paired into arrows. Perfetto binds a legacy flow by cat, name and id,
and heddle's three kinds (successor, queue item, message) share cat "flow", so the name is part of
the key: a successor's id may equal a queue item's."""
from dataclasses import dataclass


@dataclass
class Flows:
    pairs: list  # (s, f), in the order of their s
    lone_starts: list  # s events no f follows
    lone_finishes: list  # f events no s precedes


def flow_key(ev):
    return (ev.cat, ev.name, ev.id)


def pair_flows(events):
    """The s and f events among events, paired per key in time order (the file orders events per
    thread only, so an f may come before its s in it)."""
    starts, finishes = {}, {}
    for ev in events:
        if ev.ph == "s":
            starts.setdefault(flow_key(ev), []).append(ev)
        elif ev.ph == "f":
            finishes.setdefault(flow_key(ev), []).append(ev)
    pairs, lone_starts, lone_finishes = [], [], []
    for key, s_list in starts.items():
        f_list = sorted(finishes.pop(key, []), key=lambda e: (e.ts, e.index))
        s_list.sort(key=lambda e: (e.ts, e.index))
        pairs.extend(zip(s_list, f_list))
        lone_starts.extend(s_list[len(f_list):])
        lone_finishes.extend(f_list[len(s_list):])
    for f_list in finishes.values():
        lone_finishes.extend(f_list)
    pairs.sort(key=lambda p: p[0].index)
    lone_starts.sort(key=lambda e: e.index)
    lone_finishes.sort(key=lambda e: e.index)
    return Flows(pairs, lone_starts, lone_finishes)
