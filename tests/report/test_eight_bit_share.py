"""An FP8 model's kernel time is said as 8-bit, not left to read as fp32 (issue #37, h37-review12's "left": the
rocmProfileData vLLM FP8 trace's card read "16-bit kernel time 17.6%" where 80.9% of the known-precision kernel time
is FP8 GEMMs).  The card's value stays the guide's fp16/bf16 share (what `mixed_precision_off` grades); its display
and detail add the 8-bit part.  The law over every report is ``properties._precision_parts``."""

from __future__ import annotations

import dataclasses
import re

import pytest

from tb_gpu_advisor.model.schema import HostReport
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.properties import _precision_parts
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"


def _card(h: HostReport):
    (c,) = [c for c in h.headline if c.id == "sixteen_bit_share"]
    return c


@pytest.mark.parametrize("run", ["vllm_rpd_fp8", "vllm_b200_tp8"])
def test_an_fp8_models_card_says_its_8_bit_time(run):
    (h,) = run_report(WILD, run).hosts[:1]
    c = _card(h)
    eight = c.detail["eight_bit_share"]
    assert eight > 0.3  # FP8 GEMMs: the bulk of the known-precision kernel time in both
    # the display's share to a tenth of a percent, from the exact share; the detail's is rounded to 4 places first
    # (vllm_rpd_fp8: 0.7545 in the detail, "75.5% 8-bit" shown), so the two agree within the rounding of both
    shown = float(re.search(r"([\d.]+)% 8-bit", c.display).group(1))
    assert abs(shown - 100 * eight) <= 0.051
    assert c.value + eight <= 1.0005
    assert not _precision_parts(h)


def test_a_bf16_models_card_is_unchanged():
    """Control: no fp8/int8 kernel, no 8-bit words; the value is the 16-bit share as before."""
    if not (SHARED_PROFILES / "real-h100-jax" / "healthy_bf16").is_dir():
        pytest.skip(f"real captures (../shared/profiles) not here ({SHARED_PROFILES})")
    (h,) = run_report(SHARED_PROFILES / "real-h100-jax", "healthy_bf16").hosts[:1]
    c = _card(h)
    assert not c.detail.get("eight_bit_share") and "8-bit" not in c.display


def test_a_card_leaving_out_its_8_bit_time_is_caught():
    (h,) = run_report(WILD, "vllm_rpd_fp8").hosts[:1]
    c = _card(h)
    bad = dataclasses.replace(h, headline=[dataclasses.replace(c, display="17.6%")])
    assert _precision_parts(bad) and not _precision_parts(h)


def test_a_real_cache_write_into_an_fp8_cache_is_8_bit_time():
    """wild/vllm_b200_tp8 (vLLM on a B200 with an fp8 KV cache): its 36 ``reshape_and_cache_flash_kernel<__nv_bfloat16,
    unsigned char, (vllm::Fp8KVCacheDataType)1>`` write the cache in fp8 (``cache_t`` ``unsigned char``, the enum 1:
    e4m3); main read them bf16 by their input's word and the card's 16-bit share held their 163 us (34.5% -> 32.6%)."""
    (h,) = run_report(WILD, "vllm_b200_tp8").hosts[:1]
    cols = h.kernels.columns
    rows = [r for r in h.kernels.rows if "reshape_and_cache_flash_kernel" in r[cols.index("kernel")]]
    assert rows and {r[cols.index("precision")] for r in rows} == {"fp8"}
    assert _card(h).detail["bf16_kernels"] == 543  # 579 on main, less the 36 cache writes


def test_byte_kernels_are_no_8_bit_time():
    """h37-int8share: ATen's kernels over bytes are no 8-bit arithmetic (``devices.integer_arithmetic_one``).
    wild/rocprof_mxfp4_setup_gfx950 (an MXFP4 GEMM benchmark's set-up on a gfx950: random uint8 bytes shifted and
    OR-ed into packed fp4, no multiply at all) read "0.0% 16-bit, 100.0% 8-bit" on main; wild/part_forward_a100 (an
    fp16/fp32 forward) "97.3% known: 62.5% 16-bit, 1.3% 8-bit" by its index copies' ``char*`` arguments."""
    (setup,) = run_report(WILD, "rocprof_mxfp4_setup_gfx950").hosts
    c = _card(setup)
    assert not c.detail.get("eight_bit_share") and "8-bit" not in c.display
    cols = setup.kernels.columns
    assert {r[cols.index("precision")] for r in setup.kernels.rows} == {"unknown"}  # main: all int8
    (fwd,) = run_report(WILD, "part_forward_a100").hosts[:1]
    c = _card(fwd)
    assert not c.detail.get("eight_bit_share") and "8-bit" not in c.display
    assert c.value > 0.625  # the 16-bit share of the rest, the index copies' time out of the known part
    assert not _precision_parts(setup) and not _precision_parts(fwd)


@pytest.mark.parametrize("run, low, high", [
    ("llamacpp_rocprof_r9700", 0.90, 0.92),  # llama.cpp's int8 MMQ (``mul_mat_q<Q4_0>``): 91.2% on main
    ("torchrec_shampoo_128", 0.114, 0.116),  # FBGEMM's fp8 codec over ``unsigned char``: 11.5% on main
])
def test_control_int8_and_fp8_arithmetic_keeps_its_8_bit_share(run, low, high):
    (h,) = run_report(WILD, run).hosts[:1]
    c = _card(h)
    assert low <= c.detail["eight_bit_share"] <= high and "8-bit" in c.display
