"""A range named by two counters of any words marks the steps where the ranges' order says they are a loop's turns
(issue #37 class 2, h37-names70; h37-names69 *Left* 1).

h37-names69 read ``epoch {e} batch {b}`` as a step's name by its loop words (``epoch``, ``batch``); a name whose words
are not in those lists -- ``cycle 2 pass 5``, ``round 2 turn 7``, ``phase1_chunk3`` -- stayed no step, and a decode
loop of 8 such turns was cut by the host's waits (``repeated_launches``, low; its critical ``small_grid`` a warning).
Which words name loops cannot be listed; the ranges' structure says it: two counters, each pair once, the outer one
constant across each run of the inner, the ranges apart on their thread.  Truth by construction:
``synthetic.torchtrace.write_named_turns`` (8 turns of a generated decode run, ``{e}`` / ``{b}`` the outer and
inner counters, 4 inner turns to an outer one); ``synthetic.nsysexport.write_accumulation_loop`` for NVTX micro-steps.

Base dbf6cf15: the three names read ``repeated_launches`` (8, low), ``small_grid`` warning (the accumulation case is a
guard: 8 on base too, by the top-range path; a step-named reading must not make each micro-step one).
Controls: pairs that recur or an outer counter that falls (``{b}``/``{b}``, ``{b}``/``{e}``) are no loop's turns;
``layer {e} block {b}`` is a model's index.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from synthetic.torchtrace import write_named_turns
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host
from tests.support.run_report import fresh_run_report


def _host(tmp_path, name: str):
    write_named_turns(str(tmp_path), "decode_far_from_peak_bw", name, steps=8)
    return fresh_run_report(tmp_path, "named_turns").hosts[0]


@pytest.mark.parametrize("name", ["cycle {e} pass {b}", "round {e} turn {b}", "phase{e}_chunk{b}"])
def test_two_counters_in_loop_order_mark_the_steps(tmp_path, name):
    host = _host(tmp_path, name)
    st = host.steps
    assert (st["source"], st["found"], st["confidence"]) == ("nvtx_range", 8, "high"), st["note"]
    assert "named by two loops' counters" in st["note"]
    assert {f.rule: f.severity for f in host.findings}.get("small_grid") == "critical"


@pytest.mark.parametrize("name", ["cycle {b} pass {b}", "cycle {b} pass {e}", "layer {e} block {b}"])
def test_counters_out_of_loop_order_mark_no_step_control(tmp_path, name):
    st = _host(tmp_path, name).steps
    assert st["source"] != "nvtx_range", st["note"]


def test_two_counter_micro_steps_are_closed_by_the_update(tmp_path):
    """``cycle {k} pass {i}`` NVTX micro-steps, ``optimizer_step`` after every 4th: 8 optimizer steps of 4."""
    p = str(tmp_path / "accum.sqlite")
    truth = nx.write_accumulation_loop(p, micro_range="cycle {k} pass {i}", update_range="optimizer_step")
    st = first_host(p)["steps"]
    assert (st["found"], st["source"]) == (truth["iterations"], "nvtx_range"), st["note"]
    assert "micro-step of gradient accumulation" in st["note"]


@pytest.mark.parametrize("name, counters", [
    ("cycle 2 pass 5", ("cycle", 2, "pass", 5)), ("phase1_chunk3", ("phase", 1, "chunk", 3)),
    ("Cycle 2, Pass 5", ("cycle", 2, "pass", 5)), ("rank0 round 1 turn 2", ("round", 1, "turn", 2)),
    ("layer 3 block 2", None), ("cycle 2", None), ("matmul (1024, 1024)", None), ("e1_b2_h3", None)])
def test_the_two_counter_form(name, counters):
    assert nvtx.two_counters(name) == counters
