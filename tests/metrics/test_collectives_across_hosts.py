"""A collective's calls are matched across host files by what each rank recorded of them, not by a clock (h37-left50).

Before, the job's transfer across host files was the least host's total: where the rank that enters last changes
from call to call, every host's total holds the waits of the calls its rank was early for.  Each host now carries its
calls (``GpuSummary.calls``: process group, step, message bytes, the host's least time in the call); the job matches
them by (group, step, order in the group, bytes) -- durations compared, starts never -- where every host file agrees
on that sequence, else keeps the least host's total and says so.

Truth by construction: ``synthetic.torchtrace.ddp(alternate=True)`` on 2 machines of 1 GPU each, the slow rank
alternating step by step; each AllReduce ends on both ranks 150 us after the last one entered it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.metrics.job import job_view
from tests.support.report_store import session_report

COMM_US = 150.0


def _job(tmp_path: Path, alternate: bool, slow_rank: int | None = None, edit=None):  # noqa: ANN001, ANN202
    sc = tt.Scenario(2, tt.ddp(COMM_US, slow_rank=slow_rank, slow=1.3, alternate=alternate), [], [], "2 hosts", nodes=2)
    paths = [Path(p) for p in tt.write_run(str(tmp_path), sc, steps=8, run="job")]
    if edit is not None:
        edit(paths)
    (s,) = discover(str(tmp_path / "job"))
    assert len(s.hosts) == 2  # one file per machine
    rep = session_report(s)
    return rep, job_view(rep.hosts), paths


def _durations(path: Path) -> dict[int, float]:
    """Each step's AllReduce duration (us) in one rank's file, keyed by the step its ProfilerStep span holds."""
    ev = json.loads(path.read_text())["traceEvents"]
    spans = [(int(e["name"].split("#")[1]), e["ts"], e["ts"] + e["dur"]) for e in ev
             if e.get("cat") == "gpu_user_annotation"]
    out = {}
    for e in ev:
        if e.get("cat") == "kernel" and "AllReduce" in e["name"]:
            (n,) = [n for n, a, b in spans if a <= e["ts"] < b]
            out[n] = e["dur"]
    return out


def _transfer_col(rep) -> float:  # noqa: ANN001 - the session Report
    t = rep.collectives
    return next(r[t.columns.index("transfer ms")] for r in t.rows if r[0] == "AllReduce")


def test_a_late_rank_that_alternates_across_hosts_leaves_the_transfer(tmp_path: Path) -> None:
    rep, job, paths = _job(tmp_path, alternate=True)
    d = [_durations(p) for p in paths]
    kept = sorted(set(rep.hosts[0].step_rows.step.tolist()))
    least = [min(d[0][n], d[1][n]) for n in kept]
    truth = sum(least) / len(least) / 1000
    assert truth == pytest.approx(COMM_US / 1000, rel=0.01)  # the late rank spends the transfer alone
    totals = [sum(x[n] for n in kept) / len(kept) / 1000 for x in d]
    assert min(totals) > 2 * truth  # each rank waited in half the steps: the least host's total is mostly waiting
    assert _transfer_col(rep) == pytest.approx(truth, abs=1e-3)  # main: the least host's total, 0.502 ms
    assert job.transfer_ms("AllReduce") == pytest.approx(truth, rel=1e-3)
    assert job.transfer_matching("AllReduce") is None


def test_one_rank_last_in_every_call_reads_as_before(tmp_path: Path) -> None:
    """Control: rank 1 is slow in every step, so it enters every call last: matched call by call, the transfer is its
    total -- the least host's, the reading before."""
    rep, job, _ = _job(tmp_path, alternate=False, slow_rank=1)
    least_host = min(r.collectives["AllReduce"][1] for r in job.ranks)
    assert job.transfer_ms("AllReduce") == pytest.approx(least_host, rel=1e-3)
    assert _transfer_col(rep) == pytest.approx(least_host, abs=1e-3)


def _resize(paths: list[Path]) -> None:
    """Rank 1's file records another message size for one call of a kept step."""
    doc = json.loads(paths[1].read_text())
    calls = [e for e in doc["traceEvents"] if e.get("name") == "record_param_comms"]
    calls[len(calls) // 2]["args"]["In msg nelems"] //= 2
    paths[1].write_text(json.dumps(doc))


def test_host_files_that_disagree_on_the_calls_keep_the_least_hosts_total(tmp_path: Path) -> None:
    """Control: the files do not agree on the calls' sequence (one call's size differs), so no call is matched
    across them: the least host's total stands, as before."""
    rep, job, _ = _job(tmp_path, alternate=True, edit=_resize)
    least_host = min(r.collectives["AllReduce"][1] for r in job.ranks)
    assert least_host > 2 * COMM_US / 1000  # the waits stay in it: nothing says which call is which
    assert job.transfer_ms("AllReduce") == pytest.approx(least_host)
    assert _transfer_col(rep) == pytest.approx(least_host, abs=1e-3)


def test_the_job_says_why_no_call_was_matched_across_host_files(tmp_path: Path) -> None:
    """Where the files disagree the job's words say the reading is the least host's (``allreduce_slow``'s job step
    adds them to its finding); where they agree, nothing is said."""
    _, agree, paths = _job(tmp_path, alternate=True)
    assert agree.transfer_matching("AllReduce") is None
    for p in paths:
        p.unlink()
    _, disagree, _ = _job(tmp_path, alternate=True, edit=_resize)
    assert disagree.matched_transfer_ms("AllReduce") is None
    assert "do not agree on the calls' sequence" in disagree.transfer_matching("AllReduce")


DLRM = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "dlrm_v100"


def test_a_real_eight_host_jobs_calls_are_matched_across_its_files() -> None:
    """Real truth: ``wild/dlrm_v100``'s 8 rank files (one per host) run the same NCCL calls in one order; the rank that
    spends least in a call changes from call to call (worker7 in the first all-to-alls, worker5 in a later one, where
    the others spend 357-545 us), so the least host's total holds waits.  The job's transfer is the per-call least."""
    import gzip

    per_rank = []
    for p in sorted(DLRM.glob("*.json.gz")):
        with gzip.open(p, "rt") as f:
            ev = json.load(f)["traceEvents"]
        per_rank.append(sorted((e["ts"], e["dur"], "AllReduce" in e["name"]) for e in ev
                               if e.get("cat") == "kernel" and e["name"].startswith("ncclKernel")))
    assert len(per_rank) == 8 and len({len(r) for r in per_rank}) == 1
    assert len({tuple(k[2] for k in r) for r in per_rank}) == 1  # one order of types on every rank
    calls = list(zip(*per_rank))
    a2a = sum(min(k[1] for k in c) for c in calls if not c[0][2]) / 1000
    least_total = min(sum(k[1] for k in r if not k[2]) for r in per_rank) / 1000
    assert a2a < 0.5 * least_total

    (s,) = discover(str(DLRM))
    assert len(s.hosts) == 8
    rep = session_report(s)
    t = rep.collectives
    row = next(r for r in t.rows if r[0] == "AllToAll")
    steps = rep.hosts[0].steps["count"]
    assert row[t.columns.index("transfer ms")] == pytest.approx(a2a / steps, abs=1e-3)  # main: 0.389 ms
