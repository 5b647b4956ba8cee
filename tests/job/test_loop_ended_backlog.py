"""A window opened after the loop's last batch, with and without the last step's queue draining in it (issue #37
class 1; h37-loopend2).  Generator ``synthetic.torchtrace.write_loop_ended``, truth by construction: one
``ProfilerStep#2`` holding the DataLoader's exhausted ``__next__``, the profiler's exit sync, and ``backlog`` kernels
the last batch's step launched before the window (their ids on no call of the file), which the GPU runs from the
window's start and the exit sync waits for.  The real form: ``wild/loop_ended_backlog_a100_gnn``
(``tests/crosscheck/test_loop_ended_backlog_real.py``).

The wrong assumption was *the kernels of a window were launched in it*: main read the queue's window as "a training
step" of the fetch's length, input-bound.  Control: the step launches one kernel of its own after the fetch (from the
fetch's code, no op of its own: only the launch tells it from the loop's end) -- the loop's body ran, so the window
holds a step of the job, queue or not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.torchtrace import write_loop_ended
from tb_gpu_advisor.common.fmt import ms
from tests.support.cli_report import first_report

LOOP_ENDED = "The capture window opened after the loop's last batch: none of the job's steps in it"


def _host(tmp_path: Path, **kw) -> tuple[dict, dict]:
    path = tmp_path / "run" / "gnn.pt.trace.json"
    path.parent.mkdir(parents=True)
    truth = write_loop_ended(str(path), **kw)
    return first_report(path)["hosts"][0], truth


def _titles(host: dict) -> list[str]:
    return [f["title"] for f in host["findings"]]


@pytest.mark.parametrize("backlog", [0, 1, 40])
def test_the_loops_end_is_said_whether_or_not_the_gpu_drains_a_queue(tmp_path: Path, backlog: int):
    host, truth = _host(tmp_path, backlog=backlog)
    assert truth["window"] == "loop_ended"
    assert _titles(host) == [LOOP_ENDED], _titles(host)
    assert host["job"]["marks_no_job_step"] is True, host["job"]
    assert len(host["step_rows"]) == 0 and not host["achievable"], host["achievable"]
    (f,) = host["findings"]
    said = f["summary"] + " ".join(a.get("snippet") or "" for a in f["actions"])
    assert "wait, warmup, active = 0, 1, 1" in said, said
    if backlog:  # the queue is said with its own count and time, never as no GPU work
        kernels = f"ran {backlog} kernel{'s' if backlog > 1 else ''} ({ms(truth['queued_ms'])}) queued"
        assert kernels in said and "no GPU work" not in said, said
    else:
        assert "holds no GPU work" in said and "queued" not in said, said


@pytest.mark.parametrize("backlog", [0, 40])
def test_control_a_launch_in_the_step_is_a_step_of_the_job(tmp_path: Path, backlog: int):
    host, truth = _host(tmp_path, backlog=backlog, launch_in_step=True)
    assert truth["window"] == ""
    assert LOOP_ENDED not in _titles(host) and "marks_no_job_step" not in host["job"], _titles(host)
    assert {r["step"] for r in host["step_rows"]} == {2}, host["step_rows"]
