"""``GpuSummary.calls``: a GPU's collective calls as columns, bounded (h37-left54).

The rows are what the session matches a call across host files by (``metrics.job.JobView.matched_transfer_ms``):
(process group, step, order in the group, message bytes) and the host's transfer in the call.  One JSON row per call
made a job of many layers x FSDP carry 16,000 rows (386 kB, 80% of its host reports); as columns they take 0.6-0.7 of
the bytes (the per-call ms dominate), and past :data:`CALL_ROWS_CAP` calls of a type a GPU carries only their count: the session then reads the
least host's total and says the cap cut the calls (``JobView.transfer_matching``).

Shape, per collective type: ``{"steps": kept steps, "count": calls, "groups": [process group or ""],
"runs": [[group index, step, calls], ...], "bytes": [bytes or -1, ...], "ms": [transfer ms, ...], "arrive": [ms, ...],
"ready": [ms, ...], "at": [ms, ...]}`` -- ``runs``
cut the calls, in their (group, step, start) order, into runs of one group and step; ``bytes`` and ``ms`` are one
entry per call in that order.  Over the cap: ``{"steps", "count", "cut": CALL_ROWS_CAP}``, no columns.
"""

from __future__ import annotations

from typing import Any, Iterable

#: The most calls of one collective type a GPU's report carries call by call: 2,048 (256 calls a step over 8 steps:
#: e.g. 128 FSDP layers' all-gathers; about 40 kB).  The kept multi-GPU captures carry at most 66.
CALL_ROWS_CAP = 2048
#: Decimals of ms the call times keep (0.1 us): a replay of the calls reads step gains of tens of microseconds and up,
#: and three columns of six decimals would triple the calls' bytes
TIME_DECIMALS = 4


def call_columns(rows: Iterable[tuple[str, int, int, float | None]], steps: int,
                 cap: int = CALL_ROWS_CAP, times: list[tuple[float, float, float]] | None = None) -> dict[str, Any]:
    """A GPU's calls of a type -- (group, step, bytes, transfer ms) in (group, step, start) order -- as the bounded
    columns above; ``ms`` as given (already rounded for JSON).  ``times``: each call's (arrive, ready, at) ms in the
    same order (``CollectiveStat.call_times``), kept as the columns ``arrive``, ``ready`` and ``at`` (from 0.1.0+a89)
    where one is given per call."""
    rows = list(rows)
    if len(rows) > cap:
        return {"steps": steps, "count": len(rows), "cut": cap}
    groups: list[str] = []
    index: dict[str, int] = {}
    runs: list[list[int]] = []
    for grp, step, _, _ in rows:
        g = index.setdefault(str(grp), len(groups))
        if g == len(groups):
            groups.append(str(grp))
        if runs and runs[-1][0] == g and runs[-1][1] == int(step):
            runs[-1][2] += 1
        else:
            runs.append([g, int(step), 1])
    out = {"steps": steps, "count": len(rows), "groups": groups, "runs": runs,
           "bytes": [int(r[2]) for r in rows], "ms": [r[3] for r in rows]}
    if times is not None and len(times) == len(rows):
        for j, key in enumerate(("arrive", "ready", "at")):
            out[key] = [round(float(t[j]), TIME_DECIMALS) for t in times]
    return out


def call_times(c: dict | None) -> list[tuple[float, float, float]] | None:
    """Each call's (arrive, ready, at) ms back from :func:`call_columns`' columns, in the rows' order; None where the
    rows are not carried (:func:`call_rows`) or a report carries no times (before 0.1.0+a89) or damaged ones."""
    rows = call_rows(c)
    if rows is None:
        return None
    cols = [c.get(k) for k in ("arrive", "ready", "at")]
    if any(not isinstance(x, list) or len(x) != len(rows) for x in cols):
        return None
    try:
        return [(float(a), float(r), float(t)) for a, r, t in zip(*cols)]
    except (TypeError, ValueError):
        return None


def call_rows(c: dict | None) -> list[tuple[str, int, int, float]] | None:
    """The rows back from :func:`call_columns`' columns; None where none are carried, the cap cut them, or the
    columns disagree with their count (a damaged or foreign cache entry)."""
    if not c or "cut" in c or not isinstance(c.get("runs"), list):
        return None
    groups, nbytes, ms = c.get("groups") or [], c.get("bytes") or [], c.get("ms") or []
    out = []
    try:
        for g, step, n in c["runs"]:
            out.extend((str(groups[g]), int(step)) for _ in range(int(n)))
    except (TypeError, ValueError, IndexError):
        return None
    if not out or len(out) != len(nbytes) or len(out) != len(ms) or len(out) != c.get("count"):
        return None
    return [(grp, st, int(b), float(x or 0.0)) for (grp, st), b, x in zip(out, nbytes, ms)]


def calls_cut(c: dict | None) -> bool:
    """Whether the cap cut a GPU's calls of a type (:data:`CALL_ROWS_CAP`)."""
    return bool(c) and "cut" in c
