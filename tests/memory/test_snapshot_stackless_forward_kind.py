"""A stackless history's kind from its allocation pattern where one forward pass shows it (issue #37 class 5,
h37-stackless2; h37-castcache's left (c)).

Without frames one pass repeats nothing (``job.kind._repeated_passes``), so CS336's three bf16 forwards under
``no_grad`` and autocast (``wild/snapshot_autocast_cache_ctx*``), stripped of stacks, read "the kind is not read"
where their frames read inference.  A training step leaves marks in the allocations: its backward makes gradients
while it frees the forward's saved blocks, and its gradients and optimizer state are live at the dump.  A forward
whose stack of blocks (its graph, or an autocast region's cache) is freed at once with nothing made between, in a
history holding under a tenth of what it made at the dump, left neither: inference (low).  Where the peak held few
blocks (a pass under ``no_grad``; a small model's backward frees as few), or the history holds what it made (a forward
kept for its backward, a server's cache, a model's set-up), the kind stays unread and says why.

Controls: the real stackless training forward (``forward_autograd_cs336``, 58% held), the small attention backward
(``snapshot_attention_bwd``: 36 allocations), the no-grad GPT-2 forward, the Windows training step (training by its
backward), and generated forms with truth by construction."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.paths import FIXTURES
from tests.support.snapshot_report import report

WILD = FIXTURES / "wild"
CS336 = FIXTURES / "snapshots_wild"


def _doc(path: Path) -> dict:
    data = path.read_bytes()
    return pickle.loads(gzip.decompress(data) if path.suffix == ".gz" else data)


def _bare(path: Path) -> dict:
    return ms.as_recorded(_doc(path), context=None)


@pytest.mark.parametrize("ctx", [128, 256, 512])
def test_a_cs336_forward_without_stacks_is_inference_with_its_cache(tmp_path: Path, ctx: int) -> None:
    """One forward under ``no_grad`` and autocast: 229-233 blocks held at its peak (the weights' copies and a layer's
    tensors) freed with 0 / 10 / 34 made between, nothing it made held at the dump: inference (low), and the cast
    cache's info finding its frames give (inference only) -- main: unknown, no cache finding."""
    doc = _doc(next((WILD / f"snapshot_autocast_cache_ctx{ctx}").glob("*.pickle.gz")))
    framed = report(tmp_path, doc, "framed")
    rep = report(tmp_path, ms.as_recorded(doc, context=None), "bare")
    assert (rep.job["kind"], rep.job["kind_confidence"]) == ("inference", "low"), rep.job
    assert "no backward" in rep.job["kind_evidence"] and "and 0% of the bytes" in rep.job["kind_evidence"]
    ids = {f.metric.id for f in rep.findings if f.metric is not None and f.rule == "activation_memory"}
    assert ids == {f.metric.id for f in framed.findings if f.metric is not None and f.rule == "activation_memory"} \
        == {"cast_cache_share"}


@pytest.mark.parametrize("path, why", [
    (CS336 / "forward_autograd_cs336.pickle.gz", "58% of the bytes it made at the dump"),  # a training forward
    (WILD / "snapshot_attention_bwd" / "mem_snapshot.pickle", "fewer than 16"),  # a small backward
    # (a no-grad pass, forward_no_grad_cs336, reads forward passes since session 71: 1,280 blocks made from the level
    # it ends at, never more than 13 held at once, none at the dump -- tests/job/test_snapshot_freed_as_it_went71.py)
])
def test_stackless_histories_the_pattern_cannot_tell_stay_unread_and_say_why(tmp_path: Path, path: Path,
                                                                              why: str) -> None:
    """Controls (the kind on both; the reason new): a forward kept for its backward and a 36-allocation attention
    backward each leave no mark a training step must leave or a forward must: unknown."""
    if not path.is_file():
        pytest.skip("fixture missing")
    rep = report(tmp_path, _bare(path), "bare")
    assert rep.job["kind"] == "unknown" and why in rep.job["kind_evidence"], rep.job


@pytest.mark.parametrize("scenario, kind", [
    (lambda: ms.forward_only(grad=True, passes=1), "inference"),  # the graph dropped unused: 96 blocks, none made
    (lambda: ms.forward_only(grad=True, passes=1, dump_before_drop=True), "unknown"),  # held at the dump
    (lambda: ms.windows_autocast_forward(passes=1), "inference"),  # a region's 24 copies freed at its exit
    (lambda: ms.forward_only(grad=False, passes=1), "unknown"),  # a few blocks at a peak
    (lambda: ms.windows_training(python_backward=False), "training"),  # the backward's walk back
])
def test_one_generated_pass_without_stacks(tmp_path: Path, scenario, kind: str) -> None:
    """Truth by construction: one pass whose kept stack is dropped with nothing made between, and nothing held at
    the dump, is forward work; one dumped before its backward, or holding a few blocks, is not read; a backward's
    walk back is training as before."""
    rep = report(tmp_path, ms.as_recorded(scenario().doc, context=None), "bare")
    assert rep.job["kind"] == kind, rep.job
