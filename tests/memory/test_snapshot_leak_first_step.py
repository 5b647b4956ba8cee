"""A leak read off the optimizer's first step the history shows, and a block the loop's variable holds at the dump
left out of the leak (issue #37 class 5, h37-probe46k).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``leak`` truth):

* a fused optimizer (``optimizer_temp=False``: it allocates on its first step only) with gradients zeroed in place
  (``set_to_none=False``) and a ring buffer (``max_entries``) that cut the history inside the first iteration: the
  first step ends the first iteration, whose micro-batches are the rounds up to it in the history AND the ones the
  buffer dropped (the leak's blocks made before the history, live at the dump; the part of the first micro-batch
  whose backward made the gradients) -- base (b3e5562e) counted them from the history's first entries: 12 iterations
  of 16 MiB where 6 of 32 MiB ran, or, with 3 micro-batches, no leak at all;
* recorded without stacks, an evaluation's 512-byte losses kept by ``val_total += loss`` share a size (and the one
  line) with the training loss the loop's variable still holds at the dump: the last iteration's loss is made at
  another place in its iteration than the eval loss each iteration keeps -- base read 3 blocks (48 MiB) an
  iteration, 3,072 B short at the end.
"""

from __future__ import annotations

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks, report, written

MiB = 1 << 20

#: (micro-batches, entries the ring buffer cut from the start): inside the first micro-batch's forward, with the
#: leak's first block seen (20) or dropped (38: its backward seen); after the gradients were made (60, 100); the first
#: step is the 80th / 115th entry of the 2 / 3 micro-batch loop
CUTS = [(2, 20), (2, 38), (2, 60), (3, 20), (3, 60), (3, 100)]


def _cut(micro: int, cut: int) -> ms.Scenario:
    """6 iterations of ``micro`` micro-batches, each keeping its 16 MiB output, its first ``cut`` entries dropped."""
    kw = dict(micro_batches=micro, optimizer_temp=False, leak="list", set_to_none=False)
    full = len(ms.training_iterations(6, **kw).doc["device_traces"][0])
    return ms.training_iterations(6, max_entries=full - cut, **kw)


@pytest.mark.parametrize("micro,cut", CUTS)
def test_a_leak_cut_inside_its_first_iteration_reads_the_optimizer_steps(tmp_path, micro, cut):
    sc = _cut(micro, cut)
    truth = sc.truth["leak"]
    assert truth["bytes_per_iteration"] == micro * 16 * MiB and truth["bytes_at_end"] == 6 * micro * 16 * MiB
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["per_iteration_bytes"], d["blocks_per_iteration"]) == (6, micro * 16 * MiB, micro)
    assert d["leak_end_bytes"] == truth["bytes_at_end"] and f.saving_bytes == truth["bytes_at_peak"]


@pytest.mark.parametrize("micro", [2, 3])
def test_the_job_reads_the_whole_iterations_after_a_first_micro_batch_cut(tmp_path, micro):
    """The history holds the first backward's gradients being made: the job's iterations are the 5 whole ones after
    the first step (base: every micro-batch an iteration, 11 / 17)."""
    sc = _cut(micro, 20)
    assert sc.truth["iterations"] == 5 and sc.truth["cut_in"] == 0
    rep = report(written(tmp_path, sc))
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 5), rep.steps
    assert f"each of {micro} micro-batches" in rep.steps["note"], rep.steps["note"]


def test_a_stackless_eval_leak_leaves_out_the_loss_the_loop_still_holds(tmp_path):
    sc = ms.training_iterations(6, leak="graph")
    truth = sc.truth["leak"]
    assert (truth["blocks_per_iteration"], truth["bytes_per_iteration"]) == (4, 3 * 16 * MiB + 512)
    (f,) = leaks(report(written(tmp_path, ms.Scenario(ms.as_recorded(sc.doc, context=None), truth))))
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == (6, 4, 50_332_160)
    assert d["leak_end_bytes"] == truth["bytes_at_end"] == 301_992_960
    assert f.saving_bytes == truth["bytes_at_peak"] == 251_660_800


def test_control_a_stackless_list_leak_holding_its_loss(tmp_path):
    """The same-size kept blocks of each iteration stay one site's; the 512-byte loss held at the dump is none."""
    sc = ms.training_iterations(6, leak="list")
    (f,) = leaks(report(written(tmp_path, ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth))))
    d = f.metric.detail
    assert (d["iterations"], d["per_iteration_bytes"]) == (6, sc.truth["leak"]["bytes_per_iteration"])
    assert d["leak_end_bytes"] == sc.truth["leak"]["bytes_at_end"]


@pytest.mark.parametrize("cause", ["list", "grow"])
@pytest.mark.parametrize("micro", [2, 3])
def test_control_a_leak_that_begins_after_the_first_step(tmp_path, cause, micro):
    """``leak_from=2``: the job's iterations (its first step's cadence) say where each ends -- base read these
    right too."""
    sc = ms.training_iterations(6, micro_batches=micro, optimizer_temp=False, leak=cause, set_to_none=False,
                                leak_from=2)
    truth = sc.truth["leak"]
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["per_iteration_bytes"]) == (sc.truth["leak_iterations"], truth["bytes_last_iteration"])
    assert d["leak_end_bytes"] == truth["bytes_at_end"]


@pytest.mark.parametrize("schedule", [[2, 2, 3, 3, 3, 3], [3, 3, 3, 3, 3, 2], [2, 3, 2, 3, 2, 3], [1, 2, 2, 2, 2, 2]])
@pytest.mark.parametrize("kept", [False, True])
def test_a_leak_under_a_varied_accumulation_reads_the_optimizer_steps(tmp_path, schedule, kept):
    """``micro_schedule``: each iteration's own micro-batches, each keeping its 16 MiB output, an optimizer that
    allocates every step: one round a step, of as many blocks as its micro-batches -- base read no leak (its rounds
    kept different counts)."""
    sc = ms.training_iterations(6, micro_schedule=schedule, leak="list", set_to_none=not kept)
    truth = sc.truth["leak"]
    assert truth["bytes_at_end"] == sum(schedule) * 16 * MiB
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["per_iteration_bytes"], d["blocks_per_iteration"]) == (
        6, truth["bytes_last_iteration"], schedule[-1])
    assert d["leak_end_bytes"] == truth["bytes_at_end"] and f.saving_bytes == truth["bytes_at_peak"]

