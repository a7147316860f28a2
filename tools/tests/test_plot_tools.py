"""Tests of tools/plot_metrics and tools/plot_trace: a clear message without matplotlib, no
offset text on the throughput axis, a legend on the trace picture.

    python3 -m unittest discover -s tools/tests
"""
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import matplotlib  # noqa: F401

    HAVE_MATPLOTLIB = True
except ImportError:
    HAVE_MATPLOTLIB = False


def load_tool(name):
    """Imports tools/<name> (a script without .py) as a module."""
    path = os.path.join(TOOLS, name)
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def write_metrics(path, n=6):
    with open(path, "w", encoding="utf-8") as f:
        for i in range(1, n + 1):
            rec = {"iter": i, "time_s": 0.5 * i, "tokens_per_s": 1234000.0 + 37.0 * i,
                   "load_cv": 0.1, "overhead_ratio": 0.05}
            if i % 3 == 0:
                rec["loglik_per_token"] = -8.0 + 0.01 * i
            f.write(json.dumps(rec) + "\n")


def write_trace(path):
    events = []
    for it in (1, 2, 3):
        for w in (0, 1):
            events.append({"ph": "X", "tid": w, "ts": 1000.0 * it + 100 * w, "dur": 400.0,
                           "args": {"iter": it, "row": w, "col": it % 2}})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": events}, f)


class WithoutMatplotlib(unittest.TestCase):
    """A `matplotlib` that fails to import, first on the path: the tools explain, exit 3."""

    def run_without(self, tool, args):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "matplotlib")
            os.mkdir(fake)
            with open(os.path.join(fake, "__init__.py"), "w", encoding="utf-8") as f:
                f.write("raise ImportError('No module named matplotlib')\n")
            env = dict(os.environ, PYTHONPATH=d)
            return subprocess.run([sys.executable, os.path.join(TOOLS, tool)] + args(d),
                                  env=env, capture_output=True, text=True, check=False)

    def test_plot_metrics_says_what_to_install(self):
        def args(d):
            write_metrics(os.path.join(d, "m.jsonl"))
            return ["--out", d, os.path.join(d, "m.jsonl")]
        r = self.run_without("plot_metrics", args)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertIn("tools/bootstrap --plot", r.stderr)
        self.assertIn("python3-matplotlib", r.stderr)

    def test_plot_trace_says_what_to_install(self):
        def args(d):
            write_trace(os.path.join(d, "t.json"))
            return [os.path.join(d, "t.json"), "--out", os.path.join(d, "t.png")]
        r = self.run_without("plot_trace", args)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertIn("tools/bootstrap --plot", r.stderr)


@unittest.skipUnless(HAVE_MATPLOTLIB, "needs matplotlib")
class Pictures(unittest.TestCase):
    def test_throughput_axis_has_no_offset_text(self):
        tool = load_tool("plot_metrics")
        figures = []
        close = tool.plt.close
        tool.plt.close = figures.append
        try:
            with tempfile.TemporaryDirectory() as d:
                m = os.path.join(d, "m.jsonl")
                write_metrics(m)
                runs = [("run", tool.read_records(m))]
                self.assertTrue(tool.plot(runs, os.path.join(d, "t.png"), "iter",
                                          ["tokens_per_s"], "iteration", ["tokens / s"], "t"))
        finally:
            tool.plt.close = close
        fig = [f for f in figures if hasattr(f, "canvas")][0]
        fig.canvas.draw()
        ax = fig.axes[0]
        self.assertEqual(ax.yaxis.get_major_formatter().get_offset(), "")
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        self.assertTrue(any(lab.replace(",", "").replace(".", "").lstrip("−-").isdigit()
                            and float(lab.replace(",", "").replace("−", "-")) > 1e6
                            for lab in labels), labels)
        close(fig)

    def test_trace_picture_has_a_legend_of_iterations(self):
        import matplotlib.figure
        tool = load_tool("plot_trace")
        saved = []
        savefig = matplotlib.figure.Figure.savefig
        matplotlib.figure.Figure.savefig = lambda fig, *a, **k: saved.append(fig)
        argv = sys.argv
        try:
            with tempfile.TemporaryDirectory() as d:
                t = os.path.join(d, "t.json")
                write_trace(t)
                sys.argv = ["plot_trace", t, "--out", os.path.join(d, "t.png")]
                tool.main()
        finally:
            matplotlib.figure.Figure.savefig = savefig
            sys.argv = argv
        legend = saved[0].axes[0].get_legend()
        self.assertIsNotNone(legend)
        texts = [t.get_text() for t in legend.get_texts()]
        self.assertEqual(texts, ["iteration 1", "iteration 2", "iteration 3"])


if __name__ == "__main__":
    unittest.main()
    def test_objective_and_rmse_records_of_the_other_models_are_plotted(self):
        # Logistic regression's records were keyed `iteration` (refused: "no 'iter'"); every
        # model's now begin with iter and time_s, and their figures have plots of their own.
        tool = load_tool("plot_metrics")
        with tempfile.TemporaryDirectory() as d:
            lr, mf = os.path.join(d, "lr.jsonl"), os.path.join(d, "mf.jsonl")
            with open(lr, "w", encoding="utf-8") as f:
                for i in (10, 20, 30):
                    f.write(json.dumps({"iter": i, "time_s": 0.1 * i, "objective": 50.0 - i})
                            + "\n")
            with open(mf, "w", encoding="utf-8") as f:
                for i in (1, 2, 3):
                    f.write(json.dumps({"iter": i, "time_s": 0.2 * i, "train_rmse": 1.0 / i})
                            + "\n")
            out = os.path.join(d, "plots")
            self.assertEqual(tool.main([lr, mf, "--out", out]), 0)
            self.assertEqual(sorted(os.listdir(out)),
                             ["metrics_objective_iter.png", "metrics_objective_time.png",
                              "metrics_rmse.png"])
