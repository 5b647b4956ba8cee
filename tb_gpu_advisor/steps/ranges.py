"""Helpers over the host's ranges: their level (top-level, not nested in another of the
selection), how often a name repeats (per thread or overall), the step number a range's name ends in
(``ProfilerStep#12``, ``token_6_processing``) and the name with its number taken out.  The word for the ranges
(NVTX for Nsight, roctx for AMD's tracers, PyTorch's ``record_function`` ranges) is the format's or the framework's:
``frameworks.ranges_word``.

Why apart: both range readings -- NVTX / user ranges (:mod:`.nvtx_ranges`) and the training or serving engine's
step ranges (:mod:`.top_ranges`) -- and the one-pass phase window (:mod:`.passes`) ask the same questions of ranges;
one home keeps their answers the same.
"""

from __future__ import annotations

import re

import numpy as np

from tb_gpu_advisor.frameworks import nvtx
from tb_gpu_advisor.model.columns import outermost
from tb_gpu_advisor.model.trace import HostEvents


def _top_level(h: HostEvents, idx: np.ndarray) -> np.ndarray:
    """Bool per range of ``idx`` (host events in (line, start, longer first) order): inside no other range of its line
    (``model.columns.outermost``: held only where mostly inside an earlier one).

    Why not "begun before an earlier one ended": Kineto writes each event's start and length in microseconds to three
    decimals, so one step range's end lands up to 1 ns past the next one's start; each such step was read as nested in
    the one before and dropped (walk seed 250855: a rank's 10 ``train_step`` ranges read as 7, its GPU's steps 30 ms
    and 1 ms long)."""
    return outermost(h.line[idx], h.start[idx], h.end[idx])


def _most_repeated(h: HostEvents, names: np.ndarray, sel: np.ndarray, per_line: bool) -> int:
    """The name (``names``: one per range of ``sel``) occurring most often (on one line when ``per_line``); ties: the
    one that starts first."""
    key = names.astype(np.int64)
    if per_line:
        key = key * (int(h.line.max()) + 1) + h.line[sel].astype(np.int64, copy=False)
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    best = np.lexsort((h.start[sel][first], -counts))[0]
    return int(names[first[best]])


def _max_per_line(h: HostEvents, sel: np.ndarray) -> int:
    return int(np.bincount(h.line[sel].astype(np.int64, copy=False)).max()) if sel.size else 0


_TRAILING_NUMBER = re.compile(r"(\d+)\s*$")


#: A range name's trailing number with what separates it: ``iteration 12`` and ``iteration 13`` are one name.  A
#: number after other punctuation (``Step 3/100``'s ``100``, a count or a range's bound) stays, as a counter in it
#: (:data:`_INNER_NUMBER`): ``Step #/#``, not ``Step 3/``.
_TRAILING_NUMBER_PART = re.compile(r"(?:(?<=[A-Za-z.])|[-_ #:=]+)\d+\s*$")


#: A number standing as a word of its own inside a name (``token_6_processing``, ``layer 3 fwd``), whatever stands
#: around it but a letter, a digit or a dot (``Step 3/100``, ``iteration[96,100)``, ``step (3)``: a loop's counter
#: in the punctuation its program wrote), not part of a word (``conv2d``, ``fp16``) or of a dotted path or number
#: (``model.layers.3.mlp``, ``v1.2``).
_INNER_NUMBER = re.compile(r"(?<![A-Za-z0-9.])\d+(?![A-Za-z0-9.])")


