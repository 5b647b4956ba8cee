"""A session that stopped before the program's CUDA trace was finalized (h37-nsys58): the window keeps the CUDA records
written before, not all the program made, so a window without kernels is the profiler's loss -- never "start-up only:
no kernel was launched", with the fix to record where the steps run, for a program that ran its steps in the window.

Real export: ``wild/unclosed_rtx3090_solver`` (cestwc/balinski-and-gomory-cuda ``report6.sqlite``, PROVENANCE.md):
its stdout prints 20 steps, the export keeps 2 CUDA calls of its first 0.3 s, Nsight says not all CUDA events might
have been collected and writes no CUPTI count.  Truth by construction: ``synthetic.nsysexport.write_unclosed_trace``,
with its control (the CUPTI count written after the stop: the trace closed, a window that ended during start-up).
"""

from __future__ import annotations

import os

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys import reader
from tests.support.paths import REPO
from tests.support.run_report import one_file_host

REAL = os.path.join(REPO, "tests", "fixtures", "wild", "unclosed_rtx3090_solver", "report6.sqlite")
STARTUP = os.path.join(REPO, "tests", "fixtures", "wild", "llm_startup_window", "profile.sqlite")


def _host(path: str) -> dict:
    return one_file_host(path, "nsys")


def _top(host: dict) -> dict:
    bad = [f for f in host["findings"] if f["severity"] in ("critical", "warning")]
    assert bad, host["findings"]
    return bad[0]


def test_the_real_solver_whose_trace_never_closed_is_no_start_up_window():
    """Fails on base: "start-up only: 2 CUDA calls ...; no kernel was launched in the window", title "The capture
    window ended during start-up", the fix to record where the steps run."""
    host = _host(REAL)
    said = host["job"]["kind_evidence"]
    assert "start-up only" not in said and "no kernel was launched" not in said, said
    assert "not all CUDA events might have been collected (it collected 2)" in said, said
    assert "its standard output ends \"Step 19\"" in said and "5,470.8 ms after its last CUDA record" in said, said
    assert host["job"]["gpu_unrecorded"], host["job"]
    top = _top(host)
    assert top["rule"] == "capture_quality" and "stopped before it wrote the program's CUDA records" in top["title"]
    fix = " ".join(a.get("snippet") or "" for a in top.get("actions") or [])
    assert "--cuda-flush-interval=100" in fix, top.get("actions")


def test_the_reader_says_the_trace_was_not_closed_only_where_no_cupti_count_was_written():
    """The fact is the profiler's own: its "not all collected" beside no CUPTI count.  A ``--duration`` window of a
    program still loading its model (``wild/llm_startup_window``) says "not all collected" too, but its CUPTI count
    follows the stop: its trace closed (the control, unchanged on base)."""
    assert "cuda_unclosed" in reader.read_trace(REAL).producer
    assert "cuda_unclosed" not in reader.read_trace(STARTUP).producer
    real = _host(STARTUP)
    assert real["job"]["kind_evidence"].startswith("start-up only: 3 CUDA calls")


@pytest.mark.parametrize("closed", [False, True])
def test_generator_truth(tmp_path, closed):
    """Truth by construction: the unclosed trace reads ``unclosed`` (fails on base: ``startup``); the same export with
    its CUPTI count written after the stop reads ``startup`` (the control)."""
    path = str(tmp_path / "r.sqlite")
    truth = nx.write_unclosed_trace(path, closed=closed)
    host = _host(path)
    said = host["job"]["kind_evidence"]
    if truth["window"] == "unclosed":
        assert "start-up only" not in said and "Step 19" in said, said
        assert f"{truth['ran_on_ms']:,.1f} ms after its last CUDA record" in said, said
        assert "stopped before it wrote the program's CUDA records" in _top(host)["title"]
    else:
        assert said.startswith("start-up only"), said
        assert "during start-up" in _top(host)["title"]
