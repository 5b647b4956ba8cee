"""The machine-readable row every part of ``issue30.py`` emits beside its markdown (issue #38 deliverable 7).

Why one shape for all parts: ``issue30.py`` assembles one table, format x shape x size, out of rows measured by
different scripts (``xplane_floor.py``, ``kineto_floor.py``, ``nsys_floor.py``, ``hta_compare.py``).  Each part
writes a JSON list of these rows to the path its ``--json`` names; a part that measures only some fields of a row
(HTA: the peer of a PyTorch row) writes those, and ``issue30.py`` merges rows with the same key.

A row::

    {"format": "xplane" | "pytorch" | "nsight", "shape": "dense", "size": "100MB", "bytes": 102_300_000,
     "counted": "whole process" | "after a warm-up report",   # what the CPU and wall of ours and pure cover
     "ours": M, "pure": M | {"status": "same reader"}, "floor": M + {"what": "upb parse"},
     "peer": M + {"name": "stock overview_page"}, "peer_ours": M}   # peer_ours: ours as the peer's script ran it

where ``M`` is one measurement ``{"status": "ok" | why not, "cpu_s", "wall_s", "peak_mb"}`` (numbers absent where
not measured).
"""

from __future__ import annotations

import json
import os


def measured(status: str = "ok", cpu_s: float | None = None, wall_s: float | None = None,
             peak_bytes: float | None = None, **more) -> dict:
    """One measurement in the row's units (seconds, MB); ``more``: a note, a name, what a floor is."""
    out = {"status": status, "cpu_s": cpu_s, "wall_s": wall_s,
           "peak_mb": None if peak_bytes is None else peak_bytes / 1e6}
    out.update({k: v for k, v in more.items() if v is not None})
    return out


def of_measurement(m, **more) -> dict:
    """:func:`measured` of a ``run.Measurement`` (or anything with its ``status``, ``cpu_s``, ``wall_s``,
    ``maxrss`` bytes), or of a dict with those keys."""
    get = m.get if isinstance(m, dict) else lambda k: getattr(m, k, None)
    note = get("note") or None
    return measured(get("status") or "ok", get("cpu_s"), get("wall_s"), get("maxrss"), note=note, **more)


def row(fmt: str, shape: str, size: str, nbytes: int | None, counted: str | None = None, **parts: dict) -> dict:
    """One row: its key (format, shape, size label), the file's bytes, and whichever measurements ``parts`` holds
    (``ours``, ``pure``, ``floor``, ``peer``, ``peer_ours``)."""
    out = {"format": fmt, "shape": shape, "size": size, "bytes": nbytes}
    if counted:
        out["counted"] = counted
    out.update(parts)
    return out


def size_label(nbytes_target: int) -> str:
    """The label a size is spelt with everywhere (``100MB``, ``1GB``): the key rows of one size meet on."""
    if nbytes_target >= 10**9 and nbytes_target % 10**9 == 0:
        return f"{nbytes_target // 10**9}GB"
    return f"{nbytes_target // 10**6}MB" if nbytes_target % 10**6 == 0 else f"{nbytes_target}B"


def write(path: str | None, rows: list[dict]) -> None:
    """Write ``rows`` as JSON to ``path`` (nothing when None): the part's machine-readable output."""
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)


def read(path: str) -> list[dict]:
    """The rows a part wrote; none when it wrote nothing (it failed before its first row)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return []


def report_digest(path: str) -> str | None:
    """A short hash of the JSON report at ``path`` with its version fields dropped, as the goldens compare reports
    (``scripts/golden._strip``; the caller has ``scripts/`` on its path): equal digests, equal reports.  None when the
    file is missing or no JSON."""
    import hashlib

    from golden import _strip

    try:
        with open(path, encoding="utf-8") as f:
            return hashlib.sha256(json.dumps(_strip(json.load(f)), sort_keys=True).encode()).hexdigest()[:12]
    except (OSError, ValueError):
        return None


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as every table's header prints them ("?" where the OS has none)."""
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except (OSError, AttributeError):
        return "?"
