"""A snapshot of a job torn down with ``empty_cache()`` before its dump -- no segment left -- still says which
stream its history ran on, and a torch_npu record whose frames name no build is told words true of every build, not
CUDA's (issue #37; session 56's h37-wild56m *Left* 2).

Why it was missed: ``formats.snapshot.reader._vendor`` told a build from the segments at the dump alone (no segment
on CUDA's null stream 0: not CUDA's), and the trace entries' ``stream`` was not kept by the compactor, so a snapshot
with no segment left kept the default vendor -- NVIDIA's words (``PYTORCH_CUDA_ALLOC_CONF``,
``torch.cuda.memory._dump_snapshot``, ``ProfilerActivity.CUDA``) for an Ascend NPU's job.  Every trace entry carries
its allocation's stream (``torch/csrc/cuda/memory_snapshot.cpp``: ``stream`` beside ``addr``); torch_npu records its
default stream as the handle it made (codeasier/MemSnapDump's: 1067708320, ...), CUDA and HIP theirs as 0.

Scenarios: ``synthetic.memsnapshot``'s, torn down and emptied (``torn_down(doc, empty_cache=True)``), recorded as
torch_npu writes them (``as_npu(stream=NPU_STREAM)``) with no stack (``context=None``): truth by construction.
Controls: the same on stream 0 keeps CUDA's words; a stack through ``torch_npu``'s ``empty_cache`` names the NPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.schema import HostReport
from tb_gpu_advisor.runtime.pipeline import analyze_host

#: Words one build's user alone reads right (CUDA's), outside the line that says what the placeholders stand for.
ONE_BUILDS = re.compile(r"PYTORCH_(?:NO_)?CUDA_|torch\.cuda\b|ProfilerActivity\.CUDA|\bCUDA\b|NVIDIA|\bGPUs?\b")
LEGEND = "the snapshot names no build"
SCENARIOS = ("training_iterations", "cache_twin", "inference_loop", "forward_only")


def _emptied(name: str, stream: int | None = ms.NPU_STREAM, context: str | None = None) -> dict:
    doc = ms.torn_down(getattr(ms, name)().doc, empty_cache=True)
    return ms.as_recorded(ms.as_npu(doc, stream=stream), context=context, stacks="python")


def _read(tmp_path: Path, doc: dict) -> str | None:
    return read_trace(ms.write(str(tmp_path / "v.pickle"), doc)).snapshot.vendor


def _report(tmp_path: Path, doc: dict) -> HostReport:
    path = Path(ms.write(str(tmp_path / "snap.pickle"), doc))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


@pytest.mark.parametrize("name", SCENARIOS)
def test_an_emptied_npu_snapshot_names_no_build(tmp_path: Path, name: str) -> None:
    doc = _emptied(name)
    assert doc["segments"] == [] and any(e["action"] == "segment_free" for e in doc["device_traces"][0])
    assert _read(tmp_path, doc) == "unnamed"


def test_its_report_speaks_no_one_builds_words(tmp_path: Path) -> None:
    rep = _report(tmp_path, _emptied("training_iterations"))
    text = [str(rep.job.get("capture_advice") or ""), *[str(g.memory["source"]) for g in rep.gpus if g.memory]]
    text += [w for f in rep.findings for w in (f.title, f.summary, *[a.text + (a.snippet or "") for a in f.actions])]
    found = sorted({w for t in text for line in t.split("\n") if LEGEND not in line for w in ONE_BUILDS.findall(line)})
    assert not found, found
    assert {g.memory["source"] for g in rep.gpus if g.memory} == {
        "PyTorch memory snapshot (torch.<device>.memory._dump_snapshot)"}


def test_control_stream_zero_and_a_named_stack_keep_their_vendor(tmp_path: Path) -> None:
    """Control: an emptied record on stream 0 names no vendor (CUDA's words, as before); one whose
    ``segment_free`` stack runs through torch_npu's ``empty_cache`` names the NPU."""
    assert _read(tmp_path, _emptied("training_iterations", stream=None)) is None
    assert _read(tmp_path, _emptied("training_iterations", context="all")) == "Huawei"
