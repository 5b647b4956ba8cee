"""A loop paced by something outside the GPU and outside the recorded host calls (issue #37, h37-paced).

The real case (SamuelAmsih/CUDA ``report1.sqlite`` / ``report16.sqlite`` @f7fa02c3, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``, "h37-paced"): a Jetson Orin camera pipeline, ~1.9% GPU busy, no recorded host
event between frames.  Main said critical "no check of the guide recognises why".  The export's ``SCHED_EVENTS``
(context switches) show the launching thread off the CPU ~80% of each gap: the host waits for its next frame.

By construction (``synthetic.nsysexport.write_paced_loop``): the launching thread's time off the CPU in each gap is
known; the controls are the same loop whose thread spins on the CPU (switched out 0.2 ms a frame: its own unrecorded
code), and the same loop exported without the scheduler's table (nothing tells a wait from work: unchanged).
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys import reader
from tests.support.cli_report import first_report


def _gaps(rep: dict) -> dict:
    found = [f for f in rep["findings"] if f["id"].startswith("step_gaps")]
    assert len(found) == 1
    return found[0]


def test_the_scheduler_trace_is_read_as_the_threads_time_off_the_cpu(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_paced_loop(path, frames=10)
    tr = reader.read_trace(path)
    w = tr.host_waits
    assert w is not None and reader.OFF_CPU in w.names
    off = w.name == w.names.index(reader.OFF_CPU)
    launching = w.line[off] >= 0  # the launching thread has host events; the reader thread none
    total_ms = float((w.end[off][launching] - w.start[off][launching]).sum()) / 1e9
    assert total_ms == pytest.approx(truth["off_cpu_ms_per_gap"] * 9, rel=1e-6)


def test_a_host_off_the_cpu_between_frames_waits_outside_the_capture(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_paced_loop(path)
    rep = first_report(path)
    f = _gaps(rep)
    assert f["severity"] == "warning"  # whether the source can deliver faster is outside the capture
    assert f["metric"]["detail"]["outside_wait_ms"] == pytest.approx(truth["off_cpu_ms_per_gap"], rel=0.01)
    assert "waiting for something outside the capture" in f["summary"]
    assert "did not record" not in f["summary"]
    assert "frame rate" in f["actions"][0]["text"] and "osrt" in (f["actions"][0]["snippet"] or "")
    assert not any(x["rule"] == "unexplained_idle" for x in rep["findings"])


def test_a_host_on_the_cpu_is_its_own_unrecorded_code(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "report1.sqlite")
    nx.write_paced_loop(path, waits=False)
    f = _gaps(first_report(path))
    assert not f["metric"]["detail"].get("outside_wait_ms")
    assert "the host's own code, which the capture did not record" in f["summary"]
    assert "the scheduler's trace shows its thread on the CPU" in f["summary"]
    assert "outside the capture" not in f["summary"]


def test_regular_frames_without_a_scheduler_trace_are_likely_a_wait_never_critical(tmp_path) -> None:  # noqa: ANN001
    """Without context switches only the frames' regularity speaks: a wait for a pacing source is likely, not shown
    (a host computing the same work each frame gives equal gaps too).  On main: critical "the host's own code"."""
    path = str(tmp_path / "report1.sqlite")
    nx.write_paced_loop(path, sched=False)
    f = _gaps(first_report(path))
    assert f["severity"] != "critical"
    assert not f["metric"]["detail"].get("outside_wait_ms")
    assert "likely the host waiting for a source that paces the loop" in f["summary"]
    assert "the host's own code, which" not in f["summary"]


def test_a_wait_inside_the_step_is_the_hosts_wait_not_its_work(tmp_path) -> None:  # noqa: ANN001
    """Each frame is the program's NVTX range ``frame`` and its thread sleeps 26 ms mid-frame (after the first kernel)
    besides the wait for the next frame: the mid-frame wait lies inside the step, between its kernels, where no gap
    check looks, and inside a range -- which runs no code there.  On main: critical "host-bound: the host runs its
    own code" for it."""
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_paced_loop(path, ranged=True, mid_wait_ms=26.0)
    rep = first_report(path)
    (f,) = [x for x in rep["findings"] if x["id"].endswith("#outside_wait")]
    assert f["severity"] == "warning"
    assert f["saving"]["ms_per_step"] == pytest.approx(truth["mid_wait_off_cpu_ms"], rel=0.02)
    assert "waits for something outside the capture" in f["summary"]
    assert not any(x["title"].startswith("Host-bound") for x in rep["findings"])
    # the gap between frames is step_gaps', named as a wait too, each microsecond claimed once
    g = _gaps(rep)
    assert g["metric"]["detail"]["outside_wait_ms"] == pytest.approx(truth["off_cpu_ms_per_gap"], rel=0.02)
    step_ms = rep["hosts"][0]["headline"][0]["detail"]["avg_step_ms"]
    assert f["saving"]["ms_per_step"] + g["saving"]["ms_per_step"] <= step_ms


