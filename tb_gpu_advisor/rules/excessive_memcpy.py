"""§1.2.2 / §2 item 4: excessive or synchronous host<->device / device<->device copies.

Metric: copy time per step during which no kernel ran on that GPU (the copy
blocks compute), plus the GPU idle after copies that block the host (a copy to
the device that waits for its stream, as PyTorch's copy of a pageable tensor
does: the GPU's queue drains and it idles until the host launches again;
``metrics/syncs.py``), as a share of the step.  Synchronous copies (those that
held the host until they ran: a ``cudaMemcpy`` / ``async:0`` copy, or one between
the device and pageable host memory whatever its call, CUDA's API sync rule;
``metrics/memcpy._blocks_host``) of at least 1% of the step make it a warning
even below that.  Copies
that recur at the same point in every step are marked: they come from the step
itself (an op on the wrong device, a ``.numpy()`` call), not from warm-up.
Copies inside one GPU (D2D: ``.contiguous()``, concatenations, clones, layout
changes) are GPU work of their own: the part no kernel overlaps blocks the step
like a host copy, and gets the framework's device-copy fix (``:d2d``).
Host-device copies that already come from pinned memory, asynchronously, and outlast all the step's compute are
told so, with the fix of moving fewer bytes (``:pinned``), not the pinning and overlap they already do.  The idle
after a copy that blocked the host is the copy's only as far as its op blocked the host (``metrics/syncs.py``).
Copies that are mostly Unified Memory page migrations (the driver moving managed memory's pages when a kernel or the
host touches them, ``devices.PAGE_MIGRATION``) were asked for by no call: pinning and async copies do not apply, and
the migrations to the GPU under a running kernel block it (the kernel waits on its pages: from its start to its
first page's arrival, ``metrics.memcpy.page_waits``, later pages by their own time), a wait counted with its
direction when the finding names the costliest one and shown in a column of its own: kernel time, never inside the
copies' blocking time, which is the ledger's (the copies ran while a kernel ran); they are told so, with the framework's managed-memory fix first
(``:managed``: prefetch, or explicit device buffers).
Copies to the device launched inside a data-parallel wrapper's parameter-loading hooks (FSDP's pre-forward, with its
parameters offloaded to host memory) are those parameters' uploads: said so, with the wrapper's fix first
(``:param_upload``: offload off, or prefetch).
Where a copy to or from pageable memory holds the host before its transfer begins (the
runtime stages the buffer inside the call: CUDA's pageable upload returns as it submits
the transfer, HIP's as it ends, and AMD's tracers record the transfer only after it), the
GPU's idle over that lead is the copy's too (``metrics.syncs.copy_leads``), and so is
its idle after the transfer while the call copies the bytes out of the staging buffer
(``metrics.syncs.copy_tails``): said so, and counted in the saving -- pinned memory
removes both, a CUDA graph neither, so the launch-bound check leaves them out.
Memsets (the GPU filling its own memory, ``cudaMemset``) have a ledger category of their own (``memset``, h37-fill30)
that the copies' blocking time counts -- GPU time moving no data that only this finding's fill fix recovers: where
their time no kernel overlaps is the largest part, the finding says the memsets hold it -- no transfer, nothing to pin --
with the framework's fill fix first (``:memset``: fill only what is read, once).
Where the costliest copies go to the device and hold the host (pageable, or waited for), each fix's return is read
from the ledger (``_serial_upload``): pinned memory and asynchronous copies free the host -- the step shrinks by the
host's hold in the copies' ops, at most by the GPU's idle, the copies still on the kernels' stream -- and a stream of
their own also overlaps them with the kernels.  Where the GPU paces the step (no idle the copies could fill), the
copy on a stream of its own comes first and the finding says what freeing the host alone gives back; where the host
paces it, pinning comes first, and the saving is the host's hold, not the copy's time again on top of it.
Pinned, asynchronous uploads that ran while the GPU would otherwise have idled waiting for the host (done before the
host launched the next kernel, ``MemcpyStat.idle_anyway_ms_per_step``) are off the step's critical path: the ledger
books that time as the host's idle (``metrics.breakdown.off_path_uploads``), so it is neither graded nor claimed here,
and said so.  Copies already on a stream of their own (one running no kernel,
``MemcpyStat.own_stream_share``) are not told to move to one: where the kernels still wait for them, the framework's
fix is issuing them a step ahead (``:h2d_own_stream``).
Saving: the blocking copy time and the idle before and after it (copies overlapped
with compute from pinned memory, or gone), at most the host's hold in the copies it waits in -- and never the time
the copies' bytes need on the host link (``devices.host_link``: PCIe by the GPU's generation, or assumed and said)
beyond the kernels they could hide behind: pinning and overlap leave the bytes to move (h37-bus69).
"""

from __future__ import annotations

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics.memcpy import PINNED_ASYNC_H2D, largest_pageable
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import (Ctx, T, action, count, finding, grade, mean_count, ms, pct, rule, saving, share_metric,
                                       step_windows, table)
from tb_gpu_advisor.rules.host_op_placement import host_op_time
from tb_gpu_advisor.rules.savings import idle_claims

ID = "excessive_memcpy"
_NAMES = {"h2d": "H2D", "d2h": "D2H", "d2d": "D2D", "p2p": "P2P", "memset": "Memset", "other": "other"}


@rule(ID, "§1.2.2", "Memory copies block the GPU",
      thresholds=("excessive_memcpy.warning", "excessive_memcpy.critical", "excessive_memcpy.sync_share",
                  "excessive_memcpy.pageable_share", "excessive_memcpy.pin_share", "excessive_memcpy.pin_bytes",
                  "excessive_memcpy.param_upload_share"))
