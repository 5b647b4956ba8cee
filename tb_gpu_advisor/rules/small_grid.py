"""§1.2.3 Kernels too small to fill the GPU: launched with fewer thread blocks than the GPU has SMs.

Metric: the kernel time of launches with ``B`` blocks on a GPU of ``S`` SMs, ``B < S`` (the launch configuration the
trace records: Kineto's ``grid``/``block``, Nsight's ``gridX..blockZ``, XPlane's ``kernel_details``; on AMD ``B``
counts workgroups on ``S`` CUs, the Kineto reader dividing the work-item grids of HIP's module launches by their
workgroup size, ``devices.amd.WORK_ITEM_GRID_CALLS``), and the bound
``(t - small_grid.floor_us)+ x (1 - B / S)`` on what filling the GPU takes off each (``metrics/underfill.py``): a
block runs on one SM, so at most ``B`` SMs work while the kernel runs, and no grid shortens a kernel below the time
every kernel takes.  Where the GPU's SM count is unknown only one-block kernels are judged,
against two SMs (the least of any multi-SM GPU).  Saving: that bound, capped like every kernel saving at the kernel
time the GPU's next work waited for; GEMM kernels' part shares the time of ``mfu_low``'s slow GEMMs, the rest that of
the non-matmul kernels (fusion), so no step time is counted twice.  Severity by the saving: under
``small_grid.warning`` of the step it is info, under ``small_grid.info`` nothing (a reduction's last one-block pass).
"""

from __future__ import annotations

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.metrics.types import HostMetrics, UnderfilledKernel
from tb_gpu_advisor.metrics.underfill import UNKNOWN_SMS
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import (
    Ctx,
    T,
    finding,
    grade,
    ms,
    n_of,
    pct,
    rule,
    saving,
    share_metric,
    short,
    step_windows,
    table,
)

ID = "small_grid"

