"""Controls for the "forward kept for a backward that never runs" advice (issue #37 class 5, survey h37-survey49).

Two real snapshots of a CS336 attention benchmark (sungdk0822/CS336-assignment2-systems @849f31ec, MIT, kept in
tests/fixtures/wild/snapshot_attn_fwd_{autograd,compiled}): 100 forward passes of a hand-written attention
(batch 8, 16,384 tokens, d 64) on ``Q, K, V`` that require grad, with autograd on and no backward -- eager and under
``torch.compile``.  Autograd keeps tensors past each pass (16 GiB eager, both 8 GiB buffers compiled, freed only when
the output is dropped), but the PEAK would not fall under ``inference_mode``: eager, the softmax's division holds
the scores (a local of the caller), ``exp(x)`` and its result at once (3 x 8 GiB) whatever the grad mode; compiled,
the score matrix and the softmax's output are both live in the softmax kernel (2 x 8 GiB).  A finding that said
``inference_mode`` "frees" memory at the peak here would contradict the file.  Truth by replay of the file's own
history (below), not by the Advisor."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

EAGER = FIXTURES / "wild" / "snapshot_attn_fwd_autograd" / "dmodel64_seqlen16384_forwardpassonly.pickle"
COMPILED = FIXTURES / "wild" / "snapshot_attn_fwd_compiled" / "dmodel64_seqlen16384_forwardpassonly_compile.pickle"
GIB = 2 ** 30


def _analyze(path: Path):
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _replayed_peak(path: Path) -> tuple[int, int]:
    """(the allocated bytes at the history's peak, the number of 8 GiB blocks live there), from the file alone: the
    bytes allocated at the dump less the history's net change, plus the running sum's maximum."""
    with open(path, "rb") as f:
        snap = pickle.load(f)
    events = snap["device_traces"][0]
    at_dump = sum(s["allocated_size"] for s in snap["segments"])
    net = sum(e["size"] if e["action"] == "alloc" else -e["size"]
              for e in events if e["action"] in ("alloc", "free_completed"))
    live, peak, big, big_at_peak = at_dump - net, 0, 0, 0
    for e in events:
        step = {"alloc": 1, "free_completed": -1}.get(e["action"], 0)
        live += step * e["size"]
        big += step * (e["size"] >= 8 * GIB)
        if live > peak:
            peak, big_at_peak = live, big
    return peak, big_at_peak


@pytest.mark.parametrize("path, big", [(EAGER, 3), (COMPILED, 2)], ids=["eager", "compiled"])
def test_a_forward_whose_peak_no_grad_would_not_lower_gets_no_inference_mode_advice(path: Path, big: int):
    peak, big_at_peak = _replayed_peak(path)
    assert big_at_peak == big  # the pass's own working set at its peak: 3 (eager) or 2 (compiled) score matrices
    rep = _analyze(path)
    mem = rep.gpus[0].memory
    assert mem["peak_allocated_bytes"] == peak
    kept = [f.id for f in rep.findings if f.metric is not None and f.metric.detail.get("cause") != "attention_math"
            and f.id.startswith("activation_memory")]
    assert not kept, [f.id for f in rep.findings]
    # what the peak does hold: the hand-written softmax's score-sized blocks, which a fused kernel never writes --
    # eager its exp and quotient (2 x 8 GiB), compiled the softmax kernel's output (8 GiB); the QK^T scores, made
    # outside the softmax, are not counted (a lower bound) (h37-survey41m)
    (f,) = [f for f in rep.findings if f.metric is not None and f.metric.detail.get("cause") == "attention_math"]
    assert f.saving_bytes // (8 * GIB) == big - 1 and "fused" in f.actions[0].text


def _passes(path: Path) -> tuple[int, int]:
    """(passes, allocations a pass) from the file alone: each return of the level to the 136 MiB it starts from (Q, K,
    V and the label, made before the history) after a climb ends one pass."""
    with open(path, "rb") as f:
        snap = pickle.load(f)
    events = [e for e in snap["device_traces"][0] if e["action"] in ("alloc", "free_completed")]
    live, passes, allocs = 0, 0, 0
    for e in events:
        allocs += e["action"] == "alloc"
        live += e["size"] if e["action"] == "alloc" else -e["size"]
        passes += live == 0 and e["action"] == "free_completed"
    return passes, allocs // passes


@pytest.mark.parametrize("path, per_pass", [(EAGER, 9), (COMPILED, 6)], ids=["eager", "compiled"])
def test_forward_passes_are_read_whether_or_not_a_frame_names_a_module(path: Path, per_pass: int):
    """Both read as what they are: 100 forward passes (first and last dropped), no training.  The compiled one's
    Inductor frames phase its allocations as a forward; the eager one's hand-written functions name no module, so
    main read it "GPU work of an unknown kind" with no step (h37-survey49): its passes are read from the pattern, as
    a stackless history's are."""
    assert _passes(path) == (100, per_pass)
    rep = _analyze(path)
    assert rep.job["kind"] == "inference", rep.job
    assert (rep.steps["found"], rep.steps["count"]) == (100, 98), rep.steps
    assert f"the same allocations ({per_pass} a pass)" in rep.steps["note"]


SWEEP = FIXTURES / "wild" / "snapshot_attn_sweep_cache" / "dmodel128_seqlen4096_forwardpassonly.pickle"


def _segments(path: Path) -> tuple[int, int, int]:
    """(bytes reserved, bytes in wholly free segments, segments holding a block) at the dump, from the file alone."""
    with open(path, "rb") as f:
        segs = pickle.load(f)["segments"]
    free = [s["total_size"] for s in segs if all(b["state"] == "inactive" for b in s["blocks"])]
    return sum(s["total_size"] for s in segs), sum(free), len(segs) - len(free)


def test_whole_free_segments_of_an_earlier_larger_run_are_no_fragmentation():
    """The same sweep's d=128, 4,096-token run, recorded after the 16,384-token runs in one process: 31.6 GiB
    reserved, of which 31.5 GiB in wholly free segments at the dump (three of 8 GiB and three of 2 GiB the earlier runs
    left cached), beside a 1.59 GiB peak.  Main read 30 GiB "in split, cached blocks no later request fits" with expandable segments as the
    fix; a whole free segment fits any request up to its size, and empty_cache() hands it back (h37-survey49)."""
    reserved, whole_free, in_use = _segments(SWEEP)
    assert whole_free > 0.9 * reserved and in_use <= 7
    rep = _analyze(SWEEP)
    mem = rep.gpus[0].memory
    assert mem["peak_reserved_in_use_bytes"] - mem["peak_allocated_bytes"] < 0.1 * mem["peak_reserved_in_use_bytes"]
    assert not [f.id for f in rep.findings if f.id.startswith("memory_fragmentation")], [f.id for f in rep.findings]