def check(m: HostMetrics) -> list[Finding]:
    # grade the time copies block the GPU (and their synchronous part), say what else their cost holds, and give the
    # fixes of the direction and kind of copy that costs most (no docstring: the rule's docs are the module's)
    ctx = Ctx(m)
    if ctx.step_ms is None or not m.memcpy:
        return []
    copies = [c for c in m.memcpy if c.direction != "memset"]
    waits = m.syncs.copy_idle_ms_per_step  # the GPU idle after copies that blocked the host (pageable, synchronous)
    paging = sum(c.paging_in_kernels_ms_per_step for c in copies)  # kernels waiting on pages migrated under them
    # the ledger's copy time, and what it books elsewhere: one number for the summary and each step's window
    blocking = _blocked(m.breakdown, paging + waits)
    # the program's own prefetch of managed memory is the upload its data needs, made as the fixes below ask: no fix
    # removes it, so no saving counts it (ayanamesu's A100 vector add: 165 ms of prefetch beside 110 ms of paging)
    asked = sum(c.prefetch_blocking_ms_per_step for c in copies)
    sync_ms = sum(c.sync_ms_per_step for c in copies)
    # what making the synchronous copies asynchronous gives back is their time the ledger books as copies: a copy that
    # held the host while the GPU ran other work (a collective on its own stream) idled no GPU -- the idle after it is
    # ``waits``' -- so the step holds none of its time to return (h37-randjobs: 80 us of pageable copies under a 7.5 ms
    # all-reduce recovered "80 us of copies time" from a step whose copies hold 0 us)
    ledger = max(blocking - waits - paging, 0.0)
    exposed_sync = min(sync_ms, ledger)
    # the uploads' time that ran while the GPU would otherwise have idled waiting for the host costs the step nothing
    # (``MemcpyStat.idle_anyway_ms_per_step``): the ledger books it as the host's idle, so ``blocking`` -- graded and
    # claimed -- holds only the copies' part on the step's critical path; the rest is said, never claimed
    anyway = sum(c.idle_anyway_ms_per_step for c in copies)
    share = ctx.share(blocking)
    sync_share = ctx.share(sync_ms) or 0.0
    sev, explained = _severity(ctx, m, copies, share, sync_share)
    if sev is None:
        return []
    # the direction that costs most, the waits of copies to the device counted with them: 4.8 ms of D2D copies beside
    # 11 ms of GPU idle after pageable H2D copies is not "mostly D2D" (TorchRec's A100 trace)
    # -- and the kernels' wait for a direction's page migrations with it: 419 us of kernels waiting for H2D pages
    # beside a 2 us D2H page-in is not "mostly D2H (all of its 2 us)" (h37-review61, the counted solver's generator)
    waited = "d2h" if _reads_out(ctx, m) else "h2d"  # the direction of the copies the host waited in

    def beside(c) -> float:  # noqa: ANN001 - a direction's copy metrics
        return c.paging_in_kernels_ms_per_step + (waits if c.direction == waited else 0.0)

    worst = max(copies, key=lambda c: c.blocking_ms_per_step + beside(c)) if copies else None
    fills = _fills_hold(m, worst, beside(worst) if worst is not None else 0.0)
    if worst is None and fills is None:
        return []
    recurring = [c for c in copies if c.recurring and c.count_per_step > 0]
    rec_txt = (f"; {', '.join(_NAMES.get(c.direction, c.direction) for c in recurring)} copies recur at the same point "
               f"every step" if recurring else "")
    pageable = _to_pin(ctx, copies)
    migrated = _host_copies_over(copies, lambda c: c.migration_share)
    pinned = _pinned_words(m, ctx, copies, worst) if worst is not None else ""
    uploads = _param_uploads(copies) if worst is not None and worst.direction == "h2d" else None
    # pinned already but synchronous: said, and fixed, where the framework's own fix for it exists (a native CUDA/HIP
    # program's: the calls are its code); a framework's copies keep its fixes and words
    sync_pinned = _pinned_but_synchronous(copies) and bool(ctx.fw.extra(f"{ID}:pinned_sync"))
    # the costliest copies to the device free the host when pinned and asynchronous: what that returns, and what only
    # a stream of their own returns (``_serial_upload``); not for copies whose own cause is said otherwise
    own = worst is None or fills is not None or bool(pinned or migrated) or uploads is not None or sync_pinned
    serial = None if own or _reads_out(ctx, m) or _index_uploads(ctx, m) else _serial_upload(ctx, m, worst)
    sync_txt = _cost_words(ctx, sync_ms, sync_share, waits, asked, pageable, migrated) + pinned + \
        _anyway_words(ctx, anyway) + _serial_words(ctx, serial, worst) + _legacy_words(ctx, copies) + (
        "; every host copy comes from pinned memory already: the synchronous calls, not the memory, hold them in "
        "series with the kernels" if sync_pinned else "")
    if uploads is not None:  # the copies to the device are a wrapper's uploads of offloaded parameters, not a batch
        sync_txt += (f"; {pct(uploads)} of the H2D copy time whose launch the capture holds is launched inside "
                     f"{ctx.fw.label('param_upload')}")
    # the copies' time and the idle after them are returned only as far as the host's hold in them reaches: where
    # the host paces the step, the GPU runs the copy in idle time either way (``_serial_upload``)
    over = max(worst.blocking_ms_per_step + waits - serial[1], 0.0) if serial is not None else 0.0
    # the copies' bytes still cross the bus after pinning and overlap: the part of that time no kernel can hide behind
    # stays in the step whatever the fix, beyond the time the host pacing keeps (``over``); not where the fix is moving
    # fewer bytes (already pinned, managed pages, offloaded parameters) or the memsets hold the cost
    keeps = fills is None and not (migrated or pinned or uploads is not None)
    floor_left = _bus_left(m, copies) if keeps else 0.0
    claim = max(max(ledger - asked, exposed_sync) - over, 0.0)
    cut = max(claim - max(ledger - asked - max(floor_left, over), 0.0), 0.0) if floor_left > over else 0.0
    if ms(floor_left) != ms(0.0):  # said wherever it stays, whichever bound (this or the host's pace) is the tighter
        sync_txt += _bus_words(ctx, copies, floor_left)
    # the kernels' wait for pages migrated under them in a column of its own, where any: kernel time, not the copies'
    # (their "blocking ms" is the ledger's copy time), so the columns are the parts of the summary's whole
    rows = [[_NAMES.get(c.direction, c.direction), c.count_per_step, c.bytes_per_step / 1e6, c.ms_per_step,
             c.blocking_ms_per_step, *([c.paging_in_kernels_ms_per_step] if paging > 0 else []),
             c.sync_count_per_step, c.recurring, ", ".join(c.top_ops[:3])] for c in m.memcpy]
    return [finding(
        ctx, ID, sev,
        f"Copies block the GPU for {ctx.part_of_step(blocking)} ({pct(ctx.share(blocking))}), "
        f"mostly {_largest_words(ctx, worst, fills)}{sync_txt}{rec_txt}{explained}.",
        metric=share_metric("memcpy_blocking_share", "Blocking copy time share of {step}", share,
                            "excessive_memcpy.warning", severity=sev,
                            detail={"blocking_ms_per_step": blocking, "sync_ms_per_step": sync_ms,
                                    "sync_share_of_step": sync_share,
                                    # the copies the summary counts per step, and their total over the kept steps
                                    # of every rank: one division, as every count per step (``per-rank``)
                                    "copies_per_step": {c.direction: c.count_per_step for c in m.memcpy},
                                    "copies": {c.direction: c.count for c in m.memcpy}}),
        saving=saving(ctx, max(blocking - asked, exposed_sync + waits + paging) - over - cut,
                      _ASSUMPTION_FILLS if fills is not None else
                      _ASSUMPTION_MANAGED if migrated else _ASSUMPTION_UPLOADS if uploads is not None else
                      _ASSUMPTION_PINNED if pinned else _ASSUMPTION_SYNC_PINNED if sync_pinned else
                      _ASSUMPTION.format(levers=ctx.window_words(ctx.fw.label("memcpy:levers"))),
                      # the copy time the GPU runs in idle either way is no copy time returned (``over``)
                      [("copies", "copies", claim - cut),
                       ("compute", "non_matmul_kernels", paging)]  # kernel time spent waiting on migrated pages
                      + idle_claims(m.syncs.copy_idle_ledger_ms, pool="copy_idle")),
        evidence=[table(f"Copies {ctx.per_step} by direction", ["direction", "count/step", "MB/step", "ms/step", "blocking ms",
                                                         *(["kernel page wait ms"] if paging > 0 else []),
                                                         "sync count/step", "recurring", "top ops"], rows)],
        windows=step_windows(ctx, key=lambda s: _blocked(s.breakdown, paging + waits), label="copies"),
        actions=_fill_fixes(ctx, fills, _fixes(ctx, m, copies, worst, pageable, migrated, bool(pinned), uploads,
                                               sync_pinned, serial) if worst is not None else [])
        or ctx.fw.fix(ID),
    )]


