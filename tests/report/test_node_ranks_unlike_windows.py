"""One node, two ranks, unlike windows (h37-probe43w; h37-probe42w's *Left* 1-2): rank 0's window holds its training
loop, rank 1's (on the same node, its GPU 1) ended in its start-up.  A node's ranks are read as one host, so rank 1
was said nowhere -- and the job line said "the other ranks' traces are not here" of a host that held them.  Now rank
0's findings are kept as its file's alone, and what rank 1's window holds is said once, with its calls.

Truth by construction: ``synthetic.torchtrace.write_mixed_window_run(one_node=True)``; the two-node layout (each rank
its own host) is the control: its rank 1 is a host of its own, said by its own report."""

from __future__ import annotations

from synthetic import torchtrace as tt
from tests.support.cli_report import report_of


def test_a_start_up_rank_beside_a_loop_on_one_node_is_said_once(tmp_path):
    truth = tt.write_mixed_window_run(str(tmp_path), one_node=True)
    rep = report_of(truth["folder"])
    (host,) = rep["hosts"]
    job = host["job"]
    assert job["kind"] == "training"
    assert rep["healthy"] and not [f for f in rep["findings"] if f["severity"] != "ok"]  # rank 0's own reading
    said = job["part_of_job"]
    assert "not here" not in said, said
    assert said.count("'s window holds no GPU work") == 1
    assert "rank 1 (node0_4101)'s window holds no GPU work: 3 CUDA calls (`cudaMalloc` 250.0 ms" in said, said
    assert said.endswith("no kernel -- start-up")
    text = report_of(truth["folder"], "text")
    assert text.count("rank 1 (node0_4101)") == 1, text


def test_ranks_on_two_nodes_keep_their_own_hosts(tmp_path):
    """Control: each rank its own host -- rank 1's window is its own report's, not folded into rank 0's line."""
    truth = tt.write_mixed_window_run(str(tmp_path))
    rep = report_of(truth["folder"])
    hosts = {h["host"]: h["job"] for h in rep["hosts"]}
    assert len(hosts) == 2
    assert all("idle_ranks" not in j for j in hosts.values())


def test_two_nodes_say_where_the_other_rank_is(tmp_path):
    """Two nodes, one session: node0's job line names node1's host as the other rank's trace -- the run holds it --
    never "the other ranks' traces are not here" (h37-probe43w *Left* 2); node1's own report is unchanged."""
    truth = tt.write_mixed_window_run(str(tmp_path))
    rep = report_of(truth["folder"])
    jobs = {h["host"]: h["job"] for h in rep["hosts"]}
    (node0,) = [j for host, j in jobs.items() if j["kind"] == "training"]
    (other,) = [host for host, j in jobs.items() if j["kind"] != "training"]
    assert "not here" not in node0["part_of_job"] and "not here" not in node0["summary"], node0["summary"]
    assert node0["part_of_job"].endswith(f"the other rank's trace is this session's host {other}")
    assert node0["part_of_job"] in node0["summary"]
    text = report_of(truth["folder"], "text")
    assert "not here" not in text and f"this session's host {other}" in " ".join(text.split())


def test_a_session_that_holds_some_of_the_missing_ranks_says_how_many():
    """The words by count: the session's other hosts hold 1 of 3 missing ranks -- the rest stay "not here"; a session
    of one host keeps its words."""
    from tb_gpu_advisor.report.build import not_here_words, session_ranks_words
    said = f"rank 0 of a job of 4 ranks (its distributedInfo), whose window ran no collective: {not_here_words(3, False)}"
    job = {"part_of_job": said, "ranks_not_here": 3}
    now = session_ranks_words(job, [("node1_9", 1)])
    assert now.endswith("1 of the other 3 ranks' trace is this session's host node1_9; the other 2 not here"), now
    assert session_ranks_words(job, [("node1_9", 1), ("node2_9", 2)]).endswith(
        "the other 3 ranks' traces are this session's hosts node1_9, node2_9")
    assert session_ranks_words(job, []) == said
