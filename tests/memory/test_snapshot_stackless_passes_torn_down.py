"""A stackless loop of forward passes torn down before its dump still reads its passes (h37-wild57m *Left* 4).

By construction (``synthetic.memsnapshot.forward_only`` recorded with ``context=None``, then ``torn_down``: the
script frees its weights after the loop): the truth's passes, each freeing all it made, with only the weights live
between them.  Base read no pass and kind "unknown": the teardown's frees lowered the history's floor below the
weights every pass returns to.  What the pattern proves is said at its confidence: inference, low, the passes read
"from the allocation pattern".  Control (real, ``snapshots_wild/forward_no_grad_cs336``: one forward under
``inference_mode`` whose layers rebind ``x`` and whose input is freed at its end -- session 55's withdrawn cut read
its layers as 23 passes): read before its teardown its layers still hand each other a block one made, so no pass is
read, torn down or not."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import report, written

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "snapshots_wild"


@pytest.mark.parametrize("grad", [True, False])
def test_a_stackless_forward_loop_torn_down_reads_its_passes(tmp_path, grad):
    sc = ms.forward_only(grad=grad, passes=3)
    doc = ms.torn_down(ms.as_recorded(sc.doc, context=None))
    rep = report(written(tmp_path, ms.Scenario(doc, sc.truth)))
    assert rep.job["kind"] == sc.truth["kind"] == "inference"
    assert rep.job["kind_confidence"] == "low"
    assert rep.steps["source"] == "memory_iterations"
    assert rep.steps["count"] == len(sc.truth["starts_us"]) == 3


def test_a_stackless_forward_loop_torn_down_reads_as_untorn(tmp_path):
    sc = ms.forward_only(grad=True)
    bare = ms.as_recorded(sc.doc, context=None)
    untorn = report(written(tmp_path, ms.Scenario(bare, sc.truth), "a.pickle"))
    torn = report(written(tmp_path, ms.Scenario(ms.torn_down(bare), sc.truth), "b.pickle"))
    assert (torn.job["kind"], torn.steps["count"]) == (untorn.job["kind"], untorn.steps["count"]) == ("inference", 2)
    assert {f.rule for f in torn.findings} == {f.rule for f in untorn.findings}


@pytest.mark.parametrize("torn", [False, True])
def test_control_one_forwards_layers_are_no_passes(tmp_path, torn):
    doc = ms.as_recorded(pickle.load(gzip.open(FIXTURES / "forward_no_grad_cs336.pickle.gz")), context=None)
    rep = report(written(tmp_path, ms.Scenario(ms.torn_down(doc) if torn else doc, {})))
    assert rep.steps["count"] == 0
    # one pass, no step: its kind read from its freeing as it went (session 71 snap71: "unknown" before)
    assert rep.job["kind"] == "inference" and "as it went" in rep.job["kind_evidence"]