def test_a_thread_on_the_cpu_inside_its_range_is_host_work(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "report1.sqlite")
    nx.write_paced_loop(path, ranged=True, mid_wait_ms=26.0, waits=False)
    rep = first_report(path)
    assert not any(x["id"].endswith("#outside_wait") for x in rep["findings"])
    assert any(x["title"].startswith("Host-bound") for x in rep["findings"])


@pytest.mark.parametrize("on_cpu", [True, False])
def test_one_pass_whose_thread_ran_is_host_bound_and_one_that_slept_waits(tmp_path, on_cpu: bool) -> None:  # noqa: ANN001
    """fckwader/shitbox's shape (one pass: uploads, 2 s with no CUDA call, one kernel) with the scheduler's trace, as
    the real export has it: a thread on the CPU through that time ran the program's own code (host-bound, recorded
    by nothing: record it first); one off the CPU waited (the outside-wait finding).  On main: two GPU-burst "steps"
    and an info note about the gap between them."""
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_scheduled_host_work_window(path, on_cpu=on_cpu)
    rep = first_report(path)
    assert rep["hosts"][0]["steps"]["count"] == 1 and not any(f["rule"] == "step_gaps" for f in rep["findings"])
    bound = [f for f in rep["findings"] if f["title"].startswith("Host-bound")]
    waits = [f for f in rep["findings"] if f["id"].endswith("#outside_wait")]
    if on_cpu:
        (f,) = bound
        assert not waits
        assert f["saving"]["ms_per_step"] == pytest.approx(truth["on_cpu_ms"], rel=0.02)
        assert "scheduler's trace shows the thread that launches the GPU's work on the CPU" in f["summary"]
        assert "NVTX" in f["actions"][0]["text"]
    else:
        (f,) = waits
        assert not bound
        assert f["saving"]["ms_per_step"] == pytest.approx(truth["off_cpu_ms"], rel=0.02)


def test_a_wait_before_the_steps_first_launch_is_no_launch_overhead(tmp_path) -> None:  # noqa: ANN001
    """Without ranges, the steps are cut by the GPU work's own period after the longest pause (the 26 ms mid-frame
    sleep): the between-frame sleep then lies inside the step, before its next launch, where the ledger booked it as
    launch wait -- on main, critical launch-bound for three kernels a frame.  The thread was off the CPU there: a wait
    for the next frame, the outside-wait finding's, sized by the truth's time off the CPU."""
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_paced_loop(path, mid_wait_ms=26.0)
    rep = first_report(path)
    assert not any(x["rule"] == "launch_bound" for x in rep["findings"])
    (f,) = [x for x in rep["findings"] if x["id"].endswith("#outside_wait")]
    assert f["saving"]["ms_per_step"] == pytest.approx(truth["off_cpu_ms_per_gap"], rel=0.02)
    launch = rep["hosts"][0]["breakdown_ms"]["launch_wait"]
    assert launch < 0.05 * truth["off_cpu_ms_per_gap"]


def test_a_thread_spinning_on_the_cpu_before_its_launch_runs_unrecorded_code(tmp_path) -> None:  # noqa: ANN001
    """Control: the same loop spinning on the CPU (no sleep recorded) is no outside wait -- the OS shows the thread on
    the CPU.  Nor is its spin launch overhead (h37-survey18: a launch takes microseconds, so milliseconds in which the
    launching thread records nothing are its own code, which the capture did not record): the ledger books it as
    ``other`` and the gap check names it as the host's unrecorded code."""
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_paced_loop(path, mid_wait_ms=26.0, waits=False)
    rep = first_report(path)
    assert not any(x["id"].endswith("#outside_wait") for x in rep["findings"])
    ledger = rep["hosts"][0]["breakdown_ms"]
    assert ledger["launch_wait"] < 0.1
    assert ledger["other"] > 40.0 - 2.0 - truth["mid_wait_off_cpu_ms"] - ledger["device_compute"]
    (gaps,) = [x for x in rep["findings"] if x["rule"] == "step_gaps"]
    assert "the capture did not record" in gaps["summary"]


