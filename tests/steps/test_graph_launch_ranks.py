"""Ranks in one export that each replay a CUDA graph per decode iteration inside a range of their own read as one
rank does; a framed loop's last step runs to its frame's end on one rank as on several (issue #37 class 1,
h37-probe47g).

The wrong assumptions: *the processes' merged graph launches are one program's* (``steps.framed.
_framed_graph_launches`` / ``_framed_graph_pass`` framed every process's launches at once, so two ranks' ranges split
them two ways and nothing was framed: 40 timed replays a rank, 3 ms apart, read as 2 "steps" of their bursts, 33 ms
each), and *a framed loop's last repeat ends at its last launch's work* (``job.period._one_sequence``: one rank read
its last timed pass 20.02 ms of a 20.23 ms iteration where each of two ranks' GPUs read 20.23).  Now each process's own
launches are framed by its own range (``_graph_frames``), each launching line's windows its own, each rank's one
range around none of its own repeats is the pass (``_marked_pass(per_line=)``), each rank's own spans are framed by
its own range (``_inside_frame``), and the last framed repeat runs to its frame's end (``job.period._to_frame_end``).

Truth by construction: ``synthetic.nsysexport.write_graph_decode(ranks=, rank_lag_us=)`` -- each rank its own
process and GPU, its own jitter, its measured generate inside its own ``measure`` (``rank_step_ms``: each rank's mean
launch period); ``write_framed_passes`` (``period_ms``: each timed pass, its sync and the timing loop's turn).
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as N
from tests.support.cli_report import first_host


def _decode(tmp_path, ranks: int, lag_us: float, **kw: object) -> tuple[dict, dict]:  # noqa: ANN001
    path = str(tmp_path / f"decode_{ranks}_{int(lag_us)}.sqlite")
    truth = N.write_graph_decode(path, ranks=ranks, rank_lag_us=lag_us, **kw)  # type: ignore[arg-type]
    return first_host(path), truth


@pytest.mark.parametrize("ranks,lag_us", [(1, 0.0), (2, 0.0), (2, 3000.0), (4, 50.0)])
def test_each_ranks_graph_launches_in_its_own_range_are_its_steps(tmp_path, ranks: int, lag_us: float) -> None:  # noqa: ANN001
    """40 replays inside each rank's ``measure``: 40 steps (first and last dropped), each GPU's its own rank's
    iterations (from one graph's first kernel to the next's).
    BASE: 2 ranks at 0 us one pass (``single_pass``, 61.3 ms); 3 ms apart 2 bursts (``gpu_busy_clusters``) of 33 ms;
    4 ranks 50 us apart 2 bursts of 30.7 ms.  1 rank: the control, unchanged."""
    host, truth = _decode(tmp_path, ranks, lag_us)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("repeated_launches", 40, 38), steps
    assert "graph per iteration" in steps["note"] and "`measure`" in steps["note"]
    kept = [(s[-1] - s[1]) / (len(s) - 2) for s in truth["rank_graph_starts_ms"]]  # steps 1..38, each GPU's own
    assert [g["step_ms"] for g in host["gpus"]] == pytest.approx(kept, rel=1e-4)


def test_each_ranks_three_replays_after_its_prefill_are_its_steps(tmp_path) -> None:  # noqa: ANN001
    """A prefill synced after every 12 layers, then 5 replays, inside each rank's ``measure``, 2 ranks 3 ms apart: the
    5 replays are the steps on every GPU.  BASE: 7 of 9 bursts of the prefill's layers (``gpu_busy_clusters``)."""
    host, truth = _decode(tmp_path, 2, 3000.0, decode=5, fillers=0, measured_prefill=96, prefill_syncs=12)
    steps = host["steps"]
    assert (steps["source"], steps["found"]) == ("repeated_launches", truth["steps"]), steps
    assert "each of the 2 ranks' own launches in its own range" in steps["note"]


