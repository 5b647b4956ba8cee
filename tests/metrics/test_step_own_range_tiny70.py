"""A step read from the program's own range never names that range as a place in itself, however short the step
(issue #37 class 4, item 3: steps shorter than a launch's latency; h37-tiny70).

A step read from a range (an NVTX ``train_step {k}`` range) has a window from its range's start to the next step's,
so the range ends before its window by the loop's own time between ranges (2 us here).  ``spans_any_step`` allows 2%
of the window: on 90 us steps that is 1.8 us, and the step's own ranges were read as places inside the steps -- the
launch-bound finding said "the wait lies in the program's own ranges `train_step 0` 12 us, `train_step 1` 12 us a
step".  On longer steps the same miss hides under the 10%-of-the-finding line (each step's range is its own name).

Truth by construction (``synthetic.nsysexport``): three 90 us steps of four 3 us fp32 GEMMs, each in its
``train_step {k}`` range; the second also in a ``forward`` range (opening with the step's range) and a ``backward``
range nested in it, which stay places in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tests.support.run_report import fresh_report


def _tiny(root: Path, extra: tuple[str, ...] = (), untraced_ms: float = 0.02) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    job = nx.NsysJob(steps=3, ops=4, kernel_us=3.0, kernel=nx.GEMM_FP32, launch_us=8.0, h2d_bytes=4 << 10,
                     h2d_us=3.0, sync=True, untraced_ms=untraced_ms, extra_ranges=extra)
    nx.write(str(root / "report.sqlite"), job)
    return root


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("step_own_range")
    return {"plain": fresh_report(_tiny(root / "plain")),
            "forward": fresh_report(_tiny(root / "fwd", ("forward", "backward"))),
            "long": fresh_report(_tiny(root / "long", ("forward", "backward"), untraced_ms=1.0))}


def test_the_steps_own_ranges_are_no_place_in_the_steps(reports: dict) -> None:
    """Fails on dbf6cf15: launch_bound's summary names `train_step 0` and `train_step 1` (the steps themselves)."""
    rep = reports["plain"]
    (host,) = rep.hosts
    assert host.steps["source"] == "nvtx_range" and host.steps["count"] == 3
    assert host.step_rows[0].step_ms < 0.2  # tiny steps: the 2% tolerance is under the ranges' 2 us apart
    # every finding but the capture note (which says where the steps were read from)
    said = [f for f in rep.findings if f.rule != "capture_quality"]
    texts = [f.summary for f in said] + [str(t.rows) for f in said for t in f.evidence]
    assert not [t for t in texts if "train_step" in t]


def test_a_range_nested_in_a_tiny_step_stays_a_place_in_it(reports: dict) -> None:
    """The program's `forward` range opens each step at the step range's very microsecond, nested in it: it stays
    where the launch wait lies, with `backward`, and the step's own range is not named.  Fails on dbf6cf15: "`train_step
    0` 13 us, `train_step 1` 13 us, `forward` 10 us" (the steps' own ranges took their share of the wait)."""
    (launch,) = [f for f in reports["forward"].findings if f.rule == "launch_bound"]
    assert "`forward`" in launch.summary and "`backward`" in launch.summary
    assert "train_step" not in launch.summary


def test_control_a_nested_range_opening_a_longer_step_keeps_all_its_time(reports: dict) -> None:
    """Control (passes on dbf6cf15): on ~1 ms steps the step's range spans its window within 2% and is left out
    there, so `forward` -- opening at the step range's very microsecond -- is no step's own range and keeps its 30 us
    of the launch wait."""
    (launch,) = [f for f in reports["long"].findings if f.rule == "launch_bound"]
    assert reports["long"].hosts[0].step_rows[0].step_ms > 1.0
    assert "`forward` 30 us" in launch.summary and "train_step" not in launch.summary
