"""One function per situation of the GPU performance guide, each with its truth.

``SCENARIOS[name](num_steps=8, seed=0, scale=1) -> Scenario``.  ``scale``
multiplies the model depth (events per step), ``num_steps`` the capture
length: together they size big files for issue 5.

``fixed=True`` (the scenarios in :data:`FIXES`) gives the same capture with the guide's fix applied and
nothing else changed: the before/after pairs the diff's saving calibration is checked on (``docs/diff.md``).
Where the fix changes kernel speed (precision, alignment, fusion), the after-capture runs at the speedup the
rule assumes, so those pairs check the saving arithmetic, not the assumption; real captures check that.

Expected findings (``Truth.findings``): every rule listed must be reported at
that severity; a rule not listed must not be reported at ``warning`` or
``critical`` (``info`` hints are allowed anywhere).  Magnitudes are chosen
far from the stock tool's thresholds (5/20 % input, 3/15 % launch and
"others") so a reasonable threshold table agrees.  Loss-scaling host ops
(``LossScaleOptimizer/...``) are expected under ``loss_scaling_gaps``, not
``host_op_placement``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from synthetic import kernels as K
from synthetic.builder import SpaceBuilder
from synthetic.tfcapture import A100, V100, Capture, Kernel, Op
from synthetic.truth import Truth
from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T

SESSION = "2026_01_01_00_00_00"


@dataclass
class Scenario:
    """A generated capture: one XSpace per host, and its truth."""

    name: str
    spaces: dict[str, SpaceBuilder]  # host name -> space
    truth: Truth

    def encode(self) -> dict[str, bytes]:
        """Host name -> ``.xplane.pb`` bytes."""
        return {host: space.encode() for host, space in self.spaces.items()}

    def write(self, logdir: str | Path, run: str | None = None, session: str = SESSION) -> list[Path]:
        """Write ``<logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb``; returns the paths."""
        folder = Path(logdir) / (run or self.name) / "plugins" / "profile" / session
        paths = []
        for host, space in self.spaces.items():
            path = folder / f"{host}.xplane.pb"
            space.write(path)
            paths.append(path)
        return paths


# -- model pieces ---------------------------------------------------------------


def _dense_layers(layers: int, gemm: Kernel, ew: Kernel, prefix: str = "model", gemm_us: float | None = None,
                  ew_us: float | None = None, shape: str | None = None) -> list[Op]:
    """Forward and backward of ``layers`` dense layers plus the optimizer update."""
    g = K.sized(gemm, gemm_us or gemm.us, shape)
    e = K.sized(ew, ew_us or ew.us)
    fwd, bwd, opt = [], [], []
    for i in range(layers):
        scope = f"{prefix}/dense_{i}"
        fwd += [Op(f"{scope}/MatMul:MatMul", [g]), Op(f"{scope}/BiasAdd:BiasAdd", [e]), Op(f"{scope}/Relu:Relu", [e])]
        grad = f"gradient_tape/{prefix}/dense_{i}"
        bwd += [Op(f"{grad}/MatMul:MatMul", [g]), Op(f"{grad}/MatMul_1:MatMul", [g]),
                Op(f"{grad}/BiasAdd/BiasAddGrad:BiasAddGrad", [e])]
        opt.append(Op(f"Adam/Adam/update_{i}/ResourceApplyAdam:ResourceApplyAdam", [K.ADAM_F32]))
    return fwd + bwd[::-1] + opt


def _input_copy(nbytes: int = 1 << 20) -> Op:
    """The batch's host-to-device copy at the start of a step (expected, async)."""
    return Op("IteratorGetNext/_2:_Send", [], host_us=4, h2d_bytes=nbytes)


