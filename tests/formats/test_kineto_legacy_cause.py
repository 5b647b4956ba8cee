"""A trace in the legacy profiler's list form records no GPU activity whatever the call asked for: the capture-quality
finding names which call wrote it and gives that call's fix (issue #37, s29 h37-survey61's *Left* 2).

A DDP rank's ``torch.profiler.profile(activities=[CPU, CUDA], schedule=...)`` on a cluster's PyTorch build without
Kineto (frances-uy/s2025-assignment4-hpc, no licence: read, not kept; SURVEY.md session 30 h37-coldloop30) wrote the
legacy list with its ``ProfilerStep#N`` marks; main's fix was "record the GPU's activity" with the very call that
wrote it.  Here by construction (``synthetic.torchtrace.write_legacy_list``): the same layout written by the three
calls that make it -- ``torch.profiler`` without Kineto (marks), ``torch.autograd.profiler`` with ``use_cuda=True``
(ops under ``"CUDA functions"``) and without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.torchtrace import write_legacy_list
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _lost_records(tmp_path: Path, **kw) -> tuple[dict, object]:
    path = tmp_path / "rank0.pt.trace.json"
    truth = write_legacy_list(str(path), **kw)
    rep = analyze_host(HostFile("rank0", str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    lost = [f for f in rep.findings if f.title == "The capture lost its GPU records"]
    assert len(lost) == 1, [f.title for f in rep.findings]
    return truth, lost[0]


def test_torch_profiler_on_a_build_without_kineto_is_named_with_its_fix(tmp_path: Path):
    truth, f = _lost_records(tmp_path, marks=True)
    assert truth["fix"] == "no_kineto"
    assert "build without Kineto" in f.summary and "prof.step()" in f.summary, f.summary
    fix = f.actions[0]
    assert "kineto_available()" in fix.text and "kineto_available()" in fix.snippet, fix
    # not the fix of a capture that lost records it could have kept: the call that wrote this one asked for CUDA
    assert "wait for the GPU" not in " ".join(a.text for a in f.actions)


@pytest.mark.parametrize("cuda_functions", [True, False])
def test_the_old_autograd_profiler_is_named_with_its_fix(tmp_path: Path, cuda_functions: bool):
    truth, f = _lost_records(tmp_path, marks=False, cuda_functions=cuda_functions)
    assert truth["fix"] == "legacy_profiler"
    assert "torch.autograd.profiler's legacy list" in f.summary, f.summary
    assert ("use_cuda=True" in f.summary) == cuda_functions, f.summary
    assert "torch.profiler (PyTorch 1.8.1 and later)" in f.actions[0].text
    # the list names no GPU vendor but NCCL's (its ``nccl:all_reduce``): NVIDIA's or AMD's, whose PyTorch builds both
    # spell the device ``cuda`` (ROCm's writes the same "CUDA functions"), so the code is PyTorch's as both builds
    # write it -- no placeholder (h37-late67; h37-vendor66 left it to the user's build)
    assert "ProfilerActivity.CUDA" in f.actions[0].snippet and "<DEVICE>" not in f.actions[0].snippet


def test_control_a_kineto_trace_of_host_ops_alone_is_told_its_own_fix(tmp_path: Path):
    """Control: a Kineto trace of host ops alone, with the profiler's header, is no legacy list -- it recorded no CUDA
    activity, and is told ProfilerActivity.CUDA (h37-probe42c; before, the generic "lost or not recorded")."""
    from synthetic.torchtrace import write_unrecorded_gpu_steps
    path = tmp_path / "rank0.pt.trace.json"
    write_unrecorded_gpu_steps(str(path))
    rep = analyze_host(HostFile("rank0", str(path), path.stat().st_size, 0, "kineto"))
    lost = [f for f in rep.findings if f.title == "The capture recorded no CUDA activity: the GPU's work is not in it"]
    assert lost and "ProfilerActivity.CUDA was not among" in lost[0].summary and "legacy" not in lost[0].summary
