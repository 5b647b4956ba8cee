"""A range that marks a whole iteration is the step's mark, not the host's work (issue #37 classes 2 and 4;
h37-probe41).

Wrong assumption on main 953dc552: *every range of a program with no ML framework is the host's own work*
(``metrics.context._host_work``), including the range the steps were read from.  An iteration range (``decode 3``,
``step 3``) spans its whole iteration, so it covered every idle of the step: the host's time no event records after
the iteration's sync was booked as host compute, and ``step_gaps`` said "most of it is host work between iterations"
while the unrecorded-time check said of the same time "no op, no runtime call and no Python span covers that time".
A profiler's own marks (``ProfilerStep#N``) were already left out by name; the user's are now left out by what they
are: a host event that opens a step's window and lasts most of it (``metrics.context._step_marks``, ``Context.step_marks``), where the steps
were read from iteration ranges -- as host work, as a sync's caller (``metrics.syncs``), and as a record of the
launching thread (``metrics.breakdown._launchers_silent``).

By construction (``synthetic.nsysexport.write_untraced_iteration_tail``): each iteration range holds 8 kernels and a
sync, then ``tail_ms`` (+/- 20%) of host code no event records; the control marks that tail with ``update_stats``.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tests.support.generated_host import nsys_host


def _host(tmp_path, **kw) -> dict:  # noqa: ANN001 - pytest's
    return nsys_host(tmp_path, nx.write_untraced_iteration_tail, "loop.sqlite", **kw)


def _gaps(host: dict) -> dict:
    (f,) = [f for f in host["findings"] if f["rule"] == "step_gaps"]
    return f


@pytest.mark.parametrize("name", ["decode {k}", "step {k}", "iteration {k}"])
def test_the_untraced_tail_of_an_iteration_range_is_unrecorded(tmp_path, name: str) -> None:  # noqa: ANN001
    host = _host(tmp_path, name=name)
    truth = host["truth"]
    assert host["capture"]["framework"] == "native"
    bd = host["breakdown_ms"]
    # main: host_compute ~0.53 ms a step, "other" (the host's unrecorded time) ~0.06 ms
    assert bd["host_compute"] == pytest.approx(0.0, abs=0.02)
    assert bd["other"] >= truth["tail_ms"]
    summary = _gaps(host)["summary"]
    assert "did not record" in summary and "host work between iterations" not in summary, summary


def test_control_a_named_tail_stays_host_work(tmp_path) -> None:  # noqa: ANN001
    """Control (holds on main too): the same loop whose tail is inside a range of its own (``update_stats``): the
    host's work between iterations."""
    host = _host(tmp_path, tail_range="update_stats")
    assert host["breakdown_ms"]["host_compute"] >= 0.9 * host["truth"]["tail_ms"]
    assert "host work between iterations" in _gaps(host)["summary"]


def test_the_gaps_name_the_tails_own_range(tmp_path) -> None:  # noqa: ANN001
    """The tail's own range is what the gaps' finding names, and its time is the host work: on main the iteration
    range around it was host work too (0.06 ms a step more than the tail), and no range was named."""
    host = _host(tmp_path, tail_range="update_stats")
    assert host["breakdown_ms"]["host_compute"] == pytest.approx(host["truth"]["tail_ms"], rel=0.05)
    assert "`update_stats`" in _gaps(host)["summary"], _gaps(host)["summary"]


def test_a_sync_no_op_encloses_is_named_by_its_call_not_the_iteration_range(tmp_path) -> None:  # noqa: ANN001
    """The loop's one ``cudaDeviceSynchronize`` an iteration, inside no range but the iteration's: main named its
    callers "decode 1 ×0, decode 2 ×0, decode 3 ×0" (each numbered range a 28th of a call a step)."""
    host = _host(tmp_path, tail_range="update_stats")
    f = next(f for f in host["findings"] if f["rule"] == "host_sync" and "waits for the GPU" in f["summary"])
    assert "cudaDeviceSynchronize ×1" in f["summary"] and "decode" not in f["summary"], f["summary"]


def test_a_silent_thread_inside_its_frame_range_runs_unrecorded_code(tmp_path) -> None:  # noqa: ANN001
    """``write_paced_loop(ranged=True, mid_wait_ms=26, waits=False)``: each frame is the program's ``frame`` range and
    its thread spins 26 ms on the CPU mid-frame in code no event records.  The frame range is the step's mark, so the
    thread records nothing there: the host's unrecorded code (the ledger's ``other``), never launch wait, and the
    host-bound finding says so.  On main the range made that time host work (``host_compute`` 26 ms)."""
    host = nsys_host(tmp_path, nx.write_paced_loop, "paced.sqlite", ranged=True, mid_wait_ms=26.0, waits=False)
    bd = host["breakdown_ms"]
    assert bd["host_compute"] < 0.5 and bd["launch_wait"] < 0.5, bd
    assert bd["other"] >= 26.0 + 13.0, bd  # the mid-frame spin and the spin before the next frame
    f = next(f for f in host["findings"] if f["title"].startswith("Host-bound"))
    assert "which the profiler did not" in f["summary"], f["summary"]
