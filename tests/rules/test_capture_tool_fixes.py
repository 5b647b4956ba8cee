"""How to record the steady state is said in the capture tool's own options (issue #37 deliverable 1: "how to capture
the right window for that tool").  An Nsight window moves with ``--capture-range`` or ``--delay``/``--duration``,
whatever framework the program runs: main told two real Nsight captures of nvFuser's first calls (the kept
``wild/nvfuser_h200_first_call``, and NVIDIA/Fuser's ``report1.sqlite`` @64ee035 of a C++ gtest, read in survey
h37-survey3) to use torch.profiler's schedule, which does not move an Nsight window."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"


def _findings(root: Path, run: str) -> list[dict]:
    (s,) = [s for s in discover(str(root)) if s.run == run]
    return session_report(s).to_dict()["findings"]


def _snippets(f: dict) -> str:
    return "\n".join((a.get("snippet") or "") for a in f["actions"])


@pytest.mark.skipif(not (WILD / "nvfuser_h200_first_call").is_dir(), reason="wild fixture missing")
def test_a_real_nsight_cold_start_is_told_to_move_the_nsight_window():
    (cold,) = [f for f in _findings(WILD, "nvfuser_h200_first_call") if f["rule"] == "cold_start"]
    code = _snippets(cold)
    assert "nsys profile" in code and "--capture-range=cudaProfilerApi" in code and "--delay" in code
    assert "torch.profiler" not in code and "schedule(" not in code


def test_a_short_nsight_window_is_told_in_nsight_options(tmp_path: Path):
    """Three steps of a training loop under nsys (truth by construction): too few steps, said with Nsight's options."""
    run = tmp_path / "logs" / "run1"
    run.mkdir(parents=True)
    write(str(run / "report.sqlite"), NsysJob(steps=3))
    few = [f for f in _findings(tmp_path / "logs", "run1") if f["rule"] == "capture_quality" and "Too few" in f["title"]]
    assert few and all("nsys profile" in _snippets(f) and "prof.step()" not in _snippets(f) for f in few)
