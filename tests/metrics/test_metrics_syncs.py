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
    `a`'s end (+140) to `b`'s start (+420), 280 us per step, but without the sync the host would have run on 119 us
    sooner (the time it was blocked, +31 to +150), launched `b` at +281 and the GPU idled 161 us: the sync's cost is
    119 us a step (issue #37 item 3: only the idle it causes).  Without the sync the idle has no sync to blame.  The
    host's code is recorded by a user range `loop body` inside the step: the step's own range `train` records no host
    work (h37-left52), so without it the host's time from the sync to `b`'s launch is time the profiler did not
    record, not the sync's."""
    cap = Cap()
    for i in range(7):
        s = 1000 * i
        cap.host_ev("train", s, 900, step_num=i, _r=1)
        cap.host_ev("loop body", s + 1, 898)  # the host's code, recorded (see _capture)
        cap.kernel(s + 40, 100, launch_us=s + 10, name="a")
        if sync:
            cap.host_ev("aten::_local_scalar_dense", s + 30, 121)
            cap.host_ev("cudaStreamSynchronize", s + 31, 119)
        cap.host_ev("aten::empty", s + 155, 240)  # the host's own recorded work until it launches `b`
        cap.kernel(s + 420, 100, launch_us=s + 400, name="b")
    return host_metrics(to_trace(parse_timeline(cap.space.encode())))


def test_sync_idle_is_the_gap_after_the_drained_queue():
    m = _capture(sync=True)
    assert m.syncs.calls_per_step == pytest.approx(1.0)
    assert m.syncs.gpu_idle_ms_per_step == pytest.approx(0.119, abs=1e-6)
    assert m.syncs.wait_ms_per_step == pytest.approx(0.119, abs=1e-6)
    assert m.syncs.callers == [("aten::_local_scalar_dense", pytest.approx(1.0))]


def test_no_sync_no_sync_idle():
    m = _capture(sync=False)
    assert m.syncs.calls_per_step == 0 and m.syncs.gpu_idle_ms_per_step == 0.0


def test_sync_idle_is_booked_where_the_step_ledger_holds_it():
    """Issue #36: the idle after a sync was all called launch wait.  Here the host runs an op of its own (`aten::nonzero`,
    +200 to +350) before it launches `b` at +400.  The sync costs the 119 us it blocked the host (the rest of the
    280 us idle is the host's own work and launch, which run with or without it); that claim is booked where the
    step's breakdown holds its time -- the first 119 us of the gap, 60 us waiting for the launch, then 59 us of the
    host's op -- and each part fits in the breakdown.  Less the 50 us from the sync's return (+150) to the op (+200)
    in which nothing but the step's own range `train` is recorded: a range that bounds the step records no host work
    (h37-left52), so that stretch is the host's unrecorded time, not the sync's: the sync's 119 us are the first of the gap's
    recorded part, 10 us of launch wait and 109 us of the op."""
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
    assert booked["launch_wait"] == pytest.approx(0.010, abs=0.002)
    assert booked["host_compute"] == pytest.approx(0.109, abs=0.002)
    assert sum(booked.values()) == pytest.approx(m.syncs.gpu_idle_ms_per_step) == pytest.approx(0.119, abs=1e-6)
    # +150..+200 and +350..+400 hold nothing recorded: unrecorded, and with the sync's claim within the 280 us gap
    assert m.syncs.unrecorded_ms_per_step >= 0.100 - 1e-6
    assert m.syncs.unrecorded_ms_per_step + m.syncs.gpu_idle_ms_per_step <= 0.280 + 1e-6
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


def test_a_sync_that_returned_at_once_does_not_own_the_host_work_after_it():
    """Issue #37 item 3, as on a real Nsight export of an LLM-inference simulation (Sh1mwww/llama3-inference,
    unlicensed): each layer syncs (17 us, the GPU had 37 us queued), then the host spends 1.1 ms in a range of its own
    with no runtime call before it launches again; main blamed the sync for the 95% of the step the GPU idled.  Here
    the host syncs for 10 us after `a`, then runs its own 700 us op, then launches `b`: the sync costs at most the
    10 us it blocked the host; the op's 700 us is the host's own time, whatever the sync."""
    cap = Cap()
    for i in range(7):
        s = 1000 * i
        cap.host_ev("train", s, 900, step_num=i, _r=1)
        cap.kernel(s + 20, 10, launch_us=s + 10, name="a")
        cap.host_ev("cudaDeviceSynchronize", s + 25, 10)
        cap.host_ev("ensure_weights", s + 40, 700)
        cap.kernel(s + 800, 100, launch_us=s + 760, name="b")
    m = host_metrics(to_trace(parse_timeline(cap.space.encode())))
    assert m.syncs.calls_per_step == pytest.approx(1.0)
    assert m.syncs.wait_ms_per_step == pytest.approx(0.010, abs=1e-6)
    assert 0 < m.syncs.gpu_idle_ms_per_step <= m.syncs.wait_ms_per_step + 1e-9
