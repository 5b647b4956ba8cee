"""One-time costs in a capture: the first call of a process is not its steady state.

What a cold capture shows (CUDA and HIP alike): kernel launches of milliseconds to seconds among launches of a
few microseconds -- the first launch of each kernel loads its module (CUDA's lazy loading, HIP's code objects) --
library handles created (cuBLAS, cuDNN, rocBLAS, MIOpen), graphs instantiated, the program compiled.  A launch is
only taken for a one-time cost when the GPU sat idle through it: a launch that blocks because the launch queue is
full (the GPU far behind, busy) is steady state, and physics tells the two apart.  The phase is ``warm-up`` when
one-time costs fill a large share of the capture window, ``mixed`` when they are present but small, ``steady``
otherwise; the step stage drops warm-up steps where steady ones remain, and the breakdown books the GPU's idle time
inside these costs as start-up, not as launch overhead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import Framework
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.model.trace import Trace

PS_PER_MS = 1e9


@dataclass
class OneTime:
    """The capture's one-time costs (host time spans, ps) and its phase."""

    phase: str  # "steady" | "warm-up" | "mixed"
    evidence: str
    start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # disjoint, sorted
    end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    total_ms: float = 0.0
    share: float = 0.0  # of the capture window
    slow_launches: int = 0  # launches taken for one-time costs
    launches: int = 0  # all launch calls
    launch_median_us: float | None = None

    def spans(self) -> tuple[np.ndarray, np.ndarray]:
        return self.start, self.end


def one_time_costs(trace: Trace, fw: Framework) -> OneTime:
    """The one-time costs of ``trace`` and its phase."""
    h = trace.h
    if not len(h):
        return OneTime("steady", "no host events")
    dur = (h.end - h.start).astype(np.int64)
    launch = h.name_mask(devices.is_launch_call)
    slow = np.zeros(len(h), dtype=bool)
    median = None
    if launch.any():
        d = dur[launch]
        median = float(np.median(d))
        cut = max(T("job.one_time_launch_ms") * PS_PER_MS, T("job.one_time_launch_factor") * median)
        cand = np.flatnonzero(launch & (dur > cut))
        if cand.size:
            idle = _gpu_idle_through(trace, h.start[cand], h.end[cand])
            slow[cand[idle]] = True
        if slow.any() and dur[slow].sum() < T("job.one_time_launch_share") * d.sum():
            slow[:] = False  # a few slow launches among many: noise (preemption), not a cold process
    init = h.name_mask(devices.is_init_call) & (dur >= T("job.one_time_call_ms") * PS_PER_MS)
    comp = h.name_mask(fw.compile_event) & (dur >= T("job.one_time_call_ms") * PS_PER_MS)
    m = slow | init | comp
    n_launch = int(launch.sum())
    med_us = None if median is None else median / 1e6
    if not m.any():
        return OneTime("steady", "no one-time costs (module loading, library start-up, compilation) in the capture",
                       launches=n_launch, launch_median_us=med_us)
    s, e = union_intervals(h.start[m].astype(np.int64), h.end[m].astype(np.int64))
    total = float((e - s).sum()) / PS_PER_MS
    span = trace.span_ps
    window = float(span[1] - span[0]) / PS_PER_MS if span else total
    share = total / window if window > 0 else 0.0
    parts = []
    if slow.any():
        parts.append(f"{int(slow.sum())} kernel launch(es) of {_ms(dur[slow].min())}-{_ms(dur[slow].max())} with the GPU "
                     f"idle (median launch {med_us:.1f} us; {100 * dur[slow].sum() / max(dur[launch].sum(), 1):.0f}% "
                     "of all launch time): first launches load their modules")
    for what, mask in (("library start-up / module loading call(s)", init), ("compilation", comp)):
        if mask.any():
            names = sorted({h.names[i] for i in np.unique(h.name[mask])[:3]})
            parts.append(f"{int(mask.sum())} {what} ({', '.join(f'`{n}`' for n in names)}, {_ms(dur[mask].sum())})")
    phase = ("warm-up" if share >= T("job.warmup_share") else
             "mixed" if share >= T("job.one_time_min_share") else "steady")
    lead = {"warm-up": "a cold start", "mixed": "some one-time costs", "steady": "negligible one-time costs"}[phase]
    evidence = f"{lead}: {'; '.join(parts)}; {total:.1f} ms, {100 * share:.0f}% of the {window:.1f} ms window"
    return OneTime(phase, evidence, s, e, total, share, int(slow.sum()), n_launch, med_us)


def _gpu_idle_through(trace: Trace, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Bool per host span: every GPU was idle for most of it (a full launch queue keeps the GPU busy instead)."""
    busy = np.zeros(s.size, dtype=np.float64)
    length = np.maximum(e - s, 1).astype(np.float64)
    for d in trace.devices:
        if not len(d):
            continue
        us, ue = union_intervals(d.start.astype(np.int64), d.end.astype(np.int64))
        cum = np.concatenate([[0], np.cumsum(ue - us)])
        busy = np.maximum(busy, (_covered(us, ue, cum, e) - _covered(us, ue, cum, s)) / length)
    return busy < 0.5


def _covered(us: np.ndarray, ue: np.ndarray, cum: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Busy ps of disjoint sorted intervals before each time in ``t``."""
    j = np.searchsorted(us, t, side="right") - 1
    jj = np.maximum(j, 0)
    v = cum[jj] + np.clip(np.minimum(t, ue[jj]) - us[jj], 0, None)
    return np.where(j < 0, 0, v).astype(np.float64)


def _ms(ps: float) -> str:
    v = float(ps) / PS_PER_MS
    return f"{v:.1f} ms" if v < 1000 else f"{v / 1000:.2f} s"

