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