def _truth(name: str, desc: str, caps: list[Capture], findings: dict[str, str], dominant: str | None) -> Truth:
    """Measure the truth from what the captures wrote (several hosts are merged)."""
    nums = [c.truth_numbers() for c in caps]
    first = nums[0]
    n = first["num_steps"]
    merged: dict = {}
    for key in ("device_compute_ps", "collective_ps", "launch_wait_ps"):
        merged[key] = {g: v for x in nums for g, v in x[key].items()}
    counts: dict[str, int] = {}
    ktime: dict[str, int] = {}
    for x in nums:
        for k, v in x["kernel_counts"].items():
            counts[k] = counts.get(k, 0) + v
        for k, v in x["kernel_time_ps"].items():
            ktime[k] = ktime.get(k, 0) + v
    tall = sum(x["_tall"] for x in nums) or 1
    return Truth(
        scenario=name, description=desc, num_hosts=len(caps), gpus_per_host=caps[0].num_gpus,
        step_marker="custom_loop" if caps[0].marker != "keras3" else "keras3",
        gpu_thread_mode=caps[0].thread_mode, num_steps=n, steady_steps=n - 2 if n > 5 else n,
        step_time_ps=first["step_time_ps"], device_compute_ps=merged["device_compute_ps"],
        collective_ps=merged["collective_ps"], launch_wait_ps=merged["launch_wait_ps"],
        input_wait_ps=first["input_wait_ps"], host_compute_ps=first["host_compute_ps"],
        between_steps_ps=first["between_steps_ps"],
        memcpy_ps={k: sum(x["memcpy_ps"][k] for x in nums) for k in first["memcpy_ps"]},
        memcpy_count={k: sum(x["memcpy_count"][k] for x in nums) for k in first["memcpy_count"]},
        sync_memcpy_count=sum(x["sync_memcpy_count"] for x in nums),
        fp16_share=sum(x["_t16"] for x in nums) / tall, bf16_share=sum(x["_tb16"] for x in nums) / tall,
        stock_16bit_share=sum(x["_t16_stock"] for x in nums) / tall,
        tensor_core_kernels=frozenset().union(*(x["tensor_core_kernels"] for x in nums)),
        non_tensor_core_gemms=frozenset().union(*(x["non_tensor_core_gemms"] for x in nums)),
        kernel_counts=counts, kernel_time_ps=ktime,
        allreduce_per_gpu_per_step=first["allreduce_per_gpu_per_step"],
        eager_op_count=first["eager_op_count"], host_op_count=first["host_op_count"],
        device_op_count=first["device_op_count"], findings=findings, dominant=dominant,
        per_step=first["per_step"], files=[f"{c.space.hostname}.xplane.pb" for c in caps],
    )


def _single(name: str, desc: str, cap: Capture, findings: dict[str, str], dominant: str | None,
            fixed: bool = False) -> Scenario:
    """A one-host scenario; ``fixed``: its fixed twin, named ``<name>_fixed`` and expecting no finding."""
    if fixed:
        name, desc, findings, dominant = f"{name}_fixed", f"{name} with the guide's fix applied, nothing else changed", {}, None
    return Scenario(name, {cap.space.hostname: cap.finish()}, _truth(name, desc, [cap], findings, dominant))


# -- one GPU ---------------------------------------------------------------------


def ideal(num_steps: int = 8, seed: int = 0, scale: int = 1) -> Scenario:
    """Busy GPU, fp16 Tensor Core GEMMs, input prefetched: nothing to fix."""
    cap = Capture(1, A100, seed=seed, marker="keras3")
    ops = [_input_copy()] + _dense_layers(8 * scale, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=220, ew_us=18)
    ops[4].kernels = [K.sized(K.GEMM_FP16_XMMA, 220)]  # a second Tensor Core GEMM family
    for s in range(num_steps):
        cap.step([ops], input_wait_us=25)
    return _single("ideal", "Busy GPU with fp16 Tensor Core GEMMs and a prefetched input pipeline", cap, {}, None)


