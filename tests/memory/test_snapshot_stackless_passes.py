"""A snapshot recorded without stacks is cut into its forward passes by its allocation pattern (h37-snap23).

Without frames nothing names a module's forward, and ``job.iterations`` read a stackless history's steps only where
its pattern showed a backward (``pattern_phases``): an inference loop, a forward benchmark -- under ``no_grad`` or
with its graph dropped unused -- was one untimed window, its kind unknown.  A loop of passes runs the same code, so
each pass makes the same sizes in the same order and frees them all by its end: the history falls back to the level
it never falls below again (weights, a cache made once) after each pass (``job.iterations.pass_phases``).

Truth by construction: ``synthetic.memsnapshot.inference_loop`` and ``forward_only`` (each pass's start and peak),
written as ``context=None`` records them; the same loop with stacks reads the same passes.  Controls: one pass of a
model of identical blocks (the blocks repeat a size, the level never falls back between them), one forward, one
training step (``test_snapshot_stackless_iterations``), a history dumped inside its second pass, and the real CS336
forward snapshots without stacks (one forward each) read none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report as snapshot_report
from tests.support.snapshot_report import step_starts_us


@pytest.mark.parametrize("sc", [ms.inference_loop(), ms.inference_loop(passes=3, blocks=6),
                                ms.forward_only(grad=False, passes=4), ms.forward_only(passes=2)],
                         ids=["inference_loop", "three_passes", "no_grad_passes", "forward_graph_dropped"])
def test_a_stackless_loop_of_passes_is_cut_into_them(tmp_path: Path, sc: ms.Scenario) -> None:
    bare_doc = ms.as_recorded(sc.doc, context=None)
    rep = snapshot_report(tmp_path, bare_doc, "bare")
    passes = len(sc.truth["starts_us"])
    assert (rep.steps["source"], rep.steps["count"], rep.steps["confidence"]) == \
        ("memory_iterations", passes, "low"), rep.steps
    assert step_starts_us(rep, bare_doc) == sc.truth["starts_us"]
    if "peaks" in sc.truth:
        assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == sc.truth["peaks"]
    assert "forward passes" in rep.steps["note"] and "read from the allocation pattern" in rep.steps["note"]
    assert (rep.job["kind"], rep.job["kind_confidence"]) == ("inference", "low"), rep.job
    note = next(f for f in rep.findings if f.title == "The memory snapshot records no stacks")
    assert "its forward passes only from the pattern" in note.summary
    # the same loop with stacks: the same passes, at medium
    framed = snapshot_report(tmp_path, sc.doc, "framed")
    assert [r.start_ms for r in rep.step_rows.rows()] == [r.start_ms for r in framed.step_rows.rows()]


def test_a_first_pass_making_a_cache_is_warm_up(tmp_path: Path) -> None:
    """A KV cache made on the first pass and held: never freed, set aside, so the first pass repeats the others and
    is dropped as warm-up, as frames read it."""
    sc = ms.inference_loop(kv_mib=64)
    rep = snapshot_report(tmp_path, ms.as_recorded(sc.doc, context=None), "bare")
    framed = snapshot_report(tmp_path, sc.doc, "framed")
    assert (rep.steps["found"], rep.steps["count"]) == (framed.steps["found"], framed.steps["count"]) == (4, 3)
    assert [d["step"] for d in rep.steps["dropped"]] == [0]
    assert [r.start_ms for r in rep.step_rows.rows()] == [r.start_ms for r in framed.step_rows.rows()]


@pytest.mark.parametrize("doc", [ms.inference_loop(passes=2, dump_in_pass=True).doc,
                                 ms.inference_loop(passes=1, blocks=24).doc],
                         ids=["dumped_in_its_second_pass", "one_pass_of_identical_blocks"])
def test_no_passes_where_the_pattern_holds_no_two(tmp_path: Path, doc: dict) -> None:
    rep = snapshot_report(tmp_path, ms.as_recorded(doc, context=None))
    assert rep.steps["source"] == "whole_capture", rep.steps
    assert rep.job["kind"] == "unknown", rep.job
