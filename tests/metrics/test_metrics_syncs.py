"""metrics.syncs: host syncs and the GPU idle after them, on a tiny capture whose truth is known by construction."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.formats.xplane.adapter import to_trace
from tb_gpu_advisor.formats.xplane.reader import parse_timeline
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.tiny_capture import Cap


def _capture(sync: bool):
    """Seven 1000 us steps: kernel `a` (100 us) launched at +10 and starting at +40; the host then waits for it
    in `aten::_local_scalar_dense` -> `cudaStreamSynchronize` (ending at +150, 10 us after `a`'s end at +140)
    and launches kernel `b` at +400, which starts at +420.  Truth: one sync per step; the GPU idles from
    `a`'s end (+140) to `b`'s start (+420): 280 us per step.  Without the sync the same idle has no sync to blame."""
    cap = Cap()
    for i in range(7):
        s = 1000 * i
        cap.host_ev("train", s, 900, step_num=i, _r=1)
        cap.kernel(s + 40, 100, launch_us=s + 10, name="a")
        if sync:
            cap.host_ev("aten::_local_scalar_dense", s + 30, 121)
            cap.host_ev("cudaStreamSynchronize", s + 31, 119)
        cap.kernel(s + 420, 100, launch_us=s + 400, name="b")
    return host_metrics(to_trace(parse_timeline(cap.space.encode())))


def test_sync_idle_is_the_gap_after_the_drained_queue():
    m = _capture(sync=True)
    assert m.syncs.calls_per_step == pytest.approx(1.0)
    assert m.syncs.gpu_idle_ms_per_step == pytest.approx(0.280, abs=1e-6)
    assert m.syncs.callers == [("aten::_local_scalar_dense", pytest.approx(1.0))]


def test_no_sync_no_sync_idle():
    m = _capture(sync=False)
    assert m.syncs.calls_per_step == 0 and m.syncs.gpu_idle_ms_per_step == 0.0


def test_sync_idle_is_booked_where_the_step_ledger_holds_it():
    """Issue #36: the idle after a sync was all called launch wait.  Here the host runs an op of its own (`aten::nonzero`,
    +200 to +350) before it launches `b` at +400: of the 280 us idle, ~150 us is host work and the rest the wait for
    the launch, as the step's breakdown books them; the parts add up to the idle and each fits in the breakdown."""
    cap = Cap()
    for i in range(7):
        s = 1000 * i
        cap.host_ev("train", s, 900, step_num=i, _r=1)
        cap.kernel(s + 40, 100, launch_us=s + 10, name="a")
        cap.host_ev("aten::_local_scalar_dense", s + 30, 121)
        cap.host_ev("cudaStreamSynchronize", s + 31, 119)
        cap.host_ev("aten::nonzero", s + 200, 150)
        cap.kernel(s + 420, 100, launch_us=s + 400, name="b")
    m = host_metrics(to_trace(parse_timeline(cap.space.encode())))
    booked = m.syncs.gpu_idle_ledger_ms
    assert set(booked) == {"launch_wait", "host_compute"}
    assert booked["host_compute"] == pytest.approx(0.150, abs=0.002)
    assert booked["launch_wait"] == pytest.approx(0.130, abs=0.002)
    assert sum(booked.values()) == pytest.approx(m.syncs.gpu_idle_ms_per_step) == pytest.approx(0.280, abs=1e-6)
    bd = m.breakdown.as_dict()
    assert all(v <= bd[c] + 1e-9 for c, v in booked.items())


@pytest.mark.parametrize("seed", range(4))
def test_covered_gaps_are_the_same_looked_up_a_chunk_at_a_time(seed, monkeypatch):
    """``_covered`` looks a thread's events up a chunk at a time (issue #38: bounded temporaries); any chunk size
    gives the one-pass answer, and that answer is the gaps painted by brute force on integer ticks."""
    import numpy as np

    from tb_gpu_advisor.metrics import context, syncs
    from tb_gpu_advisor.model.trace import HostEvents

    rng = np.random.default_rng(seed)
    n = 2000
    start = np.sort(rng.integers(0, 4000, n)).astype(np.int64)
    none = np.full(n, -1, np.int32)
    h = HostEvents(start=start, end=start + rng.integers(0, 30, n), name=np.zeros(n, np.int32),
                   line=rng.integers(0, 3, n).astype(np.int16), corr=none, group_id=none, step_num=none, iter_num=none,
                   root=none, is_eager=none.astype(np.int8), names=["x"], line_names=["a", "b", "c"])
    mask = rng.random(n) < 0.5
    gs = np.sort(rng.choice(4000, 40, replace=False)).astype(np.int64)
    s, e = gs[::2], gs[1::2]  # disjoint sorted gaps
    py = (np.array([100, 2500], np.int64), np.array([180, 2600], np.int64))
    answers = []
    for chunk in (7, 256, 1 << 18):
        monkeypatch.setattr(context, "_CHUNK", chunk)
        answers.append([a.tolist() for a in syncs._covered(h, (mask, py), s, e)])
    assert answers[0] == answers[1] == answers[2]
    grid = np.zeros(4100, bool)
    for a, b in zip(h.start[mask].tolist() + py[0].tolist(), h.end[mask].tolist() + py[1].tolist()):
        grid[a:b] = True
    gaps = np.zeros(4100, bool)
    for a, b in zip(s.tolist(), e.tolist()):
        gaps[a:b] = True
    got = np.zeros(4100, bool)
    for a, b in zip(*answers[0]):
        got[a:b] = True
    assert np.array_equal(got, grid & gaps) and got.any()
