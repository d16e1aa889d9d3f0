# SPDX-License-Identifier: Apache-2.0
"""Where each thread's time went: the spans of a thread (X as written, B/E joined) and the
attribution of each instant to its innermost classified span (docs/trace.md, "Summary semantics")."""
from dataclasses import dataclass

RUNNING, HELPING, SEARCHING, PARKED, WAITING, OTHER = STATES = (
    "running", "helping", "searching", "parked", "waiting", "other")
BUSY = (RUNNING, HELPING)  # a task runs on the thread
WORKER_STATES = {"search": SEARCHING, "parked": PARKED, "wait": WAITING, "block": WAITING}


@dataclass(eq=False, slots=True)  # slots: a million events in half the memory
class Span:
    start: int  # ns
    end: int
    ev: object  # the X or B event
    depth: int = 0  # spans enclosing it on its thread
    state: str = OTHER  # what its own time counts as (its innermost classified ancestor's, if none itself)


def thread_spans(events, stop):
    """events' spans in start order (ties in file order: an enclosing X comes first). An E closes
    the latest open B; a B still open at the end closes at stop (the process's last instant), as the
    recorder closes a thread parked when tracing stopped."""
    spans, open_b = [], []
    for ev in events:
        if ev.ph == "X":
            spans.append(Span(ev.ts, ev.ts + ev.dur, ev))
        elif ev.ph == "B":
            open_b.append(Span(ev.ts, ev.ts, ev))
            spans.append(open_b[-1])
        elif ev.ph == "E" and open_b:
            span = open_b.pop()
            span.end = max(ev.ts, span.start)
    for span in open_b:
        span.end = max(stop, span.start)
    spans.sort(key=lambda s: s.start)  # stable: file order among equal starts
    return spans


def own_state(ev, waits):
    """The state a span sets for its own time, or None when it is transparent (user spans, modules,
    drains: their time is whatever encloses them)."""
    if ev.cat == "task":
        return HELPING if waits else RUNNING
    if ev.cat == "worker":
        return WORKER_STATES.get(ev.name)
    return None


@dataclass
class Attribution:
    time: dict  # state -> ns within [first, last]
    segments: list  # (start, end, state) of every piece not "other", in time order
    spans: list  # the thread's spans with depth and state set


def attribute(events, first, last):
    """The time of one thread in [first, last] per state. A span reaching past its parent is cut at
    the parent's end (a malformed trace: validate says so), so no instant counts twice."""
    spans = thread_spans(events, last)
    time = dict.fromkeys(STATES, 0)
    segments = []
    stack = []  # (end, state, waits below and at this span)
    cursor = first

    def advance(to, state):
        nonlocal cursor
        to = min(max(to, cursor), last)
        if to > cursor:
            time[state] += to - cursor
            if state != OTHER:
                segments.append((cursor, to, state))
            cursor = to

    def pop():
        end, state, _ = stack.pop()
        advance(end, state)

    for span in spans:
        while stack and stack[-1][0] <= span.start:
            pop()
        current = stack[-1][1] if stack else OTHER
        waits = stack[-1][2] if stack else 0
        advance(span.start, current)
        if stack:
            span.end = min(span.end, stack[-1][0])
        ev = span.ev
        span.depth = len(stack)
        span.state = own_state(ev, waits) or current
        is_wait = ev.cat == "worker" and ev.name == "wait"
        stack.append((span.end, span.state, waits + is_wait))
    while stack:
        pop()
    advance(last, OTHER)
    return Attribution(time, segments, spans)
