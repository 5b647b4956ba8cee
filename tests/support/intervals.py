"""Interval arithmetic written out in plain Python: the tests' reference for what the analysis computes with numpy."""

from __future__ import annotations


def union(iv: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The disjoint, sorted union of ``[s, e]`` intervals (touching ones joined)."""
    out: list[list[float]] = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def idle_within(busy: list[tuple[float, float]], a: float, b: float) -> list[tuple[float, float]]:
    """The stretches of ``[a, b]`` that no interval of the sorted, disjoint ``busy`` covers (a GPU's idle in a step)."""
    idle, t = [], a
    for s, e in busy:
        if e > a and s < b:
            if s > t:
                idle.append((t, s))
            t = max(t, e)
    if t < b:
        idle.append((t, b))
    return idle
