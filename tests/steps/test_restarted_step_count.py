"""A ``ProfilerStep`` count that restarts inside one file: each mark is its own step, none merged by its number.

Survey h37-survey22: Lightning's ``PyTorchProfiler`` on a CPU (BjarkeErichsen/Twitter_sentiment_MLOPS, kept as
``wild/lightning_cpu_fit``) writes ``ProfilerStep#1`` over the fit's start (480 ms: the sanity check's end, the data
loader's start), then ``#0, #1, #2, #3`` over four training iterations.  Main merged the two ``#1`` marks by their
number and read 4 steps, one of them two iterations (57.8 ms); the file holds 5 windows.  Truth: the file's own marks
(each step runs from its mark's start to the next mark's start, the last to its mark's end) where Lightning's own
iteration ranges are taken out (they bound the steps when present, h37-left46), and by construction the generator's
loop with its marks renumbered the same way.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support import lightning

def _marks(doc: dict, cat: str = "user_annotation") -> list[dict]:
    """The file's ``ProfilerStep#N`` marks of one category (the host's; ``gpu_user_annotation``: their GPU spans), in
    time order."""
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == cat
          and str(e.get("name", "")).startswith("ProfilerStep#")]
    return sorted(ev, key=lambda e: e["ts"])


def _windows_ms(marks: list[dict]) -> list[float]:
    """Each mark's window as the steps tile it: to the next mark's start, the last to its own end."""
    starts = [m["ts"] for m in marks]
    return [((starts[i + 1] if i + 1 < len(marks) else m["ts"] + m["dur"]) - m["ts"]) / 1000 for i, m in
            enumerate(marks)]


def _renumbered(path: Path, numbers: list[int]) -> Path:
    """The trace with its step marks (the host's and their GPU spans), in time order, named
    ``ProfilerStep#<numbers[i]>``."""
    doc = json.loads(path.read_text())
    for cat in ("user_annotation", "gpu_user_annotation"):
        marks = _marks(doc, cat)
        assert len(marks) == len(numbers)
        for m, n in zip(marks, numbers):
            m["name"] = f"ProfilerStep#{n}"
    out = path.with_name("restarted." + path.name)
    out.write_text(json.dumps(doc))
    return out


def _steps(m) -> list[tuple[int, float]]:
    """(step number, step ms) of each host-wide step row, in time order."""
    rows = sorted((r for r in m.steps_detail if r.gpu is None), key=lambda r: r.start_ms)
    return [(int(r.step), float(r.step_ms)) for r in rows]


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple[Path, Path]:
    (plain,) = tt.write_run(str(tmp_path_factory.mktemp("restarted")), "pageable_copy", steps=4)
    return Path(plain), _renumbered(Path(plain), [1, 0, 1, 2])


def test_a_restarted_count_keeps_every_step(pair):
    plain, restarted = (host_metrics(read_trace(str(p))) for p in pair)
    assert restarted.steps.count == plain.steps.count == 4
    assert [ms for _, ms in _steps(restarted)] == pytest.approx([ms for _, ms in _steps(plain)], abs=1e-6)
    assert [n for n, _ in _steps(restarted)] == [1, 2, 3, 4]  # numbered on from the restart, in time order
    assert "count restarted" in restarted.steps.note


def test_a_growing_count_is_left_as_written(pair):
    """The control: the generator's own marks (a growing count) are not renumbered and say nothing of a restart."""
    written = [int(m["name"].split("#")[1]) for m in _marks(json.loads(pair[0].read_text()))]
    m = host_metrics(read_trace(str(pair[0])))
    assert [n for n, _ in _steps(m)] == written == sorted(written)
    assert "restarted" not in m.steps.note


def test_lightning_fit_without_its_iteration_ranges_reads_its_five_windows(tmp_path):
    """The profiler's marks alone (the kept file with Lightning's ``run_training_batch`` ranges taken out, which bound
    its iterations when present: ``tests/steps/test_iteration_ranges.py``): five windows, the restart kept."""
    path = lightning.without_iteration_ranges(tmp_path)
    marks = _marks(json.loads(gzip.open(path).read()))
    assert [m["name"] for m in marks] == [f"ProfilerStep#{n}" for n in (1, 0, 1, 2, 3)]
    m = host_metrics(read_trace(str(path)))
    assert (m.steps.source, m.steps.found) == ("profiler_step", 5)
    # the windows read from the marks, less the one whose ops' first calls (Adam's first step) are a one-time cost
    # (h37-lostmark34); a CPU-only fit times no GPU step, so no step row books them (h37-tidy29)
    # (the first window after the restart, 37.6 ms against the 20-23 ms after it)
    (warm,) = m.steps.dropped
    assert warm.reason.startswith("warm-up")
    windows = _windows_ms(marks)
    kept = windows[:1] + windows[2:]
    assert [w.end_ms - w.start_ms for w in m.steps.windows] == pytest.approx(kept, abs=0.05)
    assert not _steps(m)
