"""ROCm's traces run ROCm's libraries' kernels (h37-inuse63; h37-words63 *Left* 3).

``synthetic.torchtrace.as_rocm`` turned a CUDA trace into ROCm's PyTorch's -- HIP's calls, an MI300X, ROCm's copy
names -- but kept NVIDIA's library kernels: ``ampere_sgemm_128x64_tn``, ``sm80_xmma_gemm_*``, ``cutlass_*``,
``sm80_xmma_fprop_implicit_gemm_*``, ``flash_fwd_kernel`` on the AMD GPU, which no ROCm build launches.  The kept MI300X
traces (wild ``amd_mi300x``, ``ddp_mi300x_actckpt``, ``ddp_mi300x_nopool``) run Tensile's ``Cijk_..._MI...`` GEMMs,
MIOpen's ``igemm_*_gtcx3_*`` convolutions and aotriton's ``attn_fwd``, with ATen's, Triton's and RCCL's kernels under
their CUDA names.  Truth by construction: every generator's job, as ROCm writes it."""

from __future__ import annotations

import re

from synthetic import torchtrace as tt
from tb_gpu_advisor import devices

#: NVIDIA's own library kernels, by the prefixes its libraries give them (cuBLAS's architecture names, CUTLASS,
#: cuBLASLt's nvjet, cuDNN's xmma convolutions, FlashAttention's CUDA kernels)
_NVIDIA_LIBRARY = re.compile(r"^(?:ampere|volta|turing|hopper|sm\d+)_|^cutlass|^nvjet|xmma|^flash_fwd|cudnn")


def _rocm_kernels() -> set[str]:
    names: set[str] = set()
    for scenario in tt.SCENARIOS:
        ranks = tt.simulate(scenario, 2)
        names |= {e["name"] for e in tt.as_rocm(tt.trace_doc(ranks[0], len(ranks)))["traceEvents"]
                  if e.get("cat") == "kernel"}
    return names


def test_rocm_traces_run_no_nvidia_library_kernel():
    """Fails on base: ``ampere_sgemm_*``, ``sm80_xmma_*``, ``cutlass_*`` in the ROCm traces."""
    names = _rocm_kernels()
    assert not sorted(n for n in names if _NVIDIA_LIBRARY.search(n))


def test_rocm_gemms_are_tensiles_and_read_as_amds():
    """The GEMMs and convolutions NVIDIA's libraries ran are ROCm's libraries' (AMD's own kernels, which
    ``devices.vendor_shown`` reads as AMD's), matmuls by AMD's own reading, in the input type they had."""
    names = _rocm_kernels()
    own = {n for n in names if devices.amd.OWN_KERNELS.search(n) or n.startswith("igemm_")}
    assert own and all(devices.amd.gemm_kernel_one(n) for n in own)
    assert tt._rocm_kernel("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn").startswith("Cijk_Ailk_Bljk_HHS_")
    assert devices.amd.precision_one(tt._rocm_kernel("sm90_xmma_gemm_bf16")) == devices.amd.P_BF16


def test_framework_kernels_keep_their_names():
    """Control: ATen's, Triton's and RCCL's kernels are named alike on ROCm (the kept MI300X traces)."""
    for name in ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
                 "triton_poi_fused_copy_0", tt.NCCL_ALLREDUCE):
        assert tt._rocm_kernel(name) == name
