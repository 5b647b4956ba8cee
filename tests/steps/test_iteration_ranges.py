"""A training wrapper's own iteration range bounds the steps where the profiler's marks cut iterations (h37-left46).

What the marks mean: ``ProfilerStep#N`` spans the interval between two ``prof.step()`` calls.  PyTorch Lightning calls
it as ``training_step`` returns, so each mark opens between a forward and its backward (``wild/lightning_cpu_fit``,
BjarkeErichsen/Twitter_sentiment_MLOPS, MIT: ``ProfilerStep#0`` opens at 481.05 ms, after the first ``training_step``,
472.56-480.53 ms, before its ``backward``, 483.40 ms).  Lightning's own ``[pl][profile]run_training_batch`` ranges hold
whole iterations: the steps run from one to the next.  Main read the five profiler windows (480.24 / 37.58 / 20.25 /
22.49 / 22.71 ms: the first one the fit's start-up); now four iterations, 40.86 / 21.05 / 22.79 / 21.80 ms, the fifth
range, which the capture's end cut to 0 ms, dropped as partial.  Truth from the file's own ranges (json) and, on a GPU,
by construction: ``synthetic.torchtrace.lightning_fit`` follows the real file's shape -- each step holds its own
forward, backward and update.  Control: the same loop without the wrapper's ranges keeps the profiler's marks.
"""

from __future__ import annotations

import gzip
import json

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support import lightning


def _ranges_ms(doc: dict, name: str) -> list[tuple[float, float]]:
    ev = sorted((e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("name") == name), key=lambda e: e["ts"])
    return [(e["ts"] / 1e3, e["dur"] / 1e3) for e in ev]


def _rows(m) -> list[tuple[float, float]]:
    return sorted((r.start_ms, r.step_ms) for r in m.steps_detail if r.gpu is None)


def test_lightning_iterations_are_its_steps():
    """Fails on main: five ``ProfilerStep`` windows, the first 480 ms of start-up."""
    path = lightning.kept_trace()
    ranges = _ranges_ms(json.loads(gzip.decompress(path.read_bytes())), tt.PL_ITERATION)
    assert len(ranges) == 5 and ranges[-1][1] == 0.0  # the last one cut by the capture's end
    periods = [b[0] - a[0] for a, b in zip(ranges, ranges[1:])]
    m = host_metrics(read_trace(str(path)))
    assert (m.steps.source, m.steps.found, m.steps.count) == ("iteration_range", 5, 3)
    # the steps' windows are the iterations (40.86, 21.05, 22.79, 21.80) less the first: Adam's first step, its ops'
    # first calls far slower than all their later ones, is a one-time cost (h37-lostmark34); a CPU-only fit times no
    # GPU step, so no step row books them (h37-tidy29: one account with the title's "no step")
    assert [w.end_ms - w.start_ms for w in m.steps.windows] == pytest.approx(periods[1:], abs=0.02)
    assert not _rows(m)
    first, cut = m.steps.dropped
    assert first.step == 0 and first.reason.startswith("warm-up")
    assert cut.step == 4 and cut.reason.startswith("partial: the capture ended inside it")


@pytest.fixture(scope="module")
def fit(tmp_path_factory):
    (path,) = tt.write_run(str(tmp_path_factory.mktemp("pl")), tt.LIGHTNING_FIT, steps=8, run="lightning_fit")
    return path


def _first_kernels(doc: dict, m, marks: list[tuple[float, float]]) -> list[str]:
    """The name of each kept step's first kernel: the steps' windows put on the file's clock by the first one's mark
    (``marks``: the raw ranges the steps were read from, one per found step, the stock rule's first dropped)."""
    origin = marks[1][0] - m.steps.windows[0].start_ms
    kernels = sorted((e for e in doc["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    rows = sorted((r for r in m.steps_detail if r.gpu is None), key=lambda r: r.start_ms)
    return [next(k["name"] for k in kernels if k["ts"] / 1e3 >= r.first_kernel_ms + origin - 1e-3) for r in rows]


def test_a_lightning_fit_on_a_gpu_is_cut_at_its_iterations(fit):
    doc = json.loads(open(fit).read())
    ranges = _ranges_ms(doc, tt.PL_ITERATION)
    m = host_metrics(read_trace(fit))
    assert (m.steps.source, m.steps.found, m.steps.count) == ("iteration_range", 8, 6)  # the stock rule's edges
    period = ranges[1][0] - ranges[0][0]
    assert all(b[0] - a[0] == pytest.approx(period, abs=0.01) for a, b in zip(ranges, ranges[1:]))
    rows = [r for r in m.steps_detail if r.gpu is None]
    assert [r.step_ms for r in rows] == pytest.approx([period] * 6, abs=0.02)
    origin = ranges[1][0] - m.steps.windows[0].start_ms
    assert [w.start_ms + origin for w in m.steps.windows] == pytest.approx([s for s, _ in ranges[1:7]], abs=1e-3)
    # each step holds one iteration: it begins with its forward's first GEMM, and holds its 8 forward, 16 backward
    # and 1 update kernels
    assert _first_kernels(doc, m, ranges) == [tt.GEMM_FWD] * 6
    assert [r.kernel_count for r in rows] == [25] * 6


def test_without_the_wrappers_ranges_the_marks_bound_the_steps(fit, tmp_path):
    """Control: the same file with Lightning's ranges taken out is read from its ``ProfilerStep`` marks, which cut each
    iteration between its forward and its backward: each step begins with a backward's kernel."""
    doc = json.loads(open(fit).read())
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not str(e.get("name", "")).startswith("[pl]")]
    path = tmp_path / "marks.pt.trace.json"
    path.write_text(json.dumps(doc))
    m = host_metrics(read_trace(str(path)))
    assert m.steps.source == "profiler_step"
    marks = sorted((e["ts"] / 1e3, e["dur"] / 1e3) for e in doc["traceEvents"]
                   if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    assert set(_first_kernels(doc, m, marks)) == {tt.RELU_BF16}  # threshold_backward: the marks' steps start mid-way