def _bus_left(m: HostMetrics, copies: list) -> float:
    """The copies' time per step that no pinning or overlap removes: their bytes' least time on the host link
    (``MemcpyStat.bus_floor_ms_per_step``; each direction its own lane, so the slower one) beyond the step's kernel
    time, all a stream of their own could hide them behind.  Why: a vector add's 805 MB of pageable copies (198 ms
    beside an 8 ms kernel, GTX 1050 Ti: PCIe 3.0) was promised a pass of 8.30 ms, its bytes needing ~51 ms on the bus
    at best (h37-bus69, OlivierKessler01/cuda-thinkering)."""
    floor = max((c.bus_floor_ms_per_step for c in copies if c.direction in ("h2d", "d2h")), default=0.0)
    bd = m.breakdown
    return max(floor - bd.device_compute - bd.collectives, 0.0)


def _bus_words(ctx: Ctx, copies: list, left: float) -> str:
    """The copies' floor on the bus in words: their bytes, the link (assumed where the capture does not say it), and
    the time that stays in the step whatever the fix."""
    host = [c for c in copies if c.direction in ("h2d", "d2h") and c.bus_floor_ms_per_step > 0]
    slow = max(host, key=lambda c: c.bus_floor_ms_per_step)
    moved = sum(c.bytes_per_step for c in host)
    return (f"; their {size(moved)} {ctx.per_step} still cross the bus once pinned: {ms(slow.bus_floor_ms_per_step)} "
            f"for the {_NAMES.get(slow.direction)} copies at least on {slow.bus_link}, so {ms(left)} {ctx.per_step} "
            f"stays beyond the kernels they could hide behind, whatever the fix short of moving fewer bytes")


def _fills_hold(m: HostMetrics, worst, worst_extra: float):  # noqa: ANN001, ANN202 - MemcpyStat or None
    """The memsets' stat where their time no kernel overlaps is more than the largest copy direction's (``worst``,
    with ``worst_extra``: the idle after the copies the host waited in and the kernels' wait for its page migrations,
    counted with it), else None.

    Why: the copies' blocking time holds the memsets' (the ledger's ``memset``), while the largest
    *copy* named the finding: a Sudoku solver's 1.36 GB ``cudaMemset`` (6.40 ms of its 9.69 ms pass, at 212 GB/s, the
    RTX 4060 Laptop's memory bandwidth) was "Copies block the GPU for 6.47 ms ... mostly D2H (all of its 45 us)",
    fixed by pinning host memory -- a memset moves no byte across the bus, so no pinning or copy stream removes it."""
    fill = next((c for c in m.memcpy if c.direction == "memset"), None)
    if fill is None or fill.blocking_ms_per_step <= 0:
        return None
    if worst is not None and fill.blocking_ms_per_step <= worst.blocking_ms_per_step + worst_extra:
        return None
    return fill


def _largest_words(ctx: Ctx, worst, fills) -> str:  # noqa: ANN001 - MemcpyStat or None each
    """The largest part of the blocking time in words: a copy direction's (:func:`_worst_words`), said as the kernels'
    wait for its page migrations where that wait is more than its copies' own blocking time, or the memsets'
    (``fills``) said as the GPU filling its own memory."""
    if fills is None:
        name = _NAMES.get(worst.direction, worst.direction)
        if worst.paging_in_kernels_ms_per_step > worst.blocking_ms_per_step:  # the kernels' wait is most of it
            return (f"{name} -- the kernels' wait for its page migrations, beside the copies themselves "
                    f"({_worst_words(worst, ctx)})")
        return f"{name} ({_worst_words(worst, ctx)})"
    sized = f", {size(fills.bytes_per_step)} filled" if fills.bytes_per_step > 0 else ""
    part, whole = ms(fills.blocking_ms_per_step), ms(fills.ms_per_step)
    said = f"all of its {whole}" if part == whole else f"{part} of its {whole}"
    return (f"memsets ({said} {ctx.per_step} blocks, {ctx.count_per_step(fills.count_per_step, 'memset')}{sized}: "
            f"the GPU writing its own memory, no transfer -- nothing to pin or move to a copy stream)")


def _fill_fixes(ctx: Ctx, fills, acts: list) -> list:  # noqa: ANN001 - MemcpyStat or None
    """The framework's fill fix first where the memsets hold the blocking time (``fills``), else ``acts``."""
    if fills is None:
        return acts
    return _first(ctx.fw.extra(f"{ID}:memset"), acts)


def _severity(ctx: Ctx, m: HostMetrics, copies: list, share: float | None, sync_share: float) -> tuple[str | None, str]:
    """The finding's severity from the blocking share (a synchronous share of note makes a warning even below it), and
    the words that explain a critical one lowered: copies that are the round trips of ops placed on the host, whose
    own finding is the cause."""
    sev = grade(share, "excessive_memcpy.warning", "excessive_memcpy.critical")
    if sev is None and sync_share >= T("excessive_memcpy.sync_share"):
        sev = "warning"
    if sev is None:
        return None, ""
    host_share = ctx.share(host_op_time(m)[0]) if m.host_ops.count_per_step else None
    if sev == "critical" and grade(host_share, "host_op_placement.warning") is not None and \
            any(c.direction == "d2h" and c.blocking_ms_per_step > 0 for c in copies):
        # the copies are the host-placed ops' round trips: host_op_placement is the cause
        return "warning", " (round trips of host-placed ops: see the finding on ops placed on the host)"
    return sev, ""


def _host_copies_over(copies: list, share_of) -> list:  # noqa: ANN001 - a copy's share getter
    """The host<->device copies of the step of which a share (``share_of``: pageable, migrated) is at least the rule's
    pageable share: one test for the copies the driver stages and those it migrates."""
    return [c for c in copies if c.direction in ("h2d", "d2h") and c.ms_per_step > 0
            and (share_of(c) or 0.0) >= T("excessive_memcpy.pageable_share")]


