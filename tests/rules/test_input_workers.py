"""An input-bound loop whose DataLoader already runs worker processes is told its workers are too slow, not to start
them (survey h37-survey7b: incredere/gpu-profiling-pytorch-lab's T4 traces, a 3-layer MLP on FashionMNIST with
``num_workers=2, pin_memory=True``: 60-81% of each step in ``enumerate(DataLoader)#_MultiProcessingDataLoaderIter
.__next__``, and main's first fix was "Load batches in DataLoader worker processes, into pinned memory").

Truth by construction: the generator's ``input_bound`` scenario (a 10 ms DataLoader wait a step) written once as it
is (``_SingleProcessDataLoaderIter``: no workers) and once with its iterator named as PyTorch names it with workers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

WORKERS = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"


def _input_finding(path: Path):
    m = host_metrics(read_trace(str(path)))
    (f,) = [f for f in evaluate(m) if f.rule == "input_bound"]
    return m, f


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("input_workers")
    (single,) = tt.write_run(str(out), "input_bound", steps=6)
    text = Path(single).read_text()
    assert text.count(tt.DATALOADER) >= 6  # one wait a step, as built
    workers = Path(single).with_name("workers." + Path(single).name)
    workers.write_text(text.replace(tt.DATALOADER, WORKERS))
    return {"single": Path(single), "workers": workers}


def test_a_loader_with_workers_is_told_its_workers_are_too_slow(traces):
    m, f = _input_finding(traces["workers"])
    assert m.input.source == "pipeline" and m.input.parallel
    texts = [a.text for a in f.actions]
    assert texts[0] == pytorch.LOADER_WORKERS_SLOW.text and "already makes batches in worker processes" in texts[0]
    assert pytorch.LOADER.text not in texts  # "load batches in worker processes": already done


def test_a_loader_without_workers_keeps_the_worker_fix(traces):
    m, f = _input_finding(traces["single"])
    assert m.input.source == "pipeline" and not m.input.parallel
    # the loader fix, less the levers the trace shows in use (h37-pinned32: the generator's batches are pinned and
    # copied asynchronously, so the pinning is not asked again -- the workers are)
    assert f.actions[0].text == frameworks.get("pytorch").rest(pytorch.LOADER, m.applied)[0].text
    assert f.actions[0].text.startswith("Load batches in DataLoader worker processes")
    assert ("pinned memory" in f.actions[0].text) == ("pinned_async_h2d" not in m.applied), m.applied


def test_the_wait_and_its_saving_do_not_depend_on_the_loaders_mode(traces):
    """Only the words change: the workers' wait is the same wait, measured the same way."""
    _, single = _input_finding(traces["single"])
    _, workers = _input_finding(traces["workers"])
    assert workers.saving.ms_per_step == pytest.approx(single.saving.ms_per_step, rel=1e-9)
    assert workers.severity == single.severity


def test_only_a_worker_iterator_counts_as_parallel():
    assert pytorch.is_parallel_input(WORKERS)
    assert not pytorch.is_parallel_input(tt.DATALOADER)
    assert not pytorch.is_parallel_input("_MultiProcessingDataLoaderIter._next_data")  # not the loop's wait
