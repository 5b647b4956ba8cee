"""One range around the one pass a benchmark times is that pass: the step (issue #37 class 2, h37-survey42).

The assumption was that a range holding one pass frames nothing (``job.frame`` asks for two repeats inside it), so the
GPU's bursts or the whole window decided.  A benchmark that times a single pass (``--measurement-steps 1``) after
warm-up passes of the same work says which pass it times by its one range around it.

Real: ``wild/measured_pass_rtx5070_laptop`` (CS336's ``benchmark.py --mode forward --warmup-steps 1
--measurement-steps 1`` under nsys on an RTX 5070 Laptop GPU).  Truth read from the export (``sqlite3``): the timed
forward lies inside the NVTX range ``measurement`` (18.55 ms), 632 kernels from 4,958.99 ms to 4,977.24 ms of the
session's clock (14.28 ms of GPU work), and no ``cudaMalloc`` runs in it -- 31 of the 64 run in the warm-up forward
before it.  Main cut the window into 43 GPU bursts (the model's set-up, its first calls, the warm-up forward's two
halves), dropped the timed pass as the stock rule's "possibly partial" last, and read 8 steps of 7.09 ms with the
allocator's growth as "churn inside every step".

By construction (``synthetic.nsysexport.write_framed_passes(measured=1)``): warm-up passes, then one NVTX range around
one 20 ms pass.  Main read the inference job as one pass of 102.6 ms (the warm-ups in it) and, with a range name that
says nothing of inference, 2 burst steps of 31.2 ms.
"""

from __future__ import annotations

import pytest

from tests.support.cli_report import first_host, first_report, framed_passes_host
from tests.support.paths import FIXTURES

REAL = FIXTURES / "wild" / "measured_pass_rtx5070_laptop" / "nvtx_probe.sqlite"
#: the NVTX range ``measurement`` (ms), and the timed pass's kernels' span, read from the export by hand
RANGE_MS, KERNEL_SPAN_MS, KERNELS = 18.548, 18.25, 632


def test_the_real_timed_forward_is_the_one_step() -> None:
    host = first_host(REAL)
    steps = host["steps"]
    assert steps["source"] == "single_pass" and steps["count"] == 1
    assert "one range `measurement`" in steps["note"]
    gpu = host["gpus"][0]
    assert KERNEL_SPAN_MS <= gpu["step_ms"] <= RANGE_MS
    assert gpu["kernel_count"] == KERNELS


def test_the_warm_up_allocations_are_no_churn_of_the_timed_pass() -> None:
    """The caching allocator grew in the warm-up forward; the timed pass calls no ``cudaMalloc``."""
    rules = {f["rule"] for f in first_report(REAL)["findings"] if f["severity"] in ("warning", "critical")}
    assert "allocator_churn" not in rules
    assert {"mixed_precision_off", "tensor_core_unused"} <= rules  # its fp32 GEMMs: 88% of the pass's compute


@pytest.mark.parametrize("kw", [dict(warmup=3, vary=True),  # the frame's name says inference: one inference pass
                                dict(warmup=1, frame="measurement")])  # a name that says nothing: the GPU's bursts
def test_one_framed_pass_after_its_warm_ups_is_the_step(tmp_path, kw: dict) -> None:  # noqa: ANN001
    host, truth = framed_passes_host(tmp_path, measured=1, **kw)
    assert host["steps"]["source"] == "single_pass" and host["steps"]["count"] == 1
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["pass_ms"], rel=0.03)
    assert "the 1 before it is its warm-up" in host["steps"]["note"]  # the warm-ups run back to back: one burst


@pytest.mark.parametrize("kw, source, count", [
    (dict(warmup=0, frame="measurement", vary=True), "whole_capture", 1),  # no warm-up of the same work before it
    (dict(warmup=3, measured=4, vary=True), "gpu_busy_clusters", 4),  # a frame of several passes: its bursts
    (dict(warmup=3, phases=True, vary=True), "nvtx_top_range", 3),  # each pass's own ranges: the repeated span
])
def test_controls(tmp_path, kw: dict, source: str, count: int) -> None:  # noqa: ANN001
    host, _ = framed_passes_host(tmp_path, **{"measured": 1, **kw})
    assert host["steps"]["source"] == source and host["steps"]["count"] == count


def test_control_a_training_job_is_left_to_its_own_readings(tmp_path) -> None:  # noqa: ANN001
    """The same export with the job known as training: one range around a training job's last burst (an evaluation
    after its iterations) is no step of the loop, so the framed pass is not read there."""
    import dataclasses
    import os
    from types import SimpleNamespace

    from synthetic import nsysexport
    from tb_gpu_advisor import formats, frameworks
    from tb_gpu_advisor.job import detect_job
    from tb_gpu_advisor.model.trace import device_launches
    from tb_gpu_advisor.steps.detect import detect_steps

    path = os.path.join(str(tmp_path), "run.sqlite")
    nsysexport.write_framed_passes(path, warmup=1, measured=1, frame="measurement")
    trace = formats.read(SimpleNamespace(host="h", path=path, format="nsys", size=0))
    launches = device_launches(trace.h, trace.devices)
    job = detect_job(trace, launches, frameworks.detect_trace(trace))
    assert detect_steps(trace, launches, job).detection.source == "single_pass"  # premise: read as the framed pass
    trained = dataclasses.replace(job, kind=dataclasses.replace(job.kind, kind="training"))
    assert detect_steps(trace, launches, trained).detection.source != "single_pass"
