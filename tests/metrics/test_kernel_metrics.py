"""metrics.kernels: the kernel table's per-row numbers, on tiny captures whose truth is known by construction."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.formats.xplane.adapter import to_trace
from tb_gpu_advisor.formats.xplane.reader import parse_timeline
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.tiny_capture import Cap


def test_kernel_launch_latency_counts_only_launches_onto_an_idle_stream():
    """In each step kernel `a` is launched onto an idle stream and starts 25 us later; then eight `b` kernels are
    launched 1 us apart while `a` still runs, each running 50 us, so they queue (start - launch grows to ~400 us:
    queueing, not launch latency).  Truth by construction: `a` 25 us; `b` never finds its stream idle -> None."""
    cap = Cap()
    for i, s in enumerate((0, 1000, 2000, 3000, 4000, 5000, 6000)):
        cap.host_ev("train", s, 900, step_num=i, _r=1)
        cap.kernel(s + 25 + 10, 30, launch_us=s + 10, name="a")  # idle stream: starts 25 us after its launch
        for k in range(8):  # launched while `a` (and earlier `b`s) still run: queued
            cap.kernel(s + 65 + 50 * k, 50, launch_us=s + 20 + k, name="b")
    m = host_metrics(to_trace(parse_timeline(cap.space.encode())))
    lat = {k.name: k.launch_latency_avg_us for k in m.kernels}
    assert lat["a"] == pytest.approx(25.0)
    assert lat["b"] is None  # every `b` queued behind `a` or another `b`


def _dominant_reference(inv, sid, nkeys):
    """The plain loop: count each key's non-negative ids, keep the most frequent, the smallest on a tie."""
    from collections import Counter

    counts = [Counter() for _ in range(nkeys)]
    for k, s in zip(inv.tolist(), sid.tolist()):
        if s >= 0:
            counts[k][s] += 1
    return [min(c, key=lambda s: (-c[s], s)) if c else -1 for c in counts]


@pytest.mark.parametrize("seed", range(40))
def test_dominant_sid_equals_the_counting_loop(seed):
    """Truth by construction: random keys and string ids (none, one, ties, all missing, huge ids) against the loop."""
    import numpy as np

    from tb_gpu_advisor.metrics.kernels import _dominant_sid

    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 2, 7, 50, 500]))
    nkeys = int(rng.integers(1, 12))
    inv = rng.integers(0, nkeys, n)
    hi = int(rng.choice([1, 3, 40, 2**40]))
    sid = rng.integers(-2, hi, n).astype(rng.choice([np.int32, np.int64]) if hi < 2**31 else np.int64)
    if seed % 5 == 0:
        sid[:] = -1  # no string at all
    got = _dominant_sid(inv, sid, nkeys)
    assert got.tolist() == _dominant_reference(inv, sid, nkeys)
