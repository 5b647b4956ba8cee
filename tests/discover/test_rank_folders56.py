"""A job that writes each rank into its own folder: the runs are linked as the ranks of one job (h37-wild56r).

Real case (read locally, not kept: no licence): ykcai-daniel/torch-compile-moe @3f88d3dc writes
``tensorboard_trace_handler(f"{logdir}/rank{rank}")``: ``log_before/rank0/`` and ``log_before/rank1/`` each hold one
file of each of two 2-rank jobs (pids 14441/14442 at 22:57, 28356/28357 at 23:03; ``distributedInfo`` world 2, one
``pg_config``).  TensorBoard lists ``rank0`` and ``rank1`` as two runs, and so does the Advisor.  BASE (057f92bf) read
each as "this rank of 2" and told the user that "One rank's trace cannot tell the transfer from waiting for the other
ranks: profile every rank to separate them" -- both ranks were profiled, in the next folder.  Now each run's report
names the run holding the other rank (the session nearest in time of each sibling folder: 22:57 with 22:57, 23:03
with 23:03), and ``--list`` says which runs are one job's ranks.

By construction (``synthetic.torchtrace.write_load_through_exchange(rank_folders=True)``): two ranks of one job,
each file in ``<run>/rank<r>/``.
"""

from __future__ import annotations

import json
from pathlib import Path

from synthetic import torchtrace as tt
from tb_gpu_advisor.discover.logdir import discover
from tests.support.cli_report import cli_reports, in_process

RUN = "load_through_exchange"


def _write(tmp_path: Path) -> list[str]:
    return tt.write_load_through_exchange(str(tmp_path), rank_folders=True)


def _links(tmp_path: Path) -> dict[str, tuple[str, ...]]:
    return {s.stock_run: getattr(s, "rank_runs", ()) for s in discover(str(tmp_path))}


def test_rank_folders_are_linked_as_one_jobs_ranks(tmp_path: Path) -> None:
    """Each rank's run names the other's session; each stays its own run (TensorBoard's)."""
    _write(tmp_path)
    links = _links(tmp_path)
    assert len(links) == 2, links
    r0, r1 = sorted(links)
    assert r0.startswith(f"{RUN}/rank0/") and r1.startswith(f"{RUN}/rank1/")
    assert links[r0] == (r1,) and links[r1] == (r0,)


def test_a_ranks_report_names_the_run_of_the_other_rank(tmp_path: Path) -> None:
    """Rank 1's report: a note naming rank 0's run, and its exposed collectives no longer ask to "profile every
    rank" (BASE: they did, and said nothing of rank 0's run)."""
    _write(tmp_path)
    other = next(r for r in _links(tmp_path) if "/rank0/" in r)
    (report,) = [r for r in cli_reports(tmp_path) if r["run"] == f"{RUN}/rank1"]
    assert any("rank 1 of a 2-rank job" in n and f"the job's other rank is in run '{other}'" in n
               for n in report["notes"]), report["notes"]
    texts = [f["summary"] for f in report["findings"]] + [f["summary"] for h in report["hosts"] for f in h["findings"]]
    assert not any("profile every rank to separate them" in t for t in texts)
    # the exchange's wait lies inside rank 1's own module load: the start-up's time, no comm finding here since
    # h37-ranks57 (tests/job/test_load_through_exchange57.py); where one is, it names the run
    # (tests/report/test_rank_runs_in_context57.py)
    comm = [f["summary"] for f in report["findings"] if f["rule"] == "comm_exposed"]
    assert all(f"its trace is in run '{other}'" in t for t in comm)


def test_the_tabs_run_list_names_the_other_ranks_runs(tmp_path: Path) -> None:
    """The run listing the tab and the MCP server read says, per session, the runs of the job's other ranks."""
    from tb_gpu_advisor.runtime.advisor import runs_listing

    _write(tmp_path)
    listed = {s["stock_run"]: s.get("rank_runs") for run in runs_listing(discover(str(tmp_path)))
              for s in run["sessions"]}
    r0, r1 = sorted(listed)
    assert listed[r0] == [r1] and listed[r1] == [r0]


def test_the_list_says_which_runs_are_one_jobs_ranks(tmp_path: Path) -> None:
    _write(tmp_path)
    done = in_process("report", "--list", tmp_path)  # the command's main, in this process
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "are the ranks of one 2-rank job" in out, out


def test_rank_folders_far_apart_in_time_are_two_jobs(tmp_path: Path) -> None:
    """Control (passes on BASE too): rank 1's capture an hour after rank 0's -- two runs of the script, not one job."""
    paths = _write(tmp_path)
    late = next(p for p in paths if "/rank1/" in p)
    doc = json.loads(Path(late).read_text())
    doc["baseTimeNanoseconds"] += 3600 * 10**9
    tt.write_doc(late, doc)
    assert not any(_links(tmp_path).values())


def test_ranks_in_one_folder_stay_one_session(tmp_path: Path) -> None:
    """Control (passes on BASE too): both ranks in one run are one session of the job, linked to nothing."""
    tt.write_load_through_exchange(str(tmp_path))
    links = _links(tmp_path)
    assert len(links) == 1 and not any(links.values())


def test_sibling_runs_of_other_worlds_are_not_linked(tmp_path: Path) -> None:
    """Control (passes on BASE too): sibling folders whose files state different world sizes are different jobs."""
    paths = _write(tmp_path)
    p = next(p for p in paths if "/rank1/" in p)
    doc = json.loads(Path(p).read_text())
    doc["distributedInfo"]["world_size"] = 4
    tt.write_doc(p, doc)
    assert not any(_links(tmp_path).values())
