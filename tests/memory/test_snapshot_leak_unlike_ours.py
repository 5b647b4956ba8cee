"""Leaks in snapshots unlike the training loops the leak check was built on (issue #37 class 5, h37-probe43k).

By construction (``synthetic.memsnapshot``; each writer's docstring states its truth):

* a forward-only loop that keeps each pass's result on the GPU (``inference_loop(leak_mib=)``: ``preds.append``
  under ``no_grad``, no backward or optimizer step anywhere) -- main (f51bfaaf) read no leak: its rounds needed a
  backward or an optimizer step between them.  Here a new pass starts where an allocation outside every module's
  forward (the script's next input) runs between two kept blocks; the finding says "pass", and the fix is moving
  results off the GPU (no ``.item()`` of a loss the loop does not have).
* a leaking training loop whose history a full ring buffer cut (``training_iterations(max_entries=, leak=)``): main
  counted the iterations and bytes the kept events show (5 iterations, 80 MiB of a 128 MiB, 8-iteration leak); the
  earlier iterations' blocks are live at the dump, made at the leak's line with its bytes, and are counted here.
* severity: a leak grows without bound, so its share of the peak when the history ends (main: warning from 10%)
  says how long the recording was; here ``memory.leak.warn_passes`` (its own threshold): a warning where it adds
  the peak again within that many passes.
* beside ``memory_near_capacity`` on the same GPU the leak's saving is among that finding's bytes: said.

Controls: a forward-only loop without a leak, forwards whose layers each keep their graph's share (one pass, under
autograd; dumped before the graph is dropped), a no-grad forward loop, a history begun late without a leak."""

from __future__ import annotations

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.common.thresholds import THRESHOLDS
from tests.support.snapshot_reports import assert_leak_is_truth, leaks as _leaks, report as _report, written as _written




@pytest.mark.parametrize("passes,mib", [(4, 16), (6, 16), (8, 64)])
def test_a_forward_only_loop_that_keeps_its_results_leaks(tmp_path, passes, mib):
    sc = ms.inference_loop(passes=passes, leak_mib=mib)
    truth = sc.truth["leak"]
    (f,) = _leaks(_report(_written(tmp_path, sc)))
    assert_leak_is_truth(f, truth, passes)
    assert "every pass" in f.summary and "training loop" not in f.summary


def test_a_forward_only_leak_is_told_to_move_its_results_off_the_gpu(tmp_path):
    (f,) = _leaks(_report(_written(tmp_path, ms.inference_loop(passes=5, leak_mib=16))))
    texts = " ".join(a.text + "\n" + (a.snippet or "") for a in f.actions)
    assert ".cpu()" in texts and "preds.append" in texts
    assert "loss.item()" not in texts  # a forward-only loop has no loss to read


@pytest.mark.parametrize("cause,iterations,max_entries", [("list", 8, 200), ("list", 10, 150), ("graph", 8, 200), ("graph", 8, 250)])
def test_a_leak_cut_by_the_ring_buffer_counts_its_earlier_iterations(tmp_path, cause, iterations, max_entries):
    sc = ms.training_iterations(iterations=iterations, max_entries=max_entries, leak=cause)
    truth = sc.truth["leak"]
    assert sc.truth["cut_in"] is not None or sc.truth["iterations"] < iterations  # the history is cut, by construction
    (f,) = _leaks(_report(_written(tmp_path, sc)))
    d = f.metric.detail
    assert d["iterations"] == iterations
    assert d["leak_end_bytes"] == truth["bytes_at_end"]
    assert f.saving_bytes == truth["bytes_at_peak"]
    assert d["iterations_before_history"] > 0 and "before the history's first event" in f.summary


def test_a_leak_that_adds_the_peak_again_soon_is_a_warning(tmp_path):
    sc = ms.inference_loop(passes=6, leak_mib=16)
    (f,) = _leaks(_report(_written(tmp_path, sc)))
    peak = max(sc.truth["peaks"])
    assert sc.truth["leak"]["bytes_at_end"] < 0.10 * peak  # under the share main's severity asked
    assert peak / sc.truth["leak"]["bytes_per_iteration"] <= THRESHOLDS["memory.leak.warn_passes"].value
    assert f.severity == "warning"
    assert f.metric.detail["threshold_name"] == "memory.leak.warn_passes"


def test_a_leak_beside_a_peak_near_capacity_says_the_savings_overlap(tmp_path):
    sc = ms.training_iterations(iterations=6, leak="list")
    path = _written(tmp_path, sc)
    reserved = sum(s["total_size"] for s in sc.doc["segments"])
    ms.write_capacity(str(path), total=int(reserved / 0.95), free=int(reserved / 0.95) - reserved)
    rep = _report(path)
    assert any(f.rule == "memory_near_capacity" for f in rep.findings)
    (f,) = _leaks(rep)
    assert "overlap" in f.summary


