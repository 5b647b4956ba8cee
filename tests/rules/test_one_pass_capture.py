""""Too few steps (0 found ...)" beside a window with no GPU work, or beside a one-pass program, said nothing the
capture finding does not (issue #37, surveys h37-survey11 and h37-paced): the capture_quality rule now says once what
the window is -- no GPU work, or one pass of the program -- and keeps "too few steps" where steps exist but are few.

Real cases (no licence, not kept; ``tests/fixtures/wild/SURVEY.md``): easyhardhoon/FBF-TF-hoon's CPU-only Keras
sessions and danbider/gp-quadrature's CPU trace ("No GPU activity" and "Too few steps"); Zeffar/2048's one MCTS pass
(kept: ``mcts_rtx3080_one_pass``).  By construction here.
"""

from __future__ import annotations

import json
from pathlib import Path

from synthetic import nsysexport as nx
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

T0 = 1716676590402962


def _findings(path: Path, fmt: str) -> list:
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, fmt))
    assert rep.error is None
    return [f for f in rep.findings if f.rule == "capture_quality"]


def _cpu_only(tmp_path: Path, ops: int = 40) -> Path:
    """A PyTorch trace of ``ops`` ATen ops on the CPU and no GPU event: no GPU work, by construction."""
    events = [{"ph": "X", "cat": "Trace", "ts": T0, "dur": 10_000, "pid": "Spans", "tid": "PyTorch Profiler",
               "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}]
    events += [{"ph": "X", "cat": "cpu_op", "name": "aten::mm" if i % 2 else "aten::add", "pid": 2108, "tid": 1,
                "ts": T0 + 100 + 200 * i, "dur": 150, "args": {"External id": i + 1}} for i in range(ops)]
    p = tmp_path / "host_2108.1716676591627445500.pt.trace.json"
    p.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events, "traceName": str(p)}))
    return p


def test_no_gpu_work_is_said_once(tmp_path: Path) -> None:
    """A window with no GPU work: the one capture finding says so; no step count beside it."""
    titles = [f.title for f in _findings(_cpu_only(tmp_path), "kineto")]
    assert titles == ["No GPU activity in the capture"]


def test_one_pass_is_said_as_one_pass(tmp_path: Path) -> None:
    """A one-shot program (two phases sharing no kernel, once): one finding says the window is one pass, not
    "too few steps (0 found)"."""
    path = tmp_path / "profile_report.sqlite"
    truth = nx.write_phased_pass(str(path))
    found = _findings(path, "nsys")
    titles = [f.title for f in found]
    assert "The capture holds one pass of the program: no step repeats" in titles and truth["passes"] == 1
    assert not any(t.startswith("Too few") for t in titles)
    (one,) = [f for f in found if f.title.startswith("The capture holds one pass")]
    assert one.severity == "warning" and "every per-step number is the pass's total" in one.summary


def test_a_few_steps_still_warn(tmp_path: Path) -> None:
    """Control: a loop caught for three iterations (the generator's forward passes) has steps, too few: the warning
    stays."""
    path = tmp_path / "report.sqlite"
    nx.write(str(path), nx.NsysJob(steps=3))
    titles = [f.title for f in _findings(path, "nsys")]
    assert any(t.startswith("Too few") for t in titles)
    assert not any("one pass" in t for t in titles)


def test_a_pass_that_is_all_cold_start_is_said_once_by_cold_start(tmp_path: Path) -> None:
    """A Numba kernel's first call (h37-survey10's ``numba-jit.sqlite``, h37-left13): 145 ms of compiling, then one
    4.8 us kernel -- the one pass is the cold start.  ``cold_start`` says the window holds one pass and no steady step
    is left; ``capture_quality`` does not say "one pass, no step repeats" again beside it (on main it did)."""
    path = tmp_path / "numba.sqlite"
    truth = nx.write_jit_first_call(str(path))
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "nsys"))
    cold = [f for f in rep.findings if f.rule == "cold_start"]
    assert len(cold) == 1 and cold[0].saving.ms_per_step >= truth["compile_ms"]
    assert "The window holds one pass of the program, and no steady step is left" in cold[0].summary
    assert not any("one pass" in f.title for f in rep.findings if f.rule == "capture_quality")


def test_a_pass_mostly_of_its_own_work_keeps_both_findings(tmp_path: Path) -> None:
    """Control: a one-pass program whose kernels are most of the pass (``write_phased_pass``'s 110 ms run after a
    1.8 ms set-up) keeps the one-pass finding beside any cold start: the two say different things."""
    path = tmp_path / "profile_report.sqlite"
    nx.write_phased_pass(str(path))
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "nsys"))
    assert any(f.title.startswith("The capture holds one pass") for f in rep.findings)
    assert not any("The window holds one pass" in f.summary for f in rep.findings if f.rule == "cold_start")