def _base_name(name: str) -> str:
    """A range's name without its numbers: the trailing one and those standing as words of their own, so that the
    ranges of one loop, numbered by its counter anywhere in their name, are one name.  A module path's layer index
    (``model.layers.3``: ``frameworks.nvtx.layer_family``) is no counter: the name is kept whole.

    Why the layers: a model's per-layer ranges (a forward hook's ``model.layers.0`` ... ``model.layers.11``) read as one
    name "but for their numbers" were the most repeated top-level range, and one 30 ms forward of 12 layers read as 10
    "steps" of 2.68 ms (h37-nvtx62: ``synthetic.nsysexport.write_layer_pass``); a loop runs every layer each
    iteration, so a layer's range is a piece of a step, never one."""
    step = nvtx.is_step_name(name)
    if nvtx.layer_family(name) is not None and not step:
        return name
    if step:  # each rank's label of its step (``rank1 step 3``) is one name: its step's (h37-nvtx69)
        name = nvtx.without_logged_values(nvtx.without_rank(name))  # and its loss logged in it (``step=3 loss=2.31``)
    if step and nvtx.is_nested_loop_name(name):  # ``e3_b17``: each loop's counter, glued to its letter (h37-names69)
        return nvtx.number_family(name)
    if nvtx.two_counters(name) is not None:  # ``phase1_chunk3``: two counters of any words, glued too (h37-names70)
        return nvtx.number_family(nvtx.without_logged_values(nvtx.without_rank(name)))
    return _INNER_NUMBER.sub("#", _TRAILING_NUMBER_PART.sub("", name) or name)


_NUMBER = re.compile(r"\d+")


def _counting_bases(h: HostEvents, idx: np.ndarray, base_text: list[str], procs: np.ndarray | None = None
                    ) -> list[str]:
    """``base_text`` (one per name of ``h.names``) with the fold undone for the names of a base whose numbers do not
    count on the ranges ``idx``: each such name keeps its own text.  A base counts where, on every thread, its
    instances in start order (:func:`_counts`) step each number that varies by one constant, or start it over.

    Why: the fold was meant for a loop's counter (``iteration 12``, ``iteration[96,100)``, ``microstep_0`` ...
    ``microstep_3`` again each iteration), and a number standing alone is also a shape or a size a program labels a
    range with (``matmul (1024, 1024)``, ``(2048, 2048)``, ``(4096, 4096)`` in a benchmark's sweep): one name by the
    fold, a "loop" of blocks that are not turns of one.  ``procs``: each line's process
    (``model.trace.line_processes``), where a range's work may run on its process's other threads
    (:func:`_holds_training_steps`)."""
    groups: dict[str, set[int]] = {}
    for i in np.unique(h.name[idx]).tolist():
        groups.setdefault(base_text[i], set()).add(i)
    out = list(base_text)
    for ids in groups.values():
        if len(ids) < 2:
            continue
        mine = idx[np.isin(h.name[idx], list(ids))]
        if not _counts(h, mine, procs):
            for i in ids:
                out[i] = h.names[i]
    return out


def _counts(h: HostEvents, sel: np.ndarray, procs: np.ndarray | None = None) -> bool:
    """Whether the numbers in the names of ranges ``sel`` (one base) count on every thread, in start order: some
    number moves from each range to the next, and each position's number is constant, or holds or moves by one step
    ``c > 0``, or starts over at its least value (a micro-step counter that restarts every iteration) -- or, where
    every such range holds a training step's work (:func:`_holds_training_steps`; ``procs``: each line's process),
    starts over at its first index and rises as a counter that skips turns (:func:`_counts_steps`).

    Why a number may hold: an outer counter beside an inner one (``epoch 1 step 3``, ``epoch{e}_iter{i}``) holds
    through an epoch's turns while the inner one counts; h37-accum32's law asked every moving number to move at every
    range, and undid the fold of such names -- each its own name, no step read (h37-review32).  A label repeated
    (``matmul (1024, 1024)`` three trials in a row) moves no number: no count."""
    for ln in np.unique(h.line[sel]).tolist():
        mine = sel[h.line[sel] == ln]
        mine = mine[np.argsort(h.start[mine], kind="stable")]
        nums = [tuple(int(x) for x in _NUMBER.findall(h.names[int(i)])) for i in h.name[mine].tolist()]
        if len({len(n) for n in nums}) > 1:
            return False
        if len(nums) < 2 or not nums[0]:
            continue
        v = np.array(nums, dtype=np.int64)
        if not (np.diff(v, axis=0) != 0).any(axis=1).all():
            return False  # a range whose numbers repeat the last one's: a label, not a turn counted
        for col in v.T:
            d = np.diff(col)
            if not d.any():
                continue
            up = d[d > 0]
            restart = (d < 0) & (col[1:] == col.min())
            if not (restart | (d >= 0)).all():
                return False
            if restart.any() and (np.unique(up).size != 1 or not _counts_turns(col, int(up[0]))) \
                    and not _counts_steps(h, mine, col, up, procs):
                return False
            if not restart.any() and not _rises_by_a_counter(up):
                return False
    return True


