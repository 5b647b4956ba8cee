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

An evaluation inside a step's own mark (``train_step`` around ``evaluate()``, Kineto's ``ProfilerStep#n`` holding
what the loop ran after its update) is cut off where it is the mark's tail or head (:func:`_tails`), in every turn
too: the window's training is the step's (h37-probe46e).  Forwards no range names after a step's training, the head
of the steady step's work again with no backward or update, are an evaluation's as well (:func:`_unnamed_passes`).
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.frameworks import user_ranges
from tb_gpu_advisor.model.trace import DeviceEvents, Trace, line_processes
from tb_gpu_advisor.steps.types import PS_PER_MS

#: the readings whose windows are the user's own marks of each step (an NVTX range, ``ProfilerStep#``, an iteration
#: range): an evaluation at the tail of such a mark is cut off it (:func:`_mark_cuts`)
_OWN_MARKS = ("nvtx_range", "profiler_step", "iteration_range")


def _passes(trace: Trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, ends, host lines; ps, by start) of the program's evaluation ranges
    (``user_ranges.evaluation_ranges``)."""
    h = trace.h
    sel = user_ranges.evaluation_ranges(h, trace.ranges, trace.annotations)
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


def _launch_times(trace: Trace, launched: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(host starts, processes; sorted by start) of every call that launched work a GPU ran (``launched``: per GPU,
    each device event's launch record), each call once; its process by its line (:func:`line_processes`, 0 where the
    format names one process)."""
    idx = np.unique(np.concatenate([la[la >= 0] for la in launched] or [np.zeros(0, np.int64)]).astype(np.int64))
    h = trace.h
    at = h.start[idx].astype(np.int64)
    procs = line_processes(trace)
    proc = procs[h.line[idx].astype(np.int64)] if procs is not None else np.zeros(idx.size, np.int64)
    order = np.argsort(at, kind="stable")
    return at[order], proc[order]


def _tails(ps: np.ndarray, pe: np.ndarray, pl: np.ndarray, s: np.ndarray, e: np.ndarray, line: int,
           launches: tuple[np.ndarray, np.ndarray], procs: np.ndarray | None, head: bool = False) -> np.ndarray:
    """Per mark on host line ``line`` (starts ``s``, own ends ``e``): the start of the first evaluation pass (``ps``,
    ``pe``, ``pl``) of its thread inside it after which its process launches nothing outside the passes up to the
    mark's end, and training work before it -- the evaluation is the mark's tail, its training done before it; -1
    where none is.  ``head``: the end of the last pass inside it before which the process launched nothing outside
    the passes since the mark opened, and training work after it -- the evaluation is the mark's head.

    Why: a loop whose ``train_step`` range wraps ``evaluate()`` after its update (or opens with it) marks its training
    and its evaluation as one window; the evaluation's forwards start where the training ends (end where it starts),
    so the step's training time is the window up to the first pass (from the last).  A pass with training work on
    both sides of it (an evaluation mid-step) leaves the mark whole: a window can be cut, not holed
    (``steps.drop._drop_evaluating`` says such a step)."""
    out = np.full(s.size, -1, np.int64)
    mine = pl == line
    ps, pe = ps[mine], pe[mine]
    if not ps.size:
        return out
    at, proc = launches
    if procs is not None and 0 <= line < procs.size:
        at = at[proc == procs[line]]
    inside_pass = np.zeros(at.size, bool)
    for a, b in zip(ps.tolist(), pe.tolist()):
        inside_pass |= (at >= a) & (at <= b)
    train = at[~inside_pass]
    for k in range(s.size):
        held = np.flatnonzero((ps > s[k]) & (pe <= e[k]) | (ps >= s[k]) & (pe < e[k]))
        if not held.size:
            continue
        first, last = int(ps[held].min()), int(pe[held].max())
        before = ((train >= s[k]) & (train < first)).any()
        after = ((train > last) & (train <= e[k])).any()
        if not head and before and not ((train > first) & (train <= e[k])).any():
            out[k] = first
        elif head and after and not before and not ((train >= first) & (train <= last)).any():
            out[k] = last
    return out


