"""Loops a window marks on the CPU alone, read as the user wrote them (issue #37 classes 1-2, h37-cpuloop31).

Wrong assumptions on main (205314c3), both measured on quasiben/nvtx-examples @fd66d32 (no licence: measured, not
kept; tests/fixtures/wild/SURVEY.md, session 31, h37-cpuloop31):

1. *A last step that holds no host event but its own mark is the stub a last ``prof.step()`` opens*.
   ``quickstart.sqlite`` (``-t nvtx,osrt``): a range ``f`` around 5 ``loop`` ranges, each a ``time.sleep(i)`` held
   in one ``select`` of 0-4 s -- the last, 4.004 s, was dropped as empty ("4 marked steps of 1.50 s" for 5 of
   2.00 s).  The OS runtime's calls are the program's work (``steps.ends._made_an_os_call``), and where no earlier
   turn holds more than its mark either, a bare last mark is one more turn (``steps.ends._any_held_host_work``).
2. *A range repeated on one thread is a loop's turn*.  ``cpython-nvtx-patch.sqlite``: a CPython patched to push a
   range in ``PyObject_GetAttr`` -- 5,069 ranges of ~0.2 us, in its start-up and exit, the 554 s loop between
   marking none -- read as "5068 marked steps of 109.4 ms".  With no GPU work for them to hold, the marks must hold
   the time they would tile (``steps.nvtx_ranges._hold_the_time``).
"""

from __future__ import annotations

import numpy as np
import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.common.fmt import ms
from tests.support.cli_report import first_host


def _host(tmp_path, write, **kw) -> tuple[dict, dict]:  # noqa: ANN001 - a writer of synthetic.nsysexport
    run = tmp_path / "run"
    run.mkdir()
    truth = write(str(run / "loop.sqlite"), **kw)
    return first_host(run), truth


@pytest.mark.parametrize("osrt", [True, False], ids=["osrt", "nvtx_only"])
def test_every_turn_of_a_cpu_loop_of_uneven_sleeps_is_timed(tmp_path, osrt: bool) -> None:
    """5 ``loop`` turns of 0-4 s on the CPU: all 5 are steps, the last (the longest: 4 s) as well -- with the OS trace
    its ``select`` is the program's; without, no earlier turn holds more than its mark, so the last is no stub."""
    host, truth = _host(tmp_path, nx.write_sleep_loop, osrt=osrt)
    loop = host["job"]["host_loop"]
    assert loop["steps"] == truth["steps"] == 5, host["steps"]["note"]
    assert abs(loop["step_ms"] - truth["step_ms"]) < 1e-3, (loop, truth)
    assert not host["steps"]["dropped"]


def test_the_program_own_uneven_turns_are_not_warm_up(tmp_path) -> None:
    """The same program's turns in another order (4 s first): the first turn, longest, is kept -- uneven turns the
    program chose are no warm-up to leave out (at 5 steps, the stock edge rule does not apply)."""
    host, truth = _host(tmp_path, nx.write_sleep_loop, sleeps_ms=(4000.0, 0.0, 3000.0, 1000.0, 2000.0))
    assert host["job"]["host_loop"]["steps"] == 5 and not host["steps"]["dropped"]
    assert abs(host["job"]["host_loop"]["step_ms"] - truth["step_ms"]) < 1e-3


@pytest.mark.parametrize("spread", ["ends", "through"])
def test_a_library_marked_call_is_no_loop(tmp_path, spread: str) -> None:
    """Thousands of sub-microsecond ranges of one function, in the start-up and exit or all through a long loop the
    program marks nowhere: no marked loop, no step read from them."""
    host, truth = _host(tmp_path, nx.write_marked_calls, spread=spread)
    assert truth["marked_ms"] < 1e-3 * truth["loop_ms"]  # the writer's premise: the ranges hold no time
    assert host["steps"]["source"] != "nvtx_top_range", host["steps"]["note"]
    assert "host_loop" not in host["job"], host["job"].get("host_loop")
    assert "marked steps" not in host["job"]["summary"]


