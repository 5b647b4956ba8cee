"""A DataLoader with worker processes that the loop wraps in a range of its own (``record_function("data_loader")``
around ``next(it)``) is still a pipeline with workers: its wait is told "the workers are too slow", never "load
batches in worker processes" (issue #37 class 4: the input wait is the input pipeline's own time, and its fix the one
for the pipeline the trace shows).

Real case (read locally, not kept: the repository has no licence): duoan/playground-cuda @bd8129de
``traces/torch_data_workers4/msi_298810.1773731136888005995.pt.trace.json``, an RTX 5080 training lab in its
``data`` mode with 4 workers (2 ms of sleep and 6 transforms a sample, 256 samples a batch: ~0.5 s a batch a
worker).  Of 4 kept steps one waits 298 ms in ``enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__``
inside the loop's ``data_loader`` range; on 15b35816 the first fix was the one for a loader without workers.

Truth by construction: ``synthetic.torchtrace.write_ranged_loader``, an 8 ms fetch a step in a ``data_loader`` range,
once with the workers' iterator and once with the in-process one.  The first test fails on 15b35816.
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


def _input(path: str):
    m = host_metrics(read_trace(path))
    (f,) = [f for f in evaluate(m) if f.rule == "input_bound"]
    return m, f


@pytest.fixture(scope="module")
def loops(tmp_path_factory) -> dict[bool, tuple[str, dict]]:
    out = tmp_path_factory.mktemp("ranged_loader")
    made = {}
    for workers in (True, False):
        path = str(out / f"{'workers' if workers else 'single'}.pt.trace.json")
        made[workers] = (path, tt.write_ranged_loader(path, workers=workers))
    return made


def test_a_ranged_loader_with_workers_is_told_its_workers_are_too_slow(loops):
    path, truth = loops[True]
    m, f = _input(path)
    assert m.input.source == "pipeline" and m.input.parallel == truth["parallel"]
    texts = [a.text for a in f.actions]
    assert texts[0] == pytorch.LOADER_WORKERS_SLOW.text
    assert not any(t.startswith("Load batches in DataLoader worker processes") for t in texts)


def test_a_ranged_loader_without_workers_keeps_the_worker_fix(loops):
    """Control (passes on 15b35816): a range around the in-process iterator is no parallel pipeline."""
    path, truth = loops[False]
    m, f = _input(path)
    assert not m.input.parallel and not truth["parallel"]
    assert f.actions[0].text.startswith("Load batches in DataLoader worker processes")


def test_the_wait_is_the_ranges_whole_whatever_the_loader(loops):
    """Only the words change: the wait (the range's fetch and its own code) is measured alike."""
    waits = {w: _input(p)[1].metric.detail["input_wait_ms"] for w, (p, _) in loops.items()}
    assert waits[True] == pytest.approx(loops[True][1]["input_wait_ms"], rel=0.05)
    assert waits[True] == pytest.approx(waits[False], rel=1e-6)


REAL = os.environ.get("TB_GPU_ADVISOR_RTX5080_WORKERS4", "/work/wild67/huntk67/duoan/torch_data_workers4/"
                      "msi_298810.1773731136888005995.pt.trace.json")


@pytest.mark.skipif(not Path(REAL).exists(), reason="the unlicensed RTX 5080 trace is read locally only")
def test_the_real_ranged_workers_trace():
    m, f = _input(REAL)
    assert m.input.parallel and f.severity == "critical"
    assert f.actions[0].text == pytorch.LOADER_WORKERS_SLOW.text
