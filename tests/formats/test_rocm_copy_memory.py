"""A ROCm copy's Kineto name says its sides, not its host memory (survey h37-variance32, ``tests/fixtures/wild/
SURVEY.md``).

CUPTI's Kineto names a copy by its memory kinds (``Memcpy HtoD (Pageable -> Device)``: pytorch/kineto
``cupti_strings.cpp`` ``memoryKindString``); ROCm's Kineto -- roctracer (PyTorch 2.4-2.7) and rocprofiler-sdk after
it -- writes the copy's *sides* in the same place (``Memcpy HtoD (Host -> Device)``: ``getMemcpySrcDstString`` of
``RocprofActivity_inl.h``), for pinned and pageable host memory alike.  Main read every parenthesis that did not say
``Pageable`` as a known, other memory: each AMD upload was "pinned", and a job whose batches are copied from pageable
memory, the host waiting in each copy's sync, was told "Already in use, so not suggested: pinned, asynchronous copies
to the GPU" and not told to pin them.  Truth by construction: ``synthetic.torchtrace``'s ``pageable_copy`` (pageable,
blocking) and ``input_bound`` (pinned, asynchronous), then :func:`synthetic.torchtrace.as_rocm`, the same job as
ROCm's PyTorch records it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic.nsysexport import NsysJob, write
from synthetic.torchtrace import as_rocm
from tb_gpu_advisor import devices
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.kineto_report import job_doc, report
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report
from tests.support.sqlite_edits import run_sql

ALREADY = "Already in use, so not suggested: pinned, asynchronous copies to the GPU"


@pytest.mark.parametrize(("name", "host"), [
    ("Memcpy HtoD (Host -> Device)", -1), ("Memcpy DtoH (Device -> Host)", -1),  # ROCm's sides
    ("Memcpy HtoD (Unknown -> Device)", -1),  # CUPTI's own "no kind known"
    ("Memcpy HtoD (Pageable -> Device)", 1), ("Memcpy DtoH (Device -> Pageable)", 1),  # controls: CUPTI's kinds
    ("Memcpy HtoD (Pinned -> Device)", 0), ("Memcpy DtoD (Device -> Device)", 0), ("MemcpyH2D", -1),
    # only the host side says it: the device side unknown leaves a pinned copy pinned (the Nsight reader's name
    # where the export's memory-kind enum lacks the device side's id)
    ("Memcpy HtoD (Pinned -> Unknown)", 0), ("Memcpy DtoH (Unknown -> Pinned)", 0),
    ("Memcpy DtoH (Unknown -> Pageable)", 1), ("Memcpy HtoD (Pageable -> Unknown)", 1)])
def test_only_cuptis_memory_kinds_say_a_copys_host_memory(name, host):
    assert devices.copy_host_memory(name) == host


def _report(tmp_path: Path, scenario: str, rocm: bool):
    doc = job_doc(scenario)
    if rocm:
        as_rocm(doc)
    return report(tmp_path / ("rocm" if rocm else "cuda"), doc, scenario)


def _copies(rep):
    return next(f for f in rep.findings if f.rule == "excessive_memcpy")


def test_a_pageable_upload_on_rocm_is_not_called_pinned(tmp_path):
    cuda, rocm = _report(tmp_path, "pageable_copy", False), _report(tmp_path, "pageable_copy", True)
    assert rocm.gpus[0].name == "AMD Instinct MI300X"
    assert rocm.breakdown_ms["memcpy_h2d"] == cuda.breakdown_ms["memcpy_h2d"] > 1.0  # the same copies, read as copies
    assert "pageable host memory" in _copies(cuda).summary  # the control: CUPTI's name says it
    assert ALREADY not in " ".join(_copies(rocm).summary.split())
    # the pinned, asynchronous copy is advised (CUDA's names the pageable bytes; ROCm's cannot: the kind is unknown)
    assert pytorch.NON_BLOCKING.text in [a.text for a in _copies(rocm).actions]


def test_a_pinned_upload_on_rocm_is_not_claimed_pinned_either(tmp_path):
    """The trace does not say it: a pinned job's ROCm trace is told nothing is in use (the CUDA trace, its control,
    shows the pinning and says so)."""
    cuda, rocm = _report(tmp_path, "input_bound", False), _report(tmp_path, "input_bound", True)
    said = " ".join(" ".join(f.summary.split()) for f in cuda.findings)
    assert ALREADY in said
    assert ALREADY not in " ".join(" ".join(f.summary.split()) for f in rocm.findings)


@pytest.mark.parametrize("run", ["amd_mi250", "vllm_mi300x_prefill"])
def test_kept_rocm_traces_uploads_are_of_unknown_memory(run):
    """Read by hand: ``amd_mi250``'s 2 uploads are ``Memcpy HtoD (Host -> Device)`` launched by the blocking
    ``hipMemcpyWithStream`` (60 and 36 us), ``vllm_mi300x_prefill``'s 4 by ``hipMemcpyAsync``; neither file records
    the host memory's kind.  Main put "pinned, asynchronous copies to the GPU (every H2D copy in the trace from pinned
    host memory ...)" among the fixes the capture shows in use."""
    if not (FIXTURES / "wild" / run).is_dir():
        pytest.skip("fixture absent")
    (h,) = run_report(FIXTURES / "wild", run).hosts
    assert "pinned_async_h2d" not in h.capture["applied"], json.dumps(h.capture["applied"])


@pytest.mark.parametrize(("src_kind", "claimed"), [(7, False), (1, True)], ids=["unknown", "pinned"])
def test_an_nsight_copy_of_unknown_host_memory_is_not_called_pinned(tmp_path, src_kind, claimed):
    """CUPTI's ``Unknown`` memory kind (``ENUM_CUDA_MEM_KIND`` 7 in the export) names no memory either: the
    reader names such a copy ``Memcpy HtoD (Unknown -> Device)``, which main read as a known, unpageable one.  The
    control: the same export with the copies' source ``Pinned`` (1) is told its pinned uploads are in use."""
    path = str(tmp_path / "report1.sqlite")
    write(path, NsysJob(steps=8))
    run_sql(path, f"UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = {src_kind}")
    rep = analyze_host(HostFile("report1", path, Path(path).stat().st_size, 0, "nsys"))
    assert rep.breakdown_ms["memcpy_h2d"] > 1.0
    assert (ALREADY in " ".join(" ".join(f.summary.split()) for f in rep.findings)) is claimed
