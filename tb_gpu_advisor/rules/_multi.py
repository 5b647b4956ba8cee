"""Shared helpers for the several-GPU rules (§2)."""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import ms, pct, plural


def active_gpus(m) -> list:
    return [g for g in m.gpus if g.active]


def is_multi(m) -> bool:
    return len(active_gpus(m)) >= 2


def wait_parts(m) -> list[tuple[str, str, float]]:
    """Where GPUs waiting for the busiest or latest GPU sit in the step breakdown, as saving claims.

    NCCL kernels launched before the last GPU arrives spin, so the wait is collective time; a collective
    launched only once every GPU is ready leaves the early GPUs idle instead ("other", the host group), and a
    GPU that starts late idles at the start of the step.  Claims follow the step's collective and idle time, so
    the achievable step takes the time from where it actually is.
    """
    coll, idle = max(0.0, m.breakdown.collectives or 0.0), max(0.0, m.breakdown.other or 0.0)
    if coll + idle <= 0:
        return [("collectives", "gpu_wait", 1.0)]
    return [("collectives", "gpu_wait", coll), ("host", "gpu_wait", idle)]


def wait_held_ms(m) -> float:
    """The collective and idle time the step's ledger holds: all a fix that removes the GPUs' waits for each other can
    recover (h37-left52: launch_skew claimed 2.99 ms of a step holding 0.94 ms of it)."""
    return max(0.0, m.breakdown.collectives or 0.0) + max(0.0, m.breakdown.other or 0.0)


def paced_launch_ms(m) -> tuple[float, object | None]:
    """(ms a step, the GPU that paces it) a launch fix on every GPU of a host whose GPUs meet at the collectives gives
    back beyond the host ledger's launch wait (the mean over its GPUs): each GPU's own launch wait and its wait for
    the others at the collectives (``Communication.arrivals``) both go, so the step is at least each GPU's time less
    those two -- the gain at most their least sum over the GPUs, less the mean's launch wait; (0, None) where the GPUs
    meet at no paired collective, or the GPU of that least sum is not the one entering most calls last (the last
    arrival moving between GPUs: no one GPU's launches pace the step).

    Why: the step of such a host is its latest GPU's, not the mean.  A rank late by its own launches has them in the
    mean at one share of N, and the others' launch gaps that run inside their wait for it are booked as that wait:
    with every rank launch-bound and one more, the launch fix's claim and the late rank's together gave back 2.23 ms
    of a step that every fix landing shortens by 2.77 (h37-late67, ``write_late_rank_fused`` at 40/60 us a launch).
    The part is the others' wait for the pacing GPU's launches: the same time ``late_rank`` books in that pool.  A
    GPU's own launch wait counts its launch gaps under its own collectives (``launch_in_collectives_ms_per_step``):
    the late rank's launches during its first all-reduce, painted as that all-reduce, left the claims 2.47 ms of the
    2.77 every fix gives back at 30/60 us (h37-late67 *Left*; session 68)."""
    arr = m.comm.arrivals
    gs = active_gpus(m)
    if not arr or len(gs) < 2:
        return 0.0, None
    lw = {g.gpu: float(g.breakdown.launch_wait or 0.0) for g in gs}
    # its own launch gaps while its collectives run count with its launch wait: the ledger paints them as
    # communication, and with its launches ahead of its kernels its next work fills them and hides the collective
    both = {g.gpu: lw[g.gpu] + float(getattr(g, "launch_in_collectives_ms_per_step", 0.0) or 0.0)
            + float(arr["wait_ms"].get(g.gpu, 0.0)) for g in gs}
    pace = min(gs, key=lambda g: both[g.gpu])
    if pace.gpu != arr["gpu"] or arr["last_in"].get(pace.gpu, 0) * 2 <= arr["calls"]:
        return 0.0, None  # the GPU that bounds it is not the one the others wait for in most calls: no one pace
    return max(0.0, both[pace.gpu] - sum(lw.values()) / len(gs)), pace


def gpu_table_rows(m) -> list:
    return [[g.gpu, g.name, g.step_ms, g.busy_ms_per_step, g.busy_share, g.kernel_count, g.collective_calls_per_step,
             g.allreduce_ms_per_step, g.first_kernel_offset_ms] for g in active_gpus(m)]


GPU_COLUMNS = ["gpu", "name", "step ms", "busy ms/step", "busy share", "kernels", "collective calls/step",
               "AllReduce ms/step", "first kernel offset ms"]


#: What one slow call of a kernel the other GPUs or ranks ran fast paid: said by ``gpu_imbalance``'s and
#: ``rank_straggler``'s one-call notes (h37-ranks57), in one wording.
ONE_OFF_COST = "a one-off cost (a first call's autotuning or module load, a clock dip)"


def kernel_gap_words(by: dict | None, gap: float, than: str) -> str:
    """Where a GPU's compute gap lies by kernel (``by``: ``MultiGpu.gap_by_kernel`` within one host,
    ``metrics.job.kernel_gap`` across host files): the kernels it spends longer in than ``than`` ("GPU1", "its peers",
    "the median other rank") where the listed ones hold most of its excess, else that the gap is spread; "" without
    kernels.  One wording for ``gpu_imbalance`` and ``rank_straggler``."""
    if not by or not by.get("kernels") or gap <= 0:
        return ""
    more, less = float(by["more_ms"]), float(by.get("less_ms") or 0.0)
    named = [(k, v) for k, v in by["kernels"]]
    net = f", against {ms(less)} less in others" if less > 0.05 * gap else ""
    if sum(v for _, v in named) >= 0.5 * more:
        return (f" It spends longer than {than} mostly in "
                + ", ".join(f"`{k}` ({ms(v)} more)" for k, v in named if v >= 0.1 * more) + f"{net}.")
    return (f" The gap is spread over {plural(int(by['more_kernels']), 'kernel')} it spends longer in, "
            f"none more than {ms(named[0][1])} ({pct(named[0][1] / more)} of their excess){net}.")


def which_call(one: dict) -> str:
    """The slow call among its kernel's calls (``call``: 0-based, ``calls``: how many), as the notes say it."""
    n = int(one.get("calls") or 1)
    return "its only call" if n == 1 else f"call {int(one['call']) + 1} of {n}"
