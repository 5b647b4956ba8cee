"""The MFU card where matmul kernels ran but no op recorded their shapes (issue #37, h37-mfugraph).

On main sglang_b300_decode and sglang_mi300x_decode printed MFU "n/a: no matmul, convolution or attention op is
recorded in the trace" beside kernel tables of bmm/nvjet/Tensile GEMMs and FMHA: their kernels were replayed from CUDA
(HIP) graphs, and a replay is one launch on the host, with no op per kernel to carry shapes.  The reason was about the
ops and read as about the work.  Now the card says the matmul kernels ran, how many and how long, that their FLOPs are
unknown because no op recorded their shapes, and -- where most of their time is in graph replays -- why.  A capture
with no matmul kernel at all keeps "no matmul"; a kernels-only capture (no op events) says the kernels ran without the
graph clause.  The property ``mfu-kernels`` (tests/support/properties.py) walks every report.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from tests.support.paths import FIXTURES
from tests.support.properties import mfu_kernels_problems
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"


def _mfu(run: str):
    (h,) = run_report(WILD, run).hosts
    (card,) = [c for c in h.headline if c.id == "mfu"]
    return h, card


def _matmul_per_step(h) -> float:
    return sum(float(c["launches_per_step"]) for c in h.kernel_classes if c["class"] == "matmul/conv")


@pytest.mark.parametrize("run, graphs", [("sglang_b300_decode", "CUDA graphs"), ("sglang_mi300x_decode", "HIP graphs")])
def test_matmuls_replayed_from_graphs_are_said_to_have_run_without_shapes(run, graphs):
    h, card = _mfu(run)
    why = " ".join(card.meaning.split())
    assert card.value is None and card.detail["needs_setting"] == "model_flops"
    assert "no matmul" not in why  # main: "no matmul, convolution or attention op is recorded in the trace"
    ran = re.match(r"(\d+) matmul/conv kernels ran per step and GPU \(([\d.]+ (?:us|ms|s))\) but no op recorded their shapes, "
                   r"so their FLOPs are unknown: (\d+)% of their time ran in replays of (.+?), and", why)
    assert ran, why
    assert int(ran.group(1)) == _matmul_per_step(h) > 0  # the kernel table's own count of matmul/conv launches
    assert int(ran.group(3)) >= 50 and ran.group(4) == graphs
    assert not mfu_kernels_problems(h.host, h)


def test_matmul_kernels_of_a_kernels_only_capture_are_said_without_graphs():
    # vit_a4000_avg_batch records CUDA activities only: no op at all, no graph
    h, card = _mfu("vit_a4000_avg_batch")
    why = " ".join(card.meaning.split())
    # its one guessed pass is no step the capture marks: the count is the pass's (h37-words20)
    assert why.startswith(f"{_matmul_per_step(h):.0f} matmul/conv kernels ran in the pass (")
    assert "replays" not in why and "no matmul" not in why


def test_a_capture_with_no_matmul_kernel_keeps_no_matmul():
    # the control: compiled_a100_triton's kept steps run no matmul/conv kernel and record no matmul op
    h, card = _mfu("compiled_a100_triton")
    assert _matmul_per_step(h) == 0
    assert card.meaning == "no matmul, convolution or attention op is recorded in the trace"
    assert not mfu_kernels_problems(h.host, h)


def test_no_matmul_said_beside_matmul_kernels_is_caught():
    h, card = _mfu("sglang_b300_decode")
    main = dataclasses.replace(card, meaning="no matmul, convolution or attention op is recorded in the trace")
    bad = dataclasses.replace(h, headline=[main if c.id == "mfu" else c for c in h.headline])
    (v,) = mfu_kernels_problems(h.host, bad)
    assert v.startswith("mfu-kernels: ") and "289 matmul/conv kernels per step" in v  # 193 before trtllm-gen's bmm_ GEMMs counted (h37-kernames)
