"""A leak whose bytes grow each iteration (issue #37 class 5, h37-probe44g; probe44k's Left 1).

By construction (``synthetic.memsnapshot``; each writer's docstring states its truth): the model's head's output kept
each iteration with its shape growing (``training_iterations(leak="grow")``: 16, 32, ... 96 MiB over 6 iterations,
336 MiB at the end), and a cache keyed by shape that keeps each new shape's entry (``cache_twin(grow=True)``).  Main
(5ee59eff) matched a leak's rounds by line *and size*: each size was a site of one block, and no finding came.  Here
a line's kept blocks are read in rounds with their sizes free to differ, and the finding says the leak grows (its
first and last iteration's bytes), not "the same bytes every iteration".  Controls: the same loops without a leak,
and with a leak of one size (its words unchanged)."""

from __future__ import annotations

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks as _leaks, report as _report, written as _written

MiB = 1 << 20


@pytest.mark.parametrize("iterations", [4, 6])
def test_a_leak_growing_each_iteration_is_read(tmp_path, iterations):
    sc = ms.training_iterations(iterations=iterations, leak="grow")
    truth = sc.truth["leak"]
    (f,) = _leaks(_report(_written(tmp_path, sc)))
    d = f.metric.detail
    assert d["iterations"] == iterations
    assert d["first_iteration_bytes"] == truth["bytes_per_iteration"]
    assert d["per_iteration_bytes"] == truth["bytes_last_iteration"] > truth["bytes_per_iteration"]
    assert d["leak_end_bytes"] == truth["bytes_at_end"]
    assert f.saving_bytes == truth["bytes_at_peak"]
    assert any(s.startswith(truth["site"]) for s in d["sites"]), d["sites"]
    assert "by more every iteration" in f.summary and "a leak that grows" in f.summary


def test_a_cache_keyed_by_shape_that_keeps_each_entry_leaks(tmp_path):
    (f,) = _leaks(_report(_written(tmp_path, ms.cache_twin(leak_mib=16, iterations=6, grow=True))))
    d = f.metric.detail
    assert d["iterations"] == 6
    assert (d["first_iteration_bytes"], d["per_iteration_bytes"], d["leak_end_bytes"]) == (16 * MiB, 96 * MiB, 336 * MiB)


@pytest.mark.parametrize("make", [lambda: ms.training_iterations(6, leak="list"), lambda: ms.cache_twin(leak_mib=16, iterations=6)],
                         ids=["list", "cache"])
def test_a_leak_of_one_size_keeps_its_words(tmp_path, make):
    (f,) = _leaks(_report(_written(tmp_path, make())))
    assert "rises by 16.0 MiB every iteration" in f.summary and "grows" not in f.summary.split(":")[0]
    assert f.metric.detail["first_iteration_bytes"] == f.metric.detail["per_iteration_bytes"]


@pytest.mark.parametrize("make", [lambda: ms.training_iterations(6), lambda: ms.cache_twin(iterations=6),
                                  lambda: ms.inference_loop(6),
                                  lambda: ms.Scenario(ms.as_recorded(ms.training_iterations(6).doc, context=None), {})],
                         ids=["training", "cache", "inference", "no-stacks"])
def test_no_growing_leak_where_none_can_be_told(tmp_path, make):
    assert not _leaks(_report(_written(tmp_path, make())))


def test_a_growing_leak_without_stacks_reads_its_sizes_as_its_iterations(tmp_path):
    """No line names the blocks, and each size is one iteration's: the sizes are the rounds -- 64 MiB among them,
    the weights' and the optimizer state's size too, whose blocks made before the 48 MiB round are none of the
    leak's (h37-probe46g; base c6c0c7e9, like probe45k's, read no leak: this case stood in the control above)."""
    sc = ms.training_iterations(6, leak="grow")
    truth = sc.truth["leak"]
    (f,) = _leaks(_report(_written(tmp_path, ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth))))
    d = f.metric.detail
    assert (d["iterations"], d["first_iteration_bytes"], d["per_iteration_bytes"]) == (6, 16 * MiB, 96 * MiB)
    assert d["leak_end_bytes"] == truth["bytes_at_end"] == 336 * MiB and f.saving_bytes == truth["bytes_at_peak"]
    assert "a leak that grows" in f.summary and "cannot name" in f.summary
