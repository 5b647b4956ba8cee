"""What an OOM holds, read by the loop turns of the history's allocation pattern where no frame says (issue #37
class 5).

A history recorded without stacks (``_record_memory_history(context=None)``) names no allocation's phase, and one
whose frames hold no model call has no first forward for the reader's lifetime rule
(``formats.snapshot.reader._held_by_lifetime``) to read.  The steps stage finds its turns from the pattern of
allocations all the same (``job.iterations``: the sizes repeat, each turn climbs and falls back); a block made in an
earlier turn and still live when a later one runs out of memory is held across steps, as the peak's breakdown
already books it.  Main booked every such block "other" at the OOM, and the finding told a GPU whose weights and
optimizer state filled half of it that "allocations of no known phase" free the most, "about 0 B".  Truth by
construction: ``synthetic.memsnapshot.oom_later_turn``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.metrics.types import OomReport
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

#: How the same history is recorded: every frame (the default), none (``context=None``).
RECORDED = {"all": lambda doc: doc, "none": lambda doc: ms.as_recorded(doc, context=None)}


def _write(tmp_path: Path, recorded: str, sc: ms.Scenario) -> Path:
    return Path(ms.write(str(tmp_path / f"later_{recorded}.pickle"), RECORDED[recorded](sc.doc)))


def _oom(path: Path) -> OomReport:
    (oom,) = host_metrics(read_trace(str(path))).memory.ooms
    return oom


@pytest.mark.parametrize("built", ["hf", "moved"])
def test_without_frames_what_earlier_turns_made_is_held_at_the_oom(tmp_path: Path, built: str):
    """``context=None``: the weights (made before the first turn) and Adam's moments (made in the first, kept) are
    held across steps; the failing turn's own activations stay of no known phase (no frame, no backward yet)."""
    sc = ms.oom_later_turn(built)
    oom = _oom(_write(tmp_path, "none", sc))
    assert oom.by_category == {"held": sc.truth["weight_bytes"] + sc.truth["state_bytes"],
                               "other": sc.truth["live_activation_bytes"]}
    held = sum(b for b, c, _ in oom.live if c == "held")
    assert held and all(b == 256 * ms.MiB for b, c, _ in oom.live if c == "held")  # weights and moments, 256 MiB each


def test_without_frames_the_oom_finding_prescribes_for_what_is_held(tmp_path: Path):
    """12 GiB held across steps against 11.25 GiB of the turn's own blocks: sharding / offload frees the most (main:
    "allocations of no known phase, about 0 B")."""
    sc = ms.oom_later_turn()
    path = _write(tmp_path, "none", sc)
    rep = analyze_host(HostFile("oom", str(path), path.stat().st_size, 0, "snapshot"))
    f = next(f for f in rep.findings if f.rule == "oom_snapshot")
    assert f.metric.detail["cause"] == "held"
    assert f.saving_bytes == sc.truth["weight_bytes"] + sc.truth["state_bytes"]


def test_control_where_frames_say_the_kinds_nothing_moves(tmp_path: Path):
    """With every frame the reader knows each kind: weights, the optimizer's state, the forward's activations --
    as before (passes on main too)."""
    sc = ms.oom_later_turn()
    oom = _oom(_write(tmp_path, "all", sc))
    assert oom.by_category == {"held": sc.truth["weight_bytes"], "optimizer": sc.truth["state_bytes"],
                               "activations": sc.truth["live_activation_bytes"]}


def test_control_one_turn_is_not_held_across_steps(tmp_path: Path):
    """An OOM in the first turn (no whole turn before it): no block is known to outlive a step, so nothing is booked
    held by the turns -- left as the frames say (passes on main too)."""
    sc = ms.oom_weights("loader")
    path = Path(ms.write(str(tmp_path / "first.pickle"), ms.as_recorded(sc.doc, context=None)))
    assert set(_oom(path).by_category) == {"other"}
