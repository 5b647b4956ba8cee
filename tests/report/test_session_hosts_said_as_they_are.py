"""A session's hosts said as they are (h37-probe44v; issue #37 class 1): a node whose ranks' windows all ended in
start-up beside rank 0's loop on another node, and a session header whose steps are one host's alone.

Truth by construction: ``synthetic.torchtrace.write_mixed_window_run(start_up_ranks=3)`` -- a job of 4 ranks, node0's
rank 0 runs 8 steps, node1 holds ranks 1-3, each only its start-up (no GPU row).  Main (5ee59eff):
* the report crashed with the cache on (the command line's default): a one-file host's identity and a host of
  several files were sorted against each other (``TypeError``);
* node1's job line listed its three ranks but not that they are 3 of a job of 4, nor where rank 0 is;
* the header said "2 hosts, 7 steps, step 2.42 ms" -- node0's steps alone, node1 times none (as two ranks' memory
  snapshots said rank 0's "2 steps, step 248 us": h37-probe43g *Left* 4)."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from synthetic import torchtrace as tt
from tests.support.cli_report import report_of


def test_a_session_of_one_file_and_several_file_hosts_reports_with_the_cache_on(tmp_path):
    truth = tt.write_mixed_window_run(str(tmp_path / "logs"), start_up_ranks=3)
    rep = report_of(truth["folder"], cache=str(tmp_path / "cache"))
    assert len(rep["hosts"]) == 2
    again = report_of(truth["folder"], cache=str(tmp_path / "cache"))  # the cached report: the same hosts
    assert [h["host"] for h in again["hosts"]] == [h["host"] for h in rep["hosts"]]


def test_a_node_of_start_up_ranks_says_it_is_part_of_the_job(tmp_path):
    truth = tt.write_mixed_window_run(str(tmp_path), start_up_ranks=3)
    rep = report_of(truth["folder"])
    jobs = {h["host"]: h["job"] for h in rep["hosts"]}
    (loop,) = [h for h, j in jobs.items() if j["kind"] == "training"]
    (idle,) = [h for h in jobs if h != loop]
    said = jobs[idle]["part_of_job"]
    assert said.startswith("3 ranks of a job of 4 ranks (its distributedInfo), none of whose windows ran GPU work: "
                           f"the other rank's trace is this session's host {loop}; "), said
    assert said.count("'s window holds no GPU work") == 3 and said in jobs[idle]["summary"]
    assert jobs[loop]["part_of_job"].endswith(f"the other 3 ranks' traces are this session's host {idle}")


def test_one_counted_missing_rank_reads_as_one():
    """The words for one missing rank beside ranks said: never "the other 1 rank' traces"."""
    from tb_gpu_advisor.report.build import not_here_words
    assert not_here_words(1, True) == "the other rank's trace is not here"
    assert not_here_words(2, True) == "the other 2 ranks' traces are not here"
    assert not_here_words(1, False) == "the other ranks' traces are not here"


def _header(text: str) -> str:
    return text.splitlines()[0]


def test_the_header_says_which_host_times_the_steps(tmp_path):
    truth = tt.write_mixed_window_run(str(tmp_path))
    rep = report_of(truth["folder"])
    (loop,) = [h["host"] for h in rep["hosts"] if h["job"]["kind"] == "training"]
    (idle,) = [h["host"] for h in rep["hosts"] if h["host"] != loop]
    head = _header(report_of(truth["folder"], "text"))
    assert f"on {loop} alone; {idle} times no step)" in head, head


def test_two_ranks_snapshots_header_names_the_rank_that_times_steps(tmp_path: Path):
    """h37-probe43g *Left* 4: rank 0's iterations are the header's steps; rank 1's OOM snapshot times none."""
    folder = tmp_path / "memory_snapshot" / "iteration_10"
    for name, sc in zip(["rank0_memory_snapshot.pickle", "rank1_memory_snapshot.pickle"],
                        [ms.training_iterations(), ms.oom_activations()]):
        ms.write(str(folder / name), sc.doc)
    head = _header(report_of(str(tmp_path), "text"))
    assert "on rank0_memory_snapshot alone; rank1_memory_snapshot times no step" in head, head


def test_hosts_that_all_time_steps_keep_the_header(tmp_path):
    """Control: a 2-node job whose ranks both run the loop -- no host named in the header."""
    (r0,) = tt.simulate("healthy_bf16", 6)
    (r1,) = tt.simulate("healthy_bf16", 6)
    r1.rank, r1.pid, r1.node = 1, 4101, 1
    folder = tmp_path / "two_nodes"
    folder.mkdir()
    for r in (r0, r1):
        tt.write_doc(str(folder / f"node{r.node}_{r.pid}.{tt.BASE_NS + r.rank}.pt.trace.json"), tt.trace_doc(r, 2))
    head = _header(report_of(str(folder), "text"))
    assert "alone" not in head and "times no step" not in head, head


def test_the_job_json_counts_its_idle_ranks(tmp_path):
    """debt45: the idle ranks' count is a key of the job's JSON (``Job.idle_rank_count``, additive in schema 1.3)
    beside their words: node1 holds the 3 start-up ranks the writer made, node0's loop none (no key)."""
    truth = tt.write_mixed_window_run(str(tmp_path), start_up_ranks=3)
    rep = report_of(truth["folder"])
    jobs = {h["host"]: h["job"] for h in rep["hosts"]}
    (loop,) = [h for h, j in jobs.items() if j["kind"] == "training"]
    (idle,) = [h for h in jobs if h != loop]
    assert jobs[idle]["idle_rank_count"] == len(truth["start_ups"]) == 3
    assert "idle_rank_count" not in jobs[loop] and "idle_ranks" not in jobs[loop]


def test_the_session_counts_a_hosts_ranks_by_the_count_not_the_words():
    """debt45: the session's rank arithmetic (``report.merge._ranks_held``) reads ``job.idle_rank_count``; words
    that do not say the phrase it counted once each (main a3712eb4) still count as the ranks they are."""
    from tb_gpu_advisor.model.schema import HostReport
    from tb_gpu_advisor.report.merge import _ranks_held
    h = HostReport(host="node1", path="node1", size_bytes=0,
                   job={"idle_ranks": "ranks 1 and 2 ran start-up only", "idle_rank_count": 2})
    assert _ranks_held(h) == 2
    assert _ranks_held(HostReport(host="node2", path="node2", size_bytes=0)) == 1  # a file is one rank's at least