def test_marks_that_hold_their_loop_still_time_it(tmp_path) -> None:
    """Controls: the tracing-off loop (no GPU record, each ``work`` range around its ``forward`` / ``backward``) still
    reads its iterations from the ranges; so does a loop marked by two phases, ``load batch`` (3 of its 7 ms: under
    half alone) and ``preprocess`` after it -- the program's marks together hold the loop's time."""
    host, truth = _host(tmp_path, nx.write_tracing_off_loop, iteration="work")
    assert host["steps"]["source"] == "nvtx_top_range" and host["steps"]["found"] == 10, host["steps"]["note"]
    assert "`work`" in host["steps"]["note"]
    phases = tmp_path / "phases"
    phases.mkdir()
    nx.write_window(str(phases / "w.sqlite"), "nvtx_only", ranges=6)
    host = first_host(phases)
    assert host["steps"]["source"] == "nvtx_top_range" and host["steps"]["found"] == 6, host["steps"]["note"]
    assert host["job"]["host_loop"]["steps"] == 4  # the stock rule's edges left out of 6


def test_uneven_turns_are_said_with_their_median_and_range(tmp_path) -> None:
    """h37-cpuloop31's Left 3 (h37-accum32): turns of 0-4 s read "5 marked steps of 2.00 s on average" -- a mean no
    turn ran.  Where the longest turn is over ``job.uneven_turns_ratio`` times the shortest, ``host_loop`` holds the
    median and the range, and the job's words say them."""
    host, truth = _host(tmp_path, nx.write_sleep_loop)
    loop, turns = host["job"]["host_loop"], truth["turns_ms"]
    assert loop["median_ms"] == pytest.approx(float(np.median(turns)), abs=1e-3), loop  # main: no median_ms
    assert (loop["min_ms"], loop["max_ms"]) == pytest.approx((min(turns), max(turns)), abs=1e-3)
    said = f"(median {ms(float(np.median(turns)))}, {ms(min(turns))} to {ms(max(turns))})"  # 2.00 s, 60 us to 4.00 s
    assert said in host["job"]["summary"], host["job"]["summary"]


def test_even_turns_are_said_by_their_mean_alone_control(tmp_path) -> None:
    host, _ = _host(tmp_path, nx.write_sleep_loop, sleeps_ms=(1000.0, 1100.0, 1000.0, 1200.0, 1000.0))
    assert "median_ms" not in host["job"]["host_loop"] and "median" not in host["job"]["summary"]


@pytest.mark.parametrize("sleeps", [(1000.0,) * 5, (0.0, 1000.0, 2000.0, 3000.0, 4000.0)], ids=["even", "uneven"])
def test_a_bare_last_turn_after_turns_with_children_is_a_turn(tmp_path, sleeps) -> None:
    """h37-cpuloop31's Left 2 (h37-accum32): traced ``-t nvtx`` alone, every turn but the last marks its sleep with a
    child range; the last, bare, lasts as long as a turn -- no ``prof.step()`` stub, which is an instant before the
    profiler's stop.  Main dropped it: "no host op ran in it"."""
    host, truth = _host(tmp_path, nx.write_sleep_loop, sleeps_ms=sleeps, osrt=False, child="work")
    assert host["job"]["host_loop"]["steps"] == truth["steps"], host["steps"]["note"]  # main: 4
    assert not host["steps"]["dropped"]


def test_a_bare_instant_at_the_end_is_still_the_stub_control(tmp_path) -> None:
    host, truth = _host(tmp_path, nx.write_sleep_loop, sleeps_ms=(1000.0,) * 4 + (0.0,), osrt=False, child="work")
    assert host["job"]["host_loop"]["steps"] == truth["steps"] - 1
    assert "no host op ran in it" in host["steps"]["note"]
