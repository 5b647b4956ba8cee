"""XLA GPU kernels as real JAX 0.11.2 captures on an H100 show them (``../shared/profiles/real-h100-jax``).

Why a module of its own: the kernel sequence of one jitted step is data read
off the real files (names, order, durations, ``kernel_details``, the HLO op
that launched each one, the JAX op path of its ``name`` stat); the capture
layout that places them is :mod:`.jaxcapture`.

What the real files showed (and the old generator did differently):

* bf16 GEMMs on Hopper are cuBLAS-Lt ``nvjet_sm90_tst_*`` kernels launched by
  HLO ops ``cublas-lt-matmul.N`` (forward) and ``custom-call.N`` (backward),
  each preceded by a 4-byte ``Memset`` of the same thunk -- not
  ``sm80_xmma_gemm_bf16...`` from ``cublas-gemm.N``;
* XLA's Triton GEMM is ``gemm_fusion_dot``; fusions are ``fusion_N``,
  ``loop_*_fusion``, ``input_*_fusion``, ``wrapped_*`` (kernel name = HLO op
  name with ``.`` -> ``_``, several HLO ops can share one kernel name);
* fp32 with ``precision=HIGHEST`` runs ``sm80_xmma_gemm_f32f32_f32f32_f32_*_ffma_*``
  and ``cutlass_80_simt_sgemm`` kernels: CUDA cores, no Tensor Cores;
* consecutive kernels overlap by ~0.13 us (programmatic dependent launch);
  a memset follows the previous kernel after ~1.4 us, a GEMM its memset
  after ~1.6 us.
"""

from __future__ import annotations

from dataclasses import dataclass

from synthetic.tfcapture import Gpu

#: The GPU of the real captures (plane stats of ``/device:GPU:0``, healthy_bf16).
H100 = Gpu("NVIDIA H100 80GB HBM3", (9, 0), 132, 1980000, 3352320000000, 85017493504)

#: Gaps before a kernel (us): after a kernel (PDL overlap), a memset, a GEMM after its memset.
OVERLAP_US = -0.13
MEMSET_GAP_US = 1.4
GEMM_AFTER_MEMSET_US = 1.6

NVJET_DETAILS = "regs:168 static_shared:0 dynamic_shared:213188 grid:2,66,1 block:384,1,1 occ_pct:18.75"
TRITON_GEMM_DETAILS = "regs:210 static_shared:0 dynamic_shared:196640 grid:512,1,1 block:256,1,1 occ_pct:12.5"
EW_BIG = "regs:16 static_shared:0 dynamic_shared:0 grid:32768,1,1 block:128,1,1 occ_pct:100"
EW_SMALL = "regs:16 static_shared:0 dynamic_shared:0 grid:32,1,1 block:128,1,1 occ_pct:100"
REDUCE_ROWS = "regs:32 static_shared:8256 dynamic_shared:0 grid:32,1,1 block:1024,1,1 occ_pct:100"
REDUCE_LOSS = "regs:32 static_shared:32 dynamic_shared:0 grid:4096,1,1 block:256,1,1 occ_pct:100"
REDUCE_ONE = "regs:32 static_shared:0 dynamic_shared:16 grid:1,1,1 block:128,1,1 occ_pct:100"
SCALAR = "regs:16 static_shared:0 dynamic_shared:0 grid:1,1,1 block:1,1,1 occ_pct:1.5625"
TINY_EW = "regs:16 static_shared:0 dynamic_shared:0 grid:128,1,1 block:128,1,1 occ_pct:100"

GEMM_BF16 = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_NNT"  # forward dot, bf16 in/out, Tensor Cores
GEMM_BF16_NTT = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NTT"
GEMM_BF16_TNN = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_TNN"  # with command buffers
GEMM_BF16_TNT = "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_TNT"  # same op without (another autotuning pick)
FFMA_NN = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"
FFMA_TN = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"
SIMT_SGEMM = "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nt_align1>(cutlass_80_simt_sgemm_256x128_8x4_nt_align1::Params)"


@dataclass(frozen=True)
class XlaKernel:
    """One device activity of an XLA GPU executable: a kernel, a memset or an in-module copy.

    ``name`` is what CUPTI reports on the stream (a memset is ``Memset <n>``
    there but ``Memset`` on the host launch record); ``hlo_op`` the thunk
    that launched it; ``op_name`` the JAX op path (the ``name`` stat, absent
    for some fusions: empty here); ``gap_us`` the idle before it when the
    stream is already busy (negative: it starts before the previous ends).
    """

    name: str
    hlo_op: str
    op_name: str
    us: float
    details: str = EW_BIG
    dtype: str = "bf16"
    gemm: bool = False
    kind: str = "kernel"  # kernel | memset | memcpy_d2d
    gap_us: float = OVERLAP_US
    nbytes: int = 0  # memset / memcpy size

    @property
    def occupancy(self) -> float:
        """``theoretical_occupancy_pct``: the ``occ_pct`` of the details."""
        return float(self.details.rsplit("occ_pct:", 1)[1]) if "occ_pct:" in self.details else 0.0


