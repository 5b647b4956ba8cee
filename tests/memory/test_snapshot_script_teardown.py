"""A history whose script frees everything after its loop reads the loop's iterations, recorded with stacks or
without (issue #37 class 5; h37-wild54m *Left* 2; session 55's metamorphic checks).

``del model, optimizer`` after the loop frees, inside the history, the blocks every iteration holds -- weights,
optimizer state -- so without stacks none is kept for good: the first iteration, which makes the state, read as a
set-up no later one repeats (3 iterations read none, 5 read 3), and a real Adam loop's analysis failed outright
(``metrics.memory._climb`` found no level before the peak as low as the teardown's).
With stacks, a benchmark's forward passes (``wild/snapshot_attn_sweep_rounding``: 98 read) read none once torn down:
each pass read its own dip to the floor, the last one's below every start.  ``job.iterations.teardown_start`` marks
the frees after the history's last allocation that release what the history made in its first half, or, where no
block made before it is left, before it; the framed iterations and passes are read before them
(``_before_script_teardown``) and a stackless pattern too (``pattern_phases``, its forward layers still judged by the
whole history's frees).  Not a stackless history's passes: cut so, a real GPT-2 medium's one forward under
``inference_mode`` (``snapshots_wild/forward_no_grad_cs336``), its input freed at its end, read its layers as passes.

Real histories: ``wild/snapshot_adam_iterations`` (MIT) and the H200 OOM snapshot, each rewritten by
``synthetic.memsnapshot.torn_down`` as the same script with a teardown before its dump writes it (truth by
construction: the iterations read without it).  Generator: ``training_iterations(teardown=True)`` (truth: its
iterations' starts)."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.paths import FIXTURES
from tests.support.snapshot_report import report as snapshot_report

SWEEP = FIXTURES / "wild" / "snapshot_attn_sweep_rounding"
ADAM = FIXTURES / "wild" / "snapshot_adam_iterations" / "forward_and_backward_memory_snapshot_200.pickle"
OOM = FIXTURES / "h200_memory" / "torch_oom_snapshot" / "oom_snapshot.pickle"


def _starts(sc: ms.Scenario) -> list[float]:
    t0 = sc.doc["device_traces"][0][0]["time_us"]
    return [round((s - t0) / 1000, 3) for s in sc.truth["starts_us"]]


@pytest.mark.parametrize("iterations", [3, 5])
@pytest.mark.parametrize("kw", [{}, {"micro_batches": 2}, {"set_to_none": False}], ids=["plain", "micro", "kept_grads"])
def test_a_generated_stackless_loop_torn_down_reads_every_iteration(tmp_path: Path, iterations: int, kw: dict) -> None:
    """Every iteration found, the first as warm-up, at the truth's starts (main: none of 3, 3 of 5)."""
    sc = ms.training_iterations(iterations, teardown=True, **kw)
    rep = snapshot_report(tmp_path, ms.as_recorded(sc.doc, context=None), "bare")
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", iterations)
    got = [row.start_ms for row in rep.step_rows.rows()]
    assert got and got == _starts(sc)[-len(got):]


@pytest.mark.parametrize("path", [ADAM, OOM], ids=["adam", "oom"])
@pytest.mark.parametrize("annotated", [True, False])
def test_a_real_loop_torn_down_without_stacks_reads_as_without_its_teardown(tmp_path: Path, path: Path,
                                                                          annotated: bool) -> None:
    """The same kept iterations, starts, kind and findings as the history without its teardown (main: the Adam
    loop's analysis failed with an IndexError)."""
    doc = pickle.loads(path.read_bytes())
    if not annotated:
        doc.pop("external_annotations", None)
    whole = snapshot_report(tmp_path, ms.as_recorded(doc, context=None), "whole")
    torn = snapshot_report(tmp_path, ms.as_recorded(ms.torn_down(doc), context=None), "torn")
    assert whole.steps["source"] == torn.steps["source"] == "memory_iterations"
    assert [r.start_ms for r in torn.step_rows.rows()] == [r.start_ms for r in whole.step_rows.rows()]
    assert torn.job["kind"] == whole.job["kind"] == "training"
    assert [f.rule for f in torn.findings] == [f.rule for f in whole.findings]


@pytest.mark.parametrize("kw", [{}, {"micro_batches": 2}], ids=["plain", "micro"])
def test_control_the_same_loops_without_teardown_read_as_before(tmp_path: Path, kw: dict) -> None:
    sc = ms.training_iterations(5, **kw)
    rep = snapshot_report(tmp_path, ms.as_recorded(sc.doc, context=None), "bare")
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 5)
    assert [row.start_ms for row in rep.step_rows.rows()] == _starts(sc)[1:]


def test_control_a_framed_real_loop_torn_down_reads_as_without_it(tmp_path: Path) -> None:
    """With its frames the teardown was read apart before (``_before_teardown``, h37-wild54m)."""
    doc = pickle.loads(ADAM.read_bytes())
    whole, torn = snapshot_report(tmp_path, doc, "whole"), snapshot_report(tmp_path, ms.torn_down(doc), "torn")
    assert [r.start_ms for r in torn.step_rows.rows()] == [r.start_ms for r in whole.step_rows.rows()]


def test_real_forward_passes_torn_down_read_as_without_their_teardown(tmp_path: Path) -> None:
    """The attention sweep's forward passes (framed): the same kept passes at the same starts (main: none)."""
    src = next(p for p in SWEEP.iterdir() if ".pickle" in p.name)
    with gzip.open(src, "rb") if src.name.endswith(".gz") else open(src, "rb") as f:
        doc = pickle.load(f)
    whole, torn = snapshot_report(tmp_path, doc, "whole"), snapshot_report(tmp_path, ms.torn_down(doc), "torn")
    assert whole.steps["source"] == torn.steps["source"] == "memory_iterations"
    assert torn.steps["count"] == whole.steps["count"] > 50
    assert [r.start_ms for r in torn.step_rows.rows()] == [r.start_ms for r in whole.step_rows.rows()]