def test_a_wait_inside_a_runtime_call_stays_that_calls(tmp_path) -> None:  # noqa: ANN001
    """Control: the same sleep inside the frame's first launch call (the call stretched back over it, as a driver that
    blocks in its ``ioctl`` would) is the launch's own time: the ledger keeps it as launch wait, since only a wait
    between the thread's runtime calls is a wait for something else."""
    import sqlite3

    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_paced_loop(path, mid_wait_ms=26.0)
    con = sqlite3.connect(path)
    rows = con.execute("SELECT r.rowid, r.start, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                       "ON s.id = r.nameId ORDER BY r.start").fetchall()
    prev_sync_end, stretched = None, 0
    for (rowid, start, name), nxt in zip(rows, rows[1:] + [None]):
        if name.startswith("cudaStreamSynchronize"):
            prev_sync_end = con.execute("SELECT end FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid = ?",
                                        (rowid,)).fetchone()[0]
        elif prev_sync_end is not None and start - prev_sync_end > 5_000_000:  # a frame's first launch after a sleep
            con.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = ? WHERE rowid = ?", (prev_sync_end + 10_000,
                                                                                             rowid))
            stretched += 1
        if not name.startswith("cudaStreamSynchronize"):
            prev_sync_end = None
    con.commit()
    con.close()
    assert stretched >= 30
    rep = first_report(path)
    assert rep["hosts"][0]["breakdown_ms"]["launch_wait"] > 0.8 * truth["off_cpu_ms_per_gap"]


def test_every_fix_lands_removes_the_wait_between_and_inside_the_step_once_each(tmp_path) -> None:  # noqa: ANN001
    """The paced loop with a 26 ms wait inside the frame and no ranges: the steps are cut after the longest pause, so
    ``step_gaps`` claims the idle between steps (the mid-frame sleep) and ``#outside_wait`` the wait for the next
    frame inside the step -- two different intervals of the ledger.  If both fixes land, the step is what is left
    once the thread's two waits off the CPU are gone (truth by construction: ~1 ms of launches and kernels).  On
    main both claimed the same pool, so only the larger counted: "every fix lands" said ~13.9 ms."""
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_paced_loop(path, mid_wait_ms=26.0)
    rep = first_report(path)
    g = _gaps(rep)
    (f,) = [x for x in rep["findings"] if x["id"].endswith("#outside_wait")]
    assert g["id"] not in f["saving"]["overlaps"] and f["id"] not in g["saving"]["overlaps"]
    ach = rep["hosts"][0]["achievable"]
    step_ms = ach["step_ms"]
    # the export's own kernels (three a frame): the idle after each frame's first one holds the mid-frame sleep, the
    # gap between the steps the period cuts
    import sqlite3

    con = sqlite3.connect(path)
    ks = con.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start").fetchall()
    con.close()
    idle = [(b[0] - a[1]) / 1e6 for a, b in zip(ks, ks[1:])]
    gap_ms = sum(idle[0::3]) / len(idle[0::3])
    assert gap_ms == pytest.approx(g["saving"]["ms_per_step"], rel=0.01)
    # both waits gone: the thread's two waits off the CPU, no more -- its own code before each launch (on the CPU, the
    # host's unrecorded time since h37-ownsplit) stays in the step: the frame's launches, kernels and that code
    left_ms = step_ms - truth["mid_wait_off_cpu_ms"] - truth["off_cpu_ms_per_gap"]
    assert ach["achievable_step_ms"] == pytest.approx(left_ms, rel=0.02)
    assert ach["achievable_step_ms"] >= ach["floor_ms"] > 0
    assert ach["recoverable_ms"] == pytest.approx(ach["sum_of_savings_ms"], abs=0.01)  # nothing counted twice


@pytest.mark.parametrize("kw", [dict(mid_wait_ms=26.0), dict(mid_wait_ms=26.0, ranged=True), dict(),
                                dict(mid_wait_ms=26.0, waits=False), dict(sched=False)])
def test_the_paced_loops_reports_hold_every_property(tmp_path, kw: dict) -> None:  # noqa: ANN001
    """The report properties (tests/support/properties.py: no part over its whole, savings within the ledger, "every
    fix lands" within the step and counting every saving) on each shape of the paced loop, which the walk of
    tests/report/test_properties.py does not hold."""
    from tb_gpu_advisor.discover.logdir import discover
    from tests.support.report_store import session_report
    from tests.support.properties import report_violations

    nx.write_paced_loop(str(tmp_path / "report1.sqlite"), **kw)
    (s,) = discover(str(tmp_path))
    rep = session_report(s)
    assert rep.hosts and rep.hosts[0].achievable
    assert report_violations(rep) == []