def _memset(hlo_op: str, op_name: str) -> XlaKernel:
    """The 4-byte workspace memset cuBLAS-Lt thunks issue before their GEMM."""
    return XlaKernel("Memset", hlo_op, op_name, 0.75, "", "", False, "memset", MEMSET_GAP_US, 4)


def _gemm(name: str, hlo_op: str, op_name: str, us: float, details: str = NVJET_DETAILS,
          dtype: str = "bf16", after_memset: bool = True) -> XlaKernel:
    return XlaKernel(name, hlo_op, op_name, us, details, dtype, True, "kernel",
                     GEMM_AFTER_MEMSET_US if after_memset else OVERLAP_US)


def _ew(name: str, hlo_op: str, op_name: str, us: float, details: str = EW_BIG, dtype: str = "bf16") -> XlaKernel:
    return XlaKernel(name, hlo_op, op_name, us, details, dtype)


def mlp_bf16_step(layers: int = 4, command_buffers: bool = True, fn: str = "train_step") -> list[XlaKernel]:
    """One ``jit(train_step)`` of the bf16 MLP (SGD) of healthy_bf16 / healthy_bf16_nocb: 41 activities at 4 layers.

    Order, names and HLO ops as in ``healthy_bf16_nocb`` (step 1): forward
    GEMM + relu fusion per layer, loss reduction, weight-gradient GEMMs
    (``custom-call.3..``), the Triton ``gemm_fusion_dot``, input-gradient
    GEMMs (``custom-call.1, .0, .2``) with the SGD ``wrapped_subtract``.
    """
    p = f"jit({fn})"
    fwd, bwd_t, bwd_d = f"{p}/jvp()/dot_general", f"{p}/transpose(jvp())/dot_general", f"{p}/transpose(jvp())/transpose"
    relu = f"{p}/jvp()/jit(relu)/max"
    ks: list[XlaKernel] = []
    for i in range(layers):
        op = f"cublas-lt-matmul.{i if i > 1 else 1 - i}"
        ks += [_memset(op, fwd), _gemm(GEMM_BF16, op, fwd, 169.0)]
        ks.append(_ew("fusion_34", f"fusion.{34 + i}", relu, 22.5) if i < layers - 1
                  else _ew("input_convert_reduce_fusion", "input_convert_reduce_fusion", "", 42.0, REDUCE_LOSS))
    tnn = GEMM_BF16_TNN if command_buffers else GEMM_BF16_TNT
    for j in range(layers - 1):
        op = f"custom-call.{layers - 1 + j}"
        sel = "input_reduce_select_fusion" + ("" if j == layers - 2 else f".{j + 1}")
        ks += [_memset(op, bwd_t), _gemm(tnn, op, bwd_t, 176.0), _ew("input_reduce_select_fusion_1", sel, "", 50.2, REDUCE_ROWS)]
    ks += [_gemm("gemm_fusion_dot", "gemm_fusion_dot", p, 189.0, TRITON_GEMM_DETAILS, after_memset=False),
           _ew("loop_subtract_fusion_3", f"loop_subtract_fusion.{layers - 1}", p, 2.5, EW_SMALL),
           _ew("fusion_34", "fusion.31", relu, 23.0)]
    order = [1, 0] + list(range(2, layers - 1))
    for n, k in enumerate(order):
        op = f"custom-call.{k}"
        ks += [_memset(op, bwd_d), _gemm(GEMM_BF16_NTT, op, bwd_d, 164.0),
               _ew("wrapped_subtract", "wrapped_subtract" + (f".{n}" if n else ""), f"{p}/sub", 29.4)]
        if n < len(order) - 1:
            ks += [_ew("loop_subtract_fusion_3", f"loop_subtract_fusion.{layers - 2 - n}", p, 1.6, EW_SMALL),
                   _ew("fusion_34", f"fusion.{32 + n}", relu, 24.0)]
    ks += [_ew("input_reduce_fusion", "input_reduce_fusion", "", 22.7, REDUCE_ROWS),
           _ew("loop_subtract_fusion_3", "loop_subtract_fusion", p, 1.4, EW_SMALL),
           _ew("input_reduce_fusion_1", "input_reduce_fusion.1", "", 1.8, REDUCE_ONE),
           _ew("loop_multiply_fusion", "loop_multiply_fusion", f"{p}/jvp()/div", 1.5, SCALAR)]
    return ks


