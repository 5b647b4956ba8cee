"""A stackless backward whose nodes each free several saved tensors at once reads its walk back (issue #37 class 5;
session 54's metamorphic checks, *Left* 1).

A backward walks its graph back last-in first-out, but each node frees all the tensors it saved in one release, in
the order it saved them -- a matmul's two inputs, an attention's query and key -- so of each such pair only one joins
a chain of nested lifetimes (``job.iterations._nest``).  ``wild/snapshot_transformer_from_start`` (nn.Transformer,
2+2 layers, 5 Adam steps; its frames read 4 kept iterations) rewritten as ``_record_memory_history(context=None)``
writes it: each repeat's walk back held 56 of the 88 blocks live at its start in its longest chain (64%, under
``_FALL_LIFO``'s 80%), so no repeat read a backward and the history read no iteration, only "the whole capture".
``job.iterations._walked_back`` counts a block freed in one release with a chain's block as walked back, where
the walk makes a block before each of its chain's frees but the first (each node's gradients).

Generator: ``synthetic.memsnapshot.training_iterations(saved=(1, 2))``, every other layer's node saving two tensors
and freeing them in the order it saved them (truth by construction: the iterations' starts and peaks).  Control: a
real GPT-2 medium's inference passes without stacks, their blocks dropped in bursts at each pass's end, claim no
kind (``test_snapshot_no_stacks``)."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.paths import FIXTURES
from tests.support.snapshot_report import report as snapshot_report

TRANSFORMER = FIXTURES / "wild" / "snapshot_transformer_from_start" / "visual_mem_2025_12_26_14_31_10.pickle.gz"


def _doc(path: Path, annotated: bool) -> dict:
    """The snapshot at ``path``, with or without its profiler annotations (without: the allocations alone must say
    the iterations)."""
    with gzip.open(path, "rb") as f:
        doc = pickle.load(f)
    if not annotated:
        doc.pop("external_annotations", None)
    return doc


@pytest.mark.parametrize("annotated", [False, True])
def test_a_real_transformer_without_stacks_reads_the_iterations_its_frames_read(tmp_path: Path,
                                                                                 annotated: bool) -> None:
    """Without stacks the transformer's loop reads the same kept iterations as with them, at the same starts and
    peaks (main: the whole capture)."""
    doc = _doc(TRANSFORMER, annotated)
    framed = snapshot_report(tmp_path, doc, "framed")
    bare = snapshot_report(tmp_path, ms.as_recorded(doc, context=None), "bare")
    assert (framed.steps["source"], framed.steps["count"]) == ("memory_iterations", 4)
    assert (bare.steps["source"], bare.steps["count"]) == ("memory_iterations", 4)
    assert [r.start_ms for r in bare.step_rows.rows()] == [r.start_ms for r in framed.step_rows.rows()]
    peaks = [row[1] for row in bare.gpus[0].memory["step_peaks"]]
    assert peaks == [row[1] for row in framed.gpus[0].memory["step_peaks"]]
    assert bare.job["kind"] == "training"


@pytest.mark.parametrize("saved", [(1, 2), (1, 3), (2, 1, 1)])
def test_generated_nodes_that_free_their_saved_tensors_together_read_every_iteration(tmp_path: Path,
                                                                                     saved: tuple[int, ...]) -> None:
    """Each layer's node frees the tensors it saved (``saved``, cycled over the layers) in the order it saved them:
    the iterations read are the loop's, at their truth's starts (main: none)."""
    sc = ms.training_iterations(4, layers=6, params=6, mib=8, saved=saved)
    rep = snapshot_report(tmp_path, ms.as_recorded(sc.doc, context=None), "bare")
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", sc.truth["iterations"])
    t0 = sc.doc["device_traces"][0][0]["time_us"]
    starts = [round((s - t0) / 1000, 3) for s in sc.truth["starts_us"]]
    got = [row.start_ms for row in rep.step_rows.rows()]
    assert got == starts[-len(got):]


@pytest.mark.parametrize("saved", [(1,), (2,)])
def test_control_one_or_two_saved_tensors_per_node_read_as_before(tmp_path: Path, saved: tuple[int, ...]) -> None:
    """Loops whose nodes each save one tensor, or two each (a strict last-in first-out walk, or its longest chain
    of one per node alone) read their iterations before."""
    sc = ms.training_iterations(4, layers=6, params=6, mib=8, saved=saved)
    rep = snapshot_report(tmp_path, ms.as_recorded(sc.doc, context=None), "bare")
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", sc.truth["iterations"])
