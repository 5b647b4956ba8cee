"""Savings that add up: what time each fix recovers, which fixes overlap, and the step time if all of them land.

Each finding's saving names the time it recovers as parts ``(group, pool, ms)``:

* ``group`` -- the step-breakdown group the time sits in (:data:`GROUPS`: the
  breakdown categories gathered as the guide talks about them);
* ``pool`` -- *which* time of that group: two findings naming the same pool
  recover the same time (``mixed_precision_off`` and ``tensor_core_unused`` both
  speed up the 32-bit MatMul/Conv kernels; ``launch_bound``, ``eager_execution``
  and ``xla_not_used`` all remove launch gaps), so they overlap and only the
  larger of them counts.

The achievable step time (:func:`achievable`) is the step minus the union of
the recoverable time: per pool the largest claim, per group the sum of its
pools capped at the group's measured time.  It cannot fall below the device
work that remains after the compute savings, nor below zero.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from tb_gpu_advisor.model.schema import Finding

#: group -> the breakdown categories (metrics/types.BREAKDOWN_CATEGORIES) whose time it holds
GROUPS: dict[str, tuple[str, ...]] = {
    "input": ("input_wait",),
    "launch": ("launch_wait",),
    "host": ("host_compute", "managed_read", "other"),
    "copies": ("memcpy_h2d", "memcpy_d2h", "memcpy_d2d", "memset"),
    "compute": ("device_compute",),
    "collectives": ("collectives",),
    "startup": ("startup",),
    "unseen": ("unseen",),
    "handoff": ("stream_handoff",),
    "allocator": ("allocator",),
    "kernel_switch": ("kernel_switch",),
    # the capture's cost (the profiler's buffer requests): no fix recovers it; a group so the diff compares it apart
    "profiler": ("profiler",),
}
#: The groups a step's time is compared by (``report diff``, the tab's diff chart): the saving groups, the GPU's
#: fills (``memset``) apart from its copies.  The copies finding recovers both (its fix ``:memset``), so they share
#: one saving group; but a fill moves no byte, and a diff whose "Copies" moved by a fill named the wrong change
#: (h37-copydir31).
COMPARED_GROUPS: dict[str, tuple[str, ...]] = {}
for _g, _cats in GROUPS.items():
    COMPARED_GROUPS[_g] = tuple(c for c in _cats if c != "memset")
    if "memset" in _cats:
        COMPARED_GROUPS["fills"] = ("memset",)
#: pools and what they are (docs/report-schema.md lists them)
POOLS: dict[str, str] = {
    "input": "GPU idle waiting for the input pipeline or its host-to-device copies",
    "startup": "GPU idle inside one-time start-up costs (module loading, library start-up, compilation)",
    "allocator": "GPU idle while the host is in the device allocator's own calls (the driver's allocations and frees)",
    "launch": "GPU idle between kernels while the host launches or dispatches them",
    "host_work": "GPU idle while the host computes (host-placed ops, work between steps)",
    "host_own": "GPU idle while the host runs its own work inside the step that no other finding recovers (host-bound)",
    "host_wait": "GPU idle inside the step while the launching thread waits in the OS for something outside the capture, "
                 "that no other finding recovers (a wait between steps is the gap check's)",
    "sync_idle": "GPU idle after the program's own syncs, as far as their waits held the host (the gap and launch "
                 "checks leave it out of theirs)",
    "copy_idle": "GPU idle after copies that held the host (pageable or synchronous), as far as their calls held it "
                 "(the gap and launch checks leave it out of theirs)",
    "loss_scaling": "host-side dynamic loss-scaling updates",
    "copies": "blocking or synchronous memory copies",
    "tc_eligible_kernels": "32-bit MatMul/Conv kernel time (faster on Tensor Cores in 16 bit)",
    "tc_eligible_16bit_kernels": "16-bit MatMul/Conv kernels that miss the Tensor Cores",
    "gemm_kernels": "MatMul/Conv/attention kernels far below their roofline (small or odd shapes)",
    "non_matmul_kernels": "element-wise and reduction kernel time (fusion, half the bytes)",
    "allreduce": "AllReduce time above one packed, full-speed AllReduce",
    "exposed_comm": "collective time no compute overlaps, that overlapping would hide",
    "gpu_wait": "GPUs waiting for the slowest or latest GPU (in spinning collectives, or idle)",
    "sequential": "GPUs waiting for each other instead of running concurrently",
}

#: pools of kernel time a faster kernel recovers: capped at the kernel time the GPU's next work waited for
#: (``HostMetrics.compute_critical_ms``, rules/base.critical_cap; issue #37) -- on a host-bound step a faster kernel
#: only lengthens the GPU's idle.  Collective pools are not: ``exposed_comm`` is already the time no compute
#: overlaps, and a collective waits for its peers, not for its own launch.
#: Each pool's kernel class (``metrics/breakdown.CRITICAL_CLASSES``): a fix speeds up only that class's kernels, so
#: only their critical share (``HostMetrics.compute_critical_share``) of its claim shortens the step.
POOL_CLASS: dict[str, str] = {"tc_eligible_kernels": "matmul", "tc_eligible_16bit_kernels": "matmul",
                              "gemm_kernels": "matmul", "non_matmul_kernels": "other"}
CRITICAL_POOLS: frozenset[str] = frozenset(POOL_CLASS)
#: pools of kernel time whose fix keeps the work's precision, so its bytes and the peak it runs at: a faster kernel
#: there stays above the least time that work needs at the GPU's peaks (rules/base.floor_cap).  ``tc_eligible_kernels``
#: is not: moving 32-bit GEMMs to 16 bit halves their bytes and lifts their peak, so the 32-bit floor bounds nothing.
FLOORED_POOLS: frozenset[str] = CRITICAL_POOLS - {"tc_eligible_kernels"}

#: a category of GPU idle the host causes (metrics/breakdown.HOST_IDLE) -> the (group, pool) a fix that gives it back
#: recovers: a rule that measures its own stretch of idle books each part where the step's ledger holds it
IDLE_POOLS: dict[str, tuple[str, str]] = {
    "input_wait": ("input", "input"),
    "launch_wait": ("launch", "launch"),
    "host_compute": ("host", "host_work"),
    "other": ("host", "host_work"),
    # the host's reads of managed memory: their fix (a copy into pinned memory) is no host work moved -- a wait's pool
    "managed_read": ("host", "host_wait"),
    "allocator": ("allocator", "allocator"),
    "startup": ("startup", "startup"),
}
#: the groups of GPU idle the host causes: a fix that recovers some of it lets that much more kernel time become
#: critical (rules/base.critical_cap)
IDLE_GROUPS: frozenset[str] = frozenset({g for g, _ in IDLE_POOLS.values()})


def idle_claims(ledger_ms: dict[str, float], skip: Sequence[str] = (), pool: str | None = None
                ) -> list[tuple[str, str, float]]:
    """``recovers`` claims for GPU idle booked by the step's ledger (category -> ms per step), each in its group and
    pool (:data:`IDLE_POOLS`); categories in ``skip`` (another finding's to recover) and those no host-side fix gives
    back are left out.  ``pool``: the pool of every claim, where the idle is a stretch other findings leave out of
    theirs -- the idle after the program's syncs (``sync_idle``) and blocking copies (``copy_idle``), which the gap
    and launch checks subtract (``HostSyncs.in_gaps_ledger_ms``).  Why: booked in the pools of the ledger category
    (``host_work``, ``launch``), the gap's remainder and the wait's part read as one time, so the achievable step
    counted only the larger and both findings said "the savings do not add up" -- of two claims made disjoint by
    construction (h37-probe42s: a sync then 0.5 ms of ``update_stats`` promised 624 us where both fixes give ~410)."""
    out: dict[tuple[str, str], float] = {}
    for c, v in ledger_ms.items():
        if c in IDLE_POOLS and c not in skip and v > 0:
            key = (IDLE_POOLS[c][0], pool or IDLE_POOLS[c][1])
            out[key] = out.get(key, 0.0) + float(v)
    return [(g, p, v) for (g, p), v in out.items()]


def parts(total_ms: float, claims: Sequence[tuple[str, str, float]]) -> list[dict[str, Any]]:
    """A saving's ``recovers`` list: the claims scaled so they add up to the (clipped) saving ``total_ms``."""
    for g, p, _ in claims:
        if g not in GROUPS or p not in POOLS:
            raise KeyError(f"unknown saving group/pool {g!r}/{p!r}: see rules/savings.py")
    raw = [(g, p, max(0.0, float(v))) for g, p, v in claims]
    s = sum(v for _, _, v in raw)
    if s <= 0 or total_ms <= 0:
        return [{"group": raw[0][0], "pool": raw[0][1], "ms": round(max(total_ms, 0.0), 3)}] if raw else []
    return [{"group": g, "pool": p, "ms": round(total_ms * v / s, 3)} for g, p, v in raw if v > 0]


def _pools(f: Finding) -> set[tuple[str, str]]:
    return {(r["group"], r["pool"]) for r in (f.saving.recovers if f.saving else [])}


#: the findings whose savings count: every one with a saving, info included (issue #36: "if every fix lands" left out
#: an info finding's saving, so the step it promised was not the one the findings add up to); ``ok`` has none
COUNTED = ("critical", "warning", "info")


def counted(findings: Iterable[Finding]) -> list[Finding]:
    """The findings whose savings "if every fix lands" counts (:data:`COUNTED`)."""
    return [f for f in findings if f.saving is not None and f.severity in COUNTED]


#: ms of rounding two claims may carry over their group's ledger time before they are said to share it (each claim is
#: rounded to the microsecond)
_ROUNDING_MS = 0.002


def _by_group(f: Finding) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in (f.saving.recovers if f.saving else []):
        out[r["group"]] = out.get(r["group"], 0.0) + float(r["ms"])
    return out


def _held(ledger_ms: dict[str, float | None] | None) -> dict[str, float]:
    return {g: sum(float(ledger_ms.get(c) or 0.0) for c in cats) for g, cats in GROUPS.items()} if ledger_ms else {}


def mark_overlaps(findings: Iterable[Finding], ledger_ms: dict[str, float | None] | None = None,
                  by_host: dict[str, dict[str, float | None]] | None = None) -> None:
    """Fill each saving's ``overlaps`` with the ids of the findings recovering some of the same time: the same pool,
    or -- with the step's ledger (category -> ms per step: ``ledger_ms``, or ``by_host`` each host's for its own
    findings) -- two claims of one host in one group that together exceed what its ledger holds there, so some of it
    is claimed by both (h37-left54: ddp_launch_skew's launch_skew and host_sync each claimed 0.54 ms of the 0.62 ms of
    host idle, by two pools of one stretch, and neither said so)."""
    fs = counted(findings)
    held = {h: _held(led) for h, led in (by_host or {}).items()}
    own = _held(ledger_ms)
    groups = {id(f): _by_group(f) for f in fs}

    def crowd(a: Finding, b: Finding) -> bool:
        if by_host is not None and a.host != b.host:
            return False
        hold = held.get(a.host, {}) if by_host is not None else own
        ga, gb = groups[id(a)], groups[id(b)]
        return any(g in hold and ga[g] + gb[g] > hold[g] + _ROUNDING_MS for g in ga.keys() & gb.keys())

    for f in fs:
        mine = _pools(f)
        f.saving.overlaps = sorted(o.id for o in fs if o is not f and (mine & _pools(o) or crowd(f, o)))


#: ``achievable.reason`` where the window holds only the start-up: one pass of one-time costs, no steady step, so the
#: account promises no step time (issue #37: "step ~1.55 ms instead of 33.7 ms" on SGLang's graph capture at start-up)
NO_STEADY_STEP = "start_up_only"


def achievable(step_ms: float | None, breakdown_ms: dict[str, float | None], findings: Iterable[Finding],
               withheld: str | None = None, peak_floor_ms: float | None = None) -> dict[str, Any]:
    """The step time if every fix lands (info included), from the union of what they recover (see module doc).

    ``peak_floor_ms``: the least kernel time per step the work of known FLOPs and bytes needs at the GPU's peaks
    (``Flops.floor_ms_per_step``), or None where none is known.  Each finding's claims on the pools whose fix keeps the
    work's precision (:data:`FLOORED_POOLS`) are capped at the kernel time above it (``rules.base.floor_cap``); their
    union is capped the same way, since two fixes on two such pools (filling a GEMV's SMs, fusing element-wise
    kernels) together can no more beat the GPU's peaks than one (h37-floor35).  Kept as ``peak_floor_ms`` so every
    later account (the session's, a diff's calibration) caps by the same floor.

    ``withheld``: why the window holds no step to promise (:data:`NO_STEADY_STEP`), decided once by the report's
    assembly; then ``achievable_step_ms`` is null and ``reason`` says why, and every reader (the text, the tab, the
    MCP summary, a diff) follows that one value instead of asking again.  What the fixes recover of the window
    (``recoverable_ms``, ``by_group``) is measured, so it stays."""
    if not step_ms:
        return {}
    fs = counted(findings)
    best: dict[tuple[str, str], float] = {}
    for f in fs:
        for r in f.saving.recovers:
            key = (r["group"], r["pool"])
            best[key] = max(best.get(key, 0.0), float(r["ms"]))
    device = float(breakdown_ms.get("device_compute") or 0.0)
    if peak_floor_ms is not None:  # the floored pools' union: at most the kernel time above the peaks' floor
        above = max(0.0, device - float(peak_floor_ms))
        floored = sum(v for (_, p), v in best.items() if p in FLOORED_POOLS)
        if floored > above:
            best = {k: v * above / floored if k[1] in FLOORED_POOLS else v for k, v in best.items()}
    by_group: dict[str, float] = {}
    for g, cats in GROUPS.items():
        claimed = sum(v for (gg, _), v in best.items() if gg == g)
        measured = sum(float(breakdown_ms.get(c) or 0.0) for c in cats)
        if claimed > 0:
            by_group[g] = round(min(claimed, measured), 3)
    recoverable = sum(by_group.values())
    floor = max(0.0, device - by_group.get("compute", 0.0))
    claimed_total = sum(f.saving.ms_per_step for f in fs)
    return {
        "step_ms": round(step_ms, 6),  # printed as the header prints the step: rounded once, not twice
        "achievable_step_ms": None if withheld else round(max(step_ms - recoverable, floor, 0.0), 3),
        "recoverable_ms": round(min(recoverable, step_ms), 3),
        "by_group": by_group,
        "floor_ms": round(floor, 3),
        "sum_of_savings_ms": round(claimed_total, 3),
        "findings": [f.id for f in fs],
    } | ({"reason": withheld} if withheld else {}) | (
        {"peak_floor_ms": round(float(peak_floor_ms), 3)} if peak_floor_ms is not None else {})