def _mark_cuts(trace: Trace, hs: np.ndarray, read_end: np.ndarray, per_line: dict[int, tuple[np.ndarray, np.ndarray]],
               launched: list[np.ndarray], head: bool = False) -> np.ndarray:
    """Per host step, where the evaluation its marks hold at their tail opens (:func:`_tails`; ``head``: where the one
    they open with ends): the first of the marking threads' own, where every thread that marks the step holds one (the
    step ends where the evaluation first opens, as where a pass between marks does: :func:`_between`; each rank's own
    window ends at its own, :func:`_cut_own`); -1 elsewhere.  One marking thread: the host's marks themselves."""
    ps, pe, pl = _passes(trace)
    if not ps.size or not launched:
        return np.full(hs.size, -1, np.int64)
    if not per_line and np.unique(pl).size > 1:  # passes on several threads, one host mark: that mark's thread unknown
        return np.full(hs.size, -1, np.int64)
    launches, procs = _launch_times(trace, launched), line_processes(trace)
    marks = per_line or {int(pl[0]): (hs.astype(np.int64), read_end.astype(np.int64))}
    got = [_tails(ps, pe, pl, s.astype(np.int64), e.astype(np.int64), ln, launches, procs, head=head)
           for ln, (s, e) in marks.items() if s.size == hs.size]
    if not got:
        return np.full(hs.size, -1, np.int64)
    got = np.stack(got)
    return np.where((got >= 0).all(axis=0), got.min(axis=0), -1)


def _evaluation_words(trace: Trace) -> str:
    """The program's evaluation ranges' names as a note says them: the first three, in order, then "..."."""
    h = trace.h
    names = sorted({h.names[int(h.name[i])] for i in user_ranges.evaluation_ranges(h, trace.ranges, trace.annotations)})
    return ", ".join(f"`{n}`" for n in names[:3]) + (" ..." if len(names) > 3 else "")


def _start_after_heads(trace: Trace, hs: np.ndarray, he: np.ndarray, read_end: np.ndarray,
                       per_line: dict[int, tuple[np.ndarray, np.ndarray]], launched: list[np.ndarray],
                       apart: np.ndarray) -> str:
    """Start each step whose own marks open with an evaluation (:func:`_mark_cuts` ``head=True``) where it ends, the step before
    it (tiled to this one's mark) ended where the evaluation opens (``apart``, where not already cut: each GPU's window
    then ends at the evaluation's first kernel, :func:`_cut_gpu`); ``hs``, ``he``, ``apart`` in place.  The note's
    words, "" where none."""
    head = _mark_cuts(trace, hs, read_end, per_line, launched, head=True)
    k = np.flatnonzero((head >= 0) & (head < he.astype(np.int64)))
    if not k.size:
        return ""
    took = float((head[k] - hs[k].astype(np.int64)).sum())
    prev = k[k > 0] - 1
    apart[prev] = np.where(apart[prev] >= 0, apart[prev], hs[prev + 1].astype(np.int64))
    he[prev] = np.minimum(he[prev], hs[prev + 1])
    hs[k] = head[k]
    word = _evaluation_words(trace)
    n = int(k.size)
    its, open_ = ("its", "opens") if n == 1 else ("their", "open")
    return (f"; {plural(n, 'step')} {open_} {its} own range with an evaluation ({word}), before {its} training: "
            f"{took / PS_PER_MS:,.1f} ms of evaluation in all ({took / PS_PER_MS / n:,.2f} ms a step), left out of "
            "the steps -- each starts where its evaluation ends")


