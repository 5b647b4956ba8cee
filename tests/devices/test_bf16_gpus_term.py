"""Which GPUs run bfloat16, in each vendor's own words: one home, the vendor's ``TERMS["bf16_gpus"]`` (h37-inuse63).

``rules._kernels.fp16_reason`` composed NVIDIA's generation into the float16 fix where the capture does not say
whether its GPU runs bf16 ("float16 runs on every GPU with Tensor Cores, bfloat16 only on Ampere and newer"), and
AMD's and Intel's ``WORDS`` each rewrote that sentence of NVIDIA's.  A vendor whose words did not (Apple, Huawei's
Ascend) was told NVIDIA's generation: an Apple M2 Max "bfloat16 only on Ampere and newer", an Ascend 910B the same.
Truth by construction: a hand-built fp32 GEMM capture (``tests/support/rules_factory``) on each vendor's GPU, whose
name says no bf16 support the product knows."""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.rules import REGISTRY
from tests.support.rules_factory import fp32_gemms as _fp32

#: a GPU each vendor's own device names claim, of no capability the capture gives
GPUS = {"Apple": "Apple M2 Max", "Huawei": "Ascend910B", "Intel": "Intel(R) Data Center GPU Max 1550",
        "NVIDIA": "NVIDIA A100"}


def _fp16_fix(gpu: str) -> str:
    m = _fp32(cc="8.0")
    m.gpus[0].name, m.gpus[0].compute_capability = gpu, None
    (f,) = REGISTRY["tensor_core_unused"].check(m)
    return " ".join(a.text for a in f.actions if "float16 runs on every" in a.text)


@pytest.mark.parametrize("vendor", sorted(GPUS))
def test_the_fp16_fix_says_its_vendors_bf16_gpus(vendor):
    """Fails on base for Apple and Huawei: "bfloat16 only on Ampere and newer"."""
    own = devices.vendor(GPUS[vendor])
    assert own.VENDOR == vendor
    text = _fp16_fix(GPUS[vendor])
    assert own.TERMS["bf16_gpus"] in text, text
    others = {v.TERMS["bf16_gpus"] for v in devices.VENDORS} - {own.TERMS["bf16_gpus"]}
    assert not [t for t in others if t in text], text
    assert vendor == "NVIDIA" or "Ampere" not in text, text


def test_no_vendor_rewrites_the_bf16_sentence():
    """One home: the sentence is each vendor's term, never NVIDIA's rewritten by another vendor's ``WORDS`` (fails on
    base: AMD's and Intel's rewrote "bfloat16 only on Ampere and newer")."""
    nvidia = devices.nvidia.TERMS["bf16_gpus"]
    assert not [(v.VENDOR, k) for v in devices.VENDORS for k, _ in getattr(v, "WORDS", ()) if nvidia in k]
