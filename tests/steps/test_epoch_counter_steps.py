"""A per-epoch step counter that skips the evaluation's turns and starts over each epoch names one loop's steps, while
a layer index with a gap started over every step does not -- told by what each range holds (issue #37 class 2;
h37-probe46e *Left* 3).

By numbers alone the two are alike: ``train_step 0, 1, 2, 3, 6, 7, 8, 9`` then ``0, 1, ...`` the next epoch (the
counter shared with two evaluation batches after every 4th step, ``synthetic.nsysexport.write_interleaved_evaluation
(numbers="epoch")``) and ``layer 0, 1, 2, 4, 5, 6`` each forward rise with a skip and start over.  BASE kept each
``train_step k`` its own name (``steps.ranges._counts``: a restart with a skip was no count) and read ``train_step 0``
alone as the steps: 2 of 96.3 ms for 16 of 8.03.  A training step's range holds its backward and its update; a
layer's holds part of a forward (``ranges._counts_steps``, ``_holds_training_steps``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host


@pytest.mark.parametrize("form", [dict(train_steps=16), dict(train_steps=24)], ids=["two_epochs", "three_epochs"])
def test_a_per_epoch_counter_with_gaps_names_the_steps(tmp_path: Path, form: dict) -> None:
    """BASE: ``train_step 0`` alone, 2 (3) steps of 96.3 ms; now every training step, 8.027 ms, the evaluations apart."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, numbers="epoch", **form)
    host = first_host(path)
    st = host["steps"]
    assert (st["source"], st["found"], st["count"]) == ("nvtx_range", truth.train_steps, truth.train_steps - 2), st
    assert "`train_step 0` … `train_step 9`" in st["note"]
    evaluations = truth.train_steps // 4 - 1  # the last step's evaluation: the capture's tail, no step after it
    assert f"{2 * evaluations} evaluation ranges (`eval_step`" in st["note"], st["note"]
    assert all(r["step_ms"] == pytest.approx(truth.step_ms, abs=0.002) for r in host["step_rows"]), host["step_rows"]


def test_two_ranks_read_a_per_epoch_counter_as_one_counting_training_steps(tmp_path: Path) -> None:
    """Two ranks: the counter's form changes nothing -- the steps read as where the counter counts training steps
    alone (BASE: 2 steps of ``train_step 0``)."""
    got = []
    for numbers in ("epoch", "train"):
        path = str(tmp_path / f"{numbers}.sqlite")
        nx.write_interleaved_evaluation(path, numbers=numbers, train_steps=16, ranks=2)
        st = first_host(path)["steps"]
        got.append((st["source"], st["found"], st["count"], [d["step"] for d in st["dropped"]]))
    assert got[0] == got[1] and got[0][1] == 16, got


def test_a_layer_index_with_a_gap_stays_apart(tmp_path: Path) -> None:
    """Control: ``layer 0, 1, 2, 4, 5, 6`` ranges over each step's forward, then ``backward`` and ``optimizer_step``,
    no step range: no layer range holds a backward and an update, so the layers are no steps (by numbers alone they
    folded into 72 "micro-steps of gradient accumulation"); ``layer 0`` repeats once a step."""
    path = str(tmp_path / "layers.sqlite")
    truth = nx.write(path, nx.NsysJob(steps=12, ops=20, autograd_nvtx=False, step_range=None, shuffle=False,
                                      extra_ranges=("layer 0", "layer 1", "layer 2", "layer 4", "layer 5", "layer 6",
                                                    "backward", "optimizer_step"),
                                      range_starts=(1, 2, 3, 4, 5, 7, 17)))
    host = first_host(path)
    st = host["steps"]
    assert (st["source"], st["found"], st["count"]) == ("nvtx_top_range", 12, 10), st
    assert "`layer 0`, the most repeated top-level range (12 on 1 thread)" in st["note"]
    assert "micro-step" not in st["note"]
    assert all(r["step_ms"] == pytest.approx(truth.step_ms, abs=0.002) for r in host["step_rows"])
