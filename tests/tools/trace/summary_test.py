# SPDX-License-Identifier: Apache-2.0
"""heddle-trace summary: every number of synthetic.py's traces, exactly, through --json; the
tables and the warning line as printed."""
import json

import synthetic
from support import ToolTest, run

__all__ = ["TestSummary"]
STATES = ("running", "helping", "searching", "parked", "waiting", "other")


class TestSummary(ToolTest):
    def test_shares_per_thread_and_process(self):
        s, text = self.summary(self.built(synthetic.shares))
        [p] = s["processes"]
        self.assertEqual((p["pid"], p["name"], p["span_us"], p["workers"]), (1, "app", 1000.0, 2))
        self.assertEqual([t["name"] for t in p["threads"]], ["worker 0", "worker 1", "main"])
        for t in p["threads"]:
            expected = synthetic.SHARES_PER_THREAD[t["name"]]
            self.assertEqual(t["time_us"], {k: float(v) for k, v in expected.items()}, t["name"])
            self.assertEqual(t["shares"], {k: v / 1000 for k, v in expected.items()}, t["name"])
        total = {k: sum(t[k] for t in synthetic.SHARES_PER_THREAD.values()) for k in STATES}
        self.assertEqual(p["shares"], {k: total[k] / 3000 for k in STATES})
        workers = {k: total[k] - synthetic.SHARES_PER_THREAD["main"][k] for k in STATES}
        self.assertEqual(p["worker_shares"], {k: workers[k] / 2000 for k in STATES})
        self.assertEqual(p["worker_shares"]["running"], 0.375)
        # The table: the process's threads, its workers alone, then each thread in order.
        self.assertRegex(text, r"process \(3 threads\)\s+25\.0%\s+1\.7%\s+11\.7%\s+16\.7%\s+28\.3%\s+16\.7%")
        self.assertRegex(text, r"workers \(2\)\s+37\.5%\s+2\.5%\s+17\.5%\s+25\.0%\s+2\.5%\s+15\.0%")
        self.assertRegex(text, r"worker 0\s+25\.0%\s+5\.0%\s+10\.0%\s+25\.0%\s+5\.0%\s+30\.0%")
        self.assertIn("shares of the process's span 1.00 ms", text)

    def test_task_labels(self):
        s, text = self.summary(self.built(synthetic.shares))
        self.assertEqual(s["task_labels"], {"labels": 2, "rows": [
            {"label": "A", "count": 2, "total_us": 800.0, "mean_us": 400.0, "p99_us": 500.0},
            {"label": "B", "count": 2, "total_us": 150.0, "mean_us": 75.0, "p99_us": 100.0}]})
        self.assertRegex(text, r"\n  A\s+2\s+800 µs\s+400 µs\s+500 µs\n")

    def test_percentiles_and_top(self):
        s, _ = self.summary(self.built(synthetic.percentiles))
        self.assertEqual(s["task_labels"]["rows"], [
            {"label": "big", "count": 3, "total_us": 6000.0, "mean_us": 2000.0, "p99_us": 3000.0},
            {"label": "tiny", "count": 100, "total_us": 5050.0, "mean_us": 50.5, "p99_us": 99.0}])
        s, text = self.summary(self.built(synthetic.percentiles), "--top", "1")
        self.assertEqual(s["task_labels"], {"labels": 2, "rows": [
            {"label": "big", "count": 3, "total_us": 6000.0, "mean_us": 2000.0, "p99_us": 3000.0}]})
        self.assertIn("Task labels (top 1 of 2 by total time)", text)
        self.assertRegex(text, r"big\s+3\s+6\.00 ms\s+2\.00 ms\s+3\.00 ms")
        self.assertNotIn("tiny", text)

    def test_successor_latency(self):
        s, text = self.summary(self.built(synthetic.successors))
        self.assertEqual(s["successors"], [
            {"strategy": "express", "count": 2, "median_us": 10.0, "p99_us": 30.0},
            {"strategy": "normal", "count": 1, "median_us": 500.0, "p99_us": 500.0}])
        self.assertEqual(s["lone_flows"], {"starts": 1, "finishes": 0})
        self.assertIn("1 flow starts without their end", text)

    def test_queues(self):
        s, text = self.summary(self.built(synthetic.queues))
        self.assertEqual(s["queues"], {"unplaced_items": 1, "rows": [
            {"pid": 4, "label": "db", "drains": 2, "items": 5, "busy_us": 250.0, "busy_share": 0.25,
             "item_wait": {"count": 2, "median_us": 20.0, "p99_us": 120.0}},
            {"pid": 4, "label": "log", "drains": 1, "items": 1, "busy_us": 50.0, "busy_share": 0.05,
             "item_wait": {"count": 0, "median_us": None, "p99_us": None}}]})
        self.assertRegex(text, r"db \(pid 4\)\s+2\s+5\s+250 µs\s+25\.0%\s+2\s+20\.0 µs\s+120 µs")
        self.assertIn("1 item flows end outside any drain", text)

    def test_modules_and_stalls(self):
        s, text = self.summary(self.built(synthetic.modules))
        self.assertEqual(s["modules"], {"labels": 3, "rows": [
            {"label": "tracker", "phase": "produce", "count": 2, "total_us": 400.0, "mean_us": 200.0, "p99_us": 300.0},
            {"label": "calo", "phase": "produce", "count": 1, "total_us": 200.0, "mean_us": 200.0, "p99_us": 200.0},
            {"label": "calo", "phase": "acquire", "count": 1, "total_us": 50.0, "mean_us": 50.0, "p99_us": 50.0}]})
        self.assertEqual(s["module_stalls"], {"labels": 2, "rows": [
            {"label": "tracker", "stall_us": 100.0, "stalls": 2, "stall_share": 0.25, "prefetch_us": 30.0, "prefetches": 1},
            {"label": "calo", "stall_us": 0.0, "stalls": 0, "stall_share": 0.0, "prefetch_us": 20.0, "prefetches": 1}]})
        self.assertRegex(text, r"tracker\s+100 µs\s+2\s+25\.0%\s+30\.0 µs\s+1")
        # Stream tracks are no threads: the process's shares count its two workers.
        [p] = s["processes"]
        self.assertEqual([t["name"] for t in p["threads"]], ["worker 0", "worker 1"])

    def test_messages_across_processes(self):
        s, text = self.summary(self.built(synthetic.messages))
        self.assertEqual(s["messages"], [
            {"from": 0, "to": 1, "sent": 2, "received": 2, "clock_uncertainty_us": 2.0,
             "latency": {"count": 2, "median_us": 5.0, "p99_us": 30.0}},
            {"from": 1, "to": 0, "sent": 1, "received": 1, "clock_uncertainty_us": 2.0,
             "latency": {"count": 1, "median_us": 10.0, "p99_us": 10.0}}])
        self.assertRegex(text, r"0 → 1\s+2\s+2\s+2\s+5\.00 µs\s+30\.0 µs\s+± 2\.00 µs")

    def test_dropped_records_warn(self):
        s, text = self.summary(self.built(synthetic.messages))
        self.assertEqual(s["dropped"], {"total": 7, "threads": [{"pid": 100, "tid": 1, "name": "worker 0", "dropped": 7}]})
        self.assertIn("WARNING: 7 records were dropped", text)
        self.assertIn("worker 0 (pid 100): 7", text)
        s, text = self.summary(self.built(synthetic.messages, dropped=False))
        self.assertEqual(s["dropped"], {"total": 0, "threads": []})
        self.assertNotIn("WARNING", text)

    def test_merged_trace_keeps_each_part(self):
        """All traces in one file: each part's numbers as alone (flow ids repeat across names)."""
        s, _ = self.summary(synthetic.everything(lone=True, dropped=True), "--top", "20")
        self.assertEqual([p["pid"] for p in s["processes"]], [1, 2, 3, 4, 5, 100, 200])
        self.assertEqual(s["successors"][0], {"strategy": "express", "count": 2, "median_us": 10.0, "p99_us": 30.0})
        self.assertEqual(s["queues"]["rows"][0]["item_wait"], {"count": 2, "median_us": 20.0, "p99_us": 120.0})
        self.assertEqual(s["messages"][0]["latency"], {"count": 2, "median_us": 5.0, "p99_us": 30.0})
        self.assertEqual(s["processes"][0]["threads"][0]["shares"]["running"], 0.25)

    def test_json_to_stdout(self):
        path = self.trace(self.built(synthetic.shares))
        rc, stdout, stderr = run("summary", path, "--json", "-")
        self.assertEqual(rc, 0, stderr)
        self.assertEqual(json.loads(stdout)["task_labels"]["rows"][0]["label"], "A")