def test_each_ranks_range_around_its_prefill_and_one_replay_is_the_pass(tmp_path) -> None:  # noqa: ANN001
    """The prefill and one replay inside each rank's ``measure``, 2 ranks 3 ms apart: one pass, the range.  BASE: 7
    "steps" of the prefill's layer bursts, 0.85 ms each."""
    host, truth = _decode(tmp_path, 2, 3000.0, decode=1, fillers=0, measured_prefill=96, prefill_syncs=12)
    steps = host["steps"]
    assert (steps["source"], steps["count"]) == ("single_pass", 1), steps
    assert "1 of the 7 graph launches" in steps["note"], steps["note"]
    (row,) = host["step_rows"][:1]
    assert row["step_ms"] == pytest.approx(truth["range_ms"], rel=0.01)


@pytest.mark.parametrize("ranks,lag_us", [(2, 50.0), (2, 3000.0), (4, 50.0)])
def test_each_ranks_one_range_around_none_of_its_repeats_is_the_pass(tmp_path, ranks: int, lag_us: float) -> None:  # noqa: ANN001
    """An eager measured prefill inside each rank's ``measure``, 12 filler prefills after it: the pass is the range
    (``steps.framed._marked_pass`` asks each rank's own range, launches and repeats).  BASE: the fillers' period
    (``repeated_launches``, 12 found, 10 kept, 5.64 ms), the measured 5.46 ms prefill in none."""
    host, truth = _decode(tmp_path, ranks, lag_us, warmup=0, decode=0, fillers=12, measured_prefill=90)
    steps = host["steps"]
    assert (steps["source"], steps["count"]) == ("single_pass", 1), steps
    assert f"each of the {ranks} ranks' own range" in steps["note"], steps["note"]
    assert host["step_rows"][0]["step_ms"] == pytest.approx(truth["range_ms"], rel=0.01)


@pytest.mark.parametrize("ranks,lag_us", [(1, 0.0), (2, 3000.0)])
def test_a_framed_loops_last_step_runs_to_its_frames_end(tmp_path, ranks: int, lag_us: float) -> None:  # noqa: ANN001
    """4 timed passes inside ``resnet50_inference``: every step, the last too, one period (20.23 ms) on every GPU.
    BASE: 1 rank the last 20.019 ms (its launch to its work's end), the GPU's mean 20.177; 2 ranks 20.23 (the control:
    each GPU's own windows)."""
    path = str(tmp_path / f"framed_{ranks}.sqlite")
    truth = N.write_framed_passes(path, warmup=2, measured=4, ranks=ranks, rank_lag_us=lag_us)
    host = first_host(path)
    assert (host["steps"]["source"], host["steps"]["count"]) == ("repeated_launches", truth["measured"])
    assert [g["step_ms"] for g in host["gpus"]] == pytest.approx([truth["period_ms"]] * ranks, rel=1e-4)
    rows = [r for r in host["step_rows"] if r.get("gpu", 0) == 0]
    assert [r["step_ms"] for r in rows] == pytest.approx([truth["period_ms"]] * truth["measured"], rel=1e-4)


@pytest.mark.parametrize("ranks,lag_us", [(2, 50.0), (3, 7000.0)])
@pytest.mark.parametrize("marks", ["phases", "ranged_passes"])
def test_each_ranks_spans_in_its_own_frame(tmp_path, ranks: int, lag_us: float, marks: str) -> None:  # noqa: ANN001
    """Each rank's own ``forward`` range in each of its 2 warm-ups and 4 timed passes (``phases``), or a ``pass N``
    range around each timed pass (``ranged_passes``), each rank's timed passes inside its own
    ``resnet50_inference``: 4 steps, each GPU one period (``steps.framed._inside_frame`` asks each rank's own spans,
    ``_own_span_rows``).  BASE: ``phases`` 6 found (the warm-ups in), 4 kept of 20.68 ms; ``ranged_passes`` the other
    rank's range framed 3 of the 4 (20.25-24.83 ms)."""
    path = str(tmp_path / f"spans_{marks}_{ranks}.sqlite")
    truth = N.write_framed_passes(path, warmup=2, measured=4, ranks=ranks, rank_lag_us=lag_us, **{marks: True})
    host = first_host(path)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("nvtx_top_range", 4, 4), steps
    assert [g["step_ms"] for g in host["gpus"]] == pytest.approx([truth["period_ms"]] * ranks, rel=1e-4)
