"""A snapshot recorded without stacks reads its first iteration too, and a history of two (h37-snap23).

``job.iterations.pattern_phases`` read a stackless history's iterations from the sizes it allocates repeating in one
order.  The first iteration makes state once -- Adam's moments on its first step, a library's workspace -- and those
allocations, inserted into its sequence, kept it from repeating the later ones': it was read with the set-up ("no
step") where frames read it as warm-up, and a history of only two iterations (the H200 OOM snapshot: the second
iteration, then the forward that ran out of memory) held no two repeats and read none.  State made once is held from
then on, never freed in the history: with the blocks never freed set aside the first iteration repeats the others
(``job.iterations._repeating``).  And the backward's walk back is read as the longest nest of frees with allocations
made between them: a longer chain freed at once (the gradients ``zero_grad()`` frees in the layers' order, made in
reverse) is set aside (``_turn``).

Real histories: the kept H200 OOM snapshot and ``wild/snapshot_adam_iterations``, their stacks taken away
(``as_recorded(context=None)``), read what their frames read.  Controls (the other stackless tests): passes under
``no_grad``, a forward whose graph is dropped, one step and the CS336 snapshots read none.
"""

from __future__ import annotations

import pickle
from pathlib import Path

from synthetic import memsnapshot as ms
from tests.support.paths import FIXTURES
from tests.support.snapshot_report import report as snapshot_report

OOM = FIXTURES / "h200_memory" / "torch_oom_snapshot" / "oom_snapshot.pickle"
ADAM = FIXTURES / "wild" / "snapshot_adam_iterations" / "forward_and_backward_memory_snapshot_200.pickle"


def _unannotated(path: Path) -> dict:
    """The snapshot at ``path`` without its profiler annotations: the allocations alone must say the iterations."""
    doc = pickle.loads(path.read_bytes())
    doc.pop("external_annotations", None)
    return doc


def test_a_stackless_history_of_two_iterations_reads_both(tmp_path: Path) -> None:
    """The H200 OOM snapshot (8 x Linear(4096), Adam; 2 iterations at batch 2048, the first making Adam's 32 state
    blocks, then a batch-32768 forward that ran out of memory): its frames read 2 iterations; without stacks, the
    same 2 at the same times and peaks (main: the whole capture, no step)."""
    doc = _unannotated(OOM)
    framed = snapshot_report(tmp_path, doc, "framed")
    bare = snapshot_report(tmp_path, ms.as_recorded(doc, context=None), "bare")
    assert (framed.steps["source"], framed.steps["count"]) == ("memory_iterations", 2)
    assert (bare.steps["source"], bare.steps["count"], bare.steps["confidence"]) == ("memory_iterations", 2, "low")
    assert [r.start_ms for r in bare.step_rows.rows()] == [r.start_ms for r in framed.step_rows.rows()]
    peaks = [row[1] for row in bare.gpus[0].memory["step_peaks"]]
    assert peaks == [row[1] for row in framed.gpus[0].memory["step_peaks"]]
    assert "blocks never freed set aside" in bare.steps["note"]


def test_a_stackless_annotated_history_of_two_iterations_is_cut_at_its_marks(tmp_path: Path) -> None:
    """The same snapshot with its ``Optimizer.step`` annotations: each mark closes one of the two turns its frames
    read, and each turn opens with its first allocation -- the input's copy (``capture_mem.py:125``), before the
    forward's first its frames name -- the second the first after the first's mark, the first the same site's before
    its forward, so framed and stackless read the same turns (h37-snapturn; h37-survey56 opened the second at the
    first's mark and the framed first at its forward, 0.54 ms after the input's copy; h37-stackless2 opened the
    framed second at its forward; main before h37-snap23: the whole capture)."""
    doc = pickle.loads(OOM.read_bytes())
    framed = snapshot_report(tmp_path, doc, "framed")
    bare = snapshot_report(tmp_path, ms.as_recorded(doc, context=None), "bare")
    assert (bare.steps["source"], bare.steps["count"]) == ("memory_iterations", 2)
    rows, framed_rows = bare.step_rows.rows(), framed.step_rows.rows()
    assert [r.start_ms for r in rows] == [r.start_ms for r in framed_rows]
    assert [r.step_ms for r in rows] == [r.step_ms for r in framed_rows]
    assert abs(rows[1].start_ms - (rows[0].start_ms + rows[0].step_ms)) < 0.002  # the turns tile
    ends = [a["time_us"] for a in doc["external_annotations"] if a["stage"] == "END"
            and a["name"].startswith("Optimizer.step")]
    t0 = doc["device_traces"][0][0]["time_us"]
    assert 0 < rows[1].start_ms - (ends[0] - t0) / 1000 < 1  # the input's copy after the first step's end
    assert "from its first allocation to the next turn's" in bare.steps["note"]


def test_a_stackless_first_iteration_is_read_as_warm_up(tmp_path: Path) -> None:
    """``snapshot_adam_iterations`` (MIT, real; 3 iterations, the first making 2 blocks no later one makes): its frames
    read 3 and drop the first as warm-up; without stacks the same (main: 2, the first read with the set-up)."""
    doc = _unannotated(ADAM)
    framed = snapshot_report(tmp_path, doc, "framed")
    bare = snapshot_report(tmp_path, ms.as_recorded(doc, context=None), "bare")
    assert (bare.steps["found"], bare.steps["count"]) == (framed.steps["found"], framed.steps["count"]) == (3, 2)
    assert [d["step"] for d in bare.steps["dropped"]] == [d["step"] for d in framed.steps["dropped"]] == [0]
    assert "warm-up" in bare.steps["dropped"][0]["reason"]
    assert [r.start_ms for r in bare.step_rows.rows()] == [r.start_ms for r in framed.step_rows.rows()]


def test_a_real_annotated_loop_without_stacks_tiles_its_marks(tmp_path: Path) -> None:
    """``snapshot_adam_iterations`` with its ``Optimizer.step`` marks, stacks taken away (h37-stackless2): the two kept
    turns open with their first allocations after the marks before them (900.03 / 959.92 ms, 0.28 / 0.32 ms after the
    first and second steps' ends), each running to the next's, framed or not (h37-snapturn; h37-survey56 opened
    them at the marks)."""
    doc = pickle.loads(ADAM.read_bytes())
    framed = snapshot_report(tmp_path, doc, "framed").step_rows.rows()
    rows = snapshot_report(tmp_path, ms.as_recorded(doc, context=None), "bare").step_rows.rows()
    assert len(rows) == len(framed) == 2
    assert [round(r.start_ms + r.step_ms, 2) for r in rows] == [round(r.start_ms + r.step_ms, 2) for r in framed]
    assert abs(rows[1].start_ms - (rows[0].start_ms + rows[0].step_ms)) < 0.002
    assert [f.start_ms for f in framed] == [b.start_ms for b in rows]
