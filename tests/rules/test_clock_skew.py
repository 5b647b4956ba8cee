"""No GPU work starts before the call that launched it: a capture whose GPU events lead their own launch calls has
clocks that disagree, and every host/GPU interval in it is uncertain by the largest lead.

Truth by construction (a hand-written PyTorch trace: the same steps with the GPU's events shifted earlier, and not)
and on the real trace of someone else's job where it was found (``tests/fixtures/wild/gpt2_b200_clock_skew``,
SURVEY.md "Survey h37-survey15"): 113 of its 179 kernels start before their ``cudaLaunchKernel``, by up to 200 us,
while four other recordings of the same script (``gpt2_b200_one_step`` is one) start every kernel 6-90 us after it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tests.support import kineto_doc
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"
GPU = {"ph": "X", "pid": 0, "tid": 7}
HOST = {"ph": "X", "pid": 1, "tid": 1}
RULE = "capture_quality#clock_skew_us"


def _steps(shift_us: float, n: int = 6, kernels: int = 4) -> list[dict]:
    """``n`` ProfilerSteps of ``kernels`` launches each; every kernel starts 8 us after its launch call begins, then
    ``shift_us`` earlier (the GPU clock's error): a kernel leads its call by ``shift_us - 8`` us where that is > 0."""
    ev, corr, t = [], 0, 100.0
    for s in range(n):
        ev.append({**HOST, "cat": "user_annotation", "name": f"ProfilerStep#{s + 1}", "ts": t, "dur": 1000})
        for k in range(kernels):
            corr += 1
            at = t + 50 + 200 * k
            ev += [{**HOST, "cat": "cpu_op", "name": "aten::mm", "ts": at, "dur": 30},
                   {**HOST, "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": at + 5, "dur": 10,
                    "args": {"correlation": corr}},
                   {**GPU, "cat": "kernel", "name": f"ampere_sgemm_128x64_nn_{k}", "ts": at + 13 - shift_us,
                    "dur": 120, "args": {"correlation": corr, "device": 0, "stream": 7}}]
        t += 1000
    return ev


def _report(tmp_path: Path, shift_us: float) -> dict:
    return kineto_doc.session_report(tmp_path, _steps(shift_us))


def _skew(rep: dict) -> dict | None:
    return next((f for f in rep["findings"] if f["id"].endswith("#clock_skew_us")), None)


def test_gpu_work_leading_its_launch_by_150_us_says_the_clocks_disagree(tmp_path):
    f = _skew(_report(tmp_path, shift_us=150))
    assert f is not None and f["severity"] == "info"
    assert f["metric"]["value"] == pytest.approx(142.0)  # 150 us shift - the 8 us the kernel really waited
    assert "24 of 24 GPU events" in f["summary"] and "142 us" in f["summary"]


def test_gpu_work_after_its_launch_is_quiet(tmp_path):
    assert _skew(_report(tmp_path, shift_us=0)) is None


def test_a_lead_within_timestamp_rounding_is_quiet(tmp_path):
    # 12 us shift: each kernel leads its call by 4 us, under capture.clock_skew_us (10 us)
    assert _skew(_report(tmp_path, shift_us=12)) is None


@cache
def _wild(run: str) -> dict:
    s = next(s for s in discover(str(WILD)) if s.run == run)
    return session_report(s).to_dict()


def test_real_b200_capture_whose_kernels_lead_their_launches_by_200_us():
    """Read by hand: 113 of 179 kernels start before their launch call, the largest lead 200 us (the lead grows from
    22 us at the forward's end to 200 us in the optimizer step); the job's own finding -- host-bound -- still leads."""
    rep = _wild("gpt2_b200_clock_skew")
    f = _skew(rep)
    assert f is not None and f["metric"]["value"] == pytest.approx(200.0, abs=1.0)
    assert "113 of 179 GPU events" in f["summary"]
    assert rep["findings"][0]["rule"] == "unexplained_idle"


def test_real_b200_capture_of_the_same_script_with_agreeing_clocks_is_quiet():
    assert _skew(_wild("gpt2_b200_one_step")) is None
