"""Every rank's own Kineto file of a job is read, and read as its rank (issue #37 class 1, h37-probe45r).

By construction (``synthetic.torchtrace.write_rank_pause``: two working ranks of one node, each its own file):

* ``rankless=(k,)``: rank k's file holds no ``distributedInfo`` (written before ``init_process_group`` or after
  ``destroy_process_group``, or stripped).  Truth: the same two processes on GPUs 0 and 1 of node0 -- the report is
  the all-ranks one, each GPU's step and compute time its own.  Main 850d3394 put that file in a session of its own;
  the newest-session default then read it alone ("host node0_4101, GPU 1") and the other rank's file was in no report.
  Its rank is the one the job's world misses (h37-probe46r), and so for files named otherwise (``trace.json``,
  ``rank1.json``, ``worker1.pt.trace.json``: joined by what they show, a foreign job's file kept apart).
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
    # the rank the file does not state is the one its world (2) misses: inferred, and said (h37-probe46r; main
    # b3e5562e showed it unranked, ``None``)
    assert {g["gpu"]: g.get("rank") for g in report["hosts"][0]["gpus"]} == {0: 0, 1: 1}
    assert report["hosts"][0]["capture"]["notes"] == [
        f"node0_410{rankless}'s trace states no rank (no distributedInfo: written before init_process_group or after "
        f"destroy_process_group, or stripped); read as rank {rankless}, the one rank of 2 no other file of the job "
        "states"]


#: Names people give their ranks' files (``export_chrome_trace``, renamed handler files): none says the machine.
OTHER_NAMES = (("trace0.json", "trace.json"), ("rank0.json", "rank1.json"),
               ("worker0.pt.trace.json", "worker1.pt.trace.json"), (None, "worker1.pt.trace.json"))


def _renamed(tmp_path: Path, names: tuple[str | None, str | None], rankless: int) -> list[str]:
    """``write_rank_pause``'s two ranks, rank ``rankless``'s file without ``distributedInfo``, files renamed ``names``
    (None: the handler's ``<host>_<pid>.<ts>.pt.trace.json`` kept); the paths, rank order."""
    paths = tt.write_rank_pause(str(tmp_path), ranks=2, paused=None, rankless=(rankless,))
    out = []
    for path, name in zip(paths, names):
        out.append(str(Path(path).rename(Path(path).with_name(name))) if name else path)
    return out


@pytest.mark.parametrize("rankless", [1, 0])
@pytest.mark.parametrize("names", OTHER_NAMES, ids=lambda n: f"{n[0] or 'handler'}+{n[1]}")
def test_a_rankless_file_named_otherwise_joins_its_job_by_content(tmp_path: Path, ranked: list[dict[str, Any]],
                                                                  names: tuple[str | None, str], rankless: int) -> None:
    """Truth: the all-ranks reading, every GPU its rank -- the file's machine told by what it shows (its GPUs, clock
    and pid counter), not by its name.  Main b3e5562e read two sessions, the newest alone (one GPU)."""
    paths = _renamed(tmp_path, names, rankless)
    (session,) = discover(str(tmp_path))
    (host,) = session.hosts
    assert sorted(r.path for r in host.ranks) == sorted(paths)
    assert [(Path(r.path).name, r.inferred_rank) for r in host.ranks if r.path == paths[rankless]] \
        == [(Path(paths[rankless]).name, rankless)]
    (report,), err = _report(tmp_path)
    assert "older session" not in err
    assert [(gpu, step, compute) for _, gpu, step, compute in _gpus(report)] \
        == [(gpu, step, compute) for _, gpu, step, compute in _gpus(ranked[0])] == [(0, 3.232, 3.2), (1, 3.232, 3.2)]
    assert {g["gpu"]: g.get("rank") for g in report["hosts"][0]["gpus"]} == {0: 0, 1: 1}


def _foreign(doc: dict[str, Any], how: str) -> None:
    """Make a rank's trace another job's, in place: its pids another machine's counter's, its clock 5 minutes on, or
    its GPUs another model."""
    if how == "pid":
        for e in doc["traceEvents"]:
            if isinstance(e.get("pid"), int) and e["pid"] > 100:
                e["pid"] += 1_000_000
                e["tid"] = e["tid"] + 1_000_000 if isinstance(e.get("tid"), int) and e["tid"] > 100 else e.get("tid")
    elif how == "clock":
        doc["baseTimeNanoseconds"] += 300 * 10**9
    else:
        for p in doc["deviceProperties"]:
            p["name"], p["totalGlobalMem"] = "NVIDIA A100-SXM4-40GB", 42_505_273_344


@pytest.mark.parametrize("how", ["pid", "clock", "gpu"])
def test_a_foreign_rankless_file_named_otherwise_stays_apart(tmp_path: Path, how: str) -> None:
    """Controls: a rankless ``trace.json`` beside a job's rank file, that shows another machine (another pid counter),
    another time (5 minutes on) or other GPUs, is another job's capture: never joined."""
    paths = _renamed(tmp_path, ("trace0.json", "trace.json"), 1)
    doc = json.loads(Path(paths[1]).read_text())
    _foreign(doc, how)
    Path(paths[1]).write_text(json.dumps(doc))
    sessions = discover(str(tmp_path))
    assert sorted([Path(h.path).name for h in s.hosts] for s in sessions) == [["trace.json"], ["trace0.json"]]
    assert all(not h.ranks for s in sessions for h in s.hosts)


def test_a_rank_is_inferred_only_where_one_is_missing(tmp_path: Path) -> None:
    """A job of 3 (a start-up rank's file) with rank 1's file rankless and rank 2's absent: two ranks missing, none
    said -- the file joins, unranked."""
    paths = tt.write_rank_pause(str(tmp_path), ranks=2, paused=None, start_up=1, rankless=(1,))
    Path(paths[2]).unlink()
    (session,) = discover(str(tmp_path))
    said = [(Path(r.path).name.split(".")[0], getattr(r, "inferred_rank", None)) for h in session.hosts for r in h.ranks]
    assert said == [("node0_4100", None), ("node0_4101", None)]


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