def _to_pin(ctx: Ctx, copies: list) -> list:
    """The host<->device copies to pin: most of a direction's copy time from pageable memory (Nsight Systems' rule,
    ``_host_copies_over``), and those pageable copies worth pinning -- their time a part of the step that matters
    (``excessive_memcpy.pin_share``) and each large enough that its bytes, not the call, set its time
    (``excessive_memcpy.pin_bytes``, of the largest of them: ``metrics.memcpy.largest_pageable``; not tested where
    the capture gives no sizes).

    Why: pinning changes only how fast a copy's bytes cross the bus (the driver stages a pageable copy through a pinned
    buffer); a 4-byte ``.item()`` read into pageable memory takes 2 us whatever its memory, and its wait is the sync's
    (host_sync), not the staging's.  An ``emit_nvtx`` inference loop whose 8 MB upload was pinned already was told to
    pin for its 2 us read-back of each result (h37-fwnvtx2)."""
    out = []
    for c in _host_copies_over(copies, lambda c: c.pageable_share):
        if (ctx.share(c.pageable_ms_per_step) or 0.0) < T("excessive_memcpy.pin_share"):
            continue
        if 0 < largest_pageable(c) < T("excessive_memcpy.pin_bytes"):  # the largest: one batch among tiny reads
            continue
        out.append(c)
    return out


def size(nbytes: float) -> str:
    """Bytes in words, decimal units: 8.4 MB, 64.0 KB, 4 B."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes:.0f} B"


def _sizes(c, each: float) -> str:
    """The sizes of one direction's pageable copies, in words: " of 1.2 MB each" where they are alike, " of 2.0 KB to
    154.1 MB" where the largest is over twice the smallest, "" where no size is known.  Why: their mean said "the 2 H2D
    copies of 77.1 MB each" of one 154.1 MB batch of images and its 2 KB of labels (``wild/vit_a4000_pageable_batch``):
    the copy to pin is the large one, and no copy of that size exists (h37-hunt69b)."""
    lo, hi = c.pageable_min_bytes, c.pageable_max_bytes
    if 0 < lo and hi > 2.0 * lo:
        return f" of {size(lo)} to {size(hi)}"
    return f" of {size(each)} each" if each > 0 else ""


def pinned_copies(ctx: Ctx, pageable: list) -> str:
    """The pageable copies the pinning fix means, by direction, count and size: "the H2D copy of 8.4 MB of each step",
    "the 3 D2H copies of 1.2 MB each of each step", "the 2 H2D copies of 2.0 KB to 154.1 MB in the step" (sizes that
    differ: :func:`_sizes`) -- the fix names the copy it asks to pin (h37-fwnvtx2)."""
    parts = []
    for c in pageable:
        k = c.pageable_count_per_step
        each = c.pageable_bytes_per_step / k if k else 0.0
        d = _NAMES.get(c.direction, c.direction)
        if abs(k - 1.0) < 0.05:
            parts.append(f"the {d} copy" + (f" of {size(each)}" if each > 0 else ""))
        else:
            parts.append(f"the {mean_count(k)} {d} copies{_sizes(c, each)}")
    return " and ".join(parts) + f" {ctx.per_step}" + ctx.mean_words(*(c.pageable_count_per_step for c in pageable))


def _cost_words(ctx: Ctx, sync_ms: float, sync_share: float, waits: float, asked: float, pageable: list,
                migrated: list) -> str:
    """What the copies' cost holds, in the finding's words: its synchronous part, the copy time from pageable or
    migrated host memory, the program's own prefetch (left out of the saving), and the host's waits in copies to the
    device with the GPU's idle after them."""
    m, per = ctx.m, ctx.per_step
    # said where it is a part of the step the finding grades (1 us of a 940 ms blocking copy time is no news)
    words = f"; {ms(sync_ms)} {per} is synchronous" if sync_share >= T("excessive_memcpy.sync_share") else ""
    if pageable:  # Nsight's expert rule: the driver stages them through a pinned buffer, and the host waits
        words += "; " + ", ".join(f"{pct(c.pageable_share)} of the {_NAMES.get(c.direction)} copy time"
                                  + ("" if (c.kind_known_share or 0.0) >= 0.9995 else
                                     f" whose host memory the capture shows ({pct(c.kind_known_share)} of it)")
                                  for c in pageable) + \
            " is from pageable host memory (staged by the driver, blocking the host): " + pinned_copies(ctx, pageable)
    if migrated:
        words += _migration_words(migrated, per)
    if asked > 0:
        words += (f"; {ms(asked)} {per} is the program's own Unified Memory prefetch with the GPU idle: the "
                  "upload its data needs, done as the fixes ask, so the saving leaves it out")
    lead = m.syncs.copy_lead_ms_per_step
    if m.syncs.copy_calls_per_step:
        who = ", ".join(f"{n} ×{count(round(k, 1))}" for n, k in m.syncs.copy_callers[:3]) or "copies"
        k = m.syncs.copy_calls_per_step
        if _reads_out(ctx, m):  # the framework's reads of device values whose bytes, not the drain, held the host
            words += (f"; the host waits in {ctx.count_per_step(k, 'read of device values', 'reads of device values')} "
                      f"({who}) while its bytes move to the host (the transfer, then the copy out of the runtime's "
                      f"staging buffer), and the GPU idles {ms(waits - lead)} {per} until the host launches again")
        else:
            words += (f"; the host waits for the GPU in {ctx.count_per_step(k, 'copy to the device', 'copies to the device')} "
                      f"({who}): {_drain_words(ctx, m, k)}, and the GPU then idles {ms(waits - lead)} {per} until "
                      f"the host launches again")
    if (ctx.share(lead) or 0.0) >= T("excessive_memcpy.sync_share"):  # a staged copy's transfer begins late
        words += (f"; the GPU idles {ms(lead)} {per} before the transfers begin, the host inside their copy calls "
                  "meanwhile (staging the data the transfers then move)")
    return words + _tail_words(ctx)


def _drain_words(ctx: Ctx, m: HostMetrics, k: float) -> str:
    """What held the host in its ``k`` blocking copies per step: a wait for the stream to drain only as far as the GPU
    still ran earlier work when they began (``HostSyncs.copy_drain_ms_per_step``), the rest of their hold
    (``copy_held_ms_per_step``) their own staging and transfer.  A drain under one copy's own
    latency per copy (``devices.COPY_LATENCY_NS``) is none: each call found the GPU idle and held the host for its own
    staging and transfer (h37-huntkin63's Left 4: the RTX 3080 uploads began long after the GPU's last kernel).  Where
    only some of them found queued work (``copy_drained_per_step``), only those are said to wait for it."""
    drain, held = m.syncs.copy_drain_ms_per_step, m.syncs.copy_held_ms_per_step
    if drain is None:  # unread (the clocks disagree): the copy's call waits for its stream first, as the API says
        return "each waits for its stream to drain"
    if drain * 1e6 < k * devices.COPY_LATENCY_NS:
        return "each holds the host for its own transfer, the GPU having no earlier work to drain when it began"
    drained = m.syncs.copy_drained_per_step
    if drained is not None and drained < 0.95 * k:  # some found the GPU idle: only the others waited for a drain
        return (f"{drained / k:.0%} of them wait for their stream to drain ({ms(drain)} {ctx.per_step}), the "
                f"others find the GPU idle; then each waits for its own transfer ({ms(held - drain)} {ctx.per_step})")
    if drain < held:
        return (f"each waits for its stream to drain, then for its own transfer ({ms(drain)} and "
                f"{ms(held - drain)} {ctx.per_step})")
    return "each waits for its stream to drain"


