# SPDX-License-Identifier: Apache-2.0
"""heddle-trace merge: per-node traces joined, messages paired across them, clocks aligned."""
import json

from support import ToolTest, run
from synthetic import Builder


def node_trace(pid, node, boot, events, measured=None):
    """A per-node trace as the recorder writes one: node `node` (pid `pid`) on boot `boot`, with
    `events` (send/receive spans and their message flows, ids as message_flow_id makes them);
    `measured`: (offset_us, uncertainty_us) of its clock against node 0's."""
    b = Builder()
    b.process(pid, f"prog node {node}")
    b.thread(pid, pid, "main")
    for ev in events:
        b.add(*ev)
    proc = {"pid": pid, "name": f"prog node {node}", "node": node, "boot_id": boot, "clock_measured": measured is not None,
            "clock_offset_us": measured[0] if measured else 0, "clock_uncertainty_us": measured[1] if measured else 0}
    b.other["processes"] = [proc]
    return b.doc()


def message_id(frm, to, seq):
    return 1 << 52 | frm << 28 | to << 16 | seq


class TestMerge(ToolTest):
    def two_nodes(self, boot1="boot-a", measured=None):
        """Node 0 sends node 1 one post at 10 µs (its clock); node 1 receives it at 1015 µs of its own
        clock: 1000 µs ahead of node 0's when measured=(-1000, 2)."""
        mid = message_id(0, 1, 1)
        n0 = node_trace(100, 0, "boot-a", [
            ("X", 100, 100, 10, "am", "send", {"kind": "post", "to": 1, "bytes": 8}),
            ("s", 100, 100, 10, "flow", "message", None)])
        n0["traceEvents"][-2]["dur"] = 1
        n0["traceEvents"][-1]["id"] = mid
        n1 = node_trace(200, 1, boot1, [
            ("X", 200, 200, 1015, "am", "receive", {"kind": "post", "from": 0, "bytes": 8}),
            ("f", 200, 200, 1015, "flow", "message", None)], measured)
        n1["traceEvents"][-2]["dur"] = 1
        n1["traceEvents"][-1].update(id=mid, bp="e")
        return self.trace(n0, "n0.json"), self.trace(n1, "n1.json")

    def test_one_host_pairs_messages_and_keeps_the_times(self):
        a, b = self.two_nodes()
        rc, out, err = run("merge", self.tmp / "m.json", a, b)
        self.assertEqual(rc, 0, err)
        self.assertIn("2 processes, 1 message paired", out)
        d = json.loads((self.tmp / "m.json").read_text())
        flows = {e["ph"]: e for e in d["traceEvents"] if e.get("name") == "message"}
        self.assertEqual(flows["s"]["id"], flows["f"]["id"])
        self.assertLess(flows["s"]["id"], 1 << 52, "the pair gets an id of its own")
        self.assertEqual(flows["f"]["ts"], 1015)
        self.assertIn("one host", d["otherData"]["clock_alignment"])
        self.assertEqual(run("validate", self.tmp / "m.json")[0], 0)

    def test_another_host_is_shifted_by_its_measured_offset(self):
        a, b = self.two_nodes(boot1="boot-b", measured=(-1000.0, 2.0))
        rc, out, err = run("merge", self.tmp / "m.json", a, b)
        self.assertEqual(rc, 0, err)
        d = json.loads((self.tmp / "m.json").read_text())
        receive = [e for e in d["traceEvents"] if e.get("name") == "receive"][0]
        self.assertEqual(receive["ts"], 15)  # 1015 on node 1's clock, 15 on node 0's
        self.assertIn("offsets measured", d["otherData"]["clock_alignment"])
        self.assertEqual(run("validate", self.tmp / "m.json")[0], 0)

    def test_another_host_without_an_offset_is_refused(self):
        a, b = self.two_nodes(boot1="boot-b")
        rc, out, err = run("merge", self.tmp / "m.json", a, b)
        self.assertEqual(rc, 2)
        self.assertIn("measured no clock offset", err)
        self.assertFalse((self.tmp / "m.json").exists())

    def test_a_send_without_its_receipt_is_dropped_and_counted(self):
        a, _ = self.two_nodes()
        rc, out, err = run("merge", self.tmp / "m.json", a)
        self.assertEqual(rc, 0, err)
        self.assertIn("1 without their other end (dropped)", out)
        d = json.loads((self.tmp / "m.json").read_text())
        self.assertFalse([e for e in d["traceEvents"] if e.get("name") == "message"])

    def test_bad_input(self):
        a, _ = self.two_nodes()
        rc, _, err = run("merge", self.tmp / "m.json", a, a)
        self.assertEqual(rc, 2)
        self.assertIn("the same trace twice", err)
        rc, _, err = run("merge", self.tmp / "m.json", self.tmp / "missing.json")
        self.assertEqual(rc, 2)
        self.assertIn("missing.json: no such file", err)
