"""A generated memory snapshot (``synthetic.memsnapshot``) analysed as one host: the by-construction snapshot tests
share its write, its read and the steps' start times instead of each spelling them out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def report(tmp_path: Path, doc: dict, name: str = "snap") -> Any:
    """The host report of ``doc`` written as ``tmp_path/<name>.pickle``; a read error fails the test here, where
    it is named, rather than as a missing step later."""
    path = ms.write(str(tmp_path / f"{name}.pickle"), doc)
    rep = analyze_host(HostFile(name, path, Path(path).stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def step_starts_us(rep: Any, doc: dict) -> list[int]:
    """Each step's start on the snapshot's own clock (its first trace entry is the report's time 0), to compare
    with the times the generator cut its iterations at."""
    first_us = min(e["time_us"] for e in doc["device_traces"][0])
    return [round(r.start_ms * 1000) + first_us for r in rep.step_rows.rows()]