def _tail_words(ctx: Ctx) -> str:
    """The GPU's idle after the transfers of copies to pageable memory while the host is still inside their calls
    (``metrics.syncs.copy_tails``), in words where it is a part of the step of note ("" else): counted in the
    finding's time and saving, it is said so the time adds up from its parts."""
    tail = ctx.m.syncs.copy_tail_ms_per_step
    if (ctx.share(tail) or 0.0) < T("excessive_memcpy.sync_share"):
        return ""
    return (f"; and {ms(tail)} {ctx.per_step} after the transfers end, the host still inside their copy calls "
            "(copying the bytes out of the driver's staging buffer into pageable memory)")


def _pin_fix(ctx: Ctx, named: list, worst=None) -> list:  # noqa: ANN001 - the costliest direction's copy metrics
    """The framework's fix for the pageable copies ``named``: pinning the destination where they are all read-backs
    (a D2H copy into pageable memory: PyTorch's ``.cpu()``), else pinning the batch (``:pageable``) -- in the words
    for copies already on a stream of their own where the costliest direction's are (``:pageable_own_stream``, a
    framework that has them; uploads the costliest).  Why apart: "let the DataLoader pin its batches" names a copy to the device; a
    read-back's fix is a pinned buffer to copy into; and a native program's copies on a stream of their own were told
    "cudaMemcpyAsync on a stream other than the kernels'" (h37-copystream61's Left 1)."""
    if not named:
        return []
    copies = pinned_copies(ctx, named)
    readback = all(c.direction == "d2h" for c in named) and ctx.fw.extra(f"{ID}:pageable_d2h", copies=copies)
    own = worst is not None and worst.direction == "h2d" and _own_stream(worst) and \
        ctx.fw.extra(f"{ID}:pageable_own_stream", copies=copies)
    return readback or own or ctx.fw.extra(f"{ID}:pageable", copies=copies)


def _pinned_words(m: HostMetrics, ctx: Ctx, copies: list, worst) -> str:  # noqa: ANN001 - a copy
    """Where the host copies already come from pinned memory, asynchronously, and outlast all the step's compute they
    could hide behind, the words that the bytes themselves are the cost ("" where not): pinning and overlap, which
    they do already, are no fix (issue #37 survey h37-survey3: a 4-stream CUDA program was told to do what it does)."""
    # less the uploads' time run while the GPU waited for the host anyway: it outlasts no compute the step waits on
    host_ms = sum(c.ms_per_step - c.idle_anyway_ms_per_step for c in copies if c.direction in ("h2d", "d2h"))
    compute = m.breakdown.device_compute or 0.0
    if not (_already_pinned(copies, m.syncs.copy_calls_per_step) and worst.direction in ("h2d", "d2h")
            and host_ms > compute):
        return ""
    names = " and ".join(_NAMES.get(c.direction, c.direction) for c in copies
                         if c.direction in ("h2d", "d2h") and c.ms_per_step > 0)
    return (f"; the {names} copies already come from pinned memory, asynchronously, and take longer than the "
            f"{ctx.step_noun}'s compute ({ms(host_ms)} against {ms(compute)}): the transfers themselves are the cost")


def _first(lead: list, acts: list) -> list:
    """``lead`` first, then the rest of ``acts``."""
    return lead + [a for a in acts if a not in lead]


def _fixes(ctx: Ctx, m: HostMetrics, copies: list, worst, pageable: list, migrated: list, pinned: bool,  # noqa: ANN001
           uploads: float | None, sync_pinned: bool = False, serial: tuple[float, float] | None = None) -> list:
    """The fixes, the copy's own first: the worst direction's (an H2D copy's is pinning and prefetch, a D2H copy's the
    sync that pulls values to the host: .item()); pageable memory's and host-blocking copies' pinning and non_blocking;
    fewer bytes where pinned already, else D2D's own; managed memory's prefetch, a wrapper's offloaded parameters."""
    dirs = {c.direction for c in copies
            if c.blocking_ms_per_step > 0 or c.paging_in_kernels_ms_per_step > 0 or (c.sync_share or 0) > 0}
    reads = _reads_out(ctx, m)
    if m.syncs.copy_calls_per_step:
        dirs.add("d2h" if reads else "h2d")
    # the device-to-host sync advice only where device-to-host copies are
    variants = (["host_device"] if "d2h" in dirs else []) + (["h2d"] if "h2d" in dirs else [])
    if worst.direction == "h2d":
        variants.reverse()
    acts = ctx.fw.fixes_for(ID, variants)
    # where the host waits in its copies to the device, the pageable ones among them wait for their stream to drain,
    # whatever their size (PyTorch's copy of a pageable tensor): pinned and non_blocking, they wait no more -- the wait,
    # not the bytes, is what pinning saves them, so it must matter as the bytes must (``excessive_memcpy.pin_share``:
    # torchrec_a100_stalls' 9 waits of ~150 B copies idle the GPU 0.2 ms of a 245 ms step)
    waits = m.syncs.copy_idle_ms_per_step
    # -- not where the uploads show pinned, asynchronous copies in use (``metrics.memcpy.applied``): none of them
    # holds the host, and the pageable ones left are too small for pinning to speed (h37-pinned32), so the host's
    # waits are in other copies (a read-back's)
    waiting = [c for c in copies if c.direction == "h2d" and c.pageable_count_per_step > 0 and c not in pageable
               and (ctx.share(waits + c.pageable_ms_per_step) or 0.0) >= T("excessive_memcpy.pin_share")] \
        if m.syncs.copy_calls_per_step and not reads and PINNED_ASYNC_H2D not in m.applied else []
    named = pageable + waiting
    pin = _pin_fix(ctx, named, worst)
    if pin and pageable:
        acts = _first(pin, acts)
    if reads:  # reads of device values whose bytes held the host: fewer bytes, or their copy started early
        acts = _first(ctx.fw.fix(f"{ID}:read"), acts)
    elif m.syncs.copy_calls_per_step:  # the copies block the host: pinned memory and non_blocking copies come first
        acts = _first(pin + ctx.fw.fix(f"{ID}:h2d"), acts)
        if _index_uploads(ctx, m):  # -- unless they are indexing ops' CPU indices: the index's place is the fix
            acts = _first(ctx.fw.extra(f"{ID}:index_upload"), acts)
    if serial is not None and serial[1] - serial[0] > serial[0]:  # on the GPU's critical path: a stream of its own,
        # or where they have one, the copies issued ahead of the step that needs them
        acts = _first(_side_stream_fix(ctx, worst), acts)
    if sync_pinned:  # pinned already, each copy a synchronous call serial with the kernels: streams and chunks
        acts = ctx.fw.extra(f"{ID}:pinned_sync") + [a for a in acts if a not in ctx.fw.fix(ID)]
    exposed = [] if pinned or migrated or uploads is not None else _exposed_upload(ctx, m, copies, worst)
    if exposed:  # pinned, asynchronous and still waited for: the side-stream copy, before the loader's fix unless the
        # input pipeline's own wait is the larger cost
        lead = (m.breakdown.input_wait or 0.0) < worst.blocking_ms_per_step
        acts = _first(exposed, acts) if lead else acts + [a for a in exposed if a not in acts]
    if worst.direction == "h2d" and (_own_stream(worst) or (_legacy_stream(worst) and ctx.fw.extra(
            f"{ID}:legacy_stream"))):  # a stream of their own is none to tell them, nor one the NULL stream ties
        moved = ctx.fw.extra(f"{ID}:h2d_exposed")
        acts = [a for a in acts if a not in moved]
    if pinned:  # pinned and asynchronous already: the bytes themselves are the cost
        acts = ctx.fw.fix(f"{ID}:pinned") + [a for a in ctx.fw.fix(f"{ID}:d2d") if "d2d" in dirs]
    elif "d2d" in dirs:  # copies inside one GPU: layout changes, concatenations, clones -- the framework's own fix
        d2d = ctx.fw.fix(f"{ID}:d2d")
        acts = _first(d2d, acts) if worst.direction == "d2d" else acts + [a for a in d2d if a not in acts]
    if migrated:  # the driver's paging, not the program's copies: prefetch or device buffers come first
        managed = ctx.fw.extra(f"{ID}:managed")
        acts = list(managed) if managed and _migrated_only(copies) else _first(managed, acts)
    if uploads is not None:  # a wrapper's uploads of offloaded parameters: its own fix first
        acts = _first(ctx.fw.fix(f"{ID}:param_upload"), acts)
    if "p2p" in dirs:
        acts.append(action("Check for unnecessary device-to-device copies between replicas (variables "
                           "or ops pinned to one GPU) — guide §2 item 4."))
    return acts


