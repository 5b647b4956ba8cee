"""Iterations of an unmarked loop counted by the GPU work that runs once in each of them (source
``recurring_events``): the reading the GPU's bursts leave where they are no iterations.

Why: a loop's body runs once per iteration, and some of its work -- the batch's upload, the first layer's kernel, the
input's transform -- runs exactly once in each, in the same order, whatever else varies between iterations (random
shifts, data-dependent branches change the launches in between, which defeats an exact period of the launch sequence:
``job.period.repeated_launches``).  Where two kernels or copies each run the same number of times and every run of
one lies between two consecutive runs of the other, each such run opens one turn of the same loop: a Swin block's test
loop (RTX A4000, CUDA activity only, no marks) runs its upload, device copy, ``grid_sampler`` and three index
kernels 16 times each, one of each in every one of its 16 iterations, while the rolls between them run 25-65 events.
The first run of the earliest such event opens each iteration; the reading is a guess (low confidence): nothing but
the order of the GPU's work marks it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.model.trace import DeviceEvents

#: The fewest turns a recurring set must count to mark a loop: the steps' reading drops a first turn (warm-up) and a
#: last (possibly partial), and two left are the fewest whose times can be compared; two events turning in step
#: three times can be chance.
_MIN_TURNS = 4


@dataclass(frozen=True)
class Recurring:
    """The turns of a loop read from the GPU work that runs once in each: ``start`` each turn's first event,
    ``end`` the next turn's start (the last turn's its last event's end), ``names`` the events that run once in every
    turn (the first opens it)."""

    start: np.ndarray
    end: np.ndarray
    names: tuple[str, ...]


def _runs(active: list[DeviceEvents]) -> dict[tuple[int, int], np.ndarray]:
    """(device, name id) -> the sorted starts of that kernel's or copy's runs, over ``active``'s devices."""
    out: dict[tuple[int, int], np.ndarray] = {}
    for k, d in enumerate(active):
        if not len(d):
            continue
        order = np.argsort(d.name, kind="stable")
        names, first = np.unique(d.name[order], return_index=True)
        for n, part in zip(names.tolist(), np.split(order, first[1:])):
            out[(k, n)] = np.sort(d.start[part])
    return out


def _in_step(anchor: np.ndarray, other: np.ndarray) -> bool:
    """Whether each run of ``other`` lies at or after the same-numbered run of ``anchor`` and before the next one:
    one run of each in every turn the anchor opens (both the same count)."""
    return bool((other >= anchor).all() and (other[:-1] < anchor[1:]).all())


def _group(runs: dict[tuple[int, int], np.ndarray], n: int) -> tuple[tuple[int, int], list[tuple[int, int]]] | None:
    """(the anchor, the other events that run once in each of its turns) among the events that run ``n`` times, the
    anchor the earliest event that has one such other at least; None where none has."""
    keys = sorted((k for k, v in runs.items() if v.size == n), key=lambda k: float(runs[k][0]))
    for i, a in enumerate(keys):
        members = [b for b in keys[i + 1:] if _in_step(runs[a], runs[b])]
        if members:
            return a, members
    return None


def _nests(turns: np.ndarray, other: np.ndarray, inner: bool) -> bool:
    """Whether another recurring event's runs (``other``) nest with the turns opened at ``turns``: an ``inner`` loop's
    (more runs than turns) the same number in every turn that runs it (a loop inside a branch some turns skip runs
    none in those), an outer or optional one's at most one in each."""
    k = np.searchsorted(turns, other, side="right") - 1
    per = np.bincount(k[k >= 0], minlength=turns.size)
    ran = per[per > 0]
    return bool((ran == ran[0]).all()) if inner else bool((per <= 1).all())


def _inside_outer(turns: np.ndarray, other: np.ndarray) -> bool:
    """Whether a recurring event with fewer runs (``other``) runs once every k-th turn (k >= 2) and in no other: the
    turns are an inner loop's (a layer's), and that event marks the loop around them -- one the turns cannot time, as
    no two of its events turn in step."""
    n, m = turns.size, other.size
    if m < 2 or n % m or n // m < 2:
        return False
    k = np.searchsorted(turns, other, side="right") - 1
    return bool((np.diff(k) == n // m).all())


def recurring_turns(active: list[DeviceEvents]) -> Recurring | None:
    """The turns of the loop whose body runs once per turn (module doc); None where no two events turn in step.

    Of the counts (at least :data:`_MIN_TURNS`) at which two events or more run once in each turn, the fewest turns
    with which every other such count nests -- a loop inside (a layer's kernels) runs the same number of times in
    each turn, work outside or optional (an epoch's, a branch some iterations take) at most once: the outermost
    loop, not a layer of it, and not the turns of a branch taken in some iterations only (a block that runs in 12
    of 16 iterations turns in step with itself, and the batch's upload runs twice in some of its turns).  Turns inside
    a loop that one event alone marks (it runs every k-th turn) are no iterations: None."""
    runs = _runs(active)
    groups = {n: g for n in sorted({int(v.size) for v in runs.values() if v.size >= _MIN_TURNS})
              if (g := _group(runs, n)) is not None}
    for n, (anchor, members) in groups.items():
        turns = runs[anchor]
        if not all(_nests(turns, runs[g[0]], m > n) for m, g in groups.items() if m != n):
            continue
        if any(_inside_outer(turns, v) for v in runs.values() if _MIN_TURNS <= v.size < n):
            return None  # an inner loop's turns: the iterations around them are marked by one event alone
        start = turns.astype(np.int64)
        last = max(int(d.end.max()) for d in active if len(d))
        end = np.append(start[1:], last).astype(np.int64)
        names = tuple(active[k].names[int(i)] for k, i in [anchor, *members])
        return Recurring(start=start, end=end, names=names)
    return None


def recurring_note(found: Recurring, why_not_bursts: str) -> str:
    """The steps' note of a loop read from its recurring events, in words any capture's user reads: why the bursts
    were no steps, then what marks the turns."""
    shown = ", ".join(f"`{n[:48]}`" for n in found.names[:3])
    more = f" and {plural(len(found.names) - 3, 'other')}" if len(found.names) > 3 else ""
    return (f"{why_not_bursts.split('; the whole capture')[0]}; instead, {plural(len(found.names), 'kernel or copy', 'kernels or copies')} "
            f"({shown}{more}) run once in each of {found.start.size} turns, in the same order: a loop's body runs "
            f"once per iteration, so each turn, opened by the first of them, is read as an iteration (a guess: "
            f"nothing else marks it)")