def _tail_note(trace: Trace, hs: np.ndarray, cut: np.ndarray, he: np.ndarray) -> str:
    """The note's words for the evaluations cut off the tails of the steps' own marks (``cut`` >= 0, the windows'
    ends before ``he``): how many steps, and the evaluation's time apart from theirs."""
    k = cut >= 0
    took = float((he[k].astype(np.int64) - np.maximum(cut[k], hs[k].astype(np.int64))).sum())
    word = _evaluation_words(trace)
    n = int(k.sum())
    its, hold = ("its", "holds") if n == 1 else ("their", "hold")
    return (f"; {plural(n, 'step')} {hold} an evaluation ({word}) at the end of {its} own range, after {its} "
            f"training: {took / PS_PER_MS:,.1f} ms of evaluation in all "
            f"({took / PS_PER_MS / n:,.2f} ms a step), left out of the steps -- each ends where its evaluation opens")


def _cut_before_passes(trace: Trace, hs: np.ndarray, he: np.ndarray, read_end: np.ndarray,
                       per_line: dict[int, tuple[np.ndarray, np.ndarray]], launched: list[np.ndarray] | None = None
                       ) -> tuple[np.ndarray, np.ndarray, str]:
    """Tiled host windows (``hs``, ``he``; each mark's own end ``read_end``; ``per_line``: each rank's thread's own
    marks, where several mark them) with each step that an evaluation pass follows before the next step ended where
    the first opens, and, given the launches (``launched``: the steps are the user's own marks), each step whose own
    mark ends in an evaluation ended where it opens (:func:`_mark_cuts`); (per step: where its window was cut or -1,
    the windows' new ends, the note's words, "" where none)."""
    tail = _mark_cuts(trace, hs, read_end, per_line, launched) if launched is not None else np.full(hs.size, -1)
    said = ""
    if (tail >= 0).any():
        said = _tail_note(trace, hs, tail, he)
        he = he.copy()
        he[tail >= 0] = np.maximum(tail[tail >= 0], hs[tail >= 0].astype(np.int64))
    cut, he2, more = _cut_between(trace, hs, he, read_end, per_line, tail)
    return np.where(tail >= 0, tail, cut), he2, said + more


def _cut_between(trace: Trace, hs: np.ndarray, he: np.ndarray, read_end: np.ndarray,
                 per_line: dict[int, tuple[np.ndarray, np.ndarray]], tail: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, str]:
    """:func:`_cut_before_passes`'s passes between two steps' marks: each step (not already cut at its own mark's tail,
    ``tail`` >= 0) that one follows before the next step ended where the first opens."""
    ps, pe, pl = _passes(trace)
    out = _outside(ps, pe, pl, per_line, (hs.astype(np.int64), read_end.astype(np.int64)))
    cut = _between(hs, ps, out)
    cut[tail >= 0] = -1
    if not (cut >= 0).any() or (cut[:-1] >= 0).all():  # none, or one in every turn: a phase of each iteration
        return np.full(hs.size, -1, np.int64), he, ""
    after = np.zeros(ps.size, bool)
    for k in np.flatnonzero(cut >= 0).tolist():
        after |= out & (ps > hs[k]) & (ps < hs[k + 1])
    took = float((pe[after] - ps[after]).sum())
    word = _evaluation_words(trace)
    return cut, _ended(hs, he, read_end, cut), (
        f"; {plural(int(after.sum()), 'evaluation range', 'evaluation ranges')} ({word}, {took / PS_PER_MS:,.1f} ms "
        f"in all) after {plural(int((cut >= 0).sum()), 'step')}, before the next, left out of the steps: the program "
        "names them evaluation, no training step's work, so the step before each ends where the first opens")


