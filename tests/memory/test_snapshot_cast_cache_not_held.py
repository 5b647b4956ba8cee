"""Autocast's cast cache made in the peak's pass is not "held across steps" (issue #37 class 5, h37-snapleft).

A real snapshot (QR-0W/Stanford-CS336 @835b5286, MIT, kept in tests/fixtures/wild/snapshot_autocast_cache_ctx128;
the same program and numbers as CTKnight's bf16 forward): a 2.7B CS336 LM's forward under bf16 autocast and
``no_grad``, one pass recorded.  The pass makes autocast's 16-bit copy of each fp32 weight that requires grad and the
cache frees them all when the region exits: the level after the pass is the level before it.  So nothing the pass
made is held across steps: what is held at the peak is the level before the pass (the weights); main booked the
copies with the weights ("held across steps" 19.1 GiB for 12.8).  Truth by replay of the file's own history."""

from __future__ import annotations

import gzip
import pickle

from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

CTX128 = (FIXTURES / "wild" / "snapshot_autocast_cache_ctx128"
          / "size-2.7b_ctx-128_mode-forward_precision-mixed_bf16.pickle.gz")
GIB = 1 << 30


def _replayed() -> tuple[int, int, int]:
    """(allocated before the history, after it, at its peak), from the file: the dump's allocated blocks less the
    history's net change, then the running sum."""
    with gzip.open(CTX128, "rb") as f:
        snap = pickle.load(f)
    events = snap["device_traces"][0]
    step = [e["size"] if e["action"] == "alloc" else -e["size"] if e["action"] == "free_completed" else 0
            for e in events]
    end = sum(b["size"] for s in snap["segments"] for b in s["blocks"] if b["state"] == "active_allocated")
    level = start = end - sum(step)
    peak = start
    for d in step:
        level += d
        peak = max(peak, level)
    return start, end, peak


def test_the_pass_holds_nothing_past_its_end() -> None:
    start, end, peak = _replayed()
    assert start == end  # the pass frees all it made, the copies too
    assert 12.5 * GIB < start < 13 * GIB and peak - start > 6 * GIB


def test_held_across_steps_is_the_level_before_the_pass_and_the_copies_are_booked_apart() -> None:
    start, _, peak = _replayed()
    g = host_metrics(read_trace(str(CTX128))).memory.gpus[0]
    assert g.peak_allocated_bytes == peak
    assert g.breakdown["held"] == start
    assert g.breakdown["casts"] == g.cast_cache_bytes > 6 * GIB  # autocast's copies, this pass's
    assert sum(v for k, v in g.breakdown.items() if k != "held") == peak - start
