# SPDX-License-Identifier: Apache-2.0
"""heddle-trace plot: the PNGs it names are written, non-empty PNGs; streams.png only where the
trace has stream tracks."""
import synthetic
from support import PNG_MAGIC, ToolTest, run

__all__ = ["TestPlot"]


class TestPlot(ToolTest):
    def plot(self, doc, *args):
        out = self.tmp / "plots" / "new"  # made by the tool, parents too
        rc, stdout, stderr = run("plot", self.trace(doc), "--out", out, *args)
        self.assertEqual(rc, 0, stderr)
        return out, stdout.splitlines()

    def assertPngs(self, out, written, names):
        self.assertEqual(written, [str(out / name) for name in names])
        self.assertEqual(sorted(p.name for p in out.iterdir()), sorted(names))
        for name in names:
            data = (out / name).read_bytes()
            self.assertGreater(len(data), len(PNG_MAGIC), name)
            self.assertEqual(data[:len(PNG_MAGIC)], PNG_MAGIC, name)

    def test_all_plots(self):
        out, written = self.plot(synthetic.everything(lone=True, dropped=True), "--bins", "50")
        self.assertPngs(out, written, ["timeline.png", "streams.png", "utilisation.png"])

    def test_no_streams_without_stream_tracks(self):
        out, written = self.plot(self.built(synthetic.shares))
        self.assertPngs(out, written, ["timeline.png", "utilisation.png"])

    def test_many_labels_and_threads(self):
        """More labels than colours (the rest grey), 40 threads, zero-length spans."""
        b = synthetic.Builder()
        b.process(7, "wide")
        for t in range(40):
            b.thread(7, t, f"worker {t}")
            for k in range(30):
                b.x(7, t, k * 10, (k * t) % 10, "task", f"label {k}")
        out, written = self.plot(b.doc())
        self.assertPngs(out, written, ["timeline.png", "utilisation.png"])

    def test_out_is_a_file(self):
        path = self.trace(self.built(synthetic.shares))
        (self.tmp / "file").write_text("")
        rc, stdout, stderr = run("plot", path, "--out", self.tmp / "file")
        self.assertEqual((rc, stdout), (2, ""))
        self.assertIn(f"{self.tmp / 'file'}: cannot write the plots", stderr)
        self.no_traceback(stderr)
