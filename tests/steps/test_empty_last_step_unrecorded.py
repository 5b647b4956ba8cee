"""The empty ``ProfilerStep#N`` a last ``prof.step()`` opens is no step where the capture recorded no GPU work too.

Survey h37-survey61: frances-uy/s2025-assignment4-hpc ``cs336-systems/gn-16-30-00_598906.1746786828134671677
.pt.trace.json`` (a 2-GPU naive-DDP benchmark's rank, ``schedule(wait=1, warmup=1, active=3)`` over 5 iterations, on a
PyTorch build whose profiler records the host alone: no runtime call, kernel or copy) holds 3 iterations and, after
the last, a ``ProfilerStep#4`` of 17 us holding nothing.  Main kept that mark as a fourth step: steps of 2.91, 2.80 and
0.017 ms, a mean of 1.91 ms for iterations of 2.86 ms and a step-time spread of 0.70 -- the empty-step rule asked only
whether the step launched GPU work, a question a capture without GPU records cannot answer.  The trace has no licence,
so it is not kept; the generator's loop (``synthetic.torchtrace.write_unrecorded_gpu_steps``) is its shape, with the
truth by construction.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics


@pytest.fixture(scope="module")
def loops(tmp_path_factory) -> dict[str, tuple[dict, object]]:
    """The generator's 3 iterations with the empty final mark, with one of no length (its end never written), and
    without it (the control)."""
    out = tmp_path_factory.mktemp("unrecorded_last")
    runs = {}
    for name, final in (("empty_last", 17.0), ("cut_mark", 0.0), ("loop_only", None)):
        path = out / f"{name}.1.pt.trace.json"
        truth = tt.write_unrecorded_gpu_steps(str(path), steps=3, final_mark_us=final)
        runs[name] = (truth, host_metrics(read_trace(str(path))))
    return runs


def test_the_empty_last_mark_of_a_capture_without_gpu_records_is_dropped(loops):
    truth, m = loops["empty_last"]
    assert not m.gpus  # the capture recorded no GPU work: the rule reads the host alone
    assert (m.steps.found, m.steps.count) == (truth["steps"] + 1, truth["steps"])
    assert [d.reason.split(":")[0] for d in m.steps.dropped] == ["empty"]
    assert m.headline.avg_step_ms == pytest.approx(truth["step_ms"], abs=1e-3)


def test_a_final_mark_of_no_length_with_nothing_after_it_is_empty_too(loops):
    """A last mark the capture ended inside is read to the capture's end: nothing runs after it, so it is empty."""
    truth, m = loops["cut_mark"]
    assert m.steps.count == truth["steps"]
    assert [d.reason.split(":")[0] for d in m.steps.dropped] == ["empty"]


def test_the_loop_without_that_mark_keeps_every_step(loops):
    """The control: each step holds the loop's host ops -- kept, nothing dropped, the same mean."""
    truth, m = loops["loop_only"]
    assert m.steps.count == truth["steps"] and not m.steps.dropped
    assert m.headline.avg_step_ms == pytest.approx(truth["step_ms"], abs=1e-3)


def test_a_mark_the_capture_ended_inside_is_no_empty_step():
    """The control on a kept capture with no GPU record (``wild/lightning_cpu_fit``: Lightning on a CPU): its last
    ``run_training_batch`` range has no length -- the capture ended inside it, its end never written -- and the
    iteration's ops run after its start; it stays a partial iteration, not an empty one."""
    path = Path(__file__).parents[1] / "fixtures" / "wild" / "lightning_cpu_fit"
    (trace,) = sorted(path.glob("*.pt.trace.json.gz"))
    m = host_metrics(read_trace(str(trace)))
    assert not m.gpus
    # and its first iteration (40.9 ms against 21.0-22.8 ms: Adam's first step, its first ``addcdiv_`` 2.0 ms against
    # a median of 7 us after) is warm-up since h37-lostmark34 (``job.phase._slow_first_op_calls``)
    assert [d.reason.split(":")[0] for d in m.steps.dropped] == ["warm-up", "partial"]
