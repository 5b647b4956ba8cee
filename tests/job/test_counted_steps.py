"""A native program that counts its iterations in its output, and whose launches run one body per iteration with a
branch some iterations take, reads as its own iterations -- not as the runs of them that make the launch sequence's
exact period (issue #37: "Right on captures unlike ours ... tiny steps").

Real export: ``wild/counted_steps_rtx3090_solver`` (cestwc/balinski-and-gomory-cuda ``report8.sqlite``, MIT,
PROVENANCE.md): ``build/test1 4`` on an RTX 3090.  Read by hand (``sqlite3``): its stdout prints "Step 0" .. "Step 6",
"Solver has converged after 7 steps." and "solve() time: 9.79485 ms"; its 10-kernel body (``update_Q`` ..
``check_bkl``) runs 7 times, each after a ``cudaDeviceSynchronize``, and a 4-launch search (``reset_d_found``,
``find_most_negative``, two ``set_array_value``) follows turns 2 and 5 -- so the launch sequence repeats exactly every
34 launches (two turns, the search, a third), which the period reader took for the step: 3 repeats, 2 steps of 3.70 ms.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys import reader as nsys_reader
from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

RUN = "counted_steps_rtx3090_solver"
#: The same repository's ``report2.sqlite`` (``build/test1 100``; 2.1 MB, too large to keep: local only).
N100 = Path(os.environ.get("TB_GPU_ADVISOR_CESTWC_N100") or "/work/wild58/nsys58/cestwc/report2.sqlite")


def _report() -> dict:
    (s,) = [s for s in wild_sessions() if s.run == RUN]
    return session_report(s).to_dict()


def test_a_solver_that_prints_its_seven_steps_reads_seven():
    """The 7 turns the program prints are the steps found (the first and last dropped by the stock tool's rule, 5
    analysed), each ~1.3 ms against the program's own 9.79 ms / 7 = 1.40 ms.  On main: 3 repeats of the 34-launch
    period, 2 steps of 3.70 ms and "Too few steps in the capture"."""
    rep = _report()
    host = rep["hosts"][0]
    steps = host["steps"]
    assert steps["found"] == 7 and steps["count"] == 5
    assert steps["source"] == "repeated_launches"
    assert "its output counts 7 iterations" in steps["note"]
    step_ms = host["gpus"][0]["step_ms"]
    assert abs(step_ms - 9.79485 / 7) <= 0.25 * 9.79485 / 7
    assert rep["findings"][0]["rule"] == "cold_start"  # the window is 92% its context's creation: that first
    assert not [f for f in rep["findings"] if f["title"].startswith("Too few steps")]


def test_the_reader_counts_the_programs_own_step_lines():
    """The export's standard output (``ProcessStreams``) counts the 7 steps; ``unclosed_rtx3090_solver`` (its 20
    steps, the session stopped before the program ended) counts 20."""
    wild = FIXTURES / "wild"
    solver = nsys_reader.read_trace(str(wild / RUN / "report8.sqlite")).producer
    assert solver["program_counted_steps"] == "7"
    unclosed = nsys_reader.read_trace(str(wild / "unclosed_rtx3090_solver" / "report6.sqlite")).producer
    assert unclosed["program_counted_steps"] == "20"


def test_only_an_unbroken_count_of_one_counter_is_a_count():
    """By construction: consecutive numbers after the same words count; a count that skips, repeats, mixes two
    counters or holds one line does not, nor do two processes' counts."""
    steps = "Matrix\nStep 0 \nd_changed, 0\nStep 1 \nd_changed, 0\nStep 2\nSolver has converged after 3 steps.\n"
    assert nsys_reader._counted_steps([steps]) == 3
    assert nsys_reader._counted_steps(["iteration 5/100\niteration 6/100\n"]) == 2
    assert nsys_reader._counted_steps(["Step 0\nStep 2\nStep 3\n"]) == 0  # skips
    assert nsys_reader._counted_steps(["Step 0\nStep 0\n"]) == 0  # repeats
    assert nsys_reader._counted_steps(["step 0\niteration 1\n"]) == 0  # two counters
    assert nsys_reader._counted_steps(["Step 0\n"]) == 0  # one line
    assert nsys_reader._counted_steps([steps, steps]) == 0  # two processes' counts: whose?
    assert nsys_reader._counted_steps(["Epoch 0\nEpoch 1\n"]) == 0  # no step's name


@pytest.mark.skipif(not N100.exists(), reason="cestwc report2.sqlite is local only (too large to keep)")
def test_a_solver_whose_launches_show_no_period_reads_its_counted_steps():
    """``report2`` (n = 100): the stdout counts "Step 0" .. "Step 252" and "solve() time: 73.6897 ms" (291 us a step);
    its 8,930 launches show no exact period (the inner solve runs 8.3 times a step on average, not alike), but ``update_Q`` and
    ``check_Rk`` launch exactly 253 times, one of each per step, a ``cudaDeviceSynchronize`` between turns.  On main:
    one pass of 74.0 ms and "The capture holds one pass of the program: no step repeats"."""
    rep = first_report(str(N100))
    steps = rep["hosts"][0]["steps"]
    assert steps["found"] == 253 and "its output counts 253 iterations" in steps["note"]
    step_ms = rep["hosts"][0]["gpus"][0]["step_ms"]
    assert abs(step_ms - 73.6897 / 253) <= 0.1 * 73.6897 / 253
    assert not [f for f in rep["findings"] if "no step repeats" in f["title"]]


def _steps(path: str) -> tuple[dict, float]:
    rep = first_report(path)
    return rep["hosts"][0]["steps"], rep["hosts"][0]["gpus"][0]["step_ms"]


def test_a_generated_solver_that_prints_its_steps_reads_them(tmp_path):
    """By construction (``synthetic.nsysexport.write_counted_solver``, the real solver's shape): 7 turns of a 10-kernel
    body, a 4-kernel search after turns 3 and 6, "Step 0" .. "Step 6" printed: 7 steps found, each as long as a turn.
    On main: the 34-launch period's 3 repeats."""
    path = str(tmp_path / "solver.sqlite")
    truth = nx.write_counted_solver(path)
    steps, step_ms = _steps(path)
    assert steps["found"] == truth["turns"] == 7
    assert abs(step_ms - truth["turn_ms"]) <= 0.1 * truth["turn_ms"]


def test_control_the_same_solver_without_its_count_keeps_the_period(tmp_path):
    """Control (passes on main too): the same launches with nothing printed read as the launch sequence's period, as
    before -- the launches alone cannot tell the turns from runs of them."""
    path = str(tmp_path / "solver.sqlite")
    nx.write_counted_solver(path, printed=False)
    steps, _ = _steps(path)
    assert steps["found"] == 3 and "34-kernel launch sequence" in steps["note"]


def test_control_a_models_synced_layers_unprinted_read_as_layers(tmp_path):
    """Control (passes on main too): a call of 3 layers of the same 4 kernels, a sync after each, with nothing
    printed: the launches alone cannot tell a layer from a call, so each layer is a repeat (21).  Printed once per
    call, the count groups them (``tests/job/test_program_reads_flag60.py``, h37-nsys60)."""
    path = str(tmp_path / "layers.sqlite")
    nx.write_counted_solver(path, printed=False, body=12, layer=4, syncs=3, branch_every=99)
    steps, _ = _steps(path)
    assert steps["found"] == 21 and "its output counts" not in steps["note"]
