"""A training loop's evaluation counted by its step counter, or held inside its step range (issue #37 class 2,
h37-probe45e; h37-probe45n's *Left* 1 and 2).

``synthetic.nsysexport.write_interleaved_evaluation``: 8 training steps of ~8.03 ms (a copy, 20 GEMMs under the
user's ``forward`` / ``backward`` / ``optimizer_step``, a sync) in ``train_step {k}`` ranges, two ``eval_step``
forwards after every 4th.

1. ``numbers="global"``: one counter shared with the evaluation's batches (``train_step 3``, then ``train_step 6``);
   ``"samples"``: that counter in samples of 128.  The numbers rise by one stride with gaps where the evaluation ran,
   which ``steps.ranges._counts`` (one constant stride) refused: each name its own, **one step of 8.03 ms** read
   (850d3394).  Now a counter whose rises are multiples of its least, recurring, most common rise folds
   (``ranges._rises_by_a_counter``): 8 steps.
2. ``inside=True``: the step before each evaluation wraps it in its own range (``train_step`` around ``evaluate()``):
   step 3 ran 24.1 ms, and the steady steps read **10.7 ms** (850d3394).  h37-probe45e dropped such a step
   (``steps.drop._drop_evaluating``); since h37-probe46e it ends where its evaluation opens (``steps.apart._mark_cuts``):
   8.03 ms, kept.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.steps.ranges import _counts
from tests.support.cli_report import first_host


def _step_ms(host: dict) -> float:
    return next(m for m in host["headline"] if m["id"] == "device_step_share")["detail"]["avg_step_ms"]


@pytest.mark.parametrize("form", [dict(numbers="global"), dict(numbers="samples"), dict(numbers="global", ranks=2),
                                  dict(numbers="global", around="validation"),
                                  dict(numbers="global", every=2, batches=4)],
                         ids=["global", "samples", "two_ranks", "validation", "every_2"])
def test_step_numbers_that_skip_the_evaluation_still_mark_every_step(tmp_path, form) -> None:  # noqa: ANN001
    """8 steps of ~8.03 ms, named from the first to the last number the loop wrote (850d3394: 1 step, `train_step 0`
    or `train_step 128` alone); the evaluation between them is still left out."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, **form)
    host = first_host(path)
    st = host["steps"]
    assert st["source"] == "nvtx_range", st["note"]
    assert st["found"] == truth.train_steps, st["note"]
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)
    every, batches = form.get("every", 4), form.get("batches", 2)
    loop = [k for k in range(truth.train_steps + truth.train_steps // every * batches) if k % (every + batches) < every]
    first, last = (loop[0], loop[-1]) if form["numbers"] == "global" else (128 * (loop[0] + 1), 128 * (loop[-1] + 1))
    assert f"`train_step {first}` … `train_step {last}`" in st["note"], st["note"]
    assert "evaluation range" in st["note"], st["note"]


def test_a_layer_counter_inside_the_steps_is_not_the_steps(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """The step ranges count with gaps (a shared counter) and each ``forward`` holds ``layer 0`` .. ``layer 2`` (its
    thirds, in training and evaluation alike): the layers' number starts over in every pass -- a counter inside the
    step, not the steps.  8 steps of the ``train_step`` ranges, the evaluation left out."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, numbers="global")
    con = sqlite3.connect(path)
    rows = con.execute("SELECT start, end, globalTid FROM NVTX_EVENTS WHERE text = 'forward'").fetchall()
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    [(a + (b - a) * i // 3, a + (b - a) * (i + 1) // 3 - 1, f"layer {i}", g)
                     for a, b, g in rows for i in range(3)])
    con.commit()
    con.close()
    host = first_host(path)
    assert host["steps"]["found"] == truth.train_steps, host["steps"]["note"]
    assert "`train_step 0` … `train_step 9`" in host["steps"]["note"]
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)


def _ranges(nums: list[int], name: str = "step {}") -> tuple[object, np.ndarray]:
    """Ranges named ``name`` with each number of ``nums``, one after another on one thread."""
    from types import SimpleNamespace

    names = [name.format(n) for n in nums]
    table = sorted(set(names))
    h = SimpleNamespace(names=table, name=np.array([table.index(n) for n in names], np.int64),
                        line=np.zeros(len(names), np.int64), start=np.arange(len(names), dtype=np.int64) * 10)
    h.end = h.start + 5  # each range's span: what it holds is read where its numbers start over (none here)
    return h, np.arange(len(names), dtype=np.int64)


@pytest.mark.parametrize("nums", [
    [0, 1, 2, 3, 6, 7, 8, 9, 12, 13],  # a global step shared with two evaluation batches every 4 steps
    [128 * k for k in (1, 2, 3, 4, 7, 8, 9, 10)],  # the same counter in samples
    [0, 1, 6, 7, 12, 13, 18, 19],  # 2 steps, 4 batches: the least rise as common as the skip
    [10 * k for k in (0, 1, 2, 4, 5, 6, 7)],  # every 10th turn logged, one log lost
])
def test_a_counter_with_gaps_counts(nums) -> None:  # noqa: ANN001 - pytest's
    h, idx = _ranges(nums)
    assert _counts(h, idx)


@pytest.mark.parametrize("nums", [
    [32, 64, 128, 256, 512],  # a sweep's sizes: each rise new
    [1024, 2048, 4096, 8192] * 2,  # swept again
    [0, 1, 2, 4, 5, 6] * 3,  # a layer index with a gap, starting over each step: holds no backward and update
    [0, 4, 8, 9, 13, 17],  # the least rise neither recurs nor is the most common
])
def test_rises_that_are_no_counter_do_not(nums) -> None:  # noqa: ANN001 - pytest's
    h, idx = _ranges(nums, "batch {}")
    assert not _counts(h, idx)


@pytest.mark.parametrize("form", [dict(), dict(numbers="global"), dict(numbers="global", ranks=2)],
                         ids=["train", "global", "two_ranks"])
def test_a_step_holding_the_evaluation_keeps_its_training(tmp_path, form) -> None:  # noqa: ANN001 - pytest's
    """``train_step 3`` holds both ``eval_step`` forwards at its tail (24.1 ms): it ends where they open, 8.03 ms of
    training kept (h37-probe46e, ``steps.apart._mark_cuts``; h37-probe45e dropped it whole), with the evaluation's
    time in the note (each rank's own); the steady steps keep ~8.03 ms (850d3394: 10.7 ms)."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, inside=True, **form)
    host = first_host(path)
    st = host["steps"]
    assert st["found"] == truth.train_steps, st["note"]
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)
    assert not [d for d in st["dropped"] if d["reason"].startswith("evaluating:")]
    assert {r["step"]: r["step_ms"] for r in host["step_rows"]}[3] == pytest.approx(truth.step_ms, rel=0.01)
    assert "2 steps hold an evaluation (`eval_step`) at the end of their own range" in st["note"]
    assert "left out of the steps: the program names them" not in st["note"]  # nothing between the marks


def test_an_evaluation_inside_every_step_is_the_evaluations_time(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Every training step wraps one evaluation batch at its tail: each step its training, ~8.03 ms (850d3394 to
    b3e5562e: 16.05 ms, the evaluation averaged in as a phase); nothing dropped for it
    (``tests/steps/test_evaluation_held_apart.py`` reads the forms)."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, every=1, batches=1, inside=True)
    host = first_host(path)
    assert not [d for d in host["steps"]["dropped"] if d["reason"].startswith("evaluating:")]
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)
