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


@pytest.mark.parametrize("ranks", [1, 2])
def test_discovery_hands_the_snapshot_its_gpus_totals_as_numbers(tmp_path, ranks):
    """debt45: the stage that links the two captures reads the trace's GPU totals (``Layout.gpu_totals``) and hands
    them to the snapshot's host as numbers (``HostFile.gpu_totals``), named by the trace they came from: its own rank's
    trace's GPU (the writer lists each rank's device), the H100's ``totalGlobalMem``."""
    import os

    truth = samejob.write(str(tmp_path / "job"), ranks=ranks)
    (snap,) = _by_format(tmp_path)["snapshot"]
    for host, trace, device in zip(snap.hosts, truth["traces"], truth["devices"]):
        assert host.gpu_totals == ((device, truth["total_bytes"]),)
        assert host.gpu_totals_from == f"the Kineto trace {os.path.basename(trace)} of the same job"
    (trace,) = _by_format(tmp_path)["kineto"]
    assert all(not h.gpu_totals for h in trace.hosts)  # the trace states its own GPUs


def test_the_snapshot_reader_reads_the_numbers_handed_not_the_linked_file(tmp_path):
    """debt45: the snapshot's capacity is the numbers handed (``formats.snapshot.reader.with_job_capacity``), not
    another format's file read by the snapshot's reader: the linked trace in ``beside`` with no numbers gives none,
    numbers with no linked file give the capacity (79.2 GiB, the H100's)."""
    import dataclasses

    truth = samejob.write(str(tmp_path / "job"))
    (snap,) = _by_format(tmp_path)["snapshot"]
    (host,) = snap.hosts
    bare = dataclasses.replace(host, gpu_totals=(), gpu_totals_from="")
    assert host.beside and not [f for f in analyze_host(bare).findings if f.rule == "memory_near_capacity"]
    handed = dataclasses.replace(host, beside=(), gpu_totals=((truth["devices"][0], truth["total_bytes"]),),
                                 gpu_totals_from="the Kineto trace rank0_trace.json of the same job")
    (near,) = [f for f in analyze_host(handed).findings if f.rule == "memory_near_capacity"]
    assert "79.2 GiB" in near.summary


def test_a_linked_snapshot_reads_unchanged_until_its_trace_changes(tmp_path):
    """debt45: a snapshot linked to its rank's trace is unchanged while its files are (main a3712eb4 read it changed
    at every ask: the linked trace is read beside it, but no layout lists it); touching the trace changes it."""
    import os

    from tb_gpu_advisor.runtime.session import files_unchanged

    truth = samejob.write(str(tmp_path / "job"))
    (snap,) = _by_format(tmp_path)["snapshot"]
    (host,) = snap.hosts
    assert files_unchanged([host])
    st = os.stat(truth["traces"][0])
    os.utime(truth["traces"][0], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert not files_unchanged([host])
