"""Steps of a native time-stepping loop whose iterations alternate their launch order (``job/period.py``).

CloverLeaf's CUDA port (hpcgroup/pipit's ``perlmutter-cloverleaf-cuda.sqlite``, read in the h37-survey14 survey) sweeps
x then y on one time step and y then x on the next, so its launch sequence repeats only every two time steps; at each
step's end the host waits for the reduction and computes the next time step with the GPU idle.  Main took the
sequence's period for the step: 4 "steps" of 78.3 ms on the real file, whose stdout shows ten time steps of 32.5 ms.
By construction (``synthetic.nsysexport.write_alternating_sweeps``): the steps are the generated iterations; the
control, the same loop sweeping in one order, has its period already equal to one iteration."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from synthetic.nsysexport import write_alternating_sweeps
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _report(path) -> dict:
    host = SimpleNamespace(host="clover", path=str(path), format="nsys", size=0)
    return analyze_session("clover", "s", [host]).to_dict()["hosts"][0]


@pytest.mark.parametrize("alternate", [True, False])
def test_each_iteration_the_host_ends_alike_is_a_step(tmp_path, alternate):
    p = tmp_path / "clover.sqlite"
    truth = write_alternating_sweeps(str(p), iterations=10, alternate=alternate)
    host = _report(p)
    steps = host["steps"]
    assert host["job"]["step_source"] == "repeated_launches", steps
    assert steps["found"] == truth["iterations"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["iteration_ms"], rel=0.02)
    assert ("alternating" in steps["note"]) is alternate


def test_pauses_that_end_only_some_iterations_do_not_split_the_period(tmp_path):
    """The host pausing after every second iteration only: the same alternating sweeps, but nothing ends the odd
    iterations, so the period of two iterations stays the step (a step of two unlike halves is not split in two)."""
    p = tmp_path / "clover.sqlite"
    truth = write_alternating_sweeps(str(p), iterations=10, alternate=True, control_every=2)
    host = _report(p)
    assert host["steps"]["found"] == truth["iterations"] // 2, host["steps"]
    assert "alternating" not in host["steps"]["note"]


def _cloverleaf() -> tuple:
    """(the kept CloverLeaf export, its stdout as Nsight kept it (``ProcessStreams``), the time steps its ``Wall
    clock`` lines give, ms, sorted): the truth both real-file tests read."""
    import sqlite3

    from tests.support.paths import FIXTURES

    path = FIXTURES / "wild" / "cloverleaf_a100_cuda" / "perlmutter-cloverleaf-cuda.sqlite"
    con = sqlite3.connect(path)
    out = "".join(t for (t,) in con.execute("SELECT s.value FROM ProcessStreams p JOIN StringIds s ON s.id = p.contentId"))
    con.close()
    clock = [float(x) for x in re.findall(r"Wall clock\s+([\d.]+)", out)]
    return path, out, sorted(1000.0 * (b - a) for a, b in zip(clock, clock[1:]))


def test_cloverleafs_time_steps_are_its_steps():
    """The real export (kept: ``tests/fixtures/wild/cloverleaf_a100_cuda``): its steps are the time steps its own
    output times -- ``Wall clock`` after each step, in the stdout Nsight keeps (``ProcessStreams``) -- within 2%."""
    path, out, per_step = _cloverleaf()
    truth = per_step[len(per_step) // 2]  # the median time step, ms (32.5)
    host = _report(path)
    assert host["job"]["step_source"] == "repeated_launches"
    assert "alternating" in host["steps"]["note"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth, rel=0.02)


@pytest.mark.parametrize("alternate", [True, False])
def test_a_boundary_inside_the_iterations_loses_none_of_them(tmp_path, alternate):
    """h37-left20: the host's longest pause inside each iteration (the real file's halo staging, 1.95 ms against its
    time-step control's shorter one) puts the read boundary there; main then started a step only where a whole period
    followed, so the last boundary was lost and the rest of the region merged into the step before it: 9 of 10
    iterations, the last "step" 1.6 of them.  By construction: every iteration found, the last window (the last
    iteration's rest after its boundary) dropped as partial, every kept step one iteration."""
    p = tmp_path / "clover.sqlite"
    truth = write_alternating_sweeps(str(p), iterations=10, alternate=alternate, mid_pause_ms=1.5)
    host = _report(p)
    steps = host["steps"]
    assert host["job"]["step_source"] == "repeated_launches", steps
    assert steps["found"] == truth["iterations"], steps
    kept = [r["step_ms"] for r in host["step_rows"] if r["gpu"] is not None]
    assert kept and all(x == pytest.approx(truth["iteration_ms"], rel=0.02) for x in kept), kept


def test_cloverleafs_ten_time_steps_are_found():
    """The real export: its stdout prints ten ``Step N`` lines; main found 9 (the tenth boundary dropped for want of a
    whole period after it, its rest merged into the ninth "step": 52.8 ms of a 32.5 ms loop)."""
    path, out, per_step = _cloverleaf()
    host = _report(path)
    assert host["steps"]["found"] == len(re.findall(r"\bStep \d+ time", out)) == 10
    kept = [r["step_ms"] for r in host["step_rows"] if r["gpu"] is not None]
    assert max(kept) <= 1.02 * per_step[-1] and min(kept) >= 0.98 * per_step[0], (kept, per_step)
