"""A snapshot recorded without stacks is cut into its training iterations by its allocation pattern (h37-stackiter).

``_record_memory_history(context=None)`` records every event and no frame, so no allocation reads as a backward's and
``job.iterations`` -- which cuts at a site's repeats after a backward allocation -- read none: the whole history was
one untimed window and the job "unknown".  The pattern says it without frames: a loop's iterations allocate the same
sizes in the same order (a period, repeated), and in each the backward frees the forward's blocks in reverse order
while it makes gradients (``job.iterations.pattern_phases``); those phases feed the same cut a framed history gets.

A real history: the kept ``wild/snapshot_adam_iterations`` with its stacks and annotations taken away reads the
steady iterations its frames read (main: none).  Truth by construction: ``synthetic.memsnapshot.training_iterations`` (each iteration's first allocation's time and
peak; Adam's moments made on the first step) written as ``context=None`` records it.  Controls: the same loop with
stacks reads the same steps (medium) where this one says low; a single training step, a single forward and one
pass of a model of identical blocks read no iterations; the real CS336 snapshots rewritten without stacks keep
their reading.
"""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.paths import FIXTURES
from tests.support.snapshot_report import report as snapshot_report

WILD = FIXTURES / "snapshots_wild"
ADAM = FIXTURES / "wild" / "snapshot_adam_iterations" / "forward_and_backward_memory_snapshot_200.pickle"


@pytest.mark.parametrize("iterations", [3, 4])
def test_a_stackless_training_history_is_cut_into_its_iterations(tmp_path: Path, iterations: int) -> None:
    sc = ms.training_iterations(iterations=iterations)
    rep = snapshot_report(tmp_path, ms.as_recorded(sc.doc, context=None))
    # the first makes Adam's moments: read as warm-up, as stacks read it (h37-snap23: the blocks it never frees set
    # aside, it repeats the others' sizes), the steady iterations after it
    kept = slice(1, None)
    assert (rep.steps["source"], rep.steps["found"], rep.steps["count"], rep.steps["confidence"]) == \
        ("memory_iterations", iterations, iterations - 1, "low"), rep.steps
    assert [d["step"] for d in rep.steps["dropped"]] == [0] and "warm-up" in rep.steps["dropped"][0]["reason"]
    first_us = min(e["time_us"] for e in sc.doc["device_traces"][0])
    assert [round(r.start_ms * 1000) + first_us for r in rep.step_rows.rows()] == sc.truth["starts_us"][kept]
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == sc.truth["peaks"][kept]
    assert "read from the allocation pattern" in rep.steps["note"]
    assert (rep.job["kind"], rep.job["kind_confidence"]) == ("training", "low"), rep.job
    # the no-stacks note no longer says the iterations could not be read
    note = next(f for f in rep.findings if f.title == "The memory snapshot records no stacks")
    assert "its iterations only from the pattern" in note.summary and "could not be read" not in note.summary


def test_the_same_loop_with_stacks_reads_the_same_steps(tmp_path: Path) -> None:
    doc = ms.training_iterations().doc
    framed = snapshot_report(tmp_path, doc, "framed")
    bare = snapshot_report(tmp_path, ms.as_recorded(doc, context=None), "bare")
    assert framed.steps["confidence"] == "medium"
    assert [r.start_ms for r in bare.step_rows.rows()] == [r.start_ms for r in framed.step_rows.rows()]


def test_a_real_training_history_without_stacks_reads_its_steady_iterations(tmp_path: Path) -> None:
    """The kept ``snapshot_adam_iterations`` (MIT; 3 iterations, Adam's first step making its state) with its stacks
    and its annotations taken away: the two steady iterations its frames read, at the same times and peaks."""
    doc = pickle.loads(ADAM.read_bytes())
    doc.pop("external_annotations", None)
    framed = snapshot_report(tmp_path, doc, "framed")
    bare = snapshot_report(tmp_path, ms.as_recorded(doc, context=None), "bare")
    assert (bare.steps["source"], bare.steps["count"], bare.steps["confidence"]) == ("memory_iterations", 2, "low")
    assert [r.start_ms for r in bare.step_rows.rows()] == [r.start_ms for r in framed.step_rows.rows()]
    peaks = [row[1] for row in bare.gpus[0].memory["step_peaks"]]
    assert peaks == [row[1] for row in framed.gpus[0].memory["step_peaks"]] == [1_229_761_024] * 2  # in blocks (h37-units63)
    assert "repeat every 1,262 allocations" in bare.steps["note"]


# (passes under no_grad, an inference loop and a forward whose graph is dropped unused read as forward passes since
# h37-snap23: tests/memory/test_snapshot_stackless_passes.py)
@pytest.mark.parametrize("doc", [ms.windows_training().doc, ms.forward_only(passes=1).doc,
                                 ms.inference_loop(passes=1).doc],
                         ids=["one_step", "one_forward", "one_pass_of_identical_blocks"])
def test_no_iterations_where_the_pattern_holds_none(tmp_path: Path, doc: dict) -> None:
    rep = snapshot_report(tmp_path, ms.as_recorded(doc, context=None))
    assert rep.steps["source"] == "whole_capture", rep.steps
    note = next(f for f in rep.findings if f.title == "The memory snapshot records no stacks")
    assert "its iterations could not be read" in note.summary


@pytest.mark.parametrize("name", ["forward_no_grad_cs336", "forward_autograd_cs336", "windows_training_cs336"])
def test_the_real_snapshots_without_stacks_read_no_iterations(tmp_path: Path, name: str) -> None:
    doc = pickle.loads(gzip.decompress((WILD / f"{name}.pickle.gz").read_bytes()))
    rep = snapshot_report(tmp_path, ms.as_recorded(doc, context=None), name)
    assert rep.steps["source"] == "whole_capture", rep.steps


def test_an_annotated_stackless_history_is_cut_at_its_marks(tmp_path: Path) -> None:
    """The profiler's optimizer-step marks end the iterations; with stacks each opens with its forward's first
    allocation; without, the first with the forward its pattern shows, each later one at the mark before it (the
    step before's end: h37-stackless2), so the kept steps are the framed ones, each opened a little earlier."""
    doc = ms.ring_buffer_training(max_entries=None).doc
    framed = snapshot_report(tmp_path, doc, "framed")
    bare = snapshot_report(tmp_path, ms.as_recorded(doc, context=None), "bare")
    assert (bare.steps["source"], bare.steps["found"], bare.steps["count"]) == ("memory_iterations", 6, 4), bare.steps
    rows, framed_rows = bare.step_rows.rows(), framed.step_rows.rows()
    assert [round(r.start_ms + r.step_ms, 3) for r in rows] == [round(r.start_ms + r.step_ms, 3) for r in framed_rows]
    assert all(0 <= f.start_ms - b.start_ms < 0.05 for b, f in zip(rows, framed_rows))
    assert all(abs(b.start_ms - (a.start_ms + a.step_ms)) < 0.002 for a, b in zip(rows, rows[1:]))  # main: the forward
