"""Build :class:`HostMetrics` directly for rule unit tests: a healthy one-GPU default, overridable.

``healthy(**kw)`` returns a 10 ms-step, 20-step, one-A100 capture where no
rule fires; tests change the one number a rule reads.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import (
    Breakdown,
    CaptureQuality,
    EagerOps,
    ElementwiseChain,
    Fusion,
    Gaps,
    GpuMetrics,
    Headline,
    HostMetrics,
    HostOps,
    KernelStat,
    LossScaling,
    MemcpyStat,
    Memory,
    MultiGpu,
    OpStat,
    SmallKernelOffender,
    SmallKernels,
    StepGap,
    StepMetrics,
)
from tb_gpu_advisor.steps.types import StepDetection, StepWindow

STEP_MS = 10.0
STEPS = 20


def ledger(step: float = STEP_MS, **parts: float) -> Breakdown:
    """A step's breakdown that adds up to ``step``: the categories given, and the rest device compute (issue #36: a
    rule's saving must recover only time the step's ledger holds, so a hand-built capture needs a ledger that is
    one -- every category at least 0, summing to the step)."""
    busy = step - sum(parts.values())
    if busy < -1e-9 or any(v < 0 for v in parts.values()):
        raise ValueError(f"no ledger of a {step} ms step holds {parts}")
    return Breakdown(device_compute=max(busy, 0.0), **parts)


def idle_ledger(idle: dict[str, float], step: float = STEP_MS, **parts: float) -> Breakdown:
    """:func:`ledger` holding the GPU idle ``idle`` (category -> ms per step) a rule measured, plus ``parts``."""
    both = dict(parts)
    for c, v in idle.items():
        both[c] = both.get(c, 0.0) + v
    return ledger(step, **both)


def gpu(i: int = 0, busy: float = 9.5, cc: str = "8.0", **kw) -> GpuMetrics:
    base = dict(gpu=i, name="NVIDIA A100-SXM4-40GB", compute_capability=cc, sm_count=108,
                memory_bandwidth_bytes_per_s=1.5e12, memory_size_bytes=40 << 30, active=True, kernel_count=2000,
                step_ms=STEP_MS, busy_ms_per_step=busy, busy_share=busy / STEP_MS,
                breakdown=Breakdown(device_compute=busy, other=STEP_MS - busy), collective_calls_per_step=None,
                first_kernel_offset_ms=0.0, launch_thread_private=False)
    base.update(kw)
    return GpuMetrics(**base)


def kernel(name: str = "ampere_fp16_s16816gemm_fp16_128x128", op_type: str = "MatMul", total_ms: float = 100.0,
           count: int = 200, tensor_core: bool = True, tc_eligible: bool = True, precision: str = "fp16",
           elementwise: bool = False, collective: bool = False) -> KernelStat:
    return KernelStat(name=name, op_name=f"model/{op_type}", op_type=op_type, count=count, total_us=total_ms * 1000,
                      avg_us=total_ms * 1000 / count, min_us=1.0, max_us=1000.0, tensor_core=tensor_core,
                      tc_eligible=tc_eligible, precision=precision, elementwise=elementwise, collective=collective,
                      gpus=[0])


def steps_detail(n: int = STEPS, gpu_ids=(None,), **bd) -> list[StepMetrics]:
    rows = []
    for s in range(n):
        for g in gpu_ids:
            b = Breakdown(device_compute=9.5, other=0.5)
            for k, v in bd.items():
                setattr(b, k, v)
            rows.append(StepMetrics(step=s, gpu=g, start_ms=s * STEP_MS, step_ms=STEP_MS, breakdown=b,
                                    device_busy_ms=9.5, kernel_count=100, first_kernel_ms=s * STEP_MS + 0.1))
    return rows


def healthy(**kw) -> HostMetrics:
    """A capture where nothing fires; keyword arguments replace whole fields."""
    m = HostMetrics(
        host="host0",
        path="/logs/run/plugins/profile/s/host0.xplane.pb",
        capture=CaptureQuality(length_ms=STEP_MS * STEPS, steps_captured=STEPS + 2, steps_kept=STEPS, steady_state=True,
                               step_time_cv=0.02, too_short=False, too_long=False, num_events=100000,
                               gpu_thread_mode_private=False),
        steps=StepDetection(source="keras_profiled_batch", count=STEPS, found=STEPS + 2,
                            windows=[StepWindow(s, s * STEP_MS, (s + 1) * STEP_MS) for s in range(STEPS)]),
        headline=Headline(avg_step_ms=STEP_MS, device_step_share=0.95, host_op_share_by_count=0.01,
                          host_op_share_by_time=0.01, device_op_count=1000, host_op_count=10, kernel_count=100 * STEPS,
                          fp16_kernel_count=80 * STEPS, bf16_kernel_count=0, fp16_time_share=0.9, bf16_time_share=0.0,
                          sixteen_bit_time_share=0.9, tensor_core_time_share=0.8, launch_wait_share=0.005,
                          input_wait_share=0.01),
        breakdown=ledger(launch_wait=0.05, input_wait=0.1, other=0.35),
        steps_detail=steps_detail(),
        gpus=[gpu(0)],
        kernels=[kernel(total_ms=150.0), kernel("Eigen::EigenMetaKernel<add_half>", "AddV2", 40.0, 2000, False, False,
                                                "fp16", elementwise=True)],
        ops=[],
        memcpy=[MemcpyStat("h2d", 1.0, 1 << 20, 0.05, 0.0, 0.0, True, 0.0)],
        memcpy_steps=[],
        small_kernels=SmallKernels(threshold_us=40.0, count=200, tiny_count=100, share_of_kernels=0.1, time_ms=2.0,
                                   share_of_kernel_time=0.01, per_step=10.0, kernels_per_step=100.0,
                                   top=[SmallKernelOffender("Eigen::EigenMetaKernel<mul>", "Mul", 126224, 2770.0, 21.9,
                                                            per_step=126224 / STEPS, ms_per_step=2770.0 / STEPS)]),
        eager=EagerOps(count=0, per_step=0.0, time_ms_per_step=0.0),
        host_ops=HostOps(count_per_step=0.5, time_ms_per_step=0.05, share_by_count=0.01, share_by_time=0.01),
        fusion=Fusion(xla_in_use=False, xla_evidence=[], elementwise_kernel_count=2000, elementwise_time_ms=40.0,
                      small_elementwise_count=100),
        loss_scaling=LossScaling(present=False, dynamic=False, op_count_per_step=0.0, host_ms_per_step=0.0,
                                 gap_ms_per_step=None),
        gaps=Gaps(count=STEPS - 1, avg_gap_ms=0.1, max_gap_ms=0.2, share_of_step=0.01, avg_input_wait_ms=0.05,
                  avg_launch_ms=0.0, avg_host_other_ms=0.05),
        multi_gpu=MultiGpu(gpu_count=1, active_gpus=[0], idle_gpus=[], step_ms_max=STEP_MS, step_ms_min=STEP_MS,
                           busy_share_max=0.95, busy_share_min=0.95, busy_imbalance=0.0, heaviest_gpu=0,
                           collective_calls_per_gpu_step=None, allreduce_ms_per_step=None,
                           allreduce_bytes_per_step=None, params=None, params_source="", bandwidth_bytes_per_s=None,
                           bandwidth_source="", expected_allreduce_ms=None, launch_skew_ms=None,
                           launch_order_skew_ms=None),
        memory=Memory(available=False),
    )
    for k, v in kw.items():
        setattr(m, k, v)
    return m


def multi(n: int = 4, busy=(9.0, 9.0, 9.0, 9.0), calls: float = 1.0, ar_ms: float = 0.2, skew: float = 0.0,
          concurrency: float = 1.0, peer_wait: dict[str, float] | None = None, **kw) -> HostMetrics:
    """A healthy ``n``-GPU capture (one AllReduce per GPU per step).  The host's ledger is the mean of its GPUs' (each
    busy ``busy[i]``, idle the rest of the step); ``peer_wait``: the part of that idle the GPUs spend waiting for
    each other, by ledger category (``multi_gpu.peer_wait_ledger_ms``)."""
    m = healthy(**kw)
    m.gpus = [gpu(i, busy=busy[i], collective_calls_per_step=calls, allreduce_ms_per_step=ar_ms,
                  first_kernel_offset_ms=(skew if i == n - 1 else 0.0)) for i in range(n)]
    mean_busy = sum(busy[:n]) / n
    if "breakdown" not in kw:
        m.breakdown = ledger(other=STEP_MS - mean_busy)
    mx, mn = max(busy[:n]), min(busy[:n])
    m.multi_gpu = MultiGpu(gpu_count=n, active_gpus=list(range(n)), idle_gpus=[], step_ms_max=STEP_MS,
                           step_ms_min=STEP_MS, busy_share_max=mx / STEP_MS, busy_share_min=mn / STEP_MS,
                           busy_imbalance=(mx - mn) / mx, heaviest_gpu=max(range(n), key=lambda i: busy[i]),
                           compute_imbalance=(mx - mn) / mx, heaviest_compute_gpu=max(range(n), key=lambda i: busy[i]),
                           collective_calls_per_gpu_step=calls, allreduce_ms_per_step=ar_ms,
                           allreduce_bytes_per_step=None, params=None, params_source="", bandwidth_bytes_per_s=None,
                           bandwidth_source="", expected_allreduce_ms=None, launch_skew_ms=skew,
                           launch_order_skew_ms=skew, first_gpu_order=list(range(n)), concurrency=concurrency,
                           peer_wait_ledger_ms=dict(peer_wait or {}))
    return m


__all__ = ["healthy", "multi", "gpu", "ledger", "idle_ledger", "kernel", "steps_detail", "STEP_MS", "STEPS", "ElementwiseChain", "StepGap",
           "OpStat", "MemcpyStat", "Memory", "LossScaling", "EagerOps", "HostOps", "Gaps", "Fusion"]


def fp32_gemms(share_32_gemm: float = 0.8, cc: str = "7.0") -> HostMetrics:
    """A healthy host whose device time is ``share_32_gemm`` fp32 GEMMs (the rest fp32 elementwise) on a GPU of
    capability ``cc`` (a V100 by name at 7.0): the mixed-precision and Tensor Core checks' case."""
    m = healthy()
    m.gpus[0].compute_capability = cc
    if cc == "7.0":
        m.gpus[0].name = "Tesla V100-SXM2-16GB"  # the name agrees with the capability: the peaks go by the name
    total = 200.0
    m.kernels = [kernel("volta_sgemm_128x64_nn", "MatMul", total * share_32_gemm, 200, False, True, "fp32"),
                 kernel("Eigen::EigenMetaKernel<add_float>", "AddV2", total * (1 - share_32_gemm), 2000, False, False,
                        "fp32", elementwise=True)]
    m.headline.sixteen_bit_time_share = 0.0
    return m