def mlp_fp32_highest_step(fn: str = "train_step") -> list[XlaKernel]:
    """One step of fp32_highest (``precision=HIGHEST``, batch 2048): 37 activities, ~15.3 ms, all GEMMs on CUDA cores."""
    p = f"jit({fn})"
    nn = ("regs:254 static_shared:0 dynamic_shared:67584 grid:8,32,1 block:256,1,1 occ_pct:12.5")
    tn = "regs:255 static_shared:0 dynamic_shared:33792 grid:16,32,1 block:128,1,1 occ_pct:12.5"
    simt = "regs:202 static_shared:0 dynamic_shared:49152 grid:256,2,1 block:256,1,1 occ_pct:12.5"
    half = "regs:16 static_shared:0 dynamic_shared:0 grid:16384,1,1 block:128,1,1 occ_pct:100"
    wide = "regs:16 static_shared:0 dynamic_shared:0 grid:32768,1,1 block:128,1,1 occ_pct:100"
    copy = "regs:16 static_shared:0 dynamic_shared:0 grid:16384,1,1 block:256,1,1 occ_pct:100"

    def g(name: str, op: str, us: float, det: str) -> XlaKernel:
        return _gemm(name, op, f"{p}/dot_general", us, det, "fp32", after_memset=False)

    def e(name: str, op: str, us: float, det: str = half) -> XlaKernel:
        return _ew(name, op, p, us, det, "fp32")

    ks = [e("memcpy128", "copy.1", 45.5, copy), e("memcpy128", "copy.2", 46.0, copy)]
    for i in range(4):
        ks.append(g(FFMA_NN, f"custom-call.{i}", 1328.0, nn))
        if i < 3:
            ks += [e("fusion_31", f"fusion.{31 + i}", 20.7), e("fusion_33", f"fusion.{41 + i}", 23.8)]
    ks += [e("wrapped_subtract", "wrapped_subtract", 31.4), e("input_reduce_fusion", "input_reduce_fusion", 12.4),
           e("input_reduce_fusion_2", "input_reduce_fusion.2", 1.3, REDUCE_ONE),
           e("loop_multiply_fusion", "loop_multiply_fusion", 1.8, SCALAR),
           e("input_reduce_fusion_1", "input_reduce_fusion.1", 7.8, REDUCE_ROWS),
           e("loop_subtract_fusion", "loop_subtract_fusion.3", 1.3, EW_SMALL), e("fusion_30", "fusion.30", 18.0),
           e("fusion_35", "fusion.35", 22.6)]
    for k, (sel, sub) in enumerate((("input_reduce_select_fusion_2", "loop_subtract_fusion_1"),
                                    ("input_reduce_select_fusion_2", "loop_subtract_fusion_1"),
                                    ("input_reduce_select_fusion", "loop_subtract_fusion"))):
        w = 4 if k == 0 else 3 - k
        ks += [g(FFMA_TN, f"custom-call.{4 + k}", 1347.5, tn), e(sel, f"input_reduce_select_fusion.{k}", 35.5, REDUCE_ROWS),
               e(sub, f"loop_subtract_fusion.{k}", 1.4, EW_SMALL)]
        ks += [g(SIMT_SGEMM, f"custom-call.{7 + k}", 1308.5, simt), e(f"wrapped_subtract_{w}", f"wrapped_subtract.{w}", 65.0, wide)]
        if k == 0:
            ks += [g(SIMT_SGEMM, "custom-call.10", 1307.2, simt), e("wrapped_subtract_3", "wrapped_subtract.3", 64.7, wide)]
    return ks


#: Eager JAX ops of launch_bound_eager: (function, kernel, JAX op, takes a Python scalar -> 4-byte H2D).
EAGER_OPS = (("multiply", "loop_multiply_fusion", "mul", True), ("add", "loop_add_fusion", "add", True),
             ("tanh", "wrapped_tanh", "tanh", False), ("subtract", "loop_subtract_fusion", "sub", True))


def eager_op(fn: str, kernel: str, jax_op: str) -> list[XlaKernel]:
    """The one kernel of an un-jitted elementwise op on a 128-element array (its own ``jit_<fn>`` executable)."""
    return [XlaKernel(kernel, kernel, f"jit({fn})/{jax_op}", 1.13, TINY_EW, "fp32", gap_us=0.0)]


#: Eager JAX ops over large arrays (``x = jnp.tanh(x) * y + z`` ... on f32[4096,4096]): each reads and writes
#: 64 MiB, ~50 us on an H100's ~3 TB/s; (function, kernel, JAX op).
EAGER_BIG_OPS = (("multiply", "loop_multiply_fusion", "mul"), ("add", "loop_add_fusion", "add"),
                 ("tanh", "wrapped_tanh", "tanh"), ("subtract", "loop_subtract_fusion", "sub"))
EAGER_BIG_US = 50.0


def eager_big_op(fn: str, kernel: str, jax_op: str) -> list[XlaKernel]:
    """The one kernel of an un-jitted elementwise op on an f32[4096,4096] array (its own ``jit_<fn>`` executable)."""
    return [XlaKernel(kernel, kernel, f"jit({fn})/{jax_op}", EAGER_BIG_US, EW_BIG, "fp32", gap_us=0.0)]


def eager_dot() -> list[XlaKernel]:
    """``jnp.dot`` at the end of each eager step: Triton GEMM + a reduction."""
    return [XlaKernel("gemm_fusion_dot", "gemm_fusion_dot", "jit(dot)/dot_general", 1.69,
                      "regs:50 static_shared:0 dynamic_shared:8192 grid:64,1,1 block:128,1,1 occ_pct:56.25", "fp32", True, gap_us=0.0),
            XlaKernel("loop_reduce_fusion", "loop_reduce_fusion", "jit(dot)/dot_general", 1.25,
                      "regs:24 static_shared:0 dynamic_shared:0 grid:128,1,1 block:128,1,1 occ_pct:100", "fp32")]