def _serial_upload(ctx: Ctx, m: HostMetrics, worst) -> tuple[float, float] | None:  # noqa: ANN001 - a copy
    """Where the costliest copies go to the device and hold the host (from pageable memory, or waited for), what the
    ledger says each fix returns per step -- (freeing the host: pinned memory, asynchronous copies, the copies left on
    the kernels' stream; a stream of their own besides, overlapped with compute) -- else None.

    The step is paced by the host or by the GPU.  Freed, the host no longer spends the time it held in the copies'
    ops (``HostSyncs.copy_held_ms_per_step``: the wait for the stream to drain, then the copy), while the GPU still
    runs every kernel and copy on one stream: the step shrinks by the held time, at most by the GPU's idle (what the
    GPU could pack its work into).  On a stream of their own the copies also overlap the kernels: at most their
    blocking time more, still no more than the held time, and never more than the copies' own claim (their blocking
    time and the idle after them), nor more than the kernels they hide behind beside what pinning takes off the copies
    down to their bytes' time on the bus (h37-bus69).  Where nothing measures the hold (a copy the host waits in no
    sync of), it bounds nothing.

    Why: pinning frees the host, not the GPU: a copy on the kernels' stream still runs between them.  In a loop the GPU
    paces (its only idle the 15 us after the copy) pinning returns that idle and only a stream of its own the copy's
    400 us; in one the host paces, the host's hold is the cost and pinning returns it all -- not the copy's time on top
    of it, which the GPU runs in idle time either way (issue #37, each wait to its cause: both were told pinning first,
    the side-stream copy third, and the host-bound one claimed its 400 us copy twice)."""
    if worst is None or worst.direction != "h2d" or worst.blocking_ms_per_step <= 0 or ctx.step_ms is None:
        return None
    if not (m.syncs.copy_calls_per_step or (worst.pageable_share or 0.0) >= T("excessive_memcpy.pageable_share")):
        return None
    bd = m.breakdown
    busy = bd.device_compute + bd.collectives + _blocked(bd, 0.0)
    waits = m.syncs.copy_idle_ms_per_step
    # the GPU's idle the host's freed time could take in: not its own switch between queued kernels, the profiler's
    # work, or a one-time start-up
    idle = max(ctx.step_ms - busy - bd.kernel_switch - bd.profiler - bd.startup, 0.0)
    held = m.syncs.copy_held_ms_per_step if m.syncs.copy_calls_per_step and m.syncs.copy_held_ms_per_step > 0 \
        else float("inf")
    claim = worst.blocking_ms_per_step + waits
    # on a stream of their own already, the copies still wait in series with the kernels here (the GPU ran nothing
    # beside them): freeing the host returns its idle alone, as on the kernels' stream -- issuing them ahead the rest
    # overlapped, the copies hide behind the kernels at most, once pinning has taken them down to their bytes' time on
    # the bus (``bus_floor_ms_per_step``; h37-bus69: a vector add's 132 ms of uploads beside its 8 ms kernel read as
    # "takes their 132.0 ms off the pass")
    hidden = min(worst.blocking_ms_per_step,
                 max(worst.blocking_ms_per_step - worst.bus_floor_ms_per_step, 0.0) + bd.device_compute + bd.collectives)
    return min(held, idle, claim), min(held, idle + hidden, claim)


def _serial_words(ctx: Ctx, serial: tuple[float, float] | None, worst) -> str:  # noqa: ANN001 - a copy
    """The words of a copy on the GPU's critical path (:func:`_serial_upload`: a stream of its own returns more than
    freeing the host does), "" where freeing the host returns most of it; of copies on a stream of their own already
    (:func:`_own_stream`), that the kernels wait for them: issued ahead, not moved, they leave the step.

    Why: h37-copystream61 read a pageable upload on a stream of its own, its kernels waiting for it, as freed by
    pinning whole ("freed copies overlap the kernels"), and told it only pinning and non_blocking -- which return the
    15 us of idle after it, the loop pinned running as long (h37-review61b; ``write_pageable_upload_bound``'s
    "waited_pageable" against "waited")."""
    if serial is None or serial[1] - serial[0] <= serial[0]:
        return ""
    if _own_stream(worst):
        return (f"; the GPU runs the rest of the {ctx.step_noun} with no idle the copies could fill, and the copies "
                f"already run on a stream of their own, yet the kernels wait for them: pinned memory and asynchronous "
                f"copies free the host, which gives back only {ms(serial[0])} of idle {ctx.per_step} -- only issuing "
                f"each copy ahead of the {ctx.step_noun} that needs it takes their {ms(serial[1] - serial[0])} off the "
                f"{ctx.step_noun}")
    return (f"; the GPU runs the rest of the {ctx.step_noun} with no idle the copies could fill: pinned memory and "
            f"asynchronous copies free the host, which gives back only {ms(serial[0])} of idle {ctx.per_step}, and speed "
            f"the transfers, but the copies still run between the kernels on their stream -- only copying on a stream "
            f"of its own, overlapped with compute, takes their {ms(serial[1] - serial[0])} off the {ctx.step_noun}")