def input_bound(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """The host waits ~6 ms per step in IteratorGetNext while the GPU idles (fixed: prefetched, 25 us)."""
    cap = Capture(1, A100, seed=seed, marker="custom_loop")
    ops = [_input_copy()] + _dense_layers(6 * scale, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=200, ew_us=18)
    for s in range(num_steps):
        cap.step([ops], input_wait_us=25 if fixed else 6000 * scale)
    return _single("input_bound", "Input pipeline too slow: host waits for the next batch every step", cap,
                   {"input_bound": "critical"}, "input_bound", fixed)


def step_gaps_callbacks(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """Keras callbacks/metrics on the host between steps leave the GPU idle ~40 % (fixed: no callbacks)."""
    cap = Capture(1, A100, seed=seed, marker="keras3")
    ops = [_input_copy()] + _dense_layers(6 * scale, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=200, ew_us=18)
    between = [("ProgbarLogger.on_train_batch_end", 900.0 * scale), ("TensorBoard.on_train_batch_end", 1400.0 * scale),
               ("MetricsCallback.on_train_batch_end", 700.0 * scale)]
    for s in range(num_steps):
        cap.step([ops], input_wait_us=25, between_events=None if fixed else between)
    return _single("step_gaps_callbacks", "Callbacks and metrics run on the host between steps; GPU idle in the gaps",
                   cap, {"step_gaps": "critical"}, "step_gaps", fixed)


def launch_bound(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """Hundreds of 2-5 us kernels; each costs the host ~25 us to launch (fixed: one graph launch, ~1 us per kernel)."""
    cap = Capture(1, A100, seed=seed, marker="custom_loop")
    ops = [_input_copy(1 << 16)]
    for i in range(300 * scale):
        k = K.sized(K.EW_MUL_F32 if i % 2 else K.EW_ADD_F32, 2.0 + 3.0 * ((i * 7) % 10) / 10)
        ops.append(Op(f"model/scalar_ops/{'mul' if i % 2 else 'add'}_{i}:{'Mul' if i % 2 else 'AddV2'}", [k],
                      host_us=0.5 if fixed else 12, launch_us=0.5 if fixed else 14))
    for s in range(num_steps):
        cap.step([ops], input_wait_us=25)
    return _single("launch_bound", "Many tiny kernels: the GPU idles waiting for the host to launch the next one",
                   cap, {"launch_bound": "critical", "xla_not_used": "warning"}, "launch_bound", fixed)


def eager(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """Ops run op by op (EagerExecute, is_eager=1), no tf.function (fixed: a tf.function graph)."""
    cap = Capture(1, A100, seed=seed, marker="custom_loop")
    ops = [_input_copy()] + _dense_layers(4 * scale, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=60, ew_us=10)
    for op in ops:
        op.host_us, op.launch_us = (6, 6) if fixed else (45, 15)
    for s in range(num_steps):
        cap.step([ops], input_wait_us=25, eager=not fixed)
    return _single("eager", "Training step runs eagerly (no tf.function): per-op dispatch overhead on the host",
                   cap, {"eager_execution": "critical", "launch_bound": "critical"}, "eager_execution", fixed)


def host_placement(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """Ops placed on the host mid-step: synchronous D2H copies, H2D copies back (fixed: the same ops on the GPU)."""
    cap = Capture(1, A100, seed=seed, marker="keras3")
    ops = [_input_copy()] + _dense_layers(6 * scale, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=200, ew_us=18)
    on_gpu = [K.sized(K.EW_ADD_HALF, 20)]  # the fix: a device kernel, no copies, no host work
    for i, pos in enumerate((5, 12, 20)):
        ops.insert(pos, Op(f"model/unique_{i}/Unique:Unique", on_gpu) if fixed else
                   Op(f"model/unique_{i}/Unique:Unique", [], host_us=350, on_host=True,
                      d2h_bytes=4 << 20, h2d_bytes=4 << 20, sync_copy=False))
    ops.insert(25, Op("model/lookup/StringToHashBucketFast:StringToHashBucketFast", on_gpu) if fixed else
               Op("model/lookup/StringToHashBucketFast:StringToHashBucketFast", [], host_us=300, on_host=True,
                  d2h_bytes=2 << 20, h2d_bytes=2 << 20, sync_copy=True))
    for s in range(num_steps):
        cap.step([ops], input_wait_us=25)
    return _single("host_placement", "Ops placed on the CPU mid-step force device-to-host and host-to-device copies",
                   cap, {"host_op_placement": "critical", "excessive_memcpy": "warning"}, "host_op_placement", fixed)


def _peak_ratio(gpu, to: int, frm: int) -> float:  # noqa: ANN001 - a tfcapture GPU
    """How much faster compute-bound GEMMs run in precision ``to`` than ``frm`` on ``gpu``: its dense peaks' ratio."""
    return devices.peak_flops(gpu.name, gpu.cc, to).value / devices.peak_flops(gpu.name, gpu.cc, frm).value


def fp32_no_tensor_cores(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False,
                         callback_us: float = 0.0) -> Scenario:
    """fp32 GEMMs (volta_sgemm) on a V100 (compute capability 7.0): Tensor Cores unused.

    Fixed: mixed precision, at the speedups the rule assumes: fp16 Tensor Core GEMMs faster by the ratio of the
    V100's dense peaks (fp16 Tensor Core over fp32, ``devices/peaks.py``: the GEMMs keep their share of the peak),
    element-wise kernels ``mixed_precision.memory_bound_speedup`` faster.  ``callback_us``: a Keras callback's
    recorded host work on the Python thread right after each step's ``FunctionRun`` returns (which it does once the
    step's GPU work drains: the host waited for it inside the call), in the fixed twin too."""
    cap = Capture(1, V100, seed=seed, marker="custom_loop")
    sp = _peak_ratio(V100, devices.P_FP16, devices.P_FP32) if fixed else 1.0
    spm = T("mixed_precision.memory_bound_speedup") if fixed else 1.0
    gemm, gemm_tn = (K.GEMM_FP16_VOLTA_TC, K.GEMM_FP16_VOLTA_TC) if fixed else (K.SGEMM_VOLTA, K.SGEMM_VOLTA_TN)
    ops = [_input_copy()] + _dense_layers(6 * scale, gemm, K.EW_ADD_HALF if fixed else K.EW_ADD_F32, gemm_us=420 / sp,
                                          ew_us=30 / spm)
    for op in ops[1::7]:
        op.kernels = [K.sized(gemm_tn, 300 / sp)] if op.kernels and op.kernels[0].gemm else op.kernels
    between = [("TensorBoard.on_train_batch_end", callback_us)] if callback_us else None
    for s in range(num_steps):
        cap.step([ops], input_wait_us=25, between_events=between)
    return _single("fp32_no_tensor_cores", "All GEMMs run in fp32 without Tensor Cores on a Volta GPU",
                   cap, {"mixed_precision_off": "critical", "tensor_core_unused": "critical"}, "mixed_precision_off",
                   fixed)


def fp16_misaligned(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """Mixed precision on, but MatMul dims (1001) are not multiples of 8: non-Tensor-Core fp16 GEMMs.

    Fixed: dims padded to 1008, Tensor Core GEMMs at the rule's assumed speedup (``misaligned.tc_speedup``)."""
    cap = Capture(1, A100, seed=seed, marker="keras3")
    dim = 1008 if fixed else 1001
    shape = f"(half[256,{dim}];half[{dim},{dim}])"
    gemm_us = 520 / T("misaligned.tc_speedup") if fixed else 520
    ops = [_input_copy()] + _dense_layers(6 * scale, K.GEMM_FP16_TC if fixed else K.HGEMM_FALLBACK, K.EW_ADD_HALF,
                                          gemm_us=gemm_us, ew_us=18, shape=shape)
    for s in range(num_steps):
        cap.step([ops], input_wait_us=25)
    return _single("fp16_misaligned", "fp16 MatMuls with dimensions 1001 (not a multiple of 8) fall back to "
                   "non-Tensor-Core kernels", cap, {"misaligned_dims": "critical", "tensor_core_unused": "critical"},
                   "misaligned_dims", fixed)


def loss_scaling(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """Dynamic loss scaling: conditional host ops after each step, GPU idle meanwhile (fixed: no host conditionals)."""
    cap = Capture(1, A100, seed=seed, marker="keras3")
    ops = [_input_copy()] + _dense_layers(6 * scale, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=200, ew_us=18)
    ops.append(Op("LossScaleOptimizer/IsFinite/All:All", [K.sized(K.EW_MUL_F32, 4)], d2h_bytes=4, sync_copy=True))
    tail = [Op("LossScaleOptimizer/cond:If", host_us=350), Op("LossScaleOptimizer/cond/then/_12/Identity:Identity", host_us=300),
            Op("LossScaleOptimizer/cond_1/AssignAddVariableOp:AssignAddVariableOp", host_us=250)]
    for s in range(num_steps):
        cap.step([ops], input_wait_us=25, tail_host_ops=None if fixed else tail)
    return _single("loss_scaling", "Dynamic loss scaling adds conditional host ops between steps", cap,
                   {"loss_scaling_gaps": "warning"}, "loss_scaling_gaps", fixed)


def no_xla(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """Long chains of small elementwise kernels between GEMMs, no XLA clusters.

    Fixed: each chain is one fused kernel taking as long as the chain's longest kernel, as the rule assumes."""
    cap = Capture(1, A100, seed=seed, marker="custom_loop")
    ops = [_input_copy()]
    for i in range(6 * scale):
        ops.append(Op(f"model/block_{i}/dense/MatMul:MatMul", [K.sized(K.GEMM_FP16_TC, 120)]))
        if fixed:
            chain_us = max(16 + (j % 3) * 2 for j in range(12))
            ops.append(Op(f"model/block_{i}/cluster_0/_XlaRun:_XlaRun", [K.sized(K.XLA_FUSION, chain_us)]))
            continue
        for j, (name, typ) in enumerate([("add", "AddV2"), ("mul", "Mul"), ("gelu/mul", "Mul"), ("gelu/add", "AddV2"),
                                         ("gelu/tanh", "Tanh"), ("gelu/mul_1", "Mul"), ("dropout/mul", "Mul"),
                                         ("layer_norm/sub", "Sub"), ("layer_norm/mul", "Mul"), ("layer_norm/add", "AddV2"),
                                         ("residual/add", "AddV2"), ("scale/mul", "Mul")]):
            k = K.sized(K.EW_MUL_HALF if typ == "Mul" else K.EW_ADD_HALF, 16 + (j % 3) * 2)
            ops.append(Op(f"model/block_{i}/{name}:{typ}", [k], host_us=5, launch_us=5))
    for s in range(num_steps):
        cap.step([ops], input_wait_us=25)
    return _single("no_xla", "Chains of small elementwise kernels that XLA would fuse; XLA not used", cap,
                   {"xla_not_used": "warning"}, "xla_not_used", fixed)


# -- several GPUs ----------------------------------------------------------------


def _replica_ops(g: int, layers: int) -> list[Op]:
    return [_input_copy()] + _dense_layers(layers, K.GEMM_FP16_TC, K.EW_ADD_HALF, prefix=f"replica_{g}/model",
                                           gemm_us=200, ew_us=18)


def multi_gpu_balanced(num_steps: int = 8, seed: int = 0, scale: int = 1) -> Scenario:
    """4 GPUs, same work, one NCCL AllReduce per GPU per step, gpu_private launch threads."""
    cap = Capture(4, A100, seed=seed, marker="keras3", thread_mode="gpu_private")
    ops = [_replica_ops(g, 6 * scale) for g in range(4)]
    for s in range(num_steps):
        cap.step(ops, input_wait_us=25, allreduce=[K.sized(K.NCCL_ALLREDUCE, 150)])
    return _single("multi_gpu_balanced", "4 GPUs (MirroredStrategy) with balanced work and one AllReduce per step",
                   cap, {}, None)


def multi_gpu_gpu0_oversubscribed(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """GPU0 gets ~1.8x the work of the others, which then wait at the AllReduce (fixed: the extra work split evenly)."""
    cap = Capture(4, A100, seed=seed, marker="custom_loop", thread_mode="gpu_private")
    ops = [_replica_ops(g, 6 * scale) for g in range(4)]
    if fixed:  # the same extra work, a quarter on each GPU
        ops = [o + _dense_layers(5 * scale, K.GEMM_FP16_TC, K.EW_ADD_HALF, prefix=f"extra_{g}/metrics_model", gemm_us=50,
                                 ew_us=K.EW_ADD_HALF.us / 4) for g, o in enumerate(ops)]
    else:
        ops[0] = ops[0] + _dense_layers(5 * scale, K.GEMM_FP16_TC, K.EW_ADD_HALF, prefix="extra/metrics_model", gemm_us=200)
    for s in range(num_steps):
        cap.step(ops, input_wait_us=25, allreduce=[K.sized(K.NCCL_ALLREDUCE, 150)])
    return _single("multi_gpu_gpu0_oversubscribed", "GPU0 does much more work per step than GPUs 1-3", cap,
                   {"gpu_imbalance": "critical"}, "gpu_imbalance", fixed)


def two_ranks_one_slow_call(num_steps: int = 4, seed: int = 0, extra_work: bool = False) -> Scenario:
    """Two GPUs, the same work each step; in the first step one GEMM call on GPU0 takes 20 ms (a first call's
    autotuning, a clock dip), the same call 200 us on GPU1: no imbalance of work (h37-imb56, the compiled MoE's one
    2.44 ms sgemm on rank 0).  ``extra_work``: the control -- GPU0's GEMMs take 30% longer in every call, every step
    (more work per rank 0 GEMM), with the same one slow call: a real imbalance, found."""
    cap = Capture(2, A100, seed=seed, marker="custom_loop", thread_mode="gpu_private")
    ops = [[_input_copy()] + _dense_layers(6, K.GEMM_FP16_TC, K.EW_ADD_HALF, prefix=f"replica_{g}/model",
                                           gemm_us=260 if extra_work and g == 0 else 200, ew_us=18) for g in range(2)]
    slow = list(ops[0])
    slow[1] = Op(slow[1].name, [K.sized(K.GEMM_FP16_TC, 20000)])  # the first MatMul, after the input copy
    for s in range(num_steps):
        cap.step([slow, ops[1]] if s == 0 else ops, input_wait_us=25, allreduce=[K.sized(K.NCCL_ALLREDUCE, 150)])
    name = "two_ranks_one_slow_call" + ("_extra_work" if extra_work else "")
    return _single(name, "two GPUs, one slow GEMM call on GPU0" + (" and 30% longer GEMMs on it" if extra_work else ""),
                   cap, {"gpu_imbalance": "critical"} if extra_work else {}, "gpu_imbalance" if extra_work else None)


def multi_gpu_launch_skew(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """Host thread contention: GPU1's launches start only after GPU2's (global thread pool).

    Fixed: TF_GPU_THREAD_MODE=gpu_private, every GPU's launches start together."""
    cap = Capture(4, A100, seed=seed, marker="keras3", thread_mode="gpu_private" if fixed else "global")
    ops = [_replica_ops(g, 6 * scale) for g in range(4)]
    for s in range(num_steps):
        cap.step(ops, input_wait_us=25, allreduce=[K.sized(K.NCCL_ALLREDUCE, 150)],
                 gpu_order=None if fixed else [0, 2, 3, 1], gpu_delay_us=None if fixed else [0, 1500 * scale, 40, 80])
    return _single("multi_gpu_launch_skew", "GPU1 starts each step ~1.5 ms after GPU2: kernels launched on GPU2 first",
                   cap, {"launch_skew": "warning"}, "launch_skew", fixed)


def multi_gpu_sequential(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """A control dependency makes the GPUs run the step one after the other (fixed: concurrent)."""
    cap = Capture(4, A100, seed=seed, marker="custom_loop", thread_mode="gpu_private")
    ops = [_replica_ops(g, 3 * scale) for g in range(4)]
    for s in range(num_steps):
        cap.step(ops, input_wait_us=25, allreduce=[K.sized(K.NCCL_ALLREDUCE, 150)], sequential=not fixed)
    return _single("multi_gpu_sequential", "GPUs execute the training step sequentially instead of concurrently",
                   cap, {"sequential_gpus": "critical"}, "sequential_gpus", fixed)


def multi_gpu_extra_allreduce(num_steps: int = 8, seed: int = 0, scale: int = 1, fixed: bool = False) -> Scenario:
    """Six NCCL AllReduce calls per GPU per step instead of one (no gradient packing).

    Fixed: one packed call of one call's time, as the rule assumes (a packed call moves all the bytes; real
    packing keeps more than one call's time: the realised saving is an upper bound of the real one)."""
    cap = Capture(4, A100, seed=seed, marker="keras3", thread_mode="gpu_private")
    ops = [_replica_ops(g, 6 * scale) for g in range(4)]
    for s in range(num_steps):
        cap.step(ops, input_wait_us=25, allreduce=[K.sized(K.NCCL_ALLREDUCE, 60)] * (1 if fixed else 6))
    return _single("multi_gpu_extra_allreduce", "Six AllReduce calls per GPU per step instead of one", cap,
                   {"allreduce_extra": "warning"}, "allreduce_extra", fixed)


def multi_host(num_steps: int = 8, seed: int = 0, scale: int = 1) -> Scenario:
    """2 hosts x 2 GPUs: two files in one session, balanced work."""
    caps = []
    for h in range(2):
        cap = Capture(2, A100, hostname=f"worker{h}", seed=seed + h, marker="keras3", thread_mode="gpu_private",
                      gpu_id_base=100 * h)
        ops = [_replica_ops(2 * h + g, 6 * scale) for g in range(2)]
        for s in range(num_steps):
            cap.step(ops, input_wait_us=25, allreduce=[K.sized(K.NCCL_ALLREDUCE, 150)])
        caps.append(cap)
    spaces = {c.space.hostname: c.finish() for c in caps}
    truth = _truth("multi_host", "Two hosts with two GPUs each (MultiWorkerMirroredStrategy), balanced", caps, {}, None)
    return Scenario("multi_host", spaces, truth)


def multi_host_slow_gpu(num_steps: int = 8, seed: int = 0, scale: int = 1, gpus_per_host: int = 2) -> Scenario:
    """Hosts of one process each (MultiWorkerMirroredStrategy; 2 hosts of 2 GPUs, or 4 hosts of 1): the last host's
    GPU0 runs three more dense layers.  Every other GPU -- its own host's other GPU too -- enters the AllReduce
    earlier and spins in it until GPU0 joins, as NCCL's kernels do: a straggler GPU, not a slow node (the host's
    other GPU waits as long as the other hosts').

    The slow host is written first, then a twin of the first host without waits: the slow GPU's extra compute over
    the twin's GPU0 (the same work otherwise, busy back to back) is how late it joins; the other hosts' GPUs then wait
    that long for it across the hosts (their compute is the twin's: the same seed)."""
    hosts = 2 if gpus_per_host > 1 else 4

    def host(h: int, peer_us: float) -> Capture:
        cap = Capture(gpus_per_host, A100, hostname=f"worker{h}", seed=seed + h, marker="keras3",
                      thread_mode="gpu_private", gpu_id_base=100 * h)
        ops = [_replica_ops(gpus_per_host * h + g, 6 * scale) for g in range(gpus_per_host)]
        if h == hosts - 1:
            ops[0] = ops[0] + _dense_layers(3, K.GEMM_FP16_TC, K.EW_ADD_HALF, prefix="extra/metrics_model",
                                            gemm_us=200, ew_us=18)
        for _ in range(num_steps):
            cap.step(ops, input_wait_us=25, allreduce=[K.sized(K.NCCL_ALLREDUCE, 150)],
                     peer_wait_us=[peer_us] * gpus_per_host)
        return cap

    slow = host(hosts - 1, 0.0)
    late_us = (slow.truth_numbers()["device_compute_ps"][100 * (hosts - 1)]
               - host(0, 0.0).truth_numbers()["device_compute_ps"][0]) / 1e6
    caps = [host(h, late_us) for h in range(hosts - 1)] + [slow]
    spaces = {c.space.hostname: c.finish() for c in caps}
    name = f"multi_host_slow_gpu_{hosts}x{gpus_per_host}"
    truth = _truth(name, f"{hosts} hosts of one process and {gpus_per_host} GPU(s) each; the last host's GPU0 does "
                   "three more layers and every other GPU waits for it in the AllReduce", caps,
                   {"rank_straggler": "warning"}, "rank_straggler")
    return Scenario(name, spaces, truth)


#: scenario -> the rule its ``fixed=True`` twin fixes (the calibration pairs of docs/diff.md)
FIXES: dict[str, str] = {
    "input_bound": "input_bound", "step_gaps_callbacks": "step_gaps", "launch_bound": "launch_bound",
    "eager": "eager_execution", "host_placement": "host_op_placement", "fp32_no_tensor_cores": "mixed_precision_off",
    "fp16_misaligned": "misaligned_dims", "loss_scaling": "loss_scaling_gaps", "no_xla": "xla_not_used",
    "multi_gpu_gpu0_oversubscribed": "gpu_imbalance", "multi_gpu_launch_skew": "launch_skew",
    "multi_gpu_sequential": "sequential_gpus", "multi_gpu_extra_allreduce": "allreduce_extra",
}

SCENARIOS: dict[str, Callable[..., Scenario]] = {
    f.__name__: f
    for f in (
        ideal, input_bound, step_gaps_callbacks, launch_bound, eager, host_placement, fp32_no_tensor_cores,
        fp16_misaligned, loss_scaling, no_xla, multi_gpu_balanced, multi_gpu_gpu0_oversubscribed,
        multi_gpu_launch_skew, multi_gpu_sequential, multi_gpu_extra_allreduce, multi_host,
    )
}
