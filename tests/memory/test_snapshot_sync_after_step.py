"""A snapshot's marked iterations tile the loop: the host's time between one optimizer step's end and the next forward
is a step's (h37-survey56, issue #37 class 5).

Zhangkuns/Standford_CS336_LanguageModelingfromScratch (MIT, ``wild/snapshot_sync_after_step``): CS336's benchmark
records 5 AdamW steps after its warm-up, each ending in ``torch.cuda.synchronize()``.  Read by hand from the pickle:
the ``Optimizer.step`` ends at 20.01, 63.01, 113.99, 166.54, 219.87 ms of the history, each ``Optimizer.zero_grad``
start (the turn's first call) 34-44 ms after the end before it -- the host waiting for the GPU -- so the loop's period
is 51-54 ms.  Main cut each iteration from its forward's first allocation to its step's end and read 11.2 ms steps:
the host's enqueue time alone.  ASSUMPTION that was wrong: an iteration begins with its forward's first allocation.
Each turn runs from its first allocation to the next turn's (h37-snapturn: h37-survey56 read it from the step end
before it, a rotation of the turn whose second step held the first's shortened wait: 43.0 ms, mean 49.97 for the
loop's 52.52); the last, which the recording ended inside (its enqueue only), is dropped as partial.

Controls: ``wild/snapshot_transformer_from_start`` (the same repository; a history from the process's first
allocation whose turns already touch: nothing between a step's end and the next forward but ``zero_grad``) keeps its
steps and its warm-up drop; ``wild/snapshot_adam_iterations`` keeps its two steps at its marks (framed and stackless
read the same: ``test_snapshot_stackless_first_iteration.py``).
"""

from __future__ import annotations

import gzip
import itertools
import pickle
from pathlib import Path

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

SYNC = FIXTURES / "wild" / "snapshot_sync_after_step" / "bwd_128.pickle.gz"
FROM_START = FIXTURES / "wild" / "snapshot_transformer_from_start" / "visual_mem_2025_12_26_14_31_10.pickle.gz"


def _marks(path: Path, name: str, stage: str) -> list[float]:
    """The history's annotations ``name*`` at ``stage``, in ms from its first event (read from the raw pickle)."""
    doc = pickle.loads(gzip.decompress(path.read_bytes()))
    t0 = doc["device_traces"][0][0]["time_us"]
    return [(a["time_us"] - t0) / 1000 for a in doc["external_annotations"]
            if a["stage"] == stage and a["name"].startswith(name)]


def _report(path: Path):  # noqa: ANN202 - the pipeline's host report
    rep = analyze_host(HostFile(path.parent.name, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def test_the_files_own_truth_the_host_waits_between_steps() -> None:
    """By hand: 5 step ends; each turn's ``zero_grad`` opens 34-44 ms after the step end before it (the host's
    ``synchronize()``), so the period is several times the time from a turn's start to its step's end."""
    ends = _marks(SYNC, "Optimizer.step", "END")
    opens = _marks(SYNC, "Optimizer.zero_grad", "START")
    assert len(ends) == len(opens) == 5
    waits = [b - a for a, b in zip(ends, opens[1:])]
    assert all(34 < w < 44 for w in waits), waits
    periods = [b - a for a, b in zip(opens, opens[1:])]
    assert all(51 < p < 55 for p in periods), periods
    assert all(e - o < 20.1 for o, e in zip(opens, ends))  # the host's own part of each turn


def test_each_step_lasts_the_loops_period_not_the_hosts_enqueue() -> None:
    """Main before h37-survey56: 5 steps of 11.2 ms (each from its forward to its step's end).  Each step is a turn of
    the loop, from its first allocation to the next turn's: it holds its own enqueue and the wait for its own kernels
    (h37-snapturn: h37-survey56 read each from the step end before it, 43.0 / 51.0 / 52.6 / 53.3 ms, mean 49.97)."""
    rep = _report(SYNC)
    opens = _marks(SYNC, "Optimizer.zero_grad", "START")
    rows = rep.step_rows.rows()
    assert len(rows) == 4
    # each turn opens with its forward's first allocation, just after its zero_grad (the history's first: 0.15 ms)
    assert all(0 < r.start_ms - o < 0.2 for r, o in zip(rows, opens)), ([r.start_ms for r in rows], opens)
    periods = [b - a for a, b in itertools.pairwise(opens)]
    assert all(abs(r.step_ms - p) < 0.2 for r, p in zip(rows, periods)), ([r.step_ms for r in rows], periods)


def test_the_mean_step_is_the_loops_period() -> None:
    """Four whole turns tile the span from the first turn's first allocation to the fifth's, so the mean step is that
    span over four: the period from ``zero_grad`` to ``zero_grad`` (52.52 ms; h37-survey56: 49.97, the span from the
    first step end to the last, which holds the first turn's shortened wait and not its longer enqueue)."""
    rep = _report(SYNC)
    opens = _marks(SYNC, "Optimizer.zero_grad", "START")
    period = (opens[-1] - opens[0]) / 4
    assert abs(rep.gpus[0].step_ms - period) < 0.1, (rep.gpus[0].step_ms, period)


def test_the_last_turn_the_recording_ended_inside_is_partial() -> None:
    """The history ends at the last step's end: the last turn holds its enqueue (9.7 ms), not its wait for the GPU
    (every other turn: 51.2 ms at least).  Dropped as partial, not averaged; the first, begun 0.15 ms before its
    forward after the warm-up's ``synchronize()``, is whole and kept (h37-survey56 dropped it as partial: its
    enqueue, read from the history's start to its step's end)."""
    rep = _report(SYNC)
    assert (rep.steps["found"], rep.steps["count"]) == (5, 4), rep.steps
    (drop,) = rep.steps["dropped"]
    assert drop["step"] == 4 and drop["reason"].startswith("partial: 9.70"), drop


def test_control_turns_that_touch_keep_their_steps_and_warm_up() -> None:
    """A loop with nothing between a step's end and its next forward but ``zero_grad`` (the history from the process's
    first allocation): 4 steps kept after the first (warm-up: Adam's state), none dropped as partial, each the
    period between its marks either way -- main before h37-survey56 25.9 ms from each forward, h37-survey56 26.06
    from each mark, now 26.02 from each turn's first allocation (1%)."""
    rep = _report(FROM_START)
    ends = _marks(FROM_START, "Optimizer.step", "END")
    assert (rep.steps["found"], rep.steps["count"]) == (5, 4), rep.steps
    assert [d["reason"].split(":")[0] for d in rep.steps["dropped"]] == ["warm-up"]
    period = (ends[-1] - ends[0]) / 4
    assert abs(rep.gpus[0].step_ms - period) < 0.01 * period, rep.gpus[0].step_ms
