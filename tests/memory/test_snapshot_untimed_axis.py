"""A history without times is charted by its events' order, never on a time axis (h37-left45, issue #37 class 5).

PyTorch 2.0's snapshot (and its drawn ``trace_plot`` page) keeps each allocation's size, stack and order, no
``time_us``; the reader places one entry a microsecond.  h37-left32 made the steps and the peak untimed, but the
memory chart's series (``GpuMemory.timeline``, the plugin's payload) still carried ``t_ms`` on that clock: 131 events
drawn as a 0.13 ms capture.  Its points are now placed by ``event`` (their place in the history's order, from 1)
under ``axis: "allocation events"``.  Truth by construction (``synthetic.memsnapshot.training_iterations``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _memory(tmp_path: Path, timed: bool) -> tuple[dict, ms.Scenario]:
    sc = ms.training_iterations(iterations=4)
    if not timed:
        for e in sc.doc["device_traces"][0]:
            e.pop("time_us")
    path = ms.write(str(tmp_path / "snap.pickle"), sc.doc)
    rep = analyze_host(HostFile("snap", path, Path(path).stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep.gpus[0].memory, sc


def _events(sc: ms.Scenario) -> list[dict]:
    """The history's allocator events the reader keeps (alloc, free_completed, segment_alloc/free)."""
    return [e for e in sc.doc["device_traces"][0] if e["action"] != "free_requested"]


def test_an_untimed_history_is_charted_by_event_not_by_time(tmp_path: Path):
    mem, sc = _memory(tmp_path, timed=False)
    tl = mem["timeline"]
    assert tl["axis"] == "allocation events" and "t_ms" not in tl, tl.keys()
    n = len(_events(sc))
    assert tl["event"][0] == 1 and tl["event"][-1] == n and tl["event"] == sorted(set(tl["event"]))
    # every point keeps the level after its event: the highest is the history's peak, by construction
    assert max(tl["allocated"]) == max(sc.truth["peaks"])
    assert len(tl["event"]) == len(tl["allocated"]) == len(tl["reserved"])


def test_a_timed_history_keeps_its_time_axis(tmp_path: Path):
    """Control (main too, which wrote no ``axis``): a timed snapshot's series is in ms, its first point at the first
    event's time, its last at the last's."""
    mem, sc = _memory(tmp_path, timed=True)
    tl = mem["timeline"]
    assert tl.get("axis", "ms") == "ms" and "event" not in tl
    assert tl["t_ms"][0] == 0.0 and tl["t_ms"][-1] == pytest.approx((_events(sc)[-1]["time_us"] - ms.T0_US - 7) / 1000)