def _exposed_upload(ctx: Ctx, m: HostMetrics, copies: list, worst) -> list:  # noqa: ANN001 - a copy
    """The framework's fix for uploads already pinned and asynchronous (``metrics.memcpy.applied``) that the GPU still
    waits for -- the costliest direction is H2D and its copies ran with no kernel beside them: the next batch copied
    on a stream of its own while the step runs (``excessive_memcpy:h2d_exposed``); [] otherwise, and for a framework
    without that fix.  Why: pinning and ``non_blocking`` free the host, not the GPU -- a copy on the kernels' stream
    still runs between them -- and the DataLoader's workers make the next batch sooner, not its copy (h37-probe42s's
    Left: a training step's 700 us pinned upload was told only the loader's workers)."""
    if worst.direction != "h2d" or worst.blocking_ms_per_step <= 0 or PINNED_ASYNC_H2D not in m.applied:
        return []
    if not all(c.pageable_share == 0 and not c.sync_count_per_step for c in copies if c.direction == "h2d"):
        return []
    # already on a stream of their own, and still waited for: issued too late, not on the wrong stream
    return _side_stream_fix(ctx, worst)


def _side_stream_fix(ctx: Ctx, worst) -> list:
    """The framework's fix for uploads the kernels wait for: issued ahead where they run on a stream of their own
    already (``:h2d_own_stream``); moved off the legacy default stream where that stream holds them in series with
    the kernels (``:legacy_stream``, a framework that has it: :func:`_legacy_stream`); else copied on a stream of
    their own (``:h2d_exposed``).  Why: a copy on the legacy default stream beside kernels on blocking streams is on
    a stream of no kernel, yet runs between them -- "a stream other than the kernels'" is the stream it has
    (h37-copy70's Left 2)."""
    if _own_stream(worst):
        return ctx.fw.extra(f"{ID}:h2d_own_stream")
    return (_legacy_stream(worst) and ctx.fw.extra(f"{ID}:legacy_stream")) or ctx.fw.extra(f"{ID}:h2d_exposed")


def _legacy_stream(c) -> bool:
    """Whether most of the copies' time ran on a stream of no kernel that the legacy default stream holds in series
    with the kernels (``MemcpyStat.legacy_stream_share``: only where the format states the streams' kinds)."""
    return (c.legacy_stream_share or 0.0) >= T("excessive_memcpy.own_stream_share")


def _legacy_words(ctx: Ctx, copies: list) -> str:
    """The words of host copies on a stream of no kernel that the legacy default stream runs in series with the
    kernels (:func:`_legacy_stream`), "" where none are.  Why: the GPU's idle or the overlap lost beside such a copy
    is that stream's order, not the copy's being on the kernels' stream -- and the format said which stream it was
    (h37-copy70's Left 2; never said where the format does not state the streams' kinds).  The stream is named as the
    GPU's vendor names it (``TERMS["legacy_stream"]``: CUDA's NULL stream, HIP's null stream)."""
    tied = [c for c in copies if c.direction in ("h2d", "d2h") and _legacy_stream(c)]
    if not tied:
        return ""
    names = " and ".join(_NAMES.get(c.direction, c.direction) for c in tied)
    return (f"; {pct(max(c.legacy_stream_share or 0.0 for c in tied))} of the {names} copy time runs on a stream no "
            f"kernel runs on, yet in series with the kernels: the legacy default stream "
            f"({ctx.vendor.TERMS['legacy_stream']}) waits for "
            f"the work queued on every blocking stream and makes it wait, so the copies overlap none of their kernels")


def _own_stream(c) -> bool:  # noqa: ANN001 - a direction's copy metrics
    """Whether most of the copies' time ran on streams of their own (``MemcpyStat.own_stream_share``: streams on which
    the GPU ran no kernel): a stream of their own is no fix to tell them (h37-copystream61; h37-fixorder61's Left 3)."""
    return (c.own_stream_share or 0.0) >= T("excessive_memcpy.own_stream_share")


def _anyway_words(ctx: Ctx, anyway: float) -> str:
    """The words of the uploads' time that ran while the GPU waited for the host anyway, "" where none did: beside the
    blocking time the summary grades, booked by the ledger as the host's idle.

    Why: one account -- the summary's time is the ledger's copy time, the part on the step's critical path; the off-path
    part is the host's idle, which the host's findings claim (h37-copystream61's Left 4: graded apart here, it was
    still booked as copy time in the ledger, and no host finding claimed it)."""
    if ms(anyway) == ms(0.0):
        return ""
    return (f"; another {ms(anyway)} {ctx.per_step} of the copies' time ran while the GPU would have idled anyway, "
            f"the host launching the next kernel only after it: off the {ctx.step_noun}'s critical path, it costs the "
            f"{ctx.step_noun} nothing, and is counted as the host's idle")


def _index_uploads(ctx: Ctx, m: HostMetrics) -> bool:
    """The host's waits in copies are all indexing ops' uploads of their CPU indices (``Framework.index_upload_op``:
    PyTorch's ``x[idx]`` with ``idx`` on the CPU, its blocking copy named ``aten::index`` since h37-probe44p): the
    program's fix is an index kept on the device, which no pinning of a batch gives (h37-probe45p: main led with
    the DataLoader's ``pin_memory``)."""
    names = [n for n, _ in m.syncs.copy_callers]
    return bool(names) and all(ctx.fw.index_upload_op(n) for n in names)


def _reads_out(ctx: Ctx, m: HostMetrics) -> bool:
    """The host's waits in copies are all the framework's reads of device values (JAX's ``np.asarray(jax.Array)``
    whose bytes, not the GPU's queue, held it: ``metrics.syncs._bulk_reads``): copies to the host, whose fix is reading
    less or starting the copy early -- not pinning a batch going to the device."""
    names = [n for n, _ in m.syncs.copy_callers]
    return bool(names) and all(ctx.fw.blocking_read_event(n) for n in names)


def _blocked(bd, elsewhere: float) -> float:  # noqa: ANN001 - a Breakdown
    """The time copies block the GPU in a step's ledger ``bd`` (a step's, or the host's mean step): its copy categories
    -- copies of unknown kind among the device copies, as the ledger books them, and the memsets' fills (``memset``:
    no transfer, yet GPU time spent moving no data that this finding's fill fix recovers and no other finding owns) --
    plus ``elsewhere``, the
    per-step time the ledger books in other categories that the copies cause (kernels waiting on pages migrated under
    them, the GPU idle after a copy that blocked the host).

    Why one function: the summary summed each direction's own exposed time and the step's window the ledger's
    categories, so ``wild/vit_a4000_avg_batch`` read "25.0 ms of each 116.3 ms step" above "copies, step 0 (25.1 ms)"
    (its 0.05 ms of memsets in the one, not the other; h37-left56)."""
    return bd.memcpy_h2d + bd.memcpy_d2h + bd.memcpy_d2d + bd.memset + elsewhere


