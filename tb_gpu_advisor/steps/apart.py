"""Evaluation passes between a loop's steps: the ranges the program names as evaluation (``eval``, ``validation``,
``val_step 3``; ``frameworks.user_ranges.evaluation_ranges``) that open after one step's mark has ended and before
the next one's opens end the step before them (:func:`_cut_before_passes`), on the host and on each GPU.

Why: host marks tile time -- step k runs to step k+1's mark, the gap (its input wait, its untraced code) belonging
to it.  A training loop that evaluates every N steps runs its evaluation in such a gap, outside its ``train_step``
range: tiled, the step before it held every forward of the evaluation -- 8 training steps of 8.03 ms with two
``eval_step`` forwards after steps 3 and 7 read "6 steps of 10.7 ms", the step before each evaluation 24.1 ms,
its forwards' copies and kernels counted as that step's (h37-probe45n).  An evaluation is no training step: it is
said apart, and the steps keep their own time.  Only where some turn of the loop holds none: an evaluation after
every step is a phase of each iteration (the ``validation_step`` each turn of ``synthetic.randjobs``' form 12 runs),
the loop's own time, as a warm-up-named range in every turn is no warm-up (``user_ranges.recurring_phases``).
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.frameworks import user_ranges
from tb_gpu_advisor.model.trace import DeviceEvents, Trace
from tb_gpu_advisor.steps.types import PS_PER_MS


def _passes(trace: Trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, ends, host lines; ps, by start) of the program's evaluation ranges
    (``user_ranges.evaluation_ranges``)."""
    h = trace.h
    sel = user_ranges.evaluation_ranges(h, trace.ranges)
    sel = sel[np.argsort(h.start[sel], kind="stable")]
    return h.start[sel].astype(np.int64), h.end[sel].astype(np.int64), h.line[sel].astype(np.int64)


def _outside(ps: np.ndarray, pe: np.ndarray, pl: np.ndarray, marks: dict[int, tuple[np.ndarray, np.ndarray]],
             default: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Bool per pass (starts ``ps``, ends ``pe``, lines ``pl``): inside none of its thread's step marks (``marks``:
    line -> the marks' starts and own ends; ``default`` for a line not in it).  A pass inside a step's own range is
    that step's, as its user marked it."""
    out = np.ones(ps.size, bool)
    for i in range(ps.size):
        s, e = marks.get(int(pl[i]), default)
        out[i] = not bool(((s <= ps[i]) & (pe[i] <= e)).any())
    return out


def _between(hs: np.ndarray, ps: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Per step, the start (ps) of the first pass outside every mark (``out``; starts ``ps``, sorted) that opens after
    its start and before the next step's (``hs``); -1 where none does (always for the last step: no next mark bounds
    it)."""
    cut = np.full(hs.size, -1, np.int64)
    ps = ps[out]
    if not ps.size or hs.size < 2:
        return cut
    i = np.searchsorted(ps, hs[:-1].astype(np.int64), side="right")
    ok = i < ps.size
    first = np.where(ok, ps[np.minimum(i, ps.size - 1)], np.iinfo(np.int64).max)
    hit = ok & (first < hs[1:].astype(np.int64))
    cut[:-1][hit] = first[hit]
    return cut


def _ended(s: np.ndarray, e: np.ndarray, read_end: np.ndarray, cut: np.ndarray) -> np.ndarray:
    """Tiled windows' ends (``e``) with each step a pass follows (``cut`` >= 0) ended where it opens, not before the
    step's own mark ends (``read_end``: another rank's mark may still be open) nor before its start."""
    e = e.copy()
    k = cut >= 0
    e[k] = np.maximum(np.maximum(cut[k], read_end[k].astype(np.int64)), s[k].astype(np.int64))
    return e


def _cut_before_passes(trace: Trace, hs: np.ndarray, he: np.ndarray, read_end: np.ndarray,
                       per_line: dict[int, tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, str]:
    """Tiled host windows (``hs``, ``he``; each mark's own end ``read_end``; ``per_line``: each rank's thread's own
    marks, where several mark them) with each step that an evaluation pass follows before the next step ended where
    the first opens; (per step: that pass's start or -1, the windows' new ends, the note's words, "" where none)."""
    ps, pe, pl = _passes(trace)
    out = _outside(ps, pe, pl, per_line, (hs.astype(np.int64), read_end.astype(np.int64)))
    cut = _between(hs, ps, out)
    if not (cut >= 0).any() or (cut[:-1] >= 0).all():  # none, or one in every turn: a phase of each iteration
        return np.full(hs.size, -1, np.int64), he, ""
    after = np.zeros(ps.size, bool)
    for k in np.flatnonzero(cut >= 0).tolist():
        after |= out & (ps > hs[k]) & (ps < hs[k + 1])
    h = trace.h
    names = sorted({h.names[int(h.name[i])] for i in user_ranges.evaluation_ranges(h, trace.ranges)})
    took = float((pe[after] - ps[after]).sum())
    word = ", ".join(f"`{n}`" for n in names[:3]) + (" ..." if len(names) > 3 else "")
    return cut, _ended(hs, he, read_end, cut), (
        f"; {plural(int(after.sum()), 'evaluation range', 'evaluation ranges')} ({word}, {took / PS_PER_MS:,.1f} ms "
        f"in all) after {plural(int((cut >= 0).sum()), 'step')}, before the next, left out of the steps: the program "
        "names them evaluation, no training step's work, so the step before each ends where the first opens")


def _cut_own(trace: Trace, lines: np.ndarray, s: np.ndarray, e: np.ndarray, read_end: np.ndarray) -> np.ndarray:
    """A rank's own tiled windows (``s``, ``e``; its marks' own ends ``read_end``) ended at the evaluation passes its
    threads (``lines``) mark between them, as the host's are (:func:`_cut_before_passes`)."""
    ps, pe, pl = _passes(trace)
    mine = np.isin(pl, np.asarray(lines, dtype=np.int64))
    ps, pe, pl = ps[mine], pe[mine], pl[mine]
    own = (s.astype(np.int64), read_end.astype(np.int64))
    return _ended(s, e, read_end, _between(s, ps, _outside(ps, pe, pl, {}, own)))


def _cut_gpu(trace: Trace, w: np.ndarray, d: DeviceEvents, launch: np.ndarray, cut: np.ndarray,
             hs: np.ndarray) -> np.ndarray:
    """A GPU's step windows (``w``: (n, 2) ps, aligned with the host's starts ``hs``) each ended where the GPU starts
    the work launched inside the evaluation after its host step (from ``cut[k]`` to ``hs[k+1]``) -- its first kernel
    or collective, as each step's window starts at its own (``steps.place._launched_per_step``), else its first
    event -- where that lies inside the window.  Why: a GPU's window runs to the next step's first kernel, so it held
    the evaluation's kernels, launched between the two host steps, as the host's tiled window held its time.  The
    launches are placed by their time on the process, whichever thread made them."""
    if not (cut >= 0).any() or launch is None or launch.size != len(d):
        return w
    h = trace.h
    ok = launch >= 0
    at = np.full(len(d), -1, np.int64)
    at[ok] = h.start[launch[ok]].astype(np.int64)
    kern = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
    w = w.copy()
    for k in np.flatnonzero(cut >= 0).tolist():
        mine = ok & (at >= cut[k]) & (at < int(hs[k + 1]))
        first = d.start[mine & kern] if (mine & kern).any() else d.start[mine]
        if first.size and int(w[k, 0]) < int(first.min()) < int(w[k, 1]):
            w[k, 1] = int(first.min())
    return w