@rule(ID, "§1.2.3", "Kernels too small to fill the GPU: fewer thread blocks than SMs",
      thresholds=("small_grid.info", "small_grid.warning", "small_grid.critical", "small_grid.floor_us"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    u = m.underfill
    if not u.top or ctx.step_ms is None or u.idle_ms_per_step <= 0:
        return []
    gemm = min(u.gemm_idle_ms_per_step, u.idle_ms_per_step)
    floored = u.floor_cut_ms_per_step > max(0.0005, 0.01 * (u.idle_ms_per_step + u.floor_cut_ms_per_step))
    sv = saving(ctx, u.idle_ms_per_step, _ASSUMPTION + (_FLOOR_CUT if floored else ""),
                [("compute", "gemm_kernels", gemm), ("compute", "non_matmul_kernels", u.idle_ms_per_step - gemm)])
    share = ctx.share(sv.ms_per_step if sv is not None else None) or 0.0
    sev = grade(share, "small_grid.warning", "small_grid.critical") or ("info" if share >= T("small_grid.info") else None)
    if sev is None:
        return []
    under_share = ctx.share(u.underfilled_ms_per_step) or 0.0
    gpus = [g for g in u.gpus if g.underfilled_ms > 0]
    known = [g for g in gpus if g.sm_count is not None]
    top = u.top[0]
    return [finding(
        ctx, ID, sev,
        f"{pct(under_share)} of the {ctx.step_noun} ({ms(u.underfilled_ms_per_step)} {ctx.per_step}) is in kernels launched with fewer "
        f"thread blocks than the GPU has SMs{_sms_words(known, gpus)}: {short(top.name)} runs "
        f"{n_of(top.blocks, 'thread block')}{_threads(top)}, so it keeps at most {top.blocks} of the {_of_sms(top)} SMs "
        f"busy. Filling the GPU could take up to {ms(sv.ms_per_step)} off the {ctx.step_noun} ({pct(share)}).",
        metric=share_metric("small_grid_saving_share", "Bound on what filling the GPU's SMs saves", share,
                            "small_grid.warning", severity=sev,
                            detail={"underfilled_kernel_share": under_share,
                                    "underfilled_ms_per_step": u.underfilled_ms_per_step,
                                    "idle_sm_bound_ms_per_step": u.idle_ms_per_step,
                                    "above_floor_ms_per_step": u.above_floor_ms_per_step,
                                    "sm_count": {str(g.gpu): g.sm_count for g in gpus},
                                    "sm_source": {str(g.gpu): g.sm_source for g in gpus}}),
        saving=sv,
        evidence=[table(_TABLE, _COLUMNS,
                        [[short(k.name), k.blocks, k.threads if k.threads >= 0 else "-", _of_sms(k), k.count,
                          k.total_ms, k.idle_ms] for k in u.top])],
        # the small-grid kernels' share of each step's kernel time (the ledger books them with every kernel)
        windows=step_windows(ctx, label="small-grid kernels", draws=("device_compute",),
                             claimed_ms=u.underfilled_ms_per_step),
        actions=[*ctx.fw.fix(ID), *_vendor_fixes(ctx, u.top)],  # the framework's, then the vendor's own
    )]


def _vendor_fixes(ctx: Ctx, kernels: list[UnderfilledKernel]) -> list:
    """The vendor's fixes for the kernels the finding lists: a library's (``devices.library_kernel_one``: cuBLAS,
    MIOpen, ...) are changed through the calls that reach them, a kernel the program launches itself (Triton, its
    own CUDA/HIP/SYCL) by its grid; both where the table holds both.

    Why: "For a kernel of your own: launch at least one thread block per SM" was the one vendor fix, told beside
    cuBLAS's and rocBLAS's kernels, whose grids the library picks from the shapes it is given (h37-words32)."""
    library = [devices.library_kernel_one(k.name) for k in kernels]
    own = [k.code for k, lib in zip(kernels, library) if not lib]
    return ([ctx.vendor.FIXES["library_blocks"]] if any(library) else []) + \
        ([_own_fix(ctx, own)] if own else [])


def _own_fix(ctx: Ctx, codes: list[str]) -> object:
    """The launch fix for the program's own kernels: in their language where their names show one
    (``frameworks.own_kernel_launch_fix``: Julia's CUDA.jl, Numba, Kokkos, OpenMP offload), else the vendor's (CUDA
    C++ on NVIDIA).  Why: a Julia kernel (``CuDeviceArray<Float32,...>`` in its name) was told
    ``k<<<num_sms * 4, 256>>>`` (GDhir/GPUMATVEC, SURVEY hunt69b)."""
    return frameworks.own_kernel_launch_fix(codes) or ctx.vendor.FIXES["more_blocks"]


#: What the saving assumes (``metrics/underfill.py``); this and the table speak of "thread blocks" and "SMs" only,
#: which ``ctx.words`` turns into an AMD GPU's "workgroups" and "CUs" (``devices.amd.WORDS``).
_ASSUMPTION = ("an upper bound: the same work spread over all the SMs, each as fast as now, takes thread blocks / SMs "
               "of the kernel's time above the few microseconds every kernel takes (a thread block runs on one of "
               "the SMs); work that is serial in itself gains less")
#: said where the kernels' floor cut the bound by over 1% (``Underfill.floor_cut_ms_per_step``): the grid bound alone
#: would promise time the kernels' bytes and FLOPs need at the GPU's peaks (h37-pool36)
_FLOOR_CUT = ("; and at most the kernels' time above the least their known FLOPs and bytes need at the GPU's peak "
              "FLOP/s and memory bandwidth: no kernel beats its GPU's peak")
_TABLE = "Kernels with fewer thread blocks than SMs, by the time of the SMs they left idle ({kept}, all GPUs)"
_COLUMNS = ("kernel", "thread blocks", "threads each", "SMs", "count", "total ms", "bound ms (idle SMs)")


def _sms_words(known: list, gpus: list) -> str:
    """`` (28 SMs on the NVIDIA GeForce RTX 3060, from the trace)``, or why only one-block kernels are judged."""
    if not known:
        return (" (the GPU's number of SMs is unknown: only kernels of one thread block are judged, and one thread "
                "block runs on one of the SMs, leaving at least half of any GPU of several SMs idle)")
    counts = sorted({(g.sm_count, g.sm_source) for g in known})
    said = ", ".join(f"{n} SMs, from {src}" for n, src in counts)
    return f" ({said})"


def _of_sms(k: UnderfilledKernel) -> str:
    return f"{k.sm_count}" if k.sm_count != UNKNOWN_SMS else f"{UNKNOWN_SMS}+"


def _threads(k: UnderfilledKernel) -> str:
    return f" of {n_of(k.threads, 'thread')}" if k.threads > 0 else ""
