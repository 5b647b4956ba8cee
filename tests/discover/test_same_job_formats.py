"""One job's captures in two formats are listed linked, and a snapshot takes its GPU's capacity from the trace of the
same job (issue #37, h37-probe44g; probe43g's Left 2-3, probe43d's Left 1).

By construction (``synthetic.samejob``: torchtitan's ``profile_trace/iteration_N/rank{r}_trace.json`` beside
``memory_snapshot/iteration_N/rank{r}_memory_snapshot.pickle``, and a run folder holding a trace and a snapshot; the
writer's docstring states its truth).  Main (5ee59eff) listed the trace and the snapshot as two unrelated sessions
and judged the snapshot's 72 GiB peak against nothing (its GPU's size unknown: no ``memory_near_capacity``); here they
stay two sessions (one format each) linked both ways (``Session.same_job``, a line of the listing), and the snapshot
of each rank reads its GPU's total from its own rank's trace (``deviceProperties``, the same ordinal).  Controls: a
snapshot dumped an hour after the trace, and a trace and a snapshot in two sibling runs, are not linked."""

from __future__ import annotations

import pytest

from synthetic import samejob
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _by_format(logdir) -> dict[str, list]:
    out: dict[str, list] = {}
    for s in discover(str(logdir)):
        out.setdefault(s.format, []).append(s)
    return out


@pytest.mark.parametrize("layout,ranks", [("torchtitan", 1), ("torchtitan", 2), ("run", 1)])
def test_a_trace_and_a_snapshot_of_one_job_are_linked(tmp_path, layout, ranks):
    samejob.write(str(tmp_path / "job"), layout=layout, ranks=ranks)
    got = _by_format(tmp_path)
    (trace,), (snap,) = got["kineto"], got["snapshot"]
    assert trace.same_job == (snap.stock_run,) and snap.same_job == (trace.stock_run,)


@pytest.mark.parametrize("ranks", [1, 2])
def test_the_snapshot_takes_its_gpus_capacity_from_its_ranks_trace(tmp_path, ranks):
    truth = samejob.write(str(tmp_path / "job"), ranks=ranks)
    (snap,) = _by_format(tmp_path)["snapshot"]
    assert len(snap.hosts) == ranks
    for host, device in zip(snap.hosts, truth["devices"]):
        rep = analyze_host(host)
        assert rep.error is None, rep.error
        (near,) = [f for f in rep.findings if f.rule == "memory_near_capacity"]
        assert f"GPU {device} " in near.summary and "79.2 GiB" in near.summary  # the H100's totalGlobalMem
        assert truth["reserved_bytes"] / truth["total_bytes"] >= 0.9  # near capacity, by construction


def test_a_snapshot_dumped_an_hour_later_is_another_run_of_the_job(tmp_path):
    samejob.write(str(tmp_path / "job"), layout="run", gap_s=3600)
    got = _by_format(tmp_path)
    assert not got["kineto"][0].same_job and not got["snapshot"][0].same_job
    rep = analyze_host(got["snapshot"][0].hosts[0])
    assert not [f for f in rep.findings if f.rule == "memory_near_capacity"]  # no capacity taken: not its GPU's


def test_sibling_runs_are_not_one_job(tmp_path):
    samejob.write(str(tmp_path / "a"), layout="run")
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "snapshot.pickle").rename(tmp_path / "b" / "snapshot.pickle")
    got = _by_format(tmp_path)
    assert not got["kineto"][0].same_job and not got["snapshot"][0].same_job


def test_the_listing_says_they_are_one_job(tmp_path):
    from tb_gpu_advisor.cli.report import list_sessions
    from tb_gpu_advisor.runtime.advisor import Advisor

    samejob.write(str(tmp_path / "job"))
    text = list_sessions(Advisor(str(tmp_path)))
    (line,) = [x for x in text.splitlines() if "same job" in x]
    assert "profile_trace/iteration_10" in line and "memory_snapshot/iteration_10" in line


def test_a_kineto_trace_and_an_nsight_export_of_one_job_are_two_linked_sessions(tmp_path):
    """Main read the two, named by the same second, as one session of "2 hosts" (one process as two machines),
    listed as a PyTorch trace; here a session each, linked."""
    samejob.write(str(tmp_path / "job"), layout="run", nsys=True)
    got = _by_format(tmp_path)
    (trace,), (nsys,) = got["kineto"], got["nsys"]
    assert [h.format for h in trace.hosts] == ["kineto"] and [h.format for h in nsys.hosts] == ["nsys"]
    assert nsys.stock_run in trace.same_job and trace.stock_run in nsys.same_job


def test_an_nsight_export_of_another_run_is_not_linked(tmp_path):
    samejob.write(str(tmp_path / "job"), layout="run", nsys=True)
    (tmp_path / "job" / "snapshot.pickle").unlink()
    import os
    from synthetic.samejob import _nsys_export

    trace = next(p for p in os.listdir(tmp_path / "job") if p.endswith(".pt.trace.json"))
    start = os.stat(tmp_path / "job" / trace).st_mtime + 7200  # the job run again two hours later, under nsys
    (tmp_path / "job" / "report.sqlite").unlink()
    _nsys_export(str(tmp_path / "job" / "report.sqlite"), start)
    got = _by_format(tmp_path)
    assert not got["kineto"][0].same_job and not got["nsys"][0].same_job