#: the levers in the framework's words (``memcpy:levers``): PyTorch's ``non_blocking`` is no word of a JAX or TF
#: program, whose reads of device values are ``np.asarray`` / ``.numpy()`` (h37-probe43x); their ``{step}`` is said of
#: the host's window (``Ctx.window_words``: "ahead of the pass" where one unmarked pass is read, walk seed 83277)
_ASSUMPTION = "blocking and synchronous copies overlap with compute or disappear ({levers})"
#: the host copies already come from pinned memory, asynchronously, and outlast the compute they could hide behind:
#: what is left is moving fewer bytes -- not the pinning and overlap they already do (h37-review13:
#: streams_pinned_copies' saving assumed "pinned memory and non_blocking copies" beside "the H2D and D2H copies already
#: come from pinned memory, asynchronously")
_ASSUMPTION_PINNED = ("the copies move fewer bytes (only what the GPU needs, in a smaller dtype, or kept on the GPU "
                      "between steps): they already come from pinned memory, asynchronously, so only a copy that no "
                      "longer runs stops blocking the GPU; an upper bound where the transfers are the program's work")
#: the host copies come from pinned memory already but are synchronous calls: pinning is no part of the saving
_ASSUMPTION_SYNC_PINNED = ("the synchronous copies, from pinned memory already, become asynchronous calls on streams "
                           "of their own, overlapped with the kernels (in chunks where a kernel needs all of its "
                           "input first); an upper bound where the transfers are the program's work")
#: the memsets hold the blocking time: filling only what the kernels read, once, is what returns it
_ASSUMPTION_FILLS = ("the memsets fill only the bytes the kernels read, once rather than in every {step}, or run on a "
                     "stream of their own beside compute; an upper bound where the fill is the program's work")
#: the copies are a data-parallel wrapper's uploads of offloaded parameters: its own fix recovers them
_ASSUMPTION_UPLOADS = ("the parameters' uploads leave the {step} (offload off) or overlap with the previous layers' "
                       "compute (prefetched)")
#: a lower bound where kernels wait on pages: a kernel faulting its pages in runs far longer than the copies' own time
_ASSUMPTION_MANAGED = ("the page migrations are prefetched before the kernels and the host touch the pages, so no "
                       "kernel waits on them and no copy runs with the GPU idle; a kernel's wait is counted from its "
                       "start to its first page's arrival (the driver moves a page only once it has handled the "
                       "kernel's fault), its later pages by their copies' own time, a lower bound for those")


def _param_uploads(copies: list) -> float | None:
    """The share of the H2D copy time (of the copies whose launch the capture holds) launched inside a data-parallel
    wrapper's parameter-loading hooks, where it makes those uploads the copies' cause; None otherwise.  Where an FSDP
    job offloads its parameters, each layer's are uploaded before it runs: the fix is the wrapper's (offload off, or
    prefetch), not the input pipeline's pinning and workers (``h100_fsdp_window``: 25.5 GB per GPU per step)."""
    h2d = next((c for c in copies if c.direction == "h2d"), None)
    share = h2d.param_upload_share if h2d is not None else None
    return share if share is not None and share >= T("excessive_memcpy.param_upload_share") else None


def _migrated_only(copies: list) -> bool:
    """Whether every host-device copy with time is a page migration: the program made no copy to pin or overlap."""
    host = [c for c in copies if c.direction in ("h2d", "d2h") and c.ms_per_step > 0]
    return bool(host) and all((c.migration_share or 0.0) >= 0.999 for c in host)


def _migration_words(migrated: list, per: str = "per step") -> str:
    """What share of which directions' copy time is page migrations, and the kernel time spent waiting on them."""
    parts = ", ".join(f"{pct(c.migration_share)} of the {_NAMES.get(c.direction)} copy time" for c in migrated)
    under = sum(c.paging_in_kernels_ms_per_step for c in migrated)
    kernels = (f"; kernels waited {ms(under)} {per} for pages migrated to the GPU under them (each from its start to "
               f"its first page's arrival: the driver handles the fault, then moves the page)" if under > 0 else "")
    return (f"; {parts} is Unified Memory page migrations: the driver moving managed memory's pages on demand when a "
            f"kernel or the host touches them, copies no call of the program asked for{kernels}")


def _already_pinned(copies: list, waits: float) -> bool:
    """Whether every host-device copy with time is known to come from pinned memory and none is synchronous or waited
    on: the pinned-memory and asynchronous-copy fixes are then already applied (overlapping them with compute is not
    enough where they outlast it)."""
    host = [c for c in copies if c.direction in ("h2d", "d2h") and c.ms_per_step > 0]
    return bool(host) and not waits and all(c.pageable_share is not None and c.pageable_share == 0
                                            and not (c.sync_share or 0.0) for c in host)


def _pinned_but_synchronous(copies: list) -> bool:
    """Whether every host-device copy with time is known to come from pinned memory and some are synchronous calls
    (``cudaMemcpy`` of a ``cudaHostAlloc`` buffer): pinning is done already, and what holds the copies in series with
    the kernels is the call, so the fix is the asynchronous call on a stream of its own -- not the pinning the generic
    fix leads with (survey h37-survey43: a HIP course's matmul, built for CUDA, copies from ``cudaHostAlloc``)."""
    host = [c for c in copies if c.direction in ("h2d", "d2h") and c.ms_per_step > 0]
    return (bool(host) and all(c.pageable_share is not None and c.pageable_share == 0 for c in host)
            and any((c.sync_share or 0.0) > 0 for c in host))


def _worst_words(c, ctx: Ctx) -> str:  # noqa: ANN001 - a direction's copy metrics
    """The largest direction's part of the blocking time, beside the copies' own time it is part of: "612 us of its
    632 us per step blocks, 1 copy per step" (issue #36: "block the GPU for 612 us ... mostly H2D (1 copy, 632 us per
    step)" read as a part larger than its whole).  A part equal to its whole as printed is said as the whole: "all
    of its 918 us per step blocks", not "918 us of its 918 us" (h37-review2, cloverleaf_a100_cuda)."""
    part, whole = ms(c.blocking_ms_per_step), ms(c.ms_per_step)
    said = f"all of its {whole}" if part == whole else f"none of its {whole}" if c.blocking_ms_per_step <= 0 else \
        f"{part} of its {whole}"
    return f"{said} {ctx.per_step} blocks, {ctx.count_per_step(c.count_per_step, 'copy')}"
