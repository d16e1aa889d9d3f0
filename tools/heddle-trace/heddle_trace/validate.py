# SPDX-License-Identifier: Apache-2.0
"""heddle-trace validate: the file against the JSON schema (trace_event.schema.json, beside this
package), then the rules between events that no schema states (docs/trace.md)."""
from .flows import flow_key, pair_flows
from .load import PHASES, clock_uncertainty, event_problem, make_event, read_document
from .schema import EventChecker, document_problems, load_schema


def describe_raw(i, raw):
    """How a problem names its event: index, ph, pid, tid, name (what the event has of them)."""
    if not isinstance(raw, dict):
        return f"event #{i}"
    parts = [f"{k} {raw[k]}" for k in ("ph", "pid", "tid") if k in raw]
    name = f", {raw['name']!r}" if isinstance(raw.get("name"), str) else ""
    return f"event #{i} ({', '.join(parts)}{name})"


def validate(path):
    """The problems of the trace at path as (event index or -1, text), in file order; TraceError if
    it cannot be read as a trace at all."""
    doc = read_document(path)
    raws = doc["traceEvents"]
    problems = schema_problems(doc, load_schema())
    bad = {i for i, _ in problems}
    events = []
    for i, raw in enumerate(raws):
        # The rules below take an event the schema refused if they can read the fields they need (an
        # f without its bp still ends its flow): one mistake, one problem.
        problem = event_problem(i, raw)
        if problem and i not in bad:
            problems.append((i, f"{describe_raw(i, raw)}: {problem}"))
        elif not problem and raw["ph"] in PHASES:
            events.append(make_event(i, raw))
    problems += thread_problems(events) + flow_problems(events, doc.get("otherData")) + name_problems(events)
    problems.sort(key=lambda p: p[0])
    return problems


def schema_problems(doc, schema):
    problems = [(-1, f"{'.'.join(map(str, path)) or 'top level'}: schema: {message}")
                for path, message in document_problems(doc, schema)]
    checker = EventChecker(schema)
    for i, raw in enumerate(doc["traceEvents"]):
        for path, message in checker.problems(raw):
            field = ".".join(str(p) for p in path)
            problems.append((i, f"{describe_raw(i, raw)}: schema: {field + ': ' if field else ''}{message}"))
    return problems


def fmt_ts(ns):
    """A time as the file writes it, exactly: µs with up to 3 decimals (1234567890.001 µs since boot
    reads in full, not as 1.23457e+09)."""
    whole, frac = divmod(abs(ns), 1000)
    return f"{'-' if ns < 0 else ''}{whole}.{frac:03d}".rstrip("0").rstrip(".") + " µs"


def thread_problems(events):
    """Per (pid, tid), in file order: ts never goes back; X spans and B/E pairs nest (one stack:
    Perfetto draws both as slices of the thread's one track); every B has its E and every E its B."""
    problems = []
    last, stacks = {}, {}
    for ev in events:
        if ev.ph == "M":
            continue  # metadata has no time
        key = (ev.pid, ev.tid)
        prev = last.get(key)
        if prev is not None and ev.ts < prev.ts:
            problems.append((ev.index, f"{ev.describe()}: ts {fmt_ts(ev.ts)} is earlier than the ts {fmt_ts(prev.ts)} of "
                                       f"event #{prev.index} before it on this thread"))
        last[key] = ev
        stack = stacks.setdefault(key, [])  # open spans: (event, end); a B's end is None until its E
        if ev.ph in ("X", "B", "E"):
            while stack and stack[-1][1] is not None and stack[-1][1] <= ev.ts:
                stack.pop()
        if ev.ph == "X":
            end = ev.ts + ev.dur
            if stack and stack[-1][1] is not None and end > stack[-1][1]:
                outer = stack[-1][0]
                problems.append((ev.index, f"{ev.describe()}: span {fmt_ts(ev.ts)}–{fmt_ts(end)} overlaps span {outer.name!r} "
                                           f"(event #{outer.index}, {fmt_ts(outer.ts)}–{fmt_ts(stack[-1][1])}) without nesting in it"))
            stack.append((ev, end))
        elif ev.ph == "B":
            stack.append((ev, None))
        elif ev.ph == "E":
            problems += end_problems(ev, stack)
    for stack in stacks.values():
        for ev, end in stack:
            if end is None:
                problems.append((ev.index, f"{ev.describe()}: B without its E"))
    return problems


def end_problems(ev, stack):
    """An E closes the innermost open B; spans opened inside that B must end by then, and the span
    around the B must not end before."""
    opened = next((k for k in range(len(stack) - 1, -1, -1) if stack[k][1] is None), None)
    if opened is None:
        return [(ev.index, f"{ev.describe()}: E without a B open on this thread")]
    problems = []
    begin = stack[opened][0]
    if opened and stack[opened - 1][1] is not None and stack[opened - 1][1] < ev.ts:
        outer = stack[opened - 1][0]
        problems.append((ev.index, f"{ev.describe()}: B {begin.name!r} (event #{begin.index}) ends after span "
                                   f"{outer.name!r} (event #{outer.index}) around it"))
    if stack[opened + 1:]:
        inner = stack[-1][0]
        problems.append((ev.index, f"{ev.describe()}: ends B {begin.name!r} (event #{begin.index}) while span "
                                   f"{inner.name!r} (event #{inner.index}) inside it is still open"))
    if ev.name and ev.name != begin.name:
        problems.append((ev.index, f"{ev.describe()}: E named {ev.name!r} ends B {begin.name!r} (event #{begin.index})"))
    del stack[opened:]
    return problems


def flow_problems(events, other):
    """Every s has its f (same cat, name and id), and the f is not earlier than its s; across
    processes of a merged trace, by no more than their clocks' stated uncertainty."""
    uncertainty = clock_uncertainty(other)
    flows = pair_flows(events)
    problems = []
    for s in flows.lone_starts:
        problems.append((s.index, f"{s.describe()}: flow start without its end (no f with cat, name and id {flow_key(s)})"))
    for f in flows.lone_finishes:
        problems.append((f.index, f"{f.describe()}: flow end without its start (no s with cat, name and id {flow_key(f)})"))
    for s, f in flows.pairs:
        slack = 0 if s.pid == f.pid else round(1000 * (uncertainty.get(s.pid, 0) + uncertainty.get(f.pid, 0)))
        if f.ts + slack < s.ts:
            problems.append((f.index, f"{f.describe()}: flow end at {fmt_ts(f.ts)} is earlier than its start at {fmt_ts(s.ts)} "
                                      f"(event #{s.index})"))
    return problems


def name_problems(events):
    """A process_name for every process and a thread_name for every thread that has events, named
    at the first event of each."""
    named_p, named_t, first_p, first_t = set(), set(), {}, {}
    for ev in events:
        if ev.ph == "M" and ev.name == "process_name":
            named_p.add(ev.pid)
        elif ev.ph == "M" and ev.name == "thread_name":
            named_t.add((ev.pid, ev.tid))
        elif ev.ph != "M":
            first_p.setdefault(ev.pid, ev)
            first_t.setdefault((ev.pid, ev.tid), ev)
    problems = [(ev.index, f"{ev.describe()}: no process_name metadata for pid {pid}")
                for pid, ev in first_p.items() if pid not in named_p]
    problems += [(ev.index, f"{ev.describe()}: no thread_name metadata for pid {key[0]} tid {key[1]}")
                 for key, ev in first_t.items() if key not in named_t]
    return problems
