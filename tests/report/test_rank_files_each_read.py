"""Every rank's own Kineto file of a job is read, and read as its rank (issue #37 class 1, h37-probe45r).

By construction (``synthetic.torchtrace.write_rank_pause``: two working ranks of one node, each its own file):

* ``rankless=(k,)``: rank k's file holds no ``distributedInfo`` (written before ``init_process_group`` or after
  ``destroy_process_group``, or stripped).  Truth: the same two processes on GPUs 0 and 1 of node0 -- the report is
  the all-ranks one, each GPU's step and compute time its own.  Main 850d3394 put that file in a session of its own;
  the newest-session default then read it alone ("host node0_4101, GPU 1") and the other rank's file was in no report.
* Controls: files with no rank at all (two single-process captures) stay two sessions, and so does a file without a
  rank whose clock lies minutes from the job's.
* ``start_up=1``: a third rank (world 3) whose own file holds only its start-up, no kernel: the job's one idle rank,
  every rank's trace here.
* A run folder still holding two captures: the report names the one it passed over (stderr), never silently.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.discover.logdir import discover


def _report(path: Path) -> tuple[list[dict[str, Any]], str]:
    """Every session report of ``report PATH --format json --cache-dir off`` run in this process, and its stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert cli.main(["report", str(path), "--format", "json", "--cache-dir", "off"]) in (0, 1)
    return json.loads(out.getvalue())["reports"], err.getvalue()


def _gpus(report: dict[str, Any]) -> list[tuple[str, int, float, float]]:
    """(host, gpu, mean step ms, compute ms a step) of every GPU of a report."""
    return [(h["host"], g["gpu"], round(g["step_ms"], 3), round(g["breakdown"].get("device_compute", 0.0), 3))
            for h in report["hosts"] for g in h["gpus"]]


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The all-ranks reading: every file states its rank."""
    d = tmp_path_factory.mktemp("ranked")
    tt.write_rank_pause(str(d), ranks=2, paused=None)
    return _report(d)[0]


@pytest.mark.parametrize("rankless", [1, 0])
def test_a_rank_file_without_its_rank_reads_with_its_job(tmp_path: Path, ranked: list[dict[str, Any]],
                                                         rankless: int) -> None:
    paths = tt.write_rank_pause(str(tmp_path), ranks=2, paused=None, rankless=(rankless,))
    assert "distributedInfo" not in json.loads(Path(paths[rankless]).read_text())
    (session,) = discover(str(tmp_path))
    assert [sorted(r.path for r in h.ranks) for h in session.hosts] == [sorted(paths)]
    reports, err = _report(tmp_path)
    assert len(reports) == 1 and "older session" not in err
    (report,) = reports
    assert [h["host"] for h in report["hosts"]] == ["node0"]
    assert _gpus(report) == _gpus(ranked[0])
    assert [(g["gpu"], g["step_ms"] > 3.0, g["breakdown"]["device_compute"]) for g in report["hosts"][0]["gpus"]] \
        == [(0, True, pytest.approx(3.2, abs=0.01)), (1, True, pytest.approx(3.2, abs=0.01))]
    rank_of = {g["gpu"]: g.get("rank") for g in report["hosts"][0]["gpus"]}
    assert rank_of[1 - rankless] == 1 - rankless and rank_of[rankless] is None  # a rank the file does not state


def test_files_without_any_rank_stay_captures_of_their_own(tmp_path: Path) -> None:
    """Two single-process runs on one machine (neither states a rank): two captures, never two GPUs of one."""
    tt.write_rank_pause(str(tmp_path), ranks=2, paused=None, rankless=(0, 1))
    sessions = discover(str(tmp_path))
    assert sorted(len(s.hosts) for s in sessions) == [1, 1]


def test_a_file_without_a_rank_minutes_from_the_job_stays_apart(tmp_path: Path) -> None:
    """A rankless file whose clock began 5 minutes after the job's is another process's capture, not a rank's."""
    paths = tt.write_rank_pause(str(tmp_path), ranks=2, paused=None, rankless=(1,))
    doc = json.loads(Path(paths[1]).read_text())
    doc["baseTimeNanoseconds"] += 300 * 10**9
    Path(paths[1]).write_text(json.dumps(doc))
    sessions = discover(str(tmp_path))
    assert sorted(len(s.hosts[0].ranks) or 1 for s in sessions) == [1, 1]


def test_a_start_up_rank_in_its_own_file_is_the_jobs_idle_rank(tmp_path: Path) -> None:
    paths = tt.write_rank_pause(str(tmp_path), ranks=2, paused=None, start_up=1)
    assert json.loads(Path(paths[2]).read_text())["distributedInfo"]["world_size"] == 3
    (report,), err = _report(tmp_path)
    (host,) = report["hosts"]
    assert [g["gpu"] for g in host["gpus"]] == [0, 1]  # the start-up rank's GPU ran nothing: no GPU row
    job = host["job"]
    assert job["idle_rank_count"] == 1
    assert job["idle_ranks"].startswith("rank 2 (node0_4102)'s window holds no GPU work")
    assert "2 ranks of a job of 3 ranks" in job["part_of_job"] and "not here" not in job["part_of_job"]


def test_the_sessions_a_run_passed_over_are_named(tmp_path: Path) -> None:
    """A rank file whose name dates it 52 days before the others (its capture's time: a session of its own): the
    newest session is read, and the other one named with how to read it."""
    paths = tt.write_rank_pause(str(tmp_path), ranks=2, paused=None, start_up=1)
    old = Path(paths[2]).with_name(f"node0_4102.{tt.BASE_NS + 2_000_000}.pt.trace.json")
    Path(paths[2]).rename(old)
    sessions = discover(str(tmp_path))
    assert len(sessions) == 2
    reports, err = _report(tmp_path)
    assert len(reports) == 1
    assert f"1 older session not analysed (each run's newest is): rank_pause/{sessions[1].session}; " \
           "--session RUN/SESSION reads one" in err
