"""Kernel families by what a kernel does, on the kept captures whose reports they change (issue #37, h37-kernfam2).

* ``h200_jobs/hf_generate_llama``: HF ``generate`` on an H200 runs cuDNN's flash SDPA built for sm80
  (``cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_...``, a WMMA engine): main read it off the Tensor
  Cores (only ``wgmma`` named them), so the 16-bit card's Tensor Core share was 34.9% and
  ``aten::_cudnn_attention_forward`` 0% on them.
* ``wild/sglang_mi300x_prefill``: SGLang on an MI300X in bf16; aiter's and Composable Kernel's kernels are recorded
  Itanium-mangled, where ``DF16b`` is ``std::bfloat16_t`` -- main read its ``F16`` as fp16 (181 "fp16" kernels).
* ``wild/jax_mi355x``: Composable Kernel's attention-backward helpers are a row-wise dot (``FmhaBwdOGradDotOKernel``)
  and a cast (``FmhaBwdConvertQGradKernel``): "other" on main.
* ``h200_jobs/torch_compile_train``: Inductor's kernels say their kind (``triton_poi_`` pointwise, ``triton_per_`` /
  ``triton_red_`` reductions): "other" on main, or "elementwise" by an ``_add_`` among a reduction's fused ops.

Controls: the sm90 cuDNN engine (``h200_jobs/torch_fp16_inference_unmarked``) stays on the Tensor Cores; the
captures' matmul/conv classes and every finding are main's.
"""

from __future__ import annotations

import re

from tb_gpu_advisor import devices, frameworks
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

JOBS = FIXTURES / "h200_jobs"
WILD = FIXTURES / "wild"


def _host(logdir, run):
    (h,) = run_report(logdir, run).hosts
    return h


def _rows(h) -> list[dict]:
    cols = h.kernels.columns
    return [dict(zip(cols, r)) for r in h.kernels.rows]


def _class(row: dict) -> str:
    """A kernel row's class as the report's ``kernel_classes`` reads it."""
    name = row["kernel"]
    tc = row.get("tensor core", row.get("matrix core"))
    eligible = row.get("TC eligible", row.get("matrix core eligible"))
    return devices.kernel_class(name, tensor_core=bool(tc), tc_eligible=bool(eligible),
                                elementwise=frameworks.elementwise_one(name), collective=False,
                                kind=frameworks.kernel_kind_one(name))


def _sixteen_bit(h) -> dict:
    return next(c for c in h.headline if c.id == "sixteen_bit_share").detail


def test_cudnns_sm80_flash_engine_runs_on_the_tensor_cores():
    h = _host(JOBS, "hf_generate_llama")
    sdpa = [r for r in _rows(h) if "sdpa_sm80_flash_fprop" in r["kernel"]]
    assert sdpa and all(r["tensor core"] for r in sdpa)  # main: False (WMMA was no Tensor Core word)
    assert _sixteen_bit(h)["tensor_core_share"] > 0.38  # main: 0.3485


def test_cudnns_sm90_flash_engine_stays_on_the_tensor_cores_control():
    h = _host(JOBS, "torch_fp16_inference_unmarked")
    sdpa = [r for r in _rows(h) if "sdpa_sm90_flash_fprop_wgmma" in r["kernel"]]
    assert sdpa and all(r["tensor core"] and r["TC eligible"] for r in sdpa)


def test_a_mangled_bfloat16_is_bf16():
    h = _host(WILD, "sglang_mi300x_prefill")
    mangled = [r for r in _rows(h) if "DF16b" in r["kernel"]]
    assert mangled and {r["precision"] for r in mangled} == {"bf16"}  # main: fp16
    d = _sixteen_bit(h)
    assert d["fp16_kernels"] == 0 and d["bf16_share"] == 1.0  # main: 181 fp16 kernels, bf16 share 0.906


def test_composable_kernels_attention_helpers_are_a_reduction_and_a_cast():
    h = _host(WILD, "jax_mi355x")
    got = {re.search(r"FmhaBwd\w+", r["kernel"]).group(0): _class(r) for r in _rows(h) if "FmhaBwd" in r["kernel"]}
    assert got == {"FmhaBwdOGradDotOKernel": "reduction", "FmhaBwdConvertQGradKernel": "elementwise",
                   "FmhaBwdDQDKDVKernel": "matmul/conv"}  # main: the two helpers "other"
    by_class = {c["class"]: c for c in h.kernel_classes}
    assert by_class["matmul/conv"]["kernels"] == 10  # h37-attnkern's truth: 10 matmul launches a step, unchanged


def test_inductors_kernels_are_classed_by_the_kind_their_names_state():
    h = _host(JOBS, "torch_compile_train")
    triton = [r for r in _rows(h) if r["kernel"].startswith("triton_")]
    assert triton
    for r in triton:
        kind = "elementwise" if r["kernel"].startswith(("triton_poi_", "triton_for_")) else "reduction"
        assert _class(r) == kind, r["kernel"]  # main: "other" (or "elementwise" by an _add_ in a reduction's name)
    assert not any(r["TC eligible"] for r in triton)
    classes = {c["class"]: c["kernels"] for c in h.kernel_classes}
    assert classes["matmul/conv"] == 3  # the cuBLAS GEMMs, as on main
