"""A DataLoader with worker processes whose batches come quickly, inside a fetch range the loop marks itself
(``record_function("data_loader")`` around ``next(it)``) whose own code holds most of the wait: the workers are a
lever in use, so the first fix names the range's own time and what the profiler recorded there, never "load batches
in DataLoader worker processes" (issue #37 class 4: the input wait is the input pipeline's own time, and its fix the
one for the pipeline the trace shows; h37-huntk67 *Left* 1).

Real case (read locally, not kept: the repository has no licence): duoan/playground-cuda @bd8129de
``traces/torch_baseline/msi_279961.1773729069147297763.pt.trace.json``, an RTX 5080 training lab with 2 workers:
of a 261 us wait a step, 74 us in ``_MultiProcessingDataLoaderIter.__next__`` and 187 us in the ``data_loader`` range
outside it (two ``cudaEventRecordWithFlags`` and ``cudaStreamIsCapturing`` a step, the rest unrecorded Python); on
2d4d6ed6 its first fix was the one for a loader without workers.

Truth by construction: ``synthetic.torchtrace.write_ranged_loader`` with a 60 us fetch and 400 us of the range's own
code (and once with one recorded op among it).  The first test fails on 2d4d6ed6; the second needs what this
branch adds (``own_op``, ``HostInput.range_calls``); the control passes there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

LOADER_WORDS = "Load batches in DataLoader worker processes"


def _input(path: str):
    m = host_metrics(read_trace(path))
    (f,) = [f for f in evaluate(m) if f.rule == "input_bound"]
    return m, f


def test_a_fetch_range_whose_own_code_holds_the_wait_is_named_not_the_workers(tmp_path):
    """Fails on 2d4d6ed6: its first fix was "Load batches in DataLoader worker processes"."""
    path = str(tmp_path / "own.pt.trace.json")
    truth = tt.write_ranged_loader(path, fetch_us=60.0, own_us=400.0, workers=True)
    _, f = _input(path)
    first = f.actions[0].text
    assert not any(a.text.startswith(LOADER_WORDS) for a in f.actions)
    assert first.startswith("Look inside the loop's own fetch range")
    own_us, fetch_us = round(truth["own_ms"] * 1000), round(truth["fetch_ms"] * 1000)
    assert f"{own_us} us per step (`data_loader`)" in first and f"hands one over in {fetch_us} us" in first
    assert "Python the profiler did not record" in first


def test_the_calls_recorded_in_the_fetch_range_are_named(tmp_path):
    """The op the loop's own code runs in its range, as the profiler recorded it: named with its calls and time."""
    path = str(tmp_path / "own_op.pt.trace.json")
    truth = tt.write_ranged_loader(path, fetch_us=60.0, own_us=400.0, workers=True, own_op=("aten::stack", 30.0))
    m, f = _input(path)
    assert (m.input.workers, m.input.parallel) == (truth["workers"], truth["parallel"]) == (True, False)
    assert {name: calls for name, calls, _ in m.input.range_calls} == truth["own_ops"]
    assert "`aten::stack` (1 a step, 30 us)" in f.actions[0].text


def test_the_calls_named_are_parts_of_the_ranges_wait_never_more(tmp_path):
    """A loop that fetches before it syncs: the GPU still runs the step's last kernel through most of the range, so
    the op's 1.5 ms of wall time holds only its part of the range's wait after the kernel ends.  Fails on de2d4d28:
    "464 us ... of the range's time ... `aten::stack` (1 a step, 1.50 ms) there" -- a part above its whole."""
    path = str(tmp_path / "busy.pt.trace.json")
    truth = tt.write_ranged_loader(path, fetch_us=60.0, own_us=4000.0, own_op=("aten::stack", 1500.0),
                                   busy_us=3000.0)
    m, f = _input(path)
    assert m.input.workers and not m.input.parallel
    own = sum(v for _, v in m.input.ranges)
    assert own == pytest.approx(truth["input_wait_ms"], rel=0.05)
    ((name, calls, wait),) = m.input.range_calls
    assert (name, calls) == ("aten::stack", 1.0)
    assert wait == pytest.approx(truth["own_ops_wait_ms"]["aten::stack"], rel=0.05) and wait < own
    assert f"`aten::stack` (1 a step, {round(wait * 1000)} us)" in f.actions[0].text


def test_a_fetch_range_around_an_in_process_loader_keeps_the_worker_fix(tmp_path):
    """Control: the in-process iterator shows no workers: loading in workers stays a fix -- since h37-idle67 after
    the range's own code, which holds 400 of the 460 us (``test_input_own_range_serial67``)."""
    path = str(tmp_path / "single.pt.trace.json")
    tt.write_ranged_loader(path, fetch_us=60.0, own_us=400.0, workers=False)
    m, f = _input(path)
    assert not m.input.parallel
    assert any(a.text.startswith(LOADER_WORDS) for a in f.actions)


REAL = os.environ.get("TB_GPU_ADVISOR_RTX5080_BASELINE", "/work/wild67/huntk67/duoan/torch_baseline/"
                      "msi_279961.1773729069147297763.pt.trace.json")


@pytest.mark.skipif(not Path(REAL).exists(), reason="the unlicensed RTX 5080 trace is read locally only")
def test_the_real_fetch_range_of_a_loader_with_workers():
    m, f = _input(REAL)
    assert m.input.workers and not m.input.parallel
    assert f.actions[0].text.startswith("Look inside the loop's own fetch range")
    assert "`cudaEventRecordWithFlags` (2 a step" in f.actions[0].text
    assert f.actions[0].text != pytorch.LOADER_WORKERS_SLOW.text


# A DataLoader WITHOUT workers inside a fetch range the loop marks itself (``record_function("data_loader")``
# around ``next(it)``), whose own code outside ``__next__`` holds most of the wait: the first fix names that code --
# workers would take only the loader's lesser part -- and the loader's fix follows it (issue #37 class 4; the case
# beside h37-huntr67's ``input_bound:own_range`` for a loader with workers, h37-idle67).
#
# Truth by construction: ``synthetic.torchtrace.write_ranged_loader(workers=False)`` -- a 60 us in-process
# ``__next__`` and 400 us of the range's own code a step (once with one recorded op among it); the control swaps the
# two, the loader holding the wait.  The first test fails on ea7738f9 (its first fix was "Load batches in DataLoader
# worker processes"); the control passes there.


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