def test_control_no_overlap_words_far_from_capacity(tmp_path):
    sc = ms.training_iterations(iterations=6, leak="list")
    path = _written(tmp_path, sc)
    ms.write_capacity(str(path), total=80 * ms.GiB, free=70 * ms.GiB)
    (f,) = _leaks(_report(path))
    assert "overlap" not in f.summary


@pytest.mark.parametrize("make", [
    lambda: ms.inference_loop(passes=6), lambda: ms.inference_loop(passes=6, kv_mib=64),
    lambda: ms.forward_only(), lambda: ms.forward_only(passes=1, dump_before_drop=True),
    lambda: ms.forward_only(grad=False, passes=4), lambda: ms.oom_first_forward(temporaries=True),
    lambda: ms.forward_rebound(), lambda: ms.training_iterations(iterations=8, max_entries=200),
], ids=["inference", "inference_kv", "forward_kept", "forward_dumped", "no_grad", "oom_first_forward", "rebound",
        "ring_no_leak"])
def test_control_no_leak_where_none_is_kept(tmp_path, make):
    assert not _leaks(_report(_written(tmp_path, make())))


def test_a_forward_only_leaks_title_says_pass_not_iteration(tmp_path):
    """h37-review43: the title kept the rule's "Every iteration" beside a summary saying "every pass"."""
    (f,) = _leaks(_report(_written(tmp_path, ms.inference_loop(passes=5, leak_mib=16))))
    assert "iteration" not in f.title.lower() and "pass" in f.title.lower(), f.title


# h37-probe44k: a training loop where nothing of one iteration is freed in the next.  ``zero_grad(set_to_none=False)``
# (the default before PyTorch 2.0) keeps the gradients allocated, and a loss read inside the step (``loss.item()``
# returned, no ``loss`` variable held) frees its block within the iteration: between two iterations' kept blocks the
# history frees none made before the earlier.  Main (6f44e79f) began a round only where it did, so the leak was never
# split into iterations: no finding for a loop keeping 48 MiB an iteration.  Here a backward or an optimizer step run
# beside the next forward ends a round as well.

@pytest.mark.parametrize("cause", ["graph", "list"])
def test_a_training_leak_with_nothing_freed_across_iterations_is_read(tmp_path, cause):
    sc = ms.training_iterations(iterations=6, leak=cause, hold_loss=False, set_to_none=False)
    (f,) = _leaks(_report(_written(tmp_path, sc)))
    assert_leak_is_truth(f, sc.truth["leak"], 6)


def test_a_loop_keeping_one_block_after_everything_else_is_freed_leaks(tmp_path):
    """``cache_twin(leak_mib=16)``: each iteration frees all it made, then keeps one 16 MiB block: 6 iterations keep
    96 MiB by construction."""
    (f,) = _leaks(_report(_written(tmp_path, ms.cache_twin(leak_mib=16, iterations=6))))
    d = f.metric.detail
    assert (d["iterations"], d["per_iteration_bytes"], d["leak_end_bytes"]) == (6, 16 << 20, 96 << 20)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_an_optimizers_state_and_kept_gradients_are_no_leak(tmp_path, set_to_none):
    """Control: Adam's moments (made one by one on the first step) and gradients kept by ``set_to_none=False`` are
    made once: no leak."""
    sc = ms.training_iterations(iterations=6, hold_loss=False, set_to_none=set_to_none)
    assert not _leaks(_report(_written(tmp_path, sc)))


# h37-review44: gradient accumulation.  An iteration is one optimizer step; with ``micro_batches`` forwards and
# backwards before it, a backward beside the next forward ends no iteration.  On daa5221c a loop of 6 iterations of
# 2 micro-batches, each keeping its output, read as no leak where ``zero_grad()`` frees the gradients (the level
# between micro-batches holds them: no steady rise) and as 12 "iterations" of one block where it keeps them.
# Truth by construction: ``synthetic.memsnapshot.training_iterations(micro_batches=...)``'s ``leak``.

@pytest.mark.parametrize("micro,cause,kept", [(2, "list", True), (2, "list", False), (3, "graph", False)])
def test_a_leak_under_gradient_accumulation_counts_optimizer_steps(tmp_path, micro, cause, kept):
    sc = ms.training_iterations(iterations=6, micro_batches=micro, leak=cause, hold_loss=not kept, set_to_none=not kept)
    truth = sc.truth["leak"]
    (f,) = _leaks(_report(_written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["per_iteration_bytes"]) == (6, truth["bytes_per_iteration"])
    assert d["leak_end_bytes"] == truth["bytes_at_end"] and f.saving_bytes == truth["bytes_at_peak"]
