"""The GPU idle inside a step while the host waits in a communication library's call is communication, not host work.

Stanford CME 213's ``train_mpi`` (4 ranks, Nsight 2023.4.1; survey h37-survey54, not kept: no licence) reduces its
gradients from the host: ``MPI_Iallreduce`` then ``MPI_Wait`` 2.27 ms of each ~4 ms step, the GPU idle, no collective
kernel.  Main booked that idle ``host_compute`` and read it "Host-bound ... the host's own work".  The wrong
assumption: *GPU idle with the host in a call is host work unless a collective kernel runs*.  The ledger now books the
idle the host spends inside a communication library's calls (its NVTX domain, Nsight's ``MPI_*_EVENTS``) between a
step's first work and its last kernel with the collectives, and ``comm_exposed#host_calls`` says it.

Truth by construction (``synthetic.nsysexport.write_mpi_steps``: ``wait_ms_per_step``); the control writes the same
calls as ranges of the default domain, as a program naming its own code would -- the domain decides, not the names.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synthetic.nsysexport import write_mpi_steps
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.metrics.job import JobView, RankRow
from tb_gpu_advisor.model.schema import Finding, Saving
from tb_gpu_advisor.rules import comm_exposed
from tb_gpu_advisor.rules.base import SEE_IMBALANCE, SEE_STRAGGLERS
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report


def _host(path) -> dict:
    host = SimpleNamespace(host="rank0", path=str(path), format="nsys", size=0)
    return analyze_session("rank0", "s", [host]).to_dict()["hosts"][0]


def _by_id(h: dict, rule: str, tail: str = "") -> list[dict]:
    """The findings of ``rule`` whose id ends with ``tail`` (a secondary finding's ``#...``)."""
    return [f for f in h["findings"] if f["rule"] == rule and f["id"].endswith(tail)]


def _said_as_communication(h: dict, truth: dict, booked_ms: float) -> dict:
    """Assert the ledger books ``booked_ms`` of the step with the collectives (no collective kernel runs), not the
    host's own work, and no idle finding claims it; return the critical host-calls finding that says it."""
    led = h["breakdown_ms"]
    assert led["collectives"] == pytest.approx(booked_ms, rel=0.01), led
    assert led["host_compute"] < 0.1 * truth["wait_ms_per_step"], led
    assert not _by_id(h, "unexplained_idle"), [f["title"] for f in h["findings"]]
    (f,) = _by_id(h, "comm_exposed", "#host_calls")
    assert f["severity"] == "critical"  # 2.0 of 4.3 ms
    return f


def test_mpi_wait_inside_the_step_is_booked_and_said_as_communication(tmp_path):
    p = tmp_path / "train_mpi.sqlite"
    truth = write_mpi_steps(str(p))
    f = _said_as_communication(_host(p), truth, truth["mpi_ms_per_step"])
    assert "`MPI_Wait` 2.00 ms" in f["summary"], f["summary"]
    assert "not the host's own work" in f["summary"]
    assert f["metric"]["detail"]["host_calls_ms_per_step"] == pytest.approx(truth["mpi_ms_per_step"], rel=0.01)
    assert f["saving"]["ms_per_step"] == pytest.approx(truth["mpi_ms_per_step"], rel=0.01)
    assert [r["group"] for r in f["saving"]["recovers"]] == ["collectives"]
    (rows,) = [e["rows"] for e in f["evidence"] if e["title"].startswith("Communication calls")]
    assert dict(rows)["MPI_Wait"] == pytest.approx(truth["wait_ms_per_step"], rel=0.01)
    assert any("MPI_Isend" in a["text"] for a in f["actions"])


def test_a_short_wait_is_booked_but_not_a_finding(tmp_path):
    p = tmp_path / "short.sqlite"
    truth = write_mpi_steps(str(p), wait_ms=0.05)
    h = _host(p)
    assert h["breakdown_ms"]["collectives"] == pytest.approx(truth["mpi_ms_per_step"], abs=0.002)
    assert not _by_id(h, "comm_exposed", "#host_calls")


def test_the_same_calls_in_the_default_domain_stay_the_programs_own(tmp_path):
    p = tmp_path / "own.sqlite"
    truth = write_mpi_steps(str(p), mpi_domain="")
    h = _host(p)
    assert h["breakdown_ms"]["collectives"] == 0.0
    assert h["breakdown_ms"]["host_compute"] == pytest.approx(truth["mpi_ms_per_step"], rel=0.02)
    assert not _by_id(h, "comm_exposed")
    assert any(f["title"].startswith("Host-bound") for f in h["findings"])


def test_control_the_kept_mpi_rank_waits_between_its_steps_only():
    """Control, real: pipit's MPI saxpy (``wild/mpi_saxpy_a100_rank0``, Nsight 2022.2, ranges in the ``MPI`` domain)
    sends and receives after each iteration's last kernel: the gap check's time (``test_communication_in_gaps``),
    never booked inside the step -- the ledger holds no communication, and no host-calls finding fires."""
    h = _host(FIXTURES / "wild" / "mpi_saxpy_a100_rank0" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite")
    assert h["breakdown_ms"]["collectives"] == 0.0, h["breakdown_ms"]
    assert not _by_id(h, "comm_exposed", "#host_calls")
    assert any(f["rule"] == "step_gaps" and "is communication" in f["summary"] for f in h["findings"])


def test_control_calls_on_a_thread_that_launches_nothing_stay_out_of_the_ledger(tmp_path):
    """Control: the same MPI calls made by a communication thread of their own, the launching thread recording
    nothing meanwhile: that thread's call says nothing of what the launcher does (it may be launching, late), so the
    ledger books no communication and the host-calls finding stays silent."""
    p = tmp_path / "thread.sqlite"
    write_mpi_steps(str(p), other_thread=True)
    h = _host(p)
    assert h["breakdown_ms"]["collectives"] == 0.0, h["breakdown_ms"]
    assert not _by_id(h, "comm_exposed", "#host_calls")


def test_a_communication_threads_call_the_launcher_blocks_on_is_communication(tmp_path):
    """A communication thread that launches nothing runs the all-reduce while the launching thread, having handed it
    the gradients, blocks in ``pthread_cond_wait`` until it returns (CME 213's OpenMP variant: its main thread
    227 ms in ``pthread_cond_wait`` while the comm thread ran ``MPI_Allreduce``).  The wrong assumption (h37-mpiwait):
    *a call on a thread that launches nothing says nothing of the launcher* -- true while the launcher runs, not while
    it is blocked on that very call.  Main booked the idle ``host_compute`` and read it "the host waits for something
    outside the capture" (2.03 ms): the thing waited on is in the capture, the comm thread's ``MPI_Wait``."""
    p = tmp_path / "comm_thread.sqlite"
    truth = write_mpi_steps(str(p), other_thread=True, launcher_wait="pthread_cond_wait")
    f = _said_as_communication(_host(p), truth, truth["blocked_ms_per_step"])
    (rows,) = [e["rows"] for e in f["evidence"] if e["title"].startswith("Communication calls")]
    assert dict(rows)["MPI_Wait"] == pytest.approx(truth["wait_ms_per_step"], rel=0.01)
    assert f["saving"]["ms_per_step"] == pytest.approx(truth["blocked_ms_per_step"], rel=0.01)


def test_the_launchers_own_code_beside_the_call_stays_host_work(tmp_path):
    """Control of the same shape: the launching thread runs 1 ms of its own code after the hand-off and blocks only for
    the rest of the call.  Only the blocked part is communication; the 1 ms it ran is the host's (its own code may be
    the late launch)."""
    p = tmp_path / "comm_thread_own.sqlite"
    truth = write_mpi_steps(str(p), other_thread=True, launcher_wait="pthread_cond_wait", own_ms=1.0)
    h = _host(p)
    led = h["breakdown_ms"]
    assert truth["blocked_ms_per_step"] < truth["mpi_ms_per_step"] - 0.9  # the truth: the call less the 1 ms ran
    assert led["collectives"] == pytest.approx(truth["blocked_ms_per_step"], rel=0.01), led
    assert led["host_compute"] == pytest.approx(1.0, abs=0.05), led


@pytest.mark.parametrize("comm_thread", [False, True])
def test_the_jobs_ranks_read_the_mpi_wait_and_its_straggler(tmp_path, comm_thread):
    """The job's ranks table (``RankRow.comm_ms``) and ``rank_straggler`` read the ledger's ``collectives``, which
    holds the host's MPI wait (h37-mpiwait's ``comm_wait``): four ranks, each its own export and host, rank 3 with
    1.5 ms more backward and 1.5 ms less ``MPI_Wait`` (it enters the all-reduce last).  With the calls on the
    launching thread this held on main already (h37-mpiwait's *Left* 2 said otherwise); with them on a communication
    thread the launcher blocks on, main's ranks showed 0 exposed communication and no straggler."""
    kw = dict(other_thread=True, launcher_wait="pthread_cond_wait") if comm_thread else {}
    truths = [write_mpi_steps(str(tmp_path / f"rank{r}.sqlite"), **kw,
                              **(dict(backward_ms=2.7, wait_ms=0.5) if r == 3 else {})) for r in range(4)]
    (s,) = discover(str(tmp_path))
    rep = session_report(s).to_dict()
    (ranks,) = [t for f in rep["findings"] if f["rule"] == "rank_straggler" for t in f["evidence"]
                if t["title"].startswith("Ranks")]
    comm = {row[0].split("/")[0].split(" ")[0]: row[3] for row in ranks["rows"]}
    for r, t in enumerate(truths):
        key = "blocked_ms_per_step" if comm_thread else "mpi_ms_per_step"
        assert comm[f"rank{r}"] == pytest.approx(t[key], rel=0.02), ranks["rows"]
    (f,) = [f for f in rep["findings"] if f["rule"] == "rank_straggler"]
    assert f["host"] == "rank3"
    assert f["metric"]["detail"]["extra_ms_per_step"] == pytest.approx(1.5, abs=0.05)


def test_control_a_listener_parked_across_the_steps_is_no_wait_a_step_handed_off(tmp_path):
    """Control: the launching thread blocks as before, but the communication thread's one call is an ``MPI_Recv``
    begun before the first step and ended after the last (a listener).  No step handed it anything: the launcher's
    block stays what main read it as (a wait for something outside the capture), no communication is booked."""
    p = tmp_path / "listener.sqlite"
    write_mpi_steps(str(p), other_thread=True, launcher_wait="pthread_cond_wait", listener=True)
    h = _host(p)
    assert h["breakdown_ms"]["collectives"] == 0.0, h["breakdown_ms"]
    assert not _by_id(h, "comm_exposed", "#host_calls")
    assert _by_id(h, "unexplained_idle", "#outside_wait")


def test_the_jobs_mpi_wait_is_claimed_once_between_the_transfer_and_the_straggler(tmp_path):
    """No part exceeds its whole: the 4-rank job of the test above (rank 3 enters the exchange 1.5 ms late, so it waits
    0.52 ms in ``MPI_Iallreduce`` + ``MPI_Wait``, the others 2.02 ms).  The session's host-calls finding saves the
    communication itself -- the least any rank waits, 0.52 ms (truth: rank 3's ``mpi_ms_per_step``) --, and
    ``rank_straggler`` the others' extra 1.50 ms; together no more than the 2.02 ms any rank waits.  Main claimed the
    hosts' mean wait, 1.65 ms, beside the straggler's 1.50 (3.15 ms of savings for 2.02 ms of wait)."""
    truths = [write_mpi_steps(str(tmp_path / f"rank{r}.sqlite"),
                              **(dict(backward_ms=2.7, wait_ms=0.5) if r == 3 else {})) for r in range(4)]
    (s,) = discover(str(tmp_path))
    rep = session_report(s).to_dict()
    waits = [t["mpi_ms_per_step"] for t in truths]
    least, whole = min(waits), max(waits)
    by = {f["rule"]: f for f in rep["findings"] if f["rule"] in ("comm_exposed", "rank_straggler")}
    assert by["comm_exposed"]["saving"]["ms_per_step"] == pytest.approx(least, rel=0.02)
    assert sum(x["saving"]["ms_per_step"] for x in by.values()) == pytest.approx(whole, rel=0.02)
    assert sum(r["ms"] for x in by.values() for r in x["saving"]["recovers"]) == pytest.approx(whole, rel=0.02)
    assert "waits 1.50 ms more, for the rank that arrives last" in by["comm_exposed"]["summary"]
    assert [g["host_calls_ms"] for h in rep["hosts"] for g in h["gpus"]] == pytest.approx(waits, rel=0.02)


def test_control_one_mpi_rank_keeps_its_whole_wait(tmp_path):
    """Control: one rank's export cannot tell the transfer from waiting for a late peer -- its host-calls finding
    saves the whole wait, as on main (``JobView.host_calls_transfer_ms`` needs two ranks that wait)."""
    t = write_mpi_steps(str(tmp_path / "rank0.sqlite"))
    (s,) = discover(str(tmp_path))
    rep = session_report(s).to_dict()
    (f,) = [f for f in rep["findings"] if f["id"].endswith("#host_calls")]
    assert f["saving"]["ms_per_step"] == pytest.approx(t["mpi_ms_per_step"], rel=0.02)


def _one_host_job(waits: list) -> JobView:
    """Four ranks in one host file (CME 213's 4-rank OpenMP export, read from its numbers: each rank's MPI wait per
    step), no collective kernel."""
    ranks = [RankRow("node", g, 9.32, 3.0, w or 0.0, 9.32 - 3.0 - (w or 0.0), host_calls_ms=w)
             for g, w in enumerate(waits)]
    return JobView("native", ["NVIDIA A100"] * len(ranks), ranks)


def _host_calls(saving_ms: float) -> Finding:
    return Finding(id="comm_exposed:node#host_calls", rule="comm_exposed", severity="critical", title="t",
                   summary="s.", guide_section="§2",
                   saving=Saving(saving_ms, 50.0, "a", [{"group": "collectives", "pool": "exposed_comm",
                                                          "ms": saving_ms}]))


def test_one_hosts_ranks_pay_the_least_wait_and_leave_the_rest_to_the_imbalance():
    """The ranks of one host file split alike: the host's finding claimed its GPUs' mean wait (4.71 ms on CME 213's
    ``h512_openmp_breakdown``) beside ``gpu_imbalance``'s claim on the wait for the busiest GPU; across the job it
    saves the least rank's wait, 4.45 ms, and points to the imbalance findings for the rest."""
    job = _one_host_job([4.448, 4.763, 4.917, 4.717])
    g = comm_exposed.host_calls_in_job(_host_calls(4.712), job, [])
    assert g.saving.ms_per_step == pytest.approx(4.448)
    assert g.saving.recovers[0]["ms"] == pytest.approx(4.448)
    assert SEE_IMBALANCE in g.summary and SEE_STRAGGLERS not in g.summary


@pytest.mark.parametrize("waits", [[4.448, None, 4.917, 4.717], [4.448, 0.0, 0.0, 0.0]])
def test_control_ranks_without_their_waits_keep_the_hosts_saving(waits):
    """Control: a rank's report without the reading (before 0.1.0+a52), or one rank alone that waits: the transfer
    cannot be told from the wait, so the host's saving stands."""
    g = comm_exposed.host_calls_in_job(_host_calls(4.712), _one_host_job(waits), [])
    assert g.saving.ms_per_step == 4.712