def _rises_by_a_counter(up: np.ndarray) -> bool:
    """Whether a number that never starts over rises as a loop's counter (``up``: its rises, each > 0, in start
    order): by one constant, or by whole multiples of its least rise where that least rise is the most common one
    and recurs -- a counter whose skipped values counted turns these ranges do not mark.

    Why: a global step shared with the evaluation's batches (``train_step 3``, then ``train_step 6`` after three
    batches of evaluation), steps numbered by samples (``step 384``, ``step 768``) or only every k-th turn logged count
    on past the turns they skip; a constant rise alone undid their fold -- each step its own name, one "step" read
    (h37-probe45n's Left 2).  A sweep's sizes (``batch 32``, ``64``, ``128``, ``256``) rise by a new amount each time:
    their least rise does not recur, and they stay apart."""
    if up.size == 0 or np.unique(up).size == 1:
        return True
    least = int(up.min())
    rises, counts = np.unique(up, return_counts=True)
    return bool((up % least == 0).all() and counts[0] >= 2 and counts[0] == counts.max())


def _counts_steps(h: HostEvents, sel: np.ndarray, col: np.ndarray, up: np.ndarray, procs: np.ndarray | None) -> bool:
    """Whether a number that starts over (``col``: its values on ranges ``sel``, in start order; ``up``: its rises)
    with rises that skip values counts training steps: it starts over at its first index, 0 or 1, rises as a counter
    that skips the turns these ranges do not mark (:func:`_rises_by_a_counter`, by whole multiples of one), and each
    range holds a backward and an update (:func:`_holds_training_steps`).

    Why what each range holds, not its numbers: a per-epoch step counter shared with the evaluation's batches
    (``train_step 0, 1, 2, 3, 6, 7 ...``, then ``0, 1 ...`` the next epoch) and a layer index with a gap, started over
    every step (``layer 0, 1, 2, 4, 5, 6`` each forward) rise and start over alike.  A training step's range holds its
    backward and its update; a layer's holds part of a forward.  Read by numbers alone, each epoch's counter named
    steps apart: ``train_step 0`` read as the steps, 2 of 96.3 ms for 16 of 8.03 (h37-probe46e's Left 3)."""
    if not up.size or int(col.min()) not in (0, 1) or int(up.min()) != 1 or not _rises_by_a_counter(up):
        return False  # no rise at all (``evict_layer_3`` then ``evict_layer_0``): a number that only drops counts nothing
    return bool(_holds_training_steps(h, sel, procs).all())


def _holds_training_steps(h: HostEvents, sel: np.ndarray, procs: np.ndarray | None) -> np.ndarray:
    """Bool per range of ``sel``: events begun inside its span on its thread, or on its process's other threads
    (``procs``: each line's process, -1 for none: the thread alone) are named a backward
    (``frameworks.nvtx.is_backward_range``: the user's ``backward``, autograd's ``...Backward0`` on its own thread) and
    an update (``is_update_range``: ``optimizer_step``, ``Optimizer.step#AdamW.step``) -- the work of a whole training
    step.  Begun inside it: the update's range may end after the step's (its sync's wait)."""
    kinds = [np.fromiter((f(n) for n in h.names), bool, len(h.names))[h.name]
             for f in (nvtx.is_backward_range, nvtx.is_update_range)]
    lines = h.line.astype(np.int64, copy=False)
    owner = lines if procs is None else np.where(procs[np.clip(lines, 0, procs.size - 1)] >= 0,
                                                 procs[np.clip(lines, 0, procs.size - 1)] + lines.max() + 1, lines)
    out = np.ones(sel.size, bool)
    for kind in kinds:  # per kind, its events by start, then each range's slice of them
        ev = np.flatnonzero(kind)
        ev = ev[np.argsort(h.start[ev], kind="stable")]
        st, ow = h.start[ev].astype(np.int64), owner[ev]
        for j, i in enumerate(sel.tolist()):  # begun inside it: an update range may close after the step's own
            a, b = np.searchsorted(st, [int(h.start[i]), int(h.end[i])], side="left")
            out[j] &= bool((ow[a:b] == owner[i]).any())
    return out


