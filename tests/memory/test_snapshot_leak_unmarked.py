"""A leak read where the history marks less than ours do (issue #37 class 5, h37-probe45k).

Truth by construction (``synthetic.memsnapshot.training_iterations`` / ``cache_twin``, their ``leak`` truths):

* recorded without stacks (``as_recorded(context=None)``): the same-size leak is still read by its sizes and its
  iterations' pattern, and the finding says its line cannot be named and how to record the stacks -- base (a3712eb4)
  said "allocates 1 block ()";
* a growing leak (16, 32, ... 128 MiB over 8 iterations, 576 MiB) whose oldest events a full ring buffer
  (``max_entries``) dropped: the iterations the history holds, plus the earlier ones whose blocks are still live at
  the dump at the leak's line -- base read 5, 4, 3 iterations and 480, 416, 352 MiB, not 8 and 576 MiB;
* a fused optimizer (``optimizer_temp=False``: it allocates on its first step only) under gradient accumulation: the
  leak's iterations are the optimizer's steps, read off the job's iterations (gradients freed by ``zero_grad()``) or
  the first step's cadence (gradients zeroed in place) -- base read no leak, or 12 and 18 "iterations" of one block.
"""

from __future__ import annotations

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import assert_leak_is_truth, leaks, report, written

MiB = 1 << 20


def _stackless(sc: ms.Scenario) -> ms.Scenario:
    """``sc`` as ``_record_memory_history(context=None)`` writes it: no frame anywhere; the truth unchanged."""
    return ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth)


@pytest.mark.parametrize("iterations", [4, 6])
def test_a_leak_recorded_without_stacks_is_read_and_says_its_line_is_unknown(tmp_path, iterations):
    sc = _stackless(ms.training_iterations(iterations=iterations, leak="list"))
    truth = sc.truth["leak"]
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["per_iteration_bytes"], d["blocks_per_iteration"]) == (
        iterations, truth["bytes_per_iteration"], truth["blocks_per_iteration"])
    assert d["leak_end_bytes"] == truth["bytes_at_end"] and f.saving_bytes == truth["bytes_at_peak"]
    assert d["sites"] == [] and "()" not in f.summary
    assert "cannot name" in f.summary and 'context="all"' in f.summary
    assert any('context="all"' in (a.snippet or "") for a in f.actions), [a.snippet for a in f.actions]


def test_a_cache_leak_recorded_without_stacks_is_read(tmp_path):
    """``cache_twin(leak_mib=16)``: each of 6 iterations frees all it made, then keeps one 16 MiB block."""
    (f,) = leaks(report(written(tmp_path, _stackless(ms.cache_twin(leak_mib=16, iterations=6)))))
    d = f.metric.detail
    assert (d["iterations"], d["per_iteration_bytes"], d["leak_end_bytes"]) == (6, 16 * MiB, 96 * MiB)
    assert f.saving_bytes == 5 * 16 * MiB  # the peak is the last iteration's workspaces, before its own kept block
    assert "cannot name" in f.summary


def test_a_named_leak_gets_no_record_stacks_words(tmp_path):
    (f,) = leaks(report(written(tmp_path, ms.training_iterations(iterations=6, leak="list"))))
    assert "cannot name" not in f.summary and not any("context=" in (a.snippet or "") for a in f.actions)


def _unseen_leak_blocks(doc: dict) -> int:
    """How many of the leak's blocks (``LEAK_OUTPUT``'s) live in the dump's segments the kept history never
    touches: the iterations the ring buffer dropped."""
    touched = {e.get("addr") for e in doc["device_traces"][0]}
    return sum(1 for s in doc["segments"] for b in s["blocks"]
               if b["state"] == "active_allocated" and b["frames"] == ms.LEAK_OUTPUT and b["address"] not in touched)


@pytest.mark.parametrize("max_entries", [200, 150, 120])
def test_a_growing_leak_cut_by_the_ring_buffer_counts_the_blocks_its_segments_hold(tmp_path, max_entries):
    sc = ms.training_iterations(iterations=8, max_entries=max_entries, leak="grow")
    truth = sc.truth["leak"]
    dropped = _unseen_leak_blocks(sc.doc)
    assert dropped > 0  # the history holds only the last of the 8
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["iterations_before_history"]) == (8, dropped)
    assert d["first_iteration_bytes"] == truth["bytes_per_iteration"] == 16 * MiB
    assert d["per_iteration_bytes"] == truth["bytes_last_iteration"] == 128 * MiB
    assert d["leak_end_bytes"] == truth["bytes_at_end"] == 576 * MiB
    assert f.saving_bytes == truth["bytes_at_peak"]
    assert "fewer bytes each" in f.summary and "the same bytes" not in f.summary


@pytest.mark.parametrize("micro", [1, 2, 3])
@pytest.mark.parametrize("kept", [False, True])
@pytest.mark.parametrize("cause", ["list", "graph"])
def test_a_leak_under_a_fused_optimizer_counts_its_steps(tmp_path, micro, kept, cause):
    """``kept``: ``zero_grad(set_to_none=False)`` (the gradients stay allocated: nothing freed between iterations)
    and no loss held across them."""
    sc = ms.training_iterations(iterations=6, micro_batches=micro, leak=cause, optimizer_temp=False,
                                hold_loss=not kept, set_to_none=not kept)
    (f,) = leaks(report(written(tmp_path, sc)))
    assert_leak_is_truth(f, sc.truth["leak"], 6)


@pytest.mark.parametrize("micro", [1, 2, 3])
@pytest.mark.parametrize("kept", [False, True])
def test_control_a_fused_optimizer_without_a_leak(tmp_path, micro, kept):
    sc = ms.training_iterations(iterations=6, micro_batches=micro, optimizer_temp=False, hold_loss=not kept,
                                set_to_none=not kept)
    assert not leaks(report(written(tmp_path, sc)))
