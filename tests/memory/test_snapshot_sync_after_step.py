"""A snapshot's marked iterations tile the loop: the host's time between one optimizer step's end and the next forward
is a step's (h37-survey56, issue #37 class 5).

Zhangkuns/Standford_CS336_LanguageModelingfromScratch (MIT, ``wild/snapshot_sync_after_step``): CS336's benchmark
records 5 AdamW steps after its warm-up, each ending in ``torch.cuda.synchronize()``.  Read by hand from the pickle:
the ``Optimizer.step`` ends at 20.01, 63.01, 113.99, 166.54, 219.87 ms of the history, each ``Optimizer.zero_grad``
start (the turn's first call) 34-44 ms after the end before it -- the host waiting for the GPU -- so the loop's period
is 51-54 ms.  Main cut each iteration from its forward's first allocation to its step's end and read 11.2 ms steps:
the host's enqueue time alone.  ASSUMPTION that was wrong: an iteration begins with its forward's first allocation.
One step's end is the next turn's start, as a trace's optimizer-step ends cut its steps; the first, which the
recording began inside (its start reaches the history's first event, and it ran shorter than every later one), is
dropped as partial.

Controls: ``wild/snapshot_transformer_from_start`` (the same repository; a history from the process's first
allocation whose turns already touch: nothing between a step's end and the next forward but ``zero_grad``) keeps its
steps and its warm-up drop; ``wild/snapshot_adam_iterations`` keeps its two steps at its marks (framed and stackless
read the same: ``test_snapshot_stackless_first_iteration.py``).
"""

from __future__ import annotations

import gzip
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
    """Main: 5 steps of 11.2 ms (each from its forward to its step's end).  Now each from the step end before it to its
    own: the steps are the period between the marks, and their mean is the last four's span over four."""
    rep = _report(SYNC)
    ends = _marks(SYNC, "Optimizer.step", "END")
    rows = rep.step_rows.rows()
    assert [round(r.start_ms + r.step_ms, 2) for r in rows] == [round(e, 2) for e in ends[1:]]
    assert [round(r.start_ms, 2) for r in rows] == [round(e, 2) for e in ends[:-1]]
    assert abs(rep.gpus[0].step_ms - (ends[-1] - ends[0]) / 4) < 0.05, rep.gpus[0].step_ms


def test_the_first_iteration_the_recording_began_inside_is_partial() -> None:
    """The recording began after the warm-up's ``synchronize()``: the first iteration's start reaches the history's
    first event, and it ran 20.0 ms to its step's end where every later one ran at least 43.0 ms -- its wait for the
    GPU is in the next.  Dropped as partial, not averaged (main: kept, 11.2 ms)."""
    rep = _report(SYNC)
    assert (rep.steps["found"], rep.steps["count"]) == (5, 4), rep.steps
    (drop,) = rep.steps["dropped"]
    assert drop["step"] == 0 and drop["reason"].startswith("partial: 20.0"), drop
    assert "the recording began inside it" in drop["reason"]


def test_control_turns_that_touch_keep_their_steps_and_warm_up() -> None:
    """A loop with nothing between a step's end and its next forward but ``zero_grad`` (the history from the process's
    first allocation): 4 steps kept after the first (warm-up: Adam's state), none dropped as partial, each the
    period between its marks either way -- main 25.9 ms from each forward, now 26.06 from each mark (1%)."""
    rep = _report(FROM_START)
    ends = _marks(FROM_START, "Optimizer.step", "END")
    assert (rep.steps["found"], rep.steps["count"]) == (5, 4), rep.steps
    assert [d["reason"].split(":")[0] for d in rep.steps["dropped"]] == ["warm-up"]
    period = (ends[-1] - ends[0]) / 4
    assert abs(rep.gpus[0].step_ms - period) < 0.01 * period, rep.gpus[0].step_ms