def _cut_own(trace: Trace, lines: np.ndarray, s: np.ndarray, e: np.ndarray, read_end: np.ndarray,
             marks: dict[int, tuple[np.ndarray, np.ndarray]] | None = None,
             launched: list[np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A rank's own tiled windows (``s``, ``e``; its marks' own ends ``read_end``) ended at the evaluation passes its
    threads (``lines``) mark between them, as the host's are (:func:`_cut_before_passes`), and, given its threads' own
    marks (``marks``) and the launches, ended at the evaluation its marks hold at their tail (:func:`_tails`) and
    started after the one they open with (the window before then ending where it opens); (starts, ends)."""
    ps, pe, pl = _passes(trace)
    mine = np.isin(pl, np.asarray(lines, dtype=np.int64))
    ps, pe, pl = ps[mine], pe[mine], pl[mine]
    own = (s.astype(np.int64), read_end.astype(np.int64))
    cut = _between(s, ps, _outside(ps, pe, pl, {}, own))
    s = s.astype(np.int64).copy()
    e = e.astype(np.int64).copy()
    if marks and launched is not None and ps.size:
        launches, procs = _launch_times(trace, launched), line_processes(trace)
        for head in (False, True):
            got = [_tails(ps, pe, pl, ms.astype(np.int64), me.astype(np.int64), ln, launches, procs, head=head)
                   for ln, (ms, me) in marks.items() if ms.size == s.size]
            if not got:
                continue
            at = np.stack(got)
            at = np.where((at >= 0).all(axis=0), at.min(axis=0), -1)
            k = np.flatnonzero(at >= 0)
            if head:
                e[k[k > 0] - 1] = np.minimum(e[k[k > 0] - 1], s[k[k > 0]])
                s[k] = np.minimum(at[k], e[k])
            else:
                e[k] = np.maximum(at[k], s[k])
            cut[k] = -1
    return s, _ended(s, e, read_end, cut)


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
        upto = int(hs[k + 1]) if k + 1 < hs.size else np.iinfo(np.int64).max  # the last: all it launched after
        mine = ok & (at >= cut[k]) & (at < upto)
        first = d.start[mine & kern] if (mine & kern).any() else d.start[mine]
        if first.size and int(w[k, 0]) < int(first.min()) < int(w[k, 1]):
            w[k, 1] = int(first.min())
    return w


def _tokens(d: DeviceEvents, launch: np.ndarray, at: np.ndarray, a: int, b: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The work a GPU ran that was launched in host window ``[a, b)`` (``launch``: its events' launch records, ``at``:
    their host starts), in launch order: each event's (kind, name) as one token, its launch's host start and record."""
    sel = np.flatnonzero((launch >= 0) & (at >= a) & (at < b))
    sel = sel[np.argsort(at[sel], kind="stable")]
    return (d.kind[sel].astype(np.int64) << 32) | d.name[sel].astype(np.int64), at[sel], launch[sel]


def _opened(trace: Trace, call: int, after: int) -> int:
    """Where the work launched by host record ``call`` was opened: the start of the outermost event on its thread that
    holds the call and begins after ``after`` (the training's last launch) -- the evaluation forward's own range, its
    input's ``aten::to`` -- else the call's own start.

    Why: an unnamed evaluation's forwards start with the program's code around their first launch (its ``forward``
    range opens before its copy's call): cut at the call, the step before kept that range, one ``forward`` a step
    too many."""
    h = trace.h
    at = int(h.start[call])
    held = (h.line == h.line[call]) & (h.start > after) & (h.start <= at) & (h.end >= h.end[call])
    return int(h.start[held].min()) if held.any() else at


def _forwards_after(seq: np.ndarray, steady: np.ndarray) -> int:
    """Where in a step's work (``seq``) forwards with no backward begin after the loop's steady step (``steady``, its
    work as every step without them runs it): ``seq`` is ``steady`` and then one or more repeats of a head of it
    shorter than it -- its forward's work again, never its backward's nor its update's -- else -1."""
    n = steady.size
    if seq.size <= n or not np.array_equal(seq[:n], steady):
        return -1
    rest = seq[n:]
    for m in range(1, n):
        if rest.size % m == 0 and np.array_equal(rest.reshape(-1, m), np.broadcast_to(steady[:m], (rest.size // m, m))):
            return n
    return -1


def _unnamed_passes(trace: Trace, hs: np.ndarray, he: np.ndarray, launched: list[np.ndarray], done: np.ndarray,
                    gpu: int | None = None) -> tuple[np.ndarray, str]:
    """Per step (not already cut, ``done`` < 0; never the last), the host start of the evaluation's forwards that no
    range names, run after its training (:func:`_forwards_after`) on every GPU (``gpu``: on that one alone, its rank's
    own windows ``hs``/``he``: :func:`own_unnamed_cut`) -- the loop's steady step being the work most steps run (at
    least two, and more than hold such forwards); -1 elsewhere, and the note's words.  The last step is left whole: no
    training step follows it, so forwards after its update may be the next iteration's, its backward after the
    capture's end.

    Why: ``model.eval()`` and ``torch.no_grad()`` record nothing, so an evaluation the program does not mark is its
    forwards alone, launched between two training steps: tiled, the step before held them -- 8 steps of 8.03 ms with
    two forwards after steps 3 and 7 read 10.7 ms (h37-probe44n's Left 2).  A step is its forward, backward and update;
    work that repeats the forward's head with no backward or update after it is no training step's.  Every step
    running it leaves no step without it to tell the training by: nothing is cut (the steps say the loop's time)."""
    cut = np.full(hs.size, -1, np.int64)
    if hs.size < 3:
        return cut, ""
    h = trace.h
    per_gpu = []
    for d, launch in zip(trace.devices, launched):
        if not len(d) or launch is None or launch.size != len(d) or gpu is not None and d.gpu != gpu:
            continue
        at = np.full(len(d), -1, np.int64)
        ok = launch >= 0
        at[ok] = h.start[launch[ok]].astype(np.int64)
        seqs = [_tokens(d, launch, at, int(a), int(b)) for a, b in zip(hs.tolist(), he.tolist())]
        keys = [t.tobytes() for t, _, _ in seqs]
        common = max(set(keys), key=keys.count)
        if keys.count(common) < 2 or not common:
            return cut, ""
        steady = np.frombuffer(common, np.int64)
        got = np.full(hs.size, -1, np.int64)
        for k, (t, at_k, calls) in enumerate(seqs):
            i = _forwards_after(t, steady) if keys[k] != common else -1
            if i >= 0:
                got[k] = _opened(trace, int(calls[i]), int(at_k[i - 1]))
        per_gpu.append(got)
    if not per_gpu:
        return cut, ""
    got = np.stack(per_gpu)
    found = (got >= 0).all(axis=0) & (done < 0)
    found[-1] = False  # no step after the last: its forwards may be the next iteration's, the capture ended in it
    if not found.any() or int(found.sum()) >= int((~found).sum()):
        return cut, ""
    cut[found] = got[:, found].min(axis=0)
    took = float((he[found].astype(np.int64) - cut[found]).sum())
    n = int(found.sum())
    return cut, (f"; forwards that no range names and no backward or update follows, after the training of "
                 f"{plural(n, 'step')} ({took / PS_PER_MS:,.1f} ms in all): the head of the loop's steady step's work "
                 "again, an evaluation's, left out of the steps -- each ends where they start")


def own_unnamed_cut(trace: Trace, gpu: int, s: np.ndarray, e: np.ndarray, launched: list[np.ndarray],
                    host_cut: np.ndarray) -> np.ndarray:
    """A rank's own tiled windows' ends (``s``, ``e``: the windows of the process of ``gpu``) with each step the host's
    reading cut (``host_cut`` >= 0) ended where that rank's own unnamed evaluation forwards start
    (:func:`_unnamed_passes` on its GPU alone, in its own windows), if it runs them there.

    Why: the host's cut is the first rank's forwards' start; each rank's own windows (``steps.place._own_host_windows``)
    book its host events -- its calls, copies and ranges -- to its own steps, and were cut only at the evaluations a
    range names (:func:`_cut_own`): rank 1's two unnamed evaluation forwards (their ``forward`` ranges, copies, syncs)
    were booked to the training step before them, 16 ``forward`` ranges in 6 kept steps of 2 ranks for 14."""
    un, _ = _unnamed_passes(trace, s, e, launched, np.full(s.size, -1, np.int64), gpu=gpu)
    k = (un >= 0) & (host_cut >= 0)
    e = e.copy()
    e[k] = np.minimum(e[k], np.maximum(un[k], s[k].astype(np.int64)))
    return e
