"""A window without GPU work is told how to record the right one in its job's words, and a GPU that ran only a copy
still has a process driving it (issue #37, h37-left37).

Real export: ``tests/fixtures/nsys_windows/startup_climate_unet.sqlite`` (a native CUDA C++ U-Net whose 0.88 s window
ended in start-up: context creation, 16 streams, one 4,608-byte memset, no kernel; SOURCE.md).  On main its Nsight
window fix asked for an NVTX range named ``train_step`` and its ``capture.processes`` was 0."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from tb_gpu_advisor.frameworks import nvtx
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.contradictions import job_words_problems
from tests.support.paths import REPO

UNET = os.path.join(REPO, "tests", "fixtures", "nsys_windows", "startup_climate_unet.sqlite")


@pytest.fixture(scope="module")
def unet():
    hosts = [SimpleNamespace(host="h0", path=UNET, format="nsys", size=os.path.getsize(UNET))]
    return analyze_session("w", "s", hosts)


def test_a_native_programs_window_is_not_told_to_mark_a_training_step(unet):
    """The job is no training job (no GPU work in the window): the NVTX range it is told to mark is a step of its own,
    one that the step detector reads as a step (``nvtx.is_step_name``), not ``train_step``."""
    host = unet.hosts[0]
    assert host.job["kind"] == "no_gpu"
    (f,) = [f for f in unet.findings if f.rule == "capture_quality"]
    code = "\n".join(a.snippet or "" for a in f.actions)
    assert "--nvtx-capture=step " in code and "an NVTX range named step around the steps" in code
    assert "train_step" not in code
    assert job_words_problems(unet) == []


@pytest.mark.parametrize("work", sorted(nvtx.STEP_RANGES))
def test_every_jobs_step_range_is_read_back_as_a_step(work):
    """Advice to mark a range is worth as much as the range is read: each job's range name is a step name."""
    assert nvtx.is_step_name(nvtx.step_range(work)["step_range"])


def test_a_gpu_that_ran_only_a_copy_is_driven_by_a_process(unet):
    """The memset on the RTX 4060 was put there by the U-Net's process: one process, though no kernel ran."""
    cap = unet.hosts[0].capture
    assert cap["processes"] == 1
