"""Every threshold of the Advisor, in ONE table, each with its source.

Rules, metrics and step detection read their numbers here (so this module
sits beside the pipeline, importing nothing of it).  Change a number here and
every rule, metric, the docs (``docs/rules.md`` quotes this table) and the
report's ``metric.threshold`` follow.  Nothing else has to be read to tune
the Advisor; ``tests/rules/test_rules.py`` fails on an entry no code reads.

Conventions
-----------
* ``share`` values are fractions of the (average) step time unless the
  ``meaning`` says otherwise (e.g. "of device compute time").
* ``warning`` / ``critical`` pairs: the finding fires at ``>= warning`` (or
  ``<=`` for "lower is worse" metrics, marked ``direction="below"``) and is
  critical at ``>= critical``.
* ``source`` says where the number comes from: the guide (section), the
  stock TensorBoard profiler (xprof 2.24 ``op_stats_to_overview_page``), a
  peer tool, or "Advisor" for our own choices (with the reasoning).

Tests can tune values temporarily with :func:`override`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Iterator, Literal


@dataclass(frozen=True)
class Threshold:
    name: str
    value: float
    unit: str  # "share", "ms", "us", "count", "ratio", "s", "GB/s"
    source: str
    meaning: str
    direction: Literal["above", "below", "none"] = "above"  # which side fires

    def meaning_of(self, step: str = "step") -> str:
        """The meaning said of the window its share is of (:func:`of_window`): "share of the step ..." in the docs and
        over several steps, "share of the pass ..." on a host read as one pass."""
        return of_window(self.meaning, step)


def of_window(template: str, step: str = "step", per: str | None = None) -> str:
    """``template`` with its ``{step}`` (where a meaning names the window its numbers are of) filled with the window's
    noun: "step" over several steps, the job's word for the one step a capture holds ("pass", "forward pass", "engine
    step": ``rules.base.Ctx.step_noun``).  A meaning written of "the step" beside findings saying "of the 28.5 ms
    pass" named a step the capture does not mark (h37-words23); it is composed here, never reworded after.

    ``{Step}`` is the noun opening a label ("Step time in dtype casts", "Pass time in dtype casts"), ``{step-}`` the
    noun in a compound ("Device step-time share", "Device forward-pass-time share"); ``{per_step}`` the
    words a number per window takes (``per``: "per step" over several steps, "in the pass" where the capture holds
    one, as ``Ctx.per_step`` says it): a straggler's or an imbalance's meaning "..., per step" beside a summary of
    "the 28.5 ms pass" spoke of steps the capture does not hold (h37-onepass); ``{kept}`` what a table's numbers are
    of (:func:`kept_words`: "kept steps", "the pass")."""
    said = per if per is not None else ("per step" if step == "step" else f"in the {step}")
    return (template.replace("{step}", step).replace("{Step}", step[:1].upper() + step[1:])
            .replace("{step-}", step.replace(" ", "-")).replace("{per_step}", said).replace("{kept}", kept_words(step)))


def kept_words(step: str = "step") -> str:
    """What a table or a note over the kept window covers (a template's ``{kept}``): "kept steps" over steps, "the
    pass" / "the forward pass" where the capture holds one (``step``: ``rules.base.Ctx.step_noun``).  A one-pass
    report's "Top GPU kernels (kept steps, all GPUs)" and MFU card's "no GPU kernels in kept steps" spoke of steps the
    capture does not hold beside findings saying "of the 28.5 ms pass" (h37-onepass2)."""
    return "kept steps" if step == "step" else f"the {step}"


def _t(name: str, value: float, unit: str, source: str, meaning: str, direction: str = "above") -> Threshold:
    return Threshold(name, float(value), unit, source, meaning, direction)  # type: ignore[arg-type]


#: why a bound on a faster kernel's saving under a few per cent of the step is an info finding (small_grid,
#: unfused_attention): one home for the reason both levels share
_MENTION = "Advisor (issue #37 item 4): a saving under a few per cent of the step is worth a mention, not a warning"


_TABLE: tuple[Threshold, ...] = (
    # ---- §1.1 input pipeline ----------------------------------------------------
    _t("input_bound.warning", 0.05, "share", "stock overview: input >=5% of step = moderately input-bound",
       "share of {step} time the GPUs are idle while the host waits for input (its data iterator or loader, or the "
       "loop's own code before the {step}'s first op); "
       "H2D input copies are shown beside it"),
    _t("input_bound.critical", 0.20, "share", "stock overview: input >=20% of step = highly input-bound",
       "same metric, critical level"),
    _t("input_bound.range_named_share", 0.1, "share", "Advisor: a range holding under a tenth of the wait is a detail "
       "of it; said together as 'other ranges', so the parts named still add up to the wait (h37-forms10in)",
       "share of the input wait one of the program's ranges must hold to be named on its own"),
    _t("input_bound.most_share", 0.5, "share", "Advisor: a cause holding most of the wait is the wait's cause; under "
       "half, the rest would be unexplained (h37-tidy27: one bar for the four readings that wrote 0.5 in the rule)",
       "share of the input wait the batch's transfer to the device, the host's own ops or the program's input frames "
       "must hold to be said as what holds it (and, for the transfer or a tensor-creating op, to lead the fixes)"),
    _t("input_bound.whole_share", 0.995, "share", "Advisor: a part within half a per cent of its whole prints as the "
       "whole at the report's precision",
       "share of the input wait the batch's transfer must hold to be said as all of it"),
    _t("input_bound.apart_share", 0.05, "share", "Advisor: where no pipeline event bounds the wait, host time before "
       "the first op under a twentieth of the wait is noise beside it",
       "share of the input wait other host time before the step's first op must reach to be said apart, where the "
       "capture records no input pipeline (a pipeline's own events say it from report.min_said_ms)"),
    # ---- §1.2.1 gaps between steps ---------------------------------------------
    _t("step_gaps.warning", 0.05, "share",
       "Advisor; stock overview flags unattributed ('all others') time at >=3% moderate / >=15% high, "
       "we start at 5% because a 1-2% inter-step gap is a training loop's normal bookkeeping between steps",
       "share of {step} time the GPUs are idle between the end of one step's device work and the next step's start"),
    _t("step_gaps.critical", 0.15, "share", "stock overview: 'all others' >=15% of step = high",
       "same metric, critical level"),
    _t("step_gaps.unrecorded_share", 0.15, "share", "stock overview: 'all others' (time no category explains) >=15% "
       "of step = high", "share of {step} time the GPU idles while no runtime call, op, range or OS call of the capture "
       "covers the host's time: named, with the way to record it, even where it is under half the idle or the gap"),
    _t("step_gaps.min_gap_ms", 0.05, "ms", "Advisor: below 50 us a gap is launch jitter, not a between-step gap",
       "average gap must also be at least this long"),
    _t("step_gaps.window_share", 0.5, "share", "Advisor: gaps that fill most of the capture window make it a "
       "recording of the host's own work, said so", "the gaps' total time over the capture window's length"),
    _t("host_sync.warning", 0.05, "share", "Advisor, at the stock overview's 'all others' moderate level: a sync inside "
       "the step leaves the GPU idle like a gap between steps", "share of {step} time the GPUs are idle after host "
       "sync calls (.item(), stream/device/event synchronize) until the next device work"),
    _t("host_sync.critical", 0.15, "share", "stock overview: 'all others' >=15% of step = high", "same metric, critical level"),
    # ---- §1.2.2 small kernels / launch latency ---------------------------------
    _t("launch_bound.warning", 0.03, "share", "stock overview: kernel launch >=3% of step = moderate",
       "share of {step} time the GPU is idle waiting for the host to launch kernels"),
    _t("launch_bound.critical", 0.15, "share", "stock overview: kernel launch >=15% of step = high",
       "same metric, critical level"),
    _t("launch.latency_us", 20.0, "us", "guide §1.2.2: each kernel takes about 20-40 us from enqueue to execution "
       "(lower bound used so savings are not overstated)", "host launch latency per kernel: kernels shorter are "
       "'tiny' (small-kernel metrics, the kernel-duration chart's band)"),
    _t("launch.small_kernel_us", 40.0, "us", "guide §1.2.2: a kernel shorter than the 20-40 us launch latency cannot "
       "hide it (126,224 Mul at ~21.9 us each)", "a kernel this short or shorter is 'small'"),
    _t("launch.fused_us_per_kernel", 1.0, "us", "Advisor: a fused graph / XLA cluster / CUDA graph pays ~1 us per kernel",
       "launch cost per kernel assumed after the fix (saving formula)"),
    _t("launch.kernel_switch_us", 5.0, "us", "Advisor: a GPU starts a kernel it already holds 1-5 us after the one "
       "before it ends (a CUDA graph's tiny kernels 0.8-2 us apart on real captures; ~1 us a kernel: "
       "launch.fused_us_per_kernel); a longer hold is a dependency or another context, not the switch",
       "idle between a kernel and the next one the GPU already holds (launched, returned, submitted) shorter than "
       "this is the GPU's kernel switching (ledger kernel_switch), longer is held work (unseen); at a graph's entry "
       "or exit the GPU's own graph switch where its architecture has one (devices.graph_switch_us: MI300X 15 us)"),
    _t("launch.submit_floor_us", 15.0, "us", "Advisor (h37-idle67): a Linux driver starts a kernel 0-10 us after its "
       "launch call returns onto an idle GPU (casio's A100 exports); an RTX 5080 whose launches all waited 23-71 us "
       "(p5-p90, duoan/playground-cuda) submits them late, in the driver's batches", "a launch onto an idle GPU that "
       "starts at least this long after its call returned waited for the driver's submission"),
    _t("launch.submit_share", 0.9, "share", "Advisor (h37-idle67): a submission latency is paid by nearly every launch "
       "(99% of the RTX 5080's 1,107); another context's turns delay some launches only", "share of the launches onto "
       "an idle GPU that must wait launch.submit_floor_us or more for the GPU's holds to be read as its submission latency"),
    _t("launch.submit_spread", 5.0, "ratio", "Advisor (h37-idle67): the RTX 5080's submission waits have p90 1.9-3.2x "
       "their median; a GPU time-sliced with a busy context waits 0 to a timeslice (ms)", "most the p90 of the "
       "launches' waits may be, as a multiple of their median, for them to be one submission latency"),
    _t("launch.submit_max_us", 200.0, "us", "Advisor (h37-idle67): a driver's batched submission takes tens of us "
       "(RTX 5080 under a batching driver: median 37-66 us); a context's timeslice takes milliseconds",
       "the longest median wait read as a submission latency; a longer one is held work"),
    _t("launch.submit_hold_factor", 10.0, "ratio", "Advisor (h37-idle67): a batch flushed late waits a few times the "
       "usual latency (the RTX 5080's p99: 4-7x its median); far beyond that the GPU ran something else",
       "a hold up to this multiple of the submission latency's median is the submission; a longer one is held work"),
    _t("launch.submit_min_launches", 20.0, "count", "Advisor: a median and a p90 need some launches to stand on",
       "fewest launches onto an idle GPU the submission latency is read from"),
    _t("launch.python_launcher_us", 5.0, "us", "Advisor (h37-driverlaunch): a Python launcher's call costs tens of us "
       "before its launch (Triton's JIT runtime called directly: 25-68 us of silence before each cuLaunchKernel on an "
       "A10G, survey h37-survey44), a C++ launcher's about one (nvFuser's driver launches on an H200: 0.7 us)",
       "a silence before a kernel launched outside every op shorter than this is no Python launcher's time: not "
       "named as one (metrics.syncs.launcher_silence)"),
    _t("launch_bound.min_small_kernel_share", 0.5, "share", "Advisor (issue #18): a title must agree with its numbers; "
       "when most kernels outlast the launch latency the GPU waits for the host to dispatch ops of ordinary size",
       "below this share of kernels (by count) shorter than launch.small_kernel_us, launch_bound is titled "
       "'the GPU waits for the host to dispatch each op' instead of 'many small kernels'"),
    _t("launch_bound.min_small_kernel_time_share", 0.25, "share", "Advisor: the guide's launch-bound diagnosis is small "
       "kernels; when kernels outlasting the launch latency do most of the GPU's work, the GPU's wait is the host's per-op cost (inflated by "
       "the profiler's own launch tracing: 35 us cuLaunchKernelEx calls in a healthy real PyTorch capture), not a "
       "problem of kernel size", "below this share of kernel time in small kernels a launch wait under the critical level is reported as info only"),
    _t("launch_bound.step_calls", 4.0, "count", "Advisor: a step of a few compiled calls whose dispatch costs more host "
       "time than their GPU work is launch-bound as a whole (tiny jitted steps), not by its kernels",
       "most dispatch calls per step for the step-level launch-bound diagnosis"),
    # ---- §1.2.2 eager execution -------------------------------------------------
    _t("eager_execution.warning", 0.10, "share", "stock overview: kEagerReportThresholdInPercent = 10% of op time",
       "share of op time (host or device, whichever is larger) executed eagerly"),
    _t("eager_execution.critical", 0.50, "share", "Advisor: half of the op time outside tf.function is the main problem",
       "same metric, critical level"),
    _t("eager.max_kernels_per_call", 2, "count", "Advisor: an un-jitted jnp call is its own XLA program of one fusion "
       "(real launch_bound_eager: 1 kernel per PjitFunction call; a reduction may add an initialising memset), where a "
       "jitted step runs tens to thousands of kernels per call", "most kernels a call of a compiled function may run "
       "and still count as one op dispatched eagerly"),
    # ---- §1.2.2 op placement ----------------------------------------------------
    _t("host_op_placement.warning", 0.05, "share",
       "Advisor; guide §1.2.2: the host share 'should be very small' (stock reports it without a threshold)",
       "share of {step} time spent in TF ops placed on the host (excluding the input pipeline)"),
    _t("host_op_placement.critical", 0.20, "share", "Advisor: a fifth of the step in host-placed ops",
       "same metric, critical level"),
    # ---- §1.2.2 / §2 item 4 memory copies ---------------------------------------
    _t("round_trip.min_bytes", 4096, "bytes", "Advisor: computation that leaves the GPU moves arrays; a copy under a "
       "page is a value (a scalar, a few lengths or offsets) read for control flow or a small constant built on the "
       "host -- a host sync's cost, reported by host_sync -- and two such copies need not be the same data",
       "a device->host->device round trip counts only copies of at least this size (unknown sizes count)"),
    _t("excessive_memcpy.warning", 0.05, "share", "Advisor; guide §1.2.2/§2.4: copies hurt when they block kernels",
       "share of {step} time in non-input memcpy (H2D/D2H/D2D/P2P) that the compute stream waits on"),
    _t("excessive_memcpy.critical", 0.20, "share", "Advisor; capped at warning when host-placed ops explain the copies "
       "(the host_op_placement finding is then the cause)", "same metric, critical level"),
    _t("excessive_memcpy.sync_share", 0.01, "share",
       "Nsight Systems rule 'synchronous memcpy' (any); Advisor fires at 1% of step so trivial ones stay quiet",
       "share of {step} time in synchronous (async:0) copies that makes the finding at least a warning"),
    # ---- §1.2.3 Tensor Cores / precision ---------------------------------------
    _t("excessive_memcpy.pageable_share", 0.5, "share", "Nsight Systems' expert rule 'CUDA Async Memcpy with Pageable "
       "Memory': a copy from pageable host memory is staged through a pinned buffer by the driver and blocks the host",
       "share of a host<->device direction's copy time from or to pageable memory above which the finding says so and "
       "leads with the pinned-memory fix"),
    _t("excessive_memcpy.pin_share", 0.01, "share", "Advisor (issue #37, h37-fwnvtx2): pinning saves at most the "
       "pageable copies' own time; under 1% of the step it is no fix to lead with (as excessive_memcpy.sync_share)",
       "share of the {step} the pageable copies of a direction take, at least, for the finding to ask to pin them"),
    _t("excessive_memcpy.pin_bytes", 64 * 1024, "bytes", "Advisor (issue #37, h37-fwnvtx2): pinning speeds a copy's "
       "bytes across the bus, not its call; at ~10 GB/s a 64 KiB copy moves in ~6 us, the order of a copy call's own "
       "latency, so a smaller one (a 4-byte .item() read) gains nothing from pinned memory",
       "bytes per pageable copy, at least, for the finding to ask to pin it (where the capture gives the copies' sizes)"),
    _t("excessive_memcpy.rate_bytes", 1024 * 1024, "bytes", "Advisor (issue #37, h37-copy70): a copy's call and "
       "set-up take a few microseconds whatever its size; at ~25 GB/s a 1 MiB copy moves in ~40 us, so its bytes over "
       "its time are the link's rate within ~10%, and a smaller copy's understate it",
       "bytes per host copy, at least, for its bytes over its time to measure the host link the copy floor takes"),
    _t("excessive_memcpy.own_stream_share", 0.5, "share", "Advisor (issue #37, h37-copystream61): most of a direction's "
       "copy time on streams that run no kernel or collective (a prefetcher's stream, a copy engine's queue) makes a "
       "stream of their own something the copies have, not a fix to give them", "share of the costliest direction's "
       "copy time on streams of their own (the stream recorded), at least, for the finding to read the copies as on "
       "a stream of their own: told to issue them ahead, never to move them to one"),
    _t("excessive_memcpy.param_upload_share", 0.5, "share", "Advisor (issue #37, h37-left10): most of the host-to-device "
       "copy time launched inside a data-parallel wrapper's parameter-loading hooks (FSDP's pre-forward / pre-backward) "
       "makes those uploads, not the input batch, the copies' cause", "share of the host-to-device copy time whose "
       "launch the capture holds that is launched inside a parameter-loading hook, above which the finding says so and "
       "leads with the wrapper's offload fix"),
    _t("tensor_core_unused.warning", 0.10, "share",
       "Advisor; guide §1.2.3: TC-eligible kernels should use Tensor Cores",
       "share of device compute time in TC-eligible ops (MatMul, Conv, ...) whose kernels do not use Tensor Cores"),
    _t("tensor_core_unused.critical", 0.40, "share", "Advisor", "same metric, critical level"),
    _t("mixed_precision_off.warning", 0.10, "share", "stock overview: 16-bit share of device compute <10% -> suggest "
       "mixed precision", "share of device compute time in 16-bit kernels", "below"),
    _t("mixed_precision_off.min_eligible_share", 0.10, "share", "Advisor: only worth it when matmul/conv work is >=10% "
       "of device compute", "TC-eligible share of device compute required before suggesting mixed precision"),
    _t("mixed_precision_off.critical", 0.50, "share", "Advisor: half of device compute in 32-bit MatMul/Conv that "
       "could use fp16 Tensor Cores", "32-bit TC-eligible share of device compute at which the finding is critical"),
    _t("mixed_precision.memory_bound_speedup", 1.25, "ratio", "guide §1.3: fp16 also helps memory-bound kernels (half "
       "the bytes, up to 2x); 1.25x used so savings are not overstated",
       "speedup assumed for other 32-bit kernels (element-wise, reductions) in fp16"),
    _t("mixed_precision.speedup", 2.0, "ratio", "guide §1.3: AMP gives up to 3x on Volta+; 2x used so savings are "
       "not overstated", "speedup assumed for TC-eligible fp32 kernels moved to fp16 Tensor Cores (before Ampere; "
       "TF32 Tensor Core kernels on any GPU)"),
    _t("mixed_precision.speedup_sm80", 6.0, "ratio", "Advisor, calibrated (docs/diff.md): from Ampere, 16-bit Tensor "
       "Cores outpace fp32 CUDA cores ~16x at peak (A100 312 vs 19.5, H100 989 vs 67 TFLOP/s); the real H100 pair "
       "fp32_highest -> healthy_bf16 ran its GEMMs 15x faster per sample; 6x keeps savings conservative",
       "speedup assumed for fp32 MatMul/Conv kernels without Tensor Cores (CUDA cores) moved to 16-bit Tensor Cores "
       "on GPUs whose matrix units run TF32 (devices.has_tf32: NVIDIA from Ampere, AMD CDNA 3); never above the ratio of "
       "the GPU's own 16-bit and fp32 peaks (devices.sixteen_bit_gain_bound: 2x on a GeForce RTX 3060 or 4090)"),
    _t("misaligned_dims.warning", 0.10, "share", "Advisor; guide §1.2.3: fp16 dims divisible by 8 (16 for int8)",
       "share of 16-bit TC-eligible time in ops whose GEMM/conv dims are not multiples of 16 bytes (fp16/bf16: 8 "
       "elements, fp8/int8: 16; devices.tc_align_elements)"),
    _t("misaligned_dims.critical", 0.40, "share", "Advisor", "same metric, critical level"),
    _t("misaligned.tc_speedup", 2.0, "ratio", "Advisor: aligned fp16 Tensor Core GEMMs vs the fallback kernel, "
       "conservative", "speedup assumed for misaligned kernels once padded to their dtype's multiple"),
    # ---- §1.3 loss scaling -------------------------------------------------------
    _t("loss_scaling_gaps.warning", 0.03, "share", "stock overview: 'all others' >=3%; guide §1.3: dynamic loss scaling "
       "adds host-side conditional ops that show as gaps", "share of {step} time in dynamic loss-scaling host ops / gaps"),
    _t("loss_scaling_gaps.critical", 0.30, "share", "Advisor: the fix (static scale) needs a validated scale value, so "
       "critical only when the gaps are a third of the step", "same metric, critical level"),
    # ---- §1.3 XLA -------------------------------------------------------------------
    _t("xla_not_used.warning", 0.10, "share", "Advisor; guide §1.2.3/§1.3: fusing small ops gives 'significant gains'. "
       "Never critical: the guide calls compiler fusion an optional last step", "share of {step} time that fusing the "
       "element-wise chains would save (per GPU), captures without a fusing compiler only"),
    _t("xla_not_used.info", 0.03, "share", "Advisor: below the warning, still mention compiler fusion as the guide's last step",
       "same metric, info level"),
    _t("xla.min_chain_length", 3, "count", "Advisor: BiasAdd+Relu style pairs are already fused by TF's grappler; "
       "a chain of 3+ element-wise kernels is what XLA adds", "shortest kernel chain counted as fusible"),
    _t("xla.chain_break_us", 1000.0, "us", "Advisor: no launch takes a millisecond (guide §1.2.2: 20-40 us; Python's "
       "op dispatch tens of us), so a GPU idle that long between two kernels is the host's other work (aiter's MXFP4 "
       "set-up kernels 10.6 and 13.7 ms apart), which no fused kernel removes; shorter idle is the launches' pace and "
       "its jitter (torch_tiny_ops: 55 of 4,510 gaps 40-185 us in a launch-bound loop), which fusing removes with them",
       "idle between two kernels longer than this (and than either kernel) ends a chain counted as fusible"),
    # ---- §2 several GPUs --------------------------------------------------------
    _t("rank_straggler.warning", 0.05, "share", "Advisor (issue #19): a rank 5% slower makes every other rank wait "
       "5% of each step; peers (HTA straggler analysis, TraceLens per-collective skew) report it without a level",
       "a rank's (or a whole node's) extra time before the collectives, above the other ranks' median, {per_step}"),
    _t("rank_straggler.critical", 0.20, "share", "Advisor: a fifth of every rank's step lost waiting",
       "same metric, critical level"),
    _t("rank_straggler.min_steps", 3.0, "count", "Advisor (issue #27 item 2): one step cannot tell a straggler from "
       "one slow step", "aligned steps below which a straggler finding is at most a warning, of low confidence"),
    _t("comm_bandwidth_low.warning", 0.5, "ratio", "Advisor (issue #19): nccl-tests reach 70-90% of the link's bus "
       "bandwidth on messages of tens of MB; below half of it the link, its settings or its topology are at fault",
       "bus bandwidth of a collective / the link's bandwidth (NVLink by GPU generation within a host, comm.net_GBps "
       "between hosts)", "below"),
    _t("comm_bandwidth_low.critical", 0.2, "ratio", "Advisor: a fifth of the link", "same metric, critical level",
       "below"),
    _t("comm_bandwidth_low.min_message_bytes", 8 << 20, "bytes", "nccl-tests: bus bandwidth approaches the link's "
       "from messages of several MB; smaller ones are latency-bound, so their bandwidth says nothing of the link",
       "collectives with a smaller mean message are not judged"),
    _t("comm_bandwidth_low.min_share", 0.05, "share", "Advisor: a slow collective the step does not wait for costs "
       "nothing", "the collective's exposed transfer time below this share of the {step}: not judged"),
    _t("comm.paced_run_calls", 16, "count", "Advisor (issue #37, h37-buckets): DDP's default 25 MB buckets make a "
       "handful of gradient all-reduces a step; HTA's compiled V100 trace (wild/compiled_v100_param_allreduce) launches "
       "404 one-parameter all-reduces one by one, each shorter than the host's gap before the next",
       "collectives in one run (consecutive calls of a step with GPU idle, not compute, between them, each call shorter "
       "than the host's pace) from which the idle between them is the collectives' cost, not launch wait"),
    _t("comm.paced_kernels_between", 2, "count", "Advisor (h37-buckets): a per-parameter loop's own work between two "
       "calls is a copy or a gradient's scaling (HTA's compiled V100 trace: a device copy, an elementwise kernel in 15 "
       "of 404 gaps); the backward between two hook-launched all-reduces computes a layer, 4-45 kernels "
       "(nsys_ranks/ddp_overlap_rtx3090), whose idle is its own launches' wait",
       "compute kernels between two collectives above which they are not one run of calls launched one by one"),
    _t("comm.net_GBps", 25.0, "GB/s", "a 200 Gb/s InfiniBand HDR or RoCE NIC per GPU (DGX A100's fabric; DGX H100 "
       "has 400 Gb/s = 50 GB/s per GPU): the network bandwidth assumed between hosts",
       "per-GPU network bandwidth a collective across host files is compared with", "none"),
    # ---- FLOPs, MFU and rooflines (issue #20) -------------------------------------------
    _t("flops.min_coverage", 0.8, "share", "Advisor (issue #20): an MFU over FLOPs that miss a fifth of the "
       "matmul/conv time would understate the run by as much; below this, MFU is not given and the reason is",
       "share of matmul/conv kernel time launched by ops whose FLOPs the trace's shapes give"),
    _t("flops.low_roofline_share", 0.4, "share", "Advisor (issue #20): cuBLAS/cuDNN reach 60-80% of peak on large "
       "aligned GEMMs (nvidia-smi-class dense peaks, vendors' own GEMM benchmarks); under 40% of its roofline a GEMM "
       "is small, odd-shaped or badly tiled", "a GEMM's achieved FLOP/s over its roofline's attainable FLOP/s"),
    _t("mfu_low.warning", 0.5, "share", "Advisor (issue #20): half the GEMM time far below its roofline is the "
       "largest cost left once the guide's checks are quiet; large-model training reports 35-55% MFU (PaLM 46%, "
       "Llama-3 38-43%), so a low MFU alone is no finding", "share of GEMM time far below its roofline, with MFU "
       "low"),
    _t("mfu_low.critical", 0.8, "share", "Advisor: nearly all GEMM time far below its roofline",
       "same metric, critical level"),
    _t("mfu_low.mfu", 0.3, "share", "Advisor: PaLM-class training reaches 40-50% MFU; under 30% there is room",
       "MFU under which the low-MFU finding may fire", "below"),
    _t("mfu_low.min_gemm_share", 0.2, "share", "Advisor: GEMMs that take under a fifth of the step cannot be what "
       "holds MFU down", "GEMM kernel time as a share of {step} time below which the finding stays quiet"),
    _t("small_grid.info", 0.01, "share", _MENTION + "; under 1% (a reduction's last one-block pass) it is noise",
       "bound on the {step} time filling the GPU saves (kernel time x (1 - blocks / SMs) of kernels launched with fewer "
       "blocks than SMs, after the critical cap), as a share of the {step}"),
    _t("small_grid.floor_us", 3.0, "us", "Advisor: what a kernel takes whatever its grid -- its launch ramp, one round "
       "trip to memory, its tail: the trivial kernels of the real H100 tiny-ops capture (real-h100-torch "
       "torch_tiny_ops) record 1.06-1.2 us, a kernel whose threads load and store once a DRAM round trip (~1 us) more",
       "the part of each kernel's time that more SMs cannot shorten, taken off before the underfill bound"),
    _t("small_grid.warning", 0.10, "share", "Advisor, as the other checks of a faster kernel (tensor_core_unused, "
       "dtype_casts, xla_not_used): the saving is an upper bound on a kernel's speed-up, not a measured wait, so it "
       "warns at a tenth of the step; below that it is info (issue #37 item 4)", "same metric, warning level"),
    _t("small_grid.critical", 0.25, "share", "Advisor: a quarter of the step lost to SMs left idle",
       "same metric, critical level"),
    _t("unfused_attention.min_per_step", 2, "count", "Advisor (issue #37 item 6): a model's attention runs once a "
       "layer, so eager attention recurs several times a step; a classifier head's matmul -> softmax runs once",
       "occurrences of matmul -> softmax -> matmul on one stream per step per GPU below which nothing is said", "below"),
    _t("unfused_attention.max_between", 4, "count", "Advisor: eager attention puts the scale, the mask's add, the "
       "dropout and a layout copy between a matmul and its softmax (HF TimeSformer: scale before, one copy after)",
       "element-wise kernels at most between each matmul and the softmax for the three to be one attention"),
    _t("unfused_attention.info", 0.01, "share", _MENTION, "{step} time a fused attention kernel saves, as a share of "
       "the {step}"),
    _t("unfused_attention.warning", 0.05, "share", "stock overview's bar for a fix worth making (input >=5% of the "
       "step); the saving counts only kernels a fused kernel does not run, so it is a lower bound",
       "same metric, warning level"),
    _t("unfused_attention.critical", 0.25, "share", "Advisor: a quarter of the step in kernels that fused attention "
       "does not run", "same metric, critical level"),
    _t("alltoall_imbalance.warning", 1.5, "ratio", "Advisor (issue #19): every rank of an all-to-all waits for the "
       "one that moves the most; half again the median rank's message is a third of the exchange lost",
       "largest rank's all-to-all message / the median rank's"),
    _t("alltoall_imbalance.critical", 3.0, "ratio", "Advisor: two thirds of the exchange lost to one rank's splits",
       "same metric, critical level"),
    _t("comm_exposed.warning", 0.10, "share", "Advisor: a tenth of the step waiting for collectives no compute "
       "overlaps; peers (HTA's comm/comp overlap, Nsight's nccl_gpu_overlap) report the same quantity without a level",
       "share of {step} time in collective kernels that no compute kernel of the same GPU overlaps"),
    _t("comm_exposed.critical", 0.25, "share", "Advisor: a quarter of the step is the main cost of the step",
       "same metric, critical level"),
    _t("allreduce_extra.calls_per_gpu_step", 1.0, "count", "guide §2 item 3: one NCCL AllReduce per GPU per step",
       "AllReduce calls per GPU per step above this fire"),
    _t("allreduce_extra.min_share", 0.01, "share", "Advisor (issue #19): extra calls whose time compute hides cost "
       "the step nothing; a finding rests on time the step pays for", "exposed time of the extra AllReduce calls below "
       "this share of {step}: no finding"),
    _t("allreduce_extra.critical", 0.15, "share", "stock overview: device collectives >=15% of step = high",
       "time of the extra AllReduce calls as a share of {step} at which the finding is critical"),
    _t("allreduce_slow.ratio_warning", 2.0, "ratio", "guide §2.1: expected ~ params x 4 bytes / bandwidth; Advisor "
       "allows 2x for ring overhead and latency", "measured / expected AllReduce time"),
    _t("allreduce_slow.ratio_critical", 5.0, "ratio", "Advisor", "same metric, critical level"),
    _t("allreduce_slow.share_info", 0.03, "share", "stock overview: device collectives >=3% of step = moderate",
       "collective share of {step} that earns an info finding when the parameter count is unknown"),
    _t("allreduce.bandwidth_GBps", 10.0, "GB/s", "Advisor: PCIe 3.0 x16 effective (~10-12 GB/s); used when the capture "
       "does not give the interconnect bandwidth. NVLink is 5-30x faster", "communication bandwidth in the formula"),
    _t("gpu_imbalance.warning", 0.10, "ratio", "Advisor; guide §2 item 5: every replica should do the same work",
       "(busiest GPU's compute - the median of its peers') / busiest GPU's compute, {per_step}"),
    _t("gpu_imbalance.critical", 0.30, "ratio", "Advisor", "same metric, critical level"),
    _t("gpu_imbalance.one_call_share", 0.5, "share", "Advisor (h37-imb56): work that differs between ranks repeats, "
       "call after call; one call that carries most of the gap is a one-off cost (a first call's autotuning or module "
       "load, a clock dip)", "share of the busiest GPU's compute gap over the lightest held by one call of one kernel "
       "(over the same call on the lightest) at which, the imbalance without it under the warning level, the gap is "
       "that call's, not work"),
    _t("launch_skew.warning", 0.05, "share", "Advisor; guide §2.2: skewed start = host thread contention",
       "average spread of the GPUs' first-kernel start {per_step}, as a share of {step} time"),
    _t("launch_skew.critical", 0.30, "share", "Advisor: part of a skew hides behind the AllReduce wait; critical when "
       "it is near a third of the step", "same metric, critical level"),
    _t("launch_skew.min_ms", 0.1, "ms", "Advisor: skews under 100 us are scheduling noise", "absolute minimum skew"),
    _t("sequential_gpus.warning", 0.5, "share", "Advisor; guide §2 item 6: GPUs should run the step concurrently",
       "concurrency: share of the GPUs' busy time that overlaps another GPU (1 = fully parallel)", "below"),
    _t("sequential_gpus.critical", 0.2, "share", "Advisor", "same metric, critical level", "below"),
    _t("batch_size_headroom.info", 0.5, "share", "Advisor; guide §2 item 1: maximize batch size, check peak memory",
       "peak memory / GPU memory below this earns an info finding", "below"),
    # ---- headline cards (status colour only; findings use the rule thresholds) ------
    _t("headline.device_step_share.warning", 0.50, "share", "peers: torch-tb-profiler and Nsight Systems flag GPU "
       "utilization < 50%; guide §1: maximize", "device {step-}-time share below this -> amber card", "below"),
    _t("headline.device_step_share.critical", 0.25, "share", "Advisor: the GPU idles three quarters of the step",
       "device {step-}-time share below this -> red card", "below"),
    _t("host_bound.saving_warning", 0.25, "share", "Advisor; issue #37 item 4: a finding is judged by what it saves -- a "
       "quarter of the step is the host's own work, whatever the device share",
       "host work the GPU waits for, no other finding recovers, at this share of the {step} or more -> host-bound "
       "warning where the device {step-}-time share is not amber"),
    _t("host_frame.share", 0.5, "share", "Advisor: a call is named as the place of the host's own work only where it "
       "holds at least half of it, the deepest such call",
       "share of the host's own work per {step} that one recorded Python call (with_stack) must hold to be named as "
       "where the host-bound time lies (the deepest such call)"),
    _t("headline.host_op_share.warning", 0.10, "share", "Advisor; guide §1.2.2: the host share 'should be very small'",
       "share of TF ops (by count) with no device kernels above this -> amber card"),
    _t("headline.host_op_share.critical", 0.50, "share", "Advisor", "same metric, red card"),
    # ---- capture quality (Q&A) ------------------------------------------------------
    _t("capture.min_steps", 5.0, "count", "Q&A: a few steady-state steps; stock overview drops first and last step "
       "when it has more than 5", "fewer complete steps than this -> warning"),
    _t("capture.min_length_ms", 100.0, "ms", "Advisor: under 0.1 s a capture holds too little to average",
       "captures shorter than this are 'too short' (capture.too_short)"),
    _t("capture.max_seconds", 30.0, "s", "Q&A: profile about ten seconds, never a whole run (overhead distorts)",
       "captures longer than this -> info"),
    _t("capture.max_step_cv", 0.5, "ratio", "Advisor: step times varying by >50% (stddev/mean) are not steady state",
       "coefficient of variation of step time above this -> info"),
    _t("capture.mean_over_median", 2.0, "ratio", "Advisor: a mean step at least twice the median one is set by a "
       "minority of long steps (h37-wordsfit30)", "mean over median step time at or above which the unsteady-steps "
       "note names the median and the long steps that lift the mean"),
    _t("capture.graph_kernel_share", 0.5, "share", "Advisor: when most kernel time runs inside CUDA graphs (XLA command "
       "buffers) the capture has no per-op names for it", "share of kernel time launched inside CUDA graphs above which "
       "the capture-quality note says how to get per-op names"),
    _t("capture.unseen_share", 0.05, "share", "Advisor: at the stock overview's 'all others' moderate level, time the "
       "capture cannot explain changes every other number", "share of the {step} the host waits for GPU work the "
       "trace does not hold, above which the capture-quality check says so"),
    _t("capture.lost_launch_share", 0.01, "share", "Advisor: every accepted launch runs a kernel; a percent of the "
       "launches without their records is more than a capture's edge holds in flight, and moves every share the "
       "window's GPU time gives", "share of the accepted kernel launches whose kernels ran inside the window without "
       "a record (job.kind.lost_launches) at which the capture-quality check says the GPU records were lost"),
    _t("capture.clock_skew_us", 10.0, "us", "Advisor: no GPU work starts before the call that launched it; a lead of "
       "half the 20-40 us launch latency (guide 1.2.2) is more than timestamp rounding and moves the launch-wait "
       "intervals the guide's checks measure", "the largest lead of recorded GPU work over its own launch call above "
       "which the capture-quality check says the capture's GPU and host clocks disagree"),
    # ---- step detection (steps.py) ------------------------------------------------
    _t("steps.drop_edges_above", 5.0, "count", "stock overview: with more than 5 steps the first (warm-up) and last "
       "(possibly partial) step are dropped", "steps found above which the first and last are dropped"),
    _t("steps.short_last_share", 0.02, "share", "Advisor: two processes of the same code differ by about 1% "
       "(diff.noise_floor_share); twice that is what a window's edge may move by chance", "share of the shortest other "
       "step by which (and by more than the others' own spread) the last of a few tiled steps, ending at its own work, "
       "or a memory snapshot's first marked turn, begun with its recording, must fall short to be partial for the "
       "mean"),
    _t("steps.async_spill_steps", 0.5, "ratio", "Advisor: JAX returns from a jitted call at once, TensorFlow steps end on "
       "a device sync; measured on the real H100 captures", "dispatch is asynchronous when a host step's device work "
       "typically ends this many host-step lengths after it"),
    _t("steps.cluster_gap_factor", 10.0, "ratio", "Advisor: a step boundary in GPU busy clusters is an idle gap far "
       "longer than the typical gap between kernels", "gap between busy clusters, as a multiple of the median gap, that "
       "separates steps (no step markers)"),
    _t("steps.cluster_min_gap_ms", 1.0, "ms", "Advisor: kernel-to-kernel idle inside a step is microseconds",
       "shortest idle gap that separates steps in GPU busy clusters"),
    _t("steps.idle_bursts_share", 0.01, "share", "Advisor: a loop's GPU bursts run its iterations' work; a window whose "
       "GPU works under a hundredth of the bursts' span (a compiled model's first call: 70 us of kernels in 3.2 s) "
       "holds pauses of the host's, not iterations", "share of the span of the GPU's bursts under which the GPU's busy "
       "time makes the bursts no iterations, where most of their kernel time runs in one burst only", "below"),
    _t("steps.transfer_bytes_share", 0.5, "share", "Advisor: a loop moves the same tensors every iteration, their size "
       "set by the batch's length (a ragged last batch, sequences padded to each batch's longest), while a program's "
       "phases move tensors of their own; within a factor of two, as the batch's length varies", "share of the larger "
       "of two bursts' matching transfers (the same direction, memory kinds, GPU and stream) the smaller must move for "
       "the two bursts of kernels to make the same transfers", "below"),
    _t("steps.body_bursts_share", 0.5, "share", "Advisor: a loop's body runs in every iteration, so where the GPU's "
       "bursts are its iterations some of the same work runs in each of them; a window whose work runs in under half "
       "of its bursts (a test loop's 16 iterations cut into 85 bursts by first launches, later ones merged) holds "
       "pieces of iterations, not iterations", "share of the GPU's inner bursts (the window's first and last left "
       "out) that the most widespread kernel or copy must run in for the bursts to be read as iterations", "below"),
    _t("steps.nvtx_min_repeats", 3.0, "count", "Advisor: a block of the user's code that runs once per step repeats as "
       "often as the steps; one that runs once or twice (setup, a checkpoint) marks no steps",
       "times the most repeated top-level NVTX range must occur on a thread to mark steps (no range named like a step)"),
    _t("dtype_casts.warning", 0.10, "share", "Advisor: a tenth of the step in kernels that only convert dtypes is "
       "mixed precision paying more than it should (real HF autocast forward passes: casts beside GEMMs of half their "
       "time)", "share of {step} time in dtype-conversion kernels"),
    _t("dtype_casts.critical", 0.25, "share", "Advisor: a quarter of the step in casts is more than the GEMMs of a "
       "typical eager forward pass", "same metric, critical level"),
    _t("allocator_churn.warning", 0.05, "share", "Advisor, at the stock overview's 'all others' moderate level: a "
       "caching allocator makes driver allocations rare after warm-up", "share of {step} time the GPU idles while the host "
       "is in cudaMalloc / cudaFree"),
    _t("allocator_churn.critical", 0.20, "share", "Advisor: a fifth of the step in the driver's allocator", "same "
       "metric, critical level"),
    # ---- memory (issue #29): peak, capacity, what holds it ------------------------------
    _t("memory.usable_share", 0.90, "share", "Advisor: the CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers and "
       "other processes take device memory the allocator never sees", "share of a GPU's memory a job can plan its "
       "peak for (the batch-growth estimate)"),
    _t("memory.near_capacity.warning", 0.90, "share", "Advisor, at memory.usable_share: past it a larger input, a "
       "longer sequence or the allocator's rounding is an OOM", "peak reserved (else allocated) bytes / GPU memory"),
    _t("memory.near_capacity.critical", 0.97, "share", "Advisor: the allocator already retries by emptying its cache "
       "(cudaMalloc retries) this close to the limit", "same metric, critical level"),
    _t("memory.activations.share", 0.50, "share", "Advisor: activations are then what a larger batch multiplies, and "
       "what checkpointing frees", "share of the allocated peak held by the step's forward pass (activations kept for "
       "the backward)"),
    _t("memory.activations.min_use", 0.50, "share", "Advisor, at batch_size_headroom.info: with half the GPU free, "
       "recomputing activations buys nothing", "peak bytes / GPU memory below which the activations finding is silent"),
    _t("memory.checkpoint_frees", 0.70, "share", "Advisor, from Chen et al. 2016 (Training Deep Nets with Sublinear "
       "Memory Cost) and PyTorch's checkpoint docs: per-block checkpointing keeps each block's input, a fraction of "
       "what the block's ops save for the backward (a transformer block keeps ~10-30x its input)", "share of the "
       "activations at the peak that checkpointing each block frees (the activations finding's saving)"),
    _t("memory.pressure.warning", 0.75, "share", "Advisor: a quarter of the GPU left is one batch-size step from "
       "the limit", "peak bytes / GPU memory from which the activations and fragmentation findings are warnings (info "
       "below)"),
    _t("memory.fragmentation.share", 0.25, "share", "Advisor; PyTorch's OOM message suggests the allocator settings "
       "when 'reserved but unallocated memory is large'", "(reserved - allocated) / reserved at the reserved peak"),
    _t("memory.fragmentation.min_share", 0.05, "share", "Advisor: a gap under 5% of the GPU is not worth a setting",
       "(reserved - allocated) / GPU memory at the reserved peak, the least that fires"),
    _t("memory.forward_kept.ratio", 8.0, "ratio", "Advisor, from seven real snapshots: a forward pass under no_grad "
       "keeps 3.7-4.2x its largest tensor live (the tensors in use), one with autograd on 170-370x (every layer's, "
       "for a backward)", "forward-pass bytes live at the peak / the largest of them, from which a capture with no "
       "backward pass keeps its forward for one"),
    _t("memory.grads_kept.share", 0.1, "share", "Advisor: parameters' gradients a tenth of the live bytes in a job "
       "with no backward pass are worth freeing", "gradients Module._apply moved with the model / bytes live at the snapshot's dump"),
    _t("memory.leak.min_iterations", 3, "count", "Advisor: two passes keeping the same blocks are a cache filled "
       "twice as often as a leak; a third one keeping as much again is a level that climbs with every pass",
       "passes of the same work that each keep the same never-freed blocks, from which a leak is read"),
    _t("memory.leak.min_bytes", 1 << 20, "bytes", "Advisor: a few scalars a pass (a list of detached losses) take "
       "years to fill a GPU", "bytes each pass keeps, the least that makes a leak finding"),
    _t("memory.leak.warn_passes", 1000, "count", "Advisor: a leak grows without bound, so its share of the peak when "
       "the history ends says only how long the recording was; what matters is how soon it adds another peak's "
       "bytes -- within a thousand passes (an epoch of a small data set, minutes of a training run) the job runs "
       "out, well past it a long run only", "allocated peak / bytes each pass keeps: the passes in which the leak "
       "adds the peak again, the most that makes its finding a warning", direction="below"),
    _t("memory.imbalance.warning", 1.5, "ratio", "Advisor; guide §2 item 5: one process's replicas of a module "
       "should hold the same bytes, and the fullest GPU sets the batch every GPU can run", "the fullest GPU's "
       "allocated peak / the median of the others' peaks, among one snapshot's GPUs"),
    _t("memory.imbalance.critical", 3.0, "ratio", "Advisor: the fullest GPU holds as much as three of the others",
       "same metric, critical level"),
    _t("memory.imbalance.min_bytes", 1 << 30, "bytes", "Advisor: a GPU the process touched with a few tensors (a "
       "seed, a probe) runs none of its work; below a GiB the imbalance costs no batch", "allocated peak a GPU must "
       "reach to count among the imbalance's GPUs"),
    _t("memory.forward_kept.share", 0.10, "share", "Advisor: less of the peak is not worth a finding",
       "forward-pass bytes kept (no backward pass) / allocated peak, the least that fires"),
    _t("memory.cast_cache.share", 0.10, "share", "Advisor: less of the peak is not worth a finding (as "
       "memory.forward_kept.share)", "autocast's cached copies of the weights live at the peak, in a job with no "
       "backward pass / allocated peak, the least that fires"),
    _t("memory.attention_math.share", 0.10, "share", "Advisor: less of the peak is not worth a finding (as "
       "memory.cast_cache.share)", "bytes attention computed op by op wrote live at the peak (SDPA's math backend "
       "or a softmax inside an attention function: score matrices and probabilities, by their stacks) / allocated "
       "peak, the least that fires"),
    _t("memory.forward_kept.together", 0.80, "share", "Advisor: the output dropped frees the graph at once",
       "share of the kept forward bytes freed in one run of frees (or held to the end) to say so"),
    _t("memory.timeline_points", 600, "count", "Advisor: a chart's width in pixels; every step's peak is kept",
       "points of a GPU's memory series in the report"),
    # ---- physics ------------------------------------------------------------------
    _t("physics.vector_peak_factor", 2.2, "ratio", "Advisor, from the architecture documents: packed 16-bit vector "
       "math runs at most 2x the fp32 vector rate (Hopper fp16 non-tensor 133.8 vs fp32 66.9 TFLOP/s); 10% margin",
       "a kernel whose FLOP rate exceeds this many times its GPU's fp32 peak ran on the matrix units, whatever its name"),
    _t("flops.max_peak_share", 1.05, "ratio", "physics: no kernel beats its GPU's dense peak (5% for clocks above "
       "the datasheet's boost)", "a GEMM shape whose FLOPs over its kernels' time exceed this share of the peak has "
       "kernels missing from its time: it is left out of the rooflines"),
    # ---- the job stage (job/) -----------------------------------------------------
    _t("job.one_time_launch_ms", 1.0, "ms", "Advisor: a kernel launch takes microseconds (real H100 and MI300X traces: "
       "median 4-9 us); one of milliseconds with the GPU idle is a first launch loading its module (lazy loading)",
       "a launch at least this long (and job.one_time_launch_factor x the median) with the GPU idle is a one-time cost"),
    _t("job.staging_min_gbps", 1.0, "GB/s", "CUDA's documentation on pageable transfers: the driver stages them "
       "through a pinned buffer, the host copying each chunk at memory speed (several GB/s; 3.3 GB/s for a 4 MB "
       "pageable D2H in a real A100 export, its call 1.98 ms around a 0.69 ms DMA)",
       "a blocking copy call no longer than its own copies plus their bytes at this rate waits for its own copy and "
       "the driver's staging, not for GPU work the capture does not show"),
    _t("job.one_time_launch_factor", 100.0, "ratio", "Advisor: two orders of magnitude above the capture's median launch",
       "a one-time launch is this many times the median launch under job.one_time_launch_ms at least (where no "
       "launch is under it, the one-time cut alone decides), unless it ran its kernel's first run and took longer "
       "than every launch by the same call of a kernel already run: that is the module's load whatever the median"),
    _t("job.one_time_launch_share", 0.5, "share", "Advisor: cold captures hold most of their launch time in a few "
       "launches (99% in 18 launches on a real cold forward pass); one slow launch among thousands is noise",
       "slow launches count as one-time costs only when they hold at least this share of all launch time"),
    _t("job.copy_only_share", 0.05, "share", "Advisor: start-up's copies are a few small ones (a 4,608-byte memset in "
       "files_startup_climate_unet's 880 ms window); a bandwidth test or a staging loop keeps its copy engines busy a "
       "real share of its window (h37-probe43w)", "share of a window without kernels a GPU's copies must "
       "busy for the window to read as copies only, not start-up"),
    _t("job.copy_only_repeats", 3.0, "count", "Advisor: a copy loop makes one copy again and again (a bandwidth test "
       "hundreds of times); one batch's upload before the first kernel makes each of its tensors' copies once "
       "(h37-probe43w)", "times one copy (direction and size) must be made for a window without kernels to read as "
       "copies only"),
    _t("job.teardown_min_calls", 2.0, "count", "Advisor: one free is any program's (start-up's cudaFree(0) creates "
       "the context); a tear-down releases what it made, several things (h37-probe43w)", "calls that release what the "
       "program made, and at least half its calls, for a window without kernels to read as its tear-down"),
    _t("job.rank_shared_work", 0.5, "share", "Advisor: a job's ranks run one program, so each rank's NVTX ranges carry "
       "the names the others' work runs under (every name of the two FSDP ranks of the shared 2xH100 Nsight export is "
       "both's); a launcher names none of them and a loader worker a few of its ops (h37-nvtx62); names compared with "
       "their numbers aside, so a rank's `rank1/forward` or `step_12` is rank 0's `rank0/forward`, `step_3` "
       "(h37-nvtx63)", "of the range names under which a GPU's process launches its work (numbers aside), the share a "
       "process without GPU work must also name to be read as one of the job's ranks"),
    _t("job.one_time_call_ms", 0.1, "ms", "Advisor: library handle creation and module loading take 0.1 ms to seconds",
       "start-up and compilation calls at least this long count as one-time costs"),
    _t("job.compile_gap_ms", 1.0, "ms", "Advisor: an interpreter runs a graph's next op microseconds after the last "
       "(real TorchScript fallbacks: 18-78 us of their own between ops); the executor's profiling and optimising a "
       "graph takes milliseconds to seconds (135-140 ms with no op on a real A100 GNN inference)",
       "a stretch of a compile-gap event (TorchScript's fallback function) with no nested op or call at least this "
       "long counts as one-time compilation"),
    _t("job.graph_node_us", 3.0, "us", "Advisor: a CUDA/HIP graph launch submits its nodes one by one on the host "
       "(real captures: 1.15 us a node for a 1,387-kernel decode graph on an L40, 1.59 ms; 2.8 us for a 555-kernel "
       "one on an MI300X, 1.57 ms), every time it is launched", "a graph launch no longer than this per kernel it "
       "launched is its own submission, paid at each launch, not a one-time cost"),
    _t("job.one_time_call_repeats", 5.0, "count", "Advisor: a process's context creation, first allocations and first "
       "streams are slow a few times (real cold A100 capture: 1-5 slow calls a name); a call slow every iteration "
       "(hipFree with the caching allocator off: hundreds) is steady state", "a runtime call of milliseconds with the "
       "GPU idle counts as one-time when its name is that slow at most this many times"),
    _t("job.first_call_factor", 10.0, "ratio", "Advisor: an op's later calls in one pass differ by their shapes, "
       "within an order of magnitude of their median; a first call 10x over it and over every later call pays what "
       "only a first call does (a real legacy torch.autograd.profiler list: the first cudnn_convolution 1.12 s "
       "against a median of 322 us, the first inverse 840 ms against 474 us)", "where the capture holds no GPU "
       "record, an op's first call at least job.one_time_call_ms long, longer than every later call of the op and "
       "this many times their median, is a one-time cost (cuDNN's algorithm search, a library's lazy start-up)"),
    _t("job.least_work_gflops", 1.0, "GFLOP/s", "Advisor: one CPU core computes fp32 matmuls at several GFLOP/s "
       "with no vector unit, tens to hundreds with one, and every GPU faster still", "the slowest rate an op's own "
       "FLOPs (its recorded shapes') are taken to run at, on any CPU or GPU: the most time its own work can take"),
    _t("job.least_work_gbps", 1.0, "GB/s", "Advisor: one CPU core streams memory at 5-20 GB/s, a GPU at hundreds; 1 "
       "GB/s is below any", "the slowest rate an op's own bytes (its recorded shapes' operands and result) are taken "
       "to move at, on any CPU or GPU"),
    _t("job.beyond_work_factor", 100.0, "ratio", "Advisor: two orders of magnitude over the most its own work can take "
       "is no work of the op's (a real ResNet-18 pass with CPU activity only: its one `aten::linear` of [5,512]x"
       "[1000,512], 5.1 MFLOP, 2.29 s -- cuBLAS's start-up; its first `aten::zeros` 4.36 s, its allocation and fill "
       "452 us -- the CUDA context)", "an op's first call this many times over its own work's most (its FLOPs and "
       "bytes at job.least_work_gflops / job.least_work_gbps; a tensor-making op's: its recorded allocation and fill) "
       "is a one-time cost"),
    _t("job.beyond_work_ms", 100.0, "ms", "Advisor: a launch that waits for a slot in a full launch queue waits for "
       "one kernel, milliseconds; a context's creation or a math library's start-up takes 0.1-5 s (a real ResNet-18 "
       "pass: 4.36 s, 2.29 s)", "an op's first call at least this long and job.beyond_work_factor times over its own "
       "work's most is a one-time cost"),
    _t("job.warmup_iteration_ratio", 1.5, "ratio", "Advisor: a first iteration pays its one-time costs (allocations, "
       "kernel selection, compilation) -- a real CS336 GPT benchmark's first `benchmark_iteration` took 780 ms against a "
       "median of 209.5 ms, the next 14 within 6% of it", "a leading iteration longer than this multiple of the median "
       "iteration is warm-up, which a capture window on the iterations should skip"),
    _t("job.warmup_share", 0.25, "share", "Advisor: when a quarter of the window is one-time costs, the capture "
       "describes the start-up, not the steady state", "one-time costs above this share of the capture: phase warm-up"),
    _t("job.snapshot_forward_kept", 0.1, "share", "Advisor: autograd keeps most of a forward's outputs for the backward; "
       "under no_grad one layer's working set is live at a time (1/L of an L-layer model: 3% on a real 12-layer "
       "benchmark, 20-60% on a real training forward)",
       "a snapshot's forward with less of its bytes live at the peak kept nothing for a backward"),
    _t("job.snapshot_trough_dip", 0.1, "share", "Advisor: between iterations a training loop holds its weights and "
       "optimizer state, plus at most what a variable keeps from the last iteration (its loss, its output), freed early "
       "in the next: a small part of what an iteration climbs (0 in the blog's real ResNet-50 snapshot)",
       "a snapshot's iteration falls below the level it started from by at most this share of its climb"),
    _t("job.snapshot_trough_return", 0.1, "share", "Advisor: an iteration frees what it made (the blog's real "
       "ResNet-50 snapshot returns to the byte); a leak or a cache grows by far less a step than the step climbs",
       "a snapshot's iteration after the first ends within this share of its climb of where it started"),
    _t("job.snapshot_iteration_alike", 0.1, "share", "Advisor: a loop's iterations run the same code, so make the same "
       "allocations (679 each in the blog's real ResNet-50 snapshot)",
       "a snapshot's iterations hold the same number of allocations within this share"),
    _t("graph_recaptured.warning", 0.05, "share", "Advisor: the cost of recording a graph again in the steady run, as a "
       "share of the step, from which it is worth a change to the program (as the host-bound checks' amber)",
       "time per step the steps holding a graph recaptured run over the steps that replay it, of the step"),
    _t("graph_recaptured.critical", 0.25, "share", "Advisor: a quarter of the step spent recording graphs again is the "
       "step's main cost (as job.warmup_share for one-time costs)", "same metric, critical level"),
    _t("job.one_time_min_share", 0.02, "share", "Advisor: below 2% of the window one-time costs change no number",
       "one-time costs above this share (and below job.warmup_share): phase mixed"),
    _t("input.min_untraced_ms", 0.1, "ms", "Advisor: loading and preparing a batch takes more than a Python loop's "
       "own turn (10-30 us); shorter untraced time before a step's first op is the loop, not its input",
       "a step marker's time before its first dispatch counts as input wait only from this long"),
    _t("metrics.unrecorded_wake_us", 10.0, "us", "Advisor: a wait no event records is a wait on a future or an event "
       "the runtime's callback thread sets once the stream drains (JAX's block_until_ready, TensorFlow's fetch), then "
       "a thread's wake-up: tens of us after the drain (real-h100-jax host_roundtrip: the host's staging copy begins "
       "123 us after its D2H ends); a host back at work sooner was running, not woken",
       "an unrecorded stretch of the host across the GPU's drain may be a wait for it only where the host records "
       "nothing for at least this long after the drain"),
    _t("metrics.cpu_op_ms", 1.0, "ms", "Advisor: handing one op to the GPU takes microseconds (a launch is 5-40 us); "
       "an op that runs a millisecond without a single GPU runtime call computed on the host",
       "a framework op at least this long that makes no GPU runtime call is host compute, not dispatch"),
    _t("job.span_step_coverage", 0.5, "share", "Advisor: a repeated span that launches at least half the GPU work is "
       "the program's step (the rest is set-up, logging, evaluation)",
       "a span name is a step source when its instances enclose this share of all launches"),
    _t("job.uneven_turns_ratio", 2.0, "ratio", "Advisor: a loop's turns that run the same code agree far closer than "
       "2x; where the longest is more than twice the shortest the mean is no turn the loop ran (quasiben's "
       "nvtx-quickstart sleeps 0-4 s a turn: a mean of 2.00 s)",
       "a CPU loop's words give the median turn and the range beside the mean where its longest turn is more than "
       "this many times its shortest"),
    _t("job.period_boundary_gap", 4.0, "ratio", "Advisor: a loop's calls are separated by host work (sampling, a sync, "
       "the next input), a model's layers by nothing",
       "a periodic launch sequence is a step only where the host's gap before each period is this many times its "
       "typical gap between launches"),
    # ---- comparing two captures (diff.py) ---------------------------------------
    _t("diff.noise_z", 2.0, "ratio", "Advisor: two standard errors of the difference of the mean step times "
       "(Welch, from each run's per-step spread): about 95% of same-code pairs stay inside",
       "a step-time change is beyond the noise when larger than this many standard errors"),
    _t("diff.noise_floor_share", 0.01, "share", "Advisor: two processes of the same code differ by about 1% "
       "(clocks, placement, allocator state) where one process's steps agree far better",
       "a step-time change is never beyond the noise below this share of the base step"),
    _t("diff.reserved_noise_bytes", 20 << 20, "bytes", "PyTorch c10 CUDACachingAllocator (kLargeBuffer): a request of "
       "1-10 MiB that no cached block fits opens a 20 MiB segment (a request up to 1 MiB a 2 MiB one, a larger one is "
       "rounded up to 2 MiB), so two runs of the same allocations whose caches fit one request differently reserve "
       "up to one such segment more", "a peak reserved that grew by no more than this is the allocator's rounding, "
       "never a memory regression"),
    _t("diff.calibration_tolerance", 0.25, "share", "Advisor (issue #11): a predicted saving off by more than "
       "25% of the realised one is fixed or its limit stated",
       "realised / predicted saving within 1 +- this counts as calibrated"),
    # ---- ranking / presentation ------------------------------------------------
    _t("severity.warning_min_saving", 0.03, "share", "Advisor (issues #27 item 6, #37 item 4): a fix that saves under "
       "a few per cent of the step is worth knowing, not a problem, whatever share of the GPU's time it touches (fp32 "
       "GEMMs that are 1.9% of a 1.5 ms host-bound step); a few per cent is about the spread of step times between "
       "two runs of the same code", "a finding whose saving is below this share of the {step} is info"),
    _t("severity.critical_min_saving", 0.10, "share", "Advisor: critical means a tenth of the step or more to win",
       "a finding whose saving is below this share of the {step} is at most a warning"),
    _t("report.min_saving_share", 0.005, "share", "Advisor: savings under 0.5% of step are shown as '<0.5%'",
       "display floor in the text and markdown reports, not a firing threshold"),
    _t("report.min_said_ms", 0.0005, "ms", "Advisor: the least time `common.fmt.ms` prints as more than '0 us' (it "
       "rounds to whole microseconds below 1 ms)", "display floor: a part of a finding's time under it is left "
       "unsaid (an input wait's H2D copies, its other ranges, a launch wait before graph replays), not a firing "
       "threshold"),
)

THRESHOLDS: dict[str, Threshold] = {t.name: t for t in _TABLE}


def T(name: str) -> float:
    """The current value of threshold ``name`` (KeyError names the table)."""
    try:
        return THRESHOLDS[name].value
    except KeyError:
        raise KeyError(f"unknown threshold {name!r}; see tb_gpu_advisor/common/thresholds.py") from None


#: Environment variables carrying the command line's ``--net-gbps`` (GB/s per GPU between hosts) and
#: ``--model-flops-per-step`` to code that is handed no options (``common.options.UserOptions.from_env``): the
#: analysis itself takes its settings as a ``UserOptions`` value, never from here.
ENV_NET_GBPS = "TB_GPU_ADVISOR_NET_GBPS"
ENV_MODEL_FLOPS = "TB_GPU_ADVISOR_MODEL_FLOPS"


def source(name: str) -> str:
    return THRESHOLDS[name].source


@contextlib.contextmanager
def override(**values: float) -> Iterator[None]:
    """Temporarily change thresholds (tests, experiments): ``override(**{"input_bound.warning": 0.1})``."""
    saved = {k: THRESHOLDS[k] for k in values}
    try:
        for k, v in values.items():
            THRESHOLDS[k] = replace(THRESHOLDS[k], value=float(v))
        yield
    finally:
        THRESHOLDS.update(saved)


def tuned() -> dict[str, float]:
    """The thresholds whose value now differs from the table's (an ``override`` in force), by name: what a report
    made now depends on beyond the code -- the report cache keys on it (``runtime.cache.make_key``), so a report
    made at the table's values is never served for a changed threshold, nor one made under a change for the table's."""
    return {t.name: THRESHOLDS[t.name].value for t in _TABLE if THRESHOLDS[t.name].value != t.value}


def adopt(values: dict[str, float]) -> None:
    """Make this process's thresholds the table's changed by ``values`` (another process's :func:`tuned`), for good: a
    worker child of the parallel paths (``runtime.isolation.call``, ``runtime.session.process_pool``) analyses at its
    parent's thresholds.  Its forkserver or spawn start imported the table afresh, so an ``override`` in force in the
    parent was lost there while the report cache keyed the report on it (h37-speed60)."""
    unknown = sorted(set(values) - set(THRESHOLDS))
    if unknown:
        raise KeyError(f"{len(unknown)} unknown threshold{'s' if len(unknown) > 1 else ''} {unknown}; "
                       "see tb_gpu_advisor/common/thresholds.py")
    for t in _TABLE:
        THRESHOLDS[t.name] = replace(t, value=float(values[t.name])) if t.name in values else t


def as_markdown() -> str:
    """The table as markdown (docs/rules.md embeds it; a test checks they agree)."""
    lines = ["| threshold | value | unit | fires | source |", "|---|---|---|---|---|"]
    for t in _TABLE:
        v = THRESHOLDS[t.name].value
        lines.append(f"| `{t.name}` | {v:g} | {t.unit} | {t.direction} | {t.source} |")
    return "\n".join(lines)
