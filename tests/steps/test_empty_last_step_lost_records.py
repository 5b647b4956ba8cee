"""The empty ``ProfilerStep#N`` a last ``prof.step()`` opens is no step where the capture lost its GPU records, even
with the profiler's stop right after it.

Survey h37-survey70 (its Left 2): Abenich7/CPU-GPU-inference-2024---V2 ``trace0.json`` @47b7668 (4 x RTX 2080 Ti, no
licence, not kept) holds ``ProfilerStep#3`` (4.68 ms: a pageable upload's ``cudaMemcpyAsync`` of 4.39 ms, two
``aten::mul``) and ``ProfilerStep#4`` of 32 us holding nothing, the runtime calls but no kernel or copy record, and
the profiler's ``cudaDeviceSynchronize`` 34 us after the last mark's end.  Main read 2 steps of 2.37 ms: with no GPU
record the last mark was judged over as long as the earlier step (4.71 ms, a reach meant for a mark around one phase
of each turn, h37-review29), so the profiler's sync was read as its work.  A ``ProfilerStep#N`` spans its step from
one ``prof.step()`` to the next: where the earlier marks reach their next step's start, the last one's own end is its
step's end, as the launches inside the mark alone judge it where GPU records are there.  The generator's loop
(``synthetic.torchtrace.write_lost_gpu_records``, ``lost_from=0``, ``final_mark_us``) is that shape, with the truth
by construction.
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

#: Abenich7's last mark (us)
FINAL_MARK_US = 32.0


def _read(tmp_path, name: str, **kw) -> tuple[dict, object]:
    path = tmp_path / f"{name}.1.pt.trace.json"
    truth = tt.write_lost_gpu_records(str(path), log=(), **kw)
    return truth, host_metrics(read_trace(str(path)))


def test_the_empty_last_mark_of_a_capture_that_lost_its_gpu_records_is_dropped(tmp_path):
    """3 steps whose every GPU record was lost, then the empty mark and the profiler's stop: 3 steps, the mean theirs.
    Main: 4 steps, the last ``ProfilerStep#3`` kept (the sync 35 us after it read as its work), a mean a quarter
    lower."""
    truth, m = _read(tmp_path, "lost_all", steps=3, lost_from=0, final_mark_us=FINAL_MARK_US)
    assert truth["lost"] == truth["launches"] and not m.gpus  # nothing of the GPU's side is left
    assert (m.steps.found, m.steps.count) == (truth["steps"] + 1, truth["steps"])
    assert [d.reason.split(":")[0] for d in m.steps.dropped] == ["empty"]
    # each ProfilerStep runs to the next one's start; the last kept one to the empty mark's start
    assert m.headline.avg_step_ms == pytest.approx(sum(truth["step_ms"]) / truth["steps"], rel=0.01)


def test_one_step_and_the_empty_mark_read_one_step(tmp_path):
    """Abenich7's shape: one step, then the empty mark -- one step, not two of half its length (main: 2 steps)."""
    truth, m = _read(tmp_path, "one_step", steps=1, lost_from=0, final_mark_us=FINAL_MARK_US)
    assert m.steps.count == 1 and [d.reason.split(":")[0] for d in m.steps.dropped] == ["empty"]
    assert m.headline.avg_step_ms == pytest.approx(truth["step_ms"][0], rel=0.01)


def test_with_its_gpu_records_the_same_mark_is_dropped_by_its_launches(tmp_path):
    """The comparison: the same loop with every record kept -- the mark launched nothing inside its own span, so it
    is dropped (``_launched_work`` over the mark alone), as it now is without the records."""
    truth, m = _read(tmp_path, "recorded", steps=3, lost_from=None, final_mark_us=FINAL_MARK_US)
    assert m.gpus and m.steps.count == truth["steps"]
    assert [d.reason.split(":")[0] for d in m.steps.dropped] == ["empty"]


def test_a_real_short_last_step_stays(tmp_path):
    """The control: a last step that runs a smaller batch (1 launch of 6), its GPU records lost as the others', is
    short but holds the loop's work inside its mark -- kept, no step dropped, on main and here."""
    truth, m = _read(tmp_path, "short_last", steps=3, lost_from=0, last_kernels=1)
    assert truth["step_ms"][-1] < truth["step_ms"][0] / 3  # short: a fraction of the others
    assert m.steps.count == truth["steps"] and not m.steps.dropped
    assert m.headline.avg_step_ms == pytest.approx(sum(truth["step_ms"]) / truth["steps"], rel=0.01)
