"""A pipeline worker thread's ranges paint none of the loop's own idle (issue #37 class 4, h37-grainpaint).

The step's ledger books the GPU's idle to the host category whose events cover it.  grain's prefetch thread
(``grain-thread-prefetch-*``: google/grain @f5dd0d8a records each dataset iterator's ``__next__`` as a TraceMe
range) makes the next batch inside ``BatchDatasetIterator.__next__`` / ``MapDatasetIterator.__next__`` ranges while
the step runs.  h37-inputwait stopped reading those ranges as the loop's input wait (``context._on_loop_threads``);
they then fell to host work, and painted the loop's untraced other Python (and its dispatch) as ``host_compute``:
main 0.32 ms a step where the loop's own host work is 0.085 ms, and a critical "Host-bound" finding of 2.17 ms on the
slow form, where the loop's 2 ms of untraced Python is host time the capture did not record.

The wrong assumption: *an event that covers the GPU's idle is what the loop does then, whatever thread records it*.
A thread that records the program's batch-named ranges and dispatches none of the step's work (where some thread
does) is the pipeline's worker: its time is the pipeline working ahead, not the loop's.  Truth by construction
(``synthetic.jaxcapture.grain_loop``): the same loop with no prefetch thread recorded (grain's multiprocess prefetch,
its workers other processes) reads the loop's own time, and the worker's ranges change nothing of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import jaxcapture as jc
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics

STEPS = 12
PS_PER_MS = 1e9


def _grain(root: Path, take_us: float, other_us: float, prefetch_thread: bool) -> tuple[Path, float]:
    """The grain loop's capture under ``root`` and the loop's untraced other work per step (ms, the truth)."""
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = jc.mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    spans = jc.grain_loop(cap, kernels, STEPS, take_us, other_us, prefetch_thread=prefetch_thread)
    (path,) = jc.JaxScenario("grain", cap.finish(), cap.truth("grain", "grain loop", "trace_train")).write(root)
    _, other, end = spans[len(spans) // 2]
    return path, (end - other) / PS_PER_MS


@pytest.mark.parametrize("take_us, other_us", [(75.0, 150.0), (1000.0, 2000.0)], ids=["fast take", "slow take"])
def test_the_prefetch_threads_ranges_paint_no_host_compute(tmp_path: Path, take_us: float, other_us: float) -> None:
    with_worker, other_ms = _grain(tmp_path / "with", take_us, other_us, prefetch_thread=True)
    alone, _ = _grain(tmp_path / "alone", take_us, other_us, prefetch_thread=False)
    b = host_metrics(read_trace(str(with_worker))).breakdown
    truth = host_metrics(read_trace(str(alone))).breakdown
    # main: host_compute 0.323 ms (fast) / 2.173 ms (slow) where the loop's own host work is 0.085 ms
    assert b.host_compute == pytest.approx(truth.host_compute, abs=0.002)
    assert b.host_compute < 0.1
    # the loop's untraced other work is host time no event records (main: 0.021 ms of it)
    assert other_ms - 0.01 <= b.other <= other_ms + 0.03
    assert b.other == pytest.approx(truth.other, abs=0.002)
    # the loop's dispatch stays its own (main: 0.05 ms of its 0.141 painted as host compute)
    assert b.launch_wait == pytest.approx(truth.launch_wait, abs=0.002)
    assert b.input_wait == pytest.approx(truth.input_wait, abs=0.002)


def test_the_loops_untraced_work_is_named_unrecorded_with_how_to_record_it(tmp_path: Path) -> None:
    path, other_ms = _grain(tmp_path, 1000.0, 2000.0, prefetch_thread=True)
    (s,) = discover(str(tmp_path))
    (h,) = analyze_session(s.run, s.session, s.hosts).hosts
    # main: one idle finding, "Host-bound: the GPU waits for the host's own work inside the step", 2.17 ms, critical
    (f,) = [f for f in h.findings if f.rule == "unexplained_idle"]
    assert f.id.endswith("#unrecorded") and not f.title.startswith("Host-bound")
    assert f.metric.detail["unrecorded_ms"] == pytest.approx(other_ms, abs=0.03)
    assert "Record what the host does" in f.actions[0].text
    assert "input_bound" in {g.rule for g in h.findings}  # the take and the batch's copy: the loop's own wait, unchanged
