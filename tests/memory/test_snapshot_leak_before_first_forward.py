"""A leak whose block each iteration makes before its forward, in a history that begins at the loop (h37-wild54m).

Real case (read locally, not kept: no licence): codeasier/MemSnapDump's test snapshots, an Ascend NPU (``torch_npu``)
run of ``memory_leaks_demo.py`` -- a torchvision ResNet trained 3 iterations with Adam, the recording begun after
the model was built.  ``train_one_step``'s line 11 makes a 40-MiB tensor at the top of every iteration and a list
keeps it: 120 MiB never freed.  The reader booked the first iteration's block a weight ("made before the history's
first forward and never freed": ``formats.snapshot.reader._held_by_lifetime``), so the leak check saw 2 rounds of its
3 and the report said "No memory check fired".  A weight is made once; a line that makes the same bytes again in
every later iteration, each kept, is the loop's -- its first block is the leak's first round.

By construction (``synthetic.memsnapshot.training_iterations(leak="input")``: each iteration's top makes a 16-MiB
tensor at ``train.py:40`` that a list keeps; ``recorded_from_loop``: the weights made before the recording).
Named controls (pass on base too): the same loop without the leak (no leak), a leak of the forward's output."""

from __future__ import annotations

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import assert_leak_is_truth, leaks, report, written


@pytest.mark.parametrize("iterations", [3, 5])
@pytest.mark.parametrize("from_loop", [True, False])
def test_a_leak_made_before_each_forward_counts_its_first_iteration(tmp_path, iterations, from_loop):
    sc = ms.training_iterations(iterations=iterations, leak="input", recorded_from_loop=from_loop)
    (f,) = leaks(report(written(tmp_path, sc)))
    assert_leak_is_truth(f, sc.truth["leak"], iterations)


def test_a_leak_made_before_each_forward_read_from_python_frames(tmp_path):
    sc = ms.training_iterations(iterations=3, leak="input", recorded_from_loop=True)
    doc = ms.as_recorded(sc.doc, stacks="python")
    (f,) = leaks(report(written(tmp_path, ms.Scenario(doc, sc.truth))))
    assert_leak_is_truth(f, sc.truth["leak"], 3)


def test_the_peak_holds_the_weights_the_moments_and_every_kept_block(tmp_path):
    """The weights loaded in the history (``model.cuda()``, before the loop) are made once and stay held, with Adam's
    moments and each iteration's kept block (base: the last two read as neither, 32 MiB short)."""
    sc = ms.training_iterations(iterations=3, leak="input")
    g = report(written(tmp_path, sc)).gpus[0].memory
    assert g["breakdown"]["held"] == sc.truth["held"] + sc.truth["leak"]["bytes_at_peak"]


def test_control_the_same_loop_without_its_leak_reads_none(tmp_path):
    assert not leaks(report(written(tmp_path, ms.training_iterations(iterations=3, recorded_from_loop=True))))


def test_control_a_kept_output_from_the_loop_start_reads_as_before(tmp_path):
    sc = ms.training_iterations(iterations=4, leak="list", recorded_from_loop=True)
    (f,) = leaks(report(written(tmp_path, sc)))
    assert_leak_is_truth(f, sc.truth["leak"], 4)
