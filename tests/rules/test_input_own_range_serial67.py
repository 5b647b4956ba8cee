"""A DataLoader WITHOUT workers inside a fetch range the loop marks itself (``record_function("data_loader")``
around ``next(it)``), whose own code outside ``__next__`` holds most of the wait: the first fix names that code --
workers would take only the loader's lesser part -- and the loader's fix follows it (issue #37 class 4; the case
beside h37-huntr67's ``input_bound:own_range`` for a loader with workers, h37-idle67).

Truth by construction: ``synthetic.torchtrace.write_ranged_loader(workers=False)`` -- a 60 us in-process
``__next__`` and 400 us of the range's own code a step (once with one recorded op among it); the control swaps the
two, the loader holding the wait.  The first test fails on ea7738f9 (its first fix was "Load batches in DataLoader
worker processes"); the control passes there.
"""

from __future__ import annotations

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

LOADER_WORDS = "Load batches in DataLoader worker processes"


def _input(path: str):
    m = host_metrics(read_trace(path))
    (f,) = [f for f in evaluate(m) if f.rule == "input_bound"]
    return m, f


def test_a_serial_loaders_fetch_range_whose_own_code_holds_the_wait_is_named_first(tmp_path):
    """Fails on ea7738f9: the first fix was "Load batches in DataLoader worker processes"."""
    path = str(tmp_path / "serial_own.pt.trace.json")
    truth = tt.write_ranged_loader(path, fetch_us=60.0, own_us=400.0, workers=False, own_op=("aten::stack", 30.0))
    m, f = _input(path)
    first = f.actions[0].text
    assert first.startswith("Look inside the loop's own fetch range first")
    own_us, fetch_us = round(truth["own_ms"] * 1000), round(truth["fetch_ms"] * 1000)
    assert f"hands a batch over in {fetch_us} us" in first and f"{own_us} us per step (`data_loader`)" in first
    assert "`aten::stack` (1 a step, 30 us)" in first
    assert f.actions[1].text.startswith(LOADER_WORDS)  # the loader's own part is still made on the step's path
    assert not m.input.workers and m.input.own_range


def test_a_serial_loader_holding_the_wait_keeps_the_workers_fix_first(tmp_path):
    """The control: ``__next__`` holds 400 of the 460 us -- load in workers stays the first fix."""
    path = str(tmp_path / "serial_next.pt.trace.json")
    tt.write_ranged_loader(path, fetch_us=400.0, own_us=60.0, workers=False)
    _, f = _input(path)
    assert f.actions[0].text.startswith(LOADER_WORDS)
    assert not any("own fetch range" in a.text for a in f.actions)