def _counts_turns(col: np.ndarray, step: int) -> bool:
    """Whether a number that starts over (``col``, in start order; ``step``: its one rise) counts turns: an index of
    the turns inside a larger one (a micro-step's), which starts over at its first index, 0 or 1, and rises by one.

    Why: a number that rises by a constant and starts over at some other value names settings swept again and again
    -- a benchmark's ``matmul (1024, 1024)``, ``(2048, 2048)``, ``(3072, 3072)``, then ``(1024, 1024)`` again:
    sizes, not turns of one loop; folded, each size's range was read as a third of an iteration (h37-review32's
    Left 1)."""
    return step == 1 and int(col.min()) in (0, 1)


def _spelled(h: HostEvents, sel: np.ndarray, base: str) -> str:
    """Ranges ``sel`` of one name but for their numbers (``base``: :func:`_base_name`'s) as the program spelled them,
    for a note: the one name in backticks where they share it, else the first and the last by start
    (```iteration[96,100)` … `iteration[124,128)```, "named alike but for their numbers").

    Why: ``base`` writes each counter as ``#`` (``iteration[#,#)``, ``Step #/#``) -- a name no range carries, which a
    user searching the timeline for it does not find."""
    texts = {h.names[int(i)] for i in h.name[sel].tolist()}
    if len(texts) <= 1:
        return f"`{next(iter(texts), base)}`"
    order = sel[np.argsort(h.start[sel], kind="stable")]
    first, last = h.names[int(h.name[order[0]])], h.names[int(h.name[order[-1]])]
    if first == last:
        return f"`{first}` (and {len(texts) - 1} more named alike but for their numbers)"
    return f"`{first}` … `{last}` (named alike but for their numbers)"


def _range_step_ids(h: HostEvents, sel: np.ndarray) -> np.ndarray:
    """Step numbers of step ranges ``sel`` (by line, then start): the number each name carries where they are distinct
    on every line, else the order on its line (0, 1, ...) counted from the step its first range ran beside on the
    line that began first (:func:`_first_step_beside`)."""
    nums = np.array([int(m.group(1)) if (m := _TRAILING_NUMBER.search(h.names[int(i)])) else -1
                     for i in h.name[sel].tolist()], dtype=np.int64)
    line = h.line[sel].astype(np.int64, copy=False)
    if (nums >= 0).all() and all(np.unique(nums[line == ln]).size == int((line == ln).sum()) for ln in np.unique(line)):
        return nums
    start = h.start[sel].astype(np.int64, copy=False)
    lines = np.unique(line).tolist()
    ref = min(lines, key=lambda ln: int(start[line == ln].min()))
    ref_s = np.sort(start[line == ref])
    order = np.zeros(sel.size, np.int64)
    for ln in lines:
        pos = np.flatnonzero(line == ln)
        pos = pos[np.argsort(start[pos], kind="stable")]
        order[pos] = _first_step_beside(ref_s, start[pos]) + np.arange(pos.size)
    return order


def _first_step_beside(ref_s: np.ndarray, own_s: np.ndarray) -> int:
    """The number, in the order of the line that began first (its range starts ``ref_s``, sorted), of a line's first
    range (its starts ``own_s``, sorted): the reference's range that starts nearest it, but never so far on that this
    line's ranges would run past the reference's last (a line marking as many steps as it, a rank more than half a
    step behind, opened with it).

    Why: numbered by its own order, a rank whose capture opened k steps after the others' (``nsys profile`` per rank,
    ``cudaProfilerStart`` each reaches in its own time) called its first recorded step 0: its steps were grouped with
    the others' first steps, not theirs -- its unrecorded first steps read as closing early and each of its steps as
    another's (h37-review45 *Left* 2).  Unnumbered ranges say the step by time alone: each rank runs the loop's steps
    together, within a part of a step."""
    if own_s.size == 0 or ref_s.size == 0:
        return 0
    k = int(np.argmin(np.abs(ref_s - int(own_s[0]))))
    return max(0, min(k, ref_s.size - own_s.size))
