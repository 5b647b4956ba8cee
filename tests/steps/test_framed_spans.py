"""The program's repeated spans (``forward`` around every pass, warm-ups too) inside one range around the timed passes:
the frame (``job.frame``) says which spans are the steps, as for the launch period and the GPU's bursts (issue #37,
h37-left23).

By construction (``synthetic.nsysexport.write_framed_passes(phases=True)``): every pass has NVTX ``forward`` and
``backward`` ranges (training, by the names); warm-ups back to back with one sync, then one range ``train`` around
synced passes of 20 ms.  Main read the warm-ups as steps: 3+5 passes, 6 steps of 27.2 ms after the stock edge rule;
2+4, 3 steps of 26.7 ms.
"""

from __future__ import annotations

import os

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host


def _host(tmp_path, **kw) -> tuple[dict, dict]:  # noqa: ANN001 - pytest's tmp_path
    path = os.path.join(str(tmp_path), "run.sqlite")
    truth = nx.write_framed_passes(path, phases=True, frame="train", **kw)
    return first_host(path), truth


@pytest.mark.parametrize("warmup, measured", [(3, 5), (2, 4)])
def test_the_spans_inside_the_one_range_are_the_steps(tmp_path, warmup: int, measured: int) -> None:  # noqa: ANN001
    host, truth = _host(tmp_path, warmup=warmup, measured=measured)
    steps = host["steps"]
    assert steps["source"] in ("annotation_spans", "nvtx_top_range")
    assert steps["count"] == truth["measured"]
    # the last span marks half a pass: the frame's end, after the pass's sync, closes the last step
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["pass_ms"], rel=0.03)
    assert "`train`, its frame" in steps["note"]
    assert f"the {truth['warmup']} before it are its warm-up" in steps["note"]


def test_a_range_around_one_pass_frames_nothing(tmp_path) -> None:  # noqa: ANN001
    """Control: a range around a single pass holds one span and frames nothing: the reading stays main's (the top-level
    `forward` ranges, the warm-ups'; the one pass's lies inside `train`)."""
    host, truth = _host(tmp_path, measured=1)
    assert host["steps"]["found"] == truth["warmup"]
    assert "frame" not in host["steps"]["note"]


def test_a_warm_up_range_is_no_frame(tmp_path) -> None:  # noqa: ANN001
    """Control: the spans inside a range the program names its warm-up are not its timed steps."""
    path = os.path.join(str(tmp_path), "run.sqlite")
    nx.write_framed_passes(path, phases=True, frame="Warm-up")
    assert "its frame" not in first_host(path)["steps"]["note"]


def test_a_repeated_range_running_long_is_no_frame(tmp_path) -> None:  # noqa: ANN001
    """One of a range a thread repeats (``backward``) that runs past the next passes' starts is no frame: the frame is
    the program's *one* range.  h37-survey54: a 4-rank MPI job's exports put on one clock, where one rank's
    ``backward_bucketed`` (20 a rank) reached past the next step's start on the ranks' earliest clock -- read as the
    frame of 2 of the 20 steps.  By construction: a second thread repeats ``backward`` three times, the second
    running over two measured passes' starts; the one range ``train`` still frames the measured passes (main: two
    frames, none read, the warm-ups counted as steps)."""
    import sqlite3

    path = os.path.join(str(tmp_path), "run.sqlite")
    truth = nx.write_framed_passes(path, phases=True, frame="train")
    con = sqlite3.connect(path)
    starts = [s for (s,) in con.execute("SELECT start FROM NVTX_EVENTS WHERE text = 'forward' ORDER BY start")]
    (tid,) = con.execute("SELECT globalTid FROM NVTX_EVENTS LIMIT 1").fetchone()
    w = truth["warmup"]
    other = [(starts[0], starts[0] + 50_000), (starts[w] + 1000, starts[w + 2] + 1000),
             (starts[-1] + 1000, starts[-1] + 50_000)]
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                    "VALUES (?,?,59,'backward',?,0)", [(a, b, tid + 1) for a, b in other])
    con.commit()
    con.close()
    steps = first_host(path)["steps"]
    assert steps["count"] == truth["measured"], steps
    assert "`train`, its frame" in steps["note"]
