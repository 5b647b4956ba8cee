"""``misaligned_dims`` speaks of the dtype its kernels ran, with that dtype's Tensor Core multiple (issue #37,
h37-left49; survey h37-survey26: a bf16-autocast MLP was told "fp16 dims must be multiples of 8").

The multiple is 16 bytes of the dtype (cuBLAS "Tensor Core Usage"): 8 elements of fp16/bf16, 16 of fp8/int8.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.rules import REGISTRY
from tests.support.contradictions import finding_problems
from tests.support.rules_factory import healthy, kernel


def _run(*precisions: str):
    m = healthy()
    m.kernels = []
    for p in precisions:  # each dtype: a fallback GEMM beside a Tensor Core one of the same time
        m.kernels += [kernel(f"gemv_{p}_fallback", "MatMul", 100.0, 200, False, True, p),
                      kernel(f"ampere_{p}_s16816gemm", "MatMul", 100.0, 200, True, True, p)]
    return REGISTRY["misaligned_dims"].check(m)


def test_the_alignment_is_sixteen_bytes_of_the_dtype():
    assert {p: devices.tc_align_elements(p) for p in ("fp16", "bf16", "tf32", "fp8", "int8")} == {
        "fp16": 8, "bf16": 8, "tf32": 4, "fp8": 16, "int8": 16}
    assert devices.tc_align_elements("other") is None


@pytest.mark.parametrize("dtype, mult", [("bf16", 8), ("fp8", 16), ("int8", 16)])
def test_the_finding_names_the_dtype_its_kernels_ran(dtype, mult):
    (f,) = _run(dtype)
    text = " ".join([f.summary, f.saving.assumption] + [a.text + (a.snippet or "") for a in f.actions])
    assert f"{dtype} dims must be multiples of {mult} elements" in f.summary
    assert "fp16" not in text, text
    assert f"((units + {mult - 1}) // {mult}) * {mult}" in f.actions[0].snippet
    assert f"multiples of {mult} so these kernels" in f.saving.assumption
    assert finding_problems(f, None) == []


def test_two_dtypes_each_get_their_own_multiple():
    (f,) = _run("fp16", "fp8")
    assert "fp16 dims must be multiples of 8" in f.summary and "fp8 dims must be multiples of 16" in f.summary
    assert "((units + 15) // 16) * 16" in f.actions[0].snippet  # the larger multiple aligns both
    assert finding_problems(f, None) == []


def test_fp16_kernels_keep_their_words():
    """Control: fp16 fallbacks are told what they always were: multiples of 8."""
    (f,) = _run("fp16")
    assert "fp16 dims must be multiples of 8" in f.summary
    assert "((units + 7) // 8) * 8" in f.actions[0].snippet
    assert finding_problems(f, None) == []


def test_the_property_catches_a_dtype_the_kernels_never_ran():
    """The report-wide property (``contradictions.finding_problems``): naming fp16 of bf16 kernels is caught."""
    (f,) = _run("bf16")
    f.summary = f.summary.replace("bf16 dims", "fp16 dims")
    assert finding_problems(f, None) == [f"{f.id}: names fp16 dims, the kernels it cites ran ['bf16']"]
