"""A JAX read of a large array each step is the copy's cost, not a sync's (issue #37 class 3, h37-copies22).

The assumption was that every read of a ``jax.Array``'s value (``np.asarray(jax.Array)``) is the program waiting for
the GPU's queue, a sync with ``host_sync``'s fix ("read every N steps").  A 4-byte ``float(loss)`` is: its wait is the
drain and the next dispatch.  A 64 MiB ``np.asarray(out)`` each step holds the host 1.2 ms in the transfer and 7.3 ms
copying the bytes out of jaxlib's staging buffer (``D2H Copy From Staging Buffer``, the real H100 rate), with the GPU
idle: the bytes are the cost, and the copy's check owns it, with JAX's own fix (fewer bytes, or
``jax.copy_to_host_async`` to start the copy early) -- never PyTorch's pinning or a batch prefetch to the device.

Truth by construction (``synthetic.jaxcapture``): the healthy bf16 loop with the read at each step's end, against the
same loop without it (its step is the GPU's period between steps' first kernels).  Controls: the 4-byte read stays a
sync (``test_jax_blocking_reads``), a read inside a round trip stays the round trip's, the loop without a read.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthetic import jaxcapture as jc
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report
from tests.support.xplane_paths import written_capture

US = 1_000_000  # ps
BIG = 64 << 20


def _loop(read_bytes: int) -> jc.JaxCapture:
    cap = jc.JaxCapture(seed=0, step_annotation=True, command_buffers=True)
    jc._async_loop(cap, jc.mlp_bf16_step(4, command_buffers=True), 20, read_bytes=read_bytes)
    return cap


def _period_ms(cap: jc.JaxCapture) -> float:
    """The step as the GPU runs it: mean time between consecutive steps' first kernels (first and last dropped)."""
    firsts = [min(k[0] for e in s.execs for k in e.kernels) for s in cap.steps]
    return float(np.mean(np.diff(firsts)[1:-1])) / (1000 * US)



def _report(tmp_path: Path, cap: jc.JaxCapture, name: str):
    p = written_capture(tmp_path, cap, name)
    m = host_metrics(read_trace(str(p)))
    return m, host_report(m, p.stat().st_size).findings


def test_a_large_read_each_step_is_the_copys_cost_in_jaxs_words(tmp_path):
    cap = _loop(BIG)
    truth = _period_ms(cap) - _period_ms(_loop(0))  # what the read adds to the step: ~8.6 ms
    m, findings = _report(tmp_path, cap, "big_read")
    # the read's drain and dispatch stay a sync's (h37-copies23), a 4-byte read's ~0.22 ms: too little for a finding
    assert m.syncs.calls_per_step == pytest.approx(1.0) and m.syncs.gpu_idle_ms_per_step < 0.3
    assert m.syncs.copy_calls_per_step == pytest.approx(1.0)
    assert m.syncs.copy_callers == [("np.asarray(jax.Array)", pytest.approx(1.0))]
    assert not any(f.rule == "host_sync" for f in findings)
    f = next(f for f in findings if f.rule == "excessive_memcpy")
    assert f.severity == "critical" and findings[0] is f
    # the transfer (1.22 ms) and the GPU's idle while the bytes leave the staging buffer; with the sync's part, within
    # 10% of the twin's difference, never above it
    both = f.saving.ms_per_step + m.syncs.gpu_idle_ms_per_step
    assert 0.9 * truth <= both <= truth, (f.saving.ms_per_step, m.syncs.gpu_idle_ms_per_step, truth)
    assert "mostly D2H" in f.summary and "read of device values" in f.summary
    assert "copy to the device" not in f.summary
    text = f.summary + " ".join(a.text + (a.snippet or "") for a in f.actions)
    assert f.actions[0].text.startswith("Read fewer bytes back each step")
    assert "copy_to_host_async" in text
    for word in ("pin_memory", "non_blocking", "DataLoader", "double buffering", "cudaHostAlloc", "torch"):
        assert word not in text, word


def test_control_a_small_read_each_step_stays_a_sync(tmp_path):
    """4 bytes: the transfer and staging are microseconds of a ~0.25 ms wait -- the drain and the next dispatch."""
    m, findings = _report(tmp_path, _loop(4), "small_read")
    assert m.syncs.calls_per_step == pytest.approx(1.0) and m.syncs.copy_calls_per_step == 0
    assert any(f.rule == "host_sync" for f in findings)


@pytest.mark.parametrize("nbytes", [1 << 20, 16 << 20, BIG])
def test_a_reads_wait_splits_between_its_bytes_and_its_drain(tmp_path, nbytes):
    """h37-copies23: a read's wait is two costs, each microsecond booked once -- the instants its bytes move (the
    transfer, the staging copy) the copy's, the drain, callback and next dispatch the sync's.  Truth by construction:
    the sync's part is what a 4-byte read adds to the loop (its bytes move in microseconds), the copy's the rest of
    what this read adds.  Main booked the whole wait to one cause by which half was larger: 1 MiB all the copy's
    (0.28 ms of a 0.38 ms cost, no sync), 16 and 64 MiB likewise (no sync)."""
    base = _period_ms(_loop(0))
    small = _loop(4)
    sync_truth = _period_ms(small) - base  # the round trip of any read: ~0.25 ms
    wait = host_metrics(read_trace(str(written_capture(tmp_path, small, "small")))).syncs.wait_ms_per_step
    cap = _loop(nbytes)
    truth = _period_ms(cap) - base
    m, findings = _report(tmp_path, cap, f"read_{nbytes}")
    s = m.syncs
    assert s.calls_per_step == pytest.approx(1.0) and s.copy_calls_per_step == pytest.approx(1.0)
    assert 0.8 * sync_truth <= s.gpu_idle_ms_per_step <= sync_truth, (s.gpu_idle_ms_per_step, sync_truth)
    copy = next(f for f in findings if f.rule == "excessive_memcpy").saving.ms_per_step  # the idle and the transfer
    assert copy == pytest.approx(truth - sync_truth, rel=0.1), (copy, truth - sync_truth)
    assert 0.9 * truth <= copy + s.gpu_idle_ms_per_step <= truth  # the whole read, never more than it costs
    # the host's wait in the syncs is the read less its bytes moving: a 4-byte read's (the GPU's step, then the round trip)
    assert s.wait_ms_per_step == pytest.approx(wait, abs=0.05), (s.wait_ms_per_step, wait)


def _mixed_loop(reads: tuple[int, ...], steps: int = 12) -> jc.JaxCapture:
    """The healthy loop reading several values of different sizes each step, one after the other."""
    cap = jc.JaxCapture(seed=0, step_annotation=True, command_buffers=True)
    kernels = jc.mlp_bf16_step(4, command_buffers=True)
    for _ in range(steps):
        cap.begin_step()
        cap.execute(kernels)
        for nbytes in reads:
            cap.to_host(nbytes)
        cap.end_step()
    return cap


def _naive_moving(ctx, reads: np.ndarray) -> np.ndarray:
    """Each read's bytes moving, one read at a time: the D2H transfers starting in it, and from the first of them the
    staging copies starting before its return (ends clipped at the return) -- the reference for the searched form."""
    from tb_gpu_advisor import devices

    h = ctx.h
    out = np.zeros(reads.size, dtype=np.int64)
    stage = h.name_mask(ctx.fw.read_staging_event)
    for i, r in enumerate(reads):
        rs, re = int(h.start[r]), int(h.end[r])
        first = None
        for g in ctx.gpus:
            d = g.d
            for k in np.flatnonzero(d.kind == devices.KIND_D2H):
                if rs <= d.start[k] < re:
                    first = int(d.start[k]) if first is None else min(first, int(d.start[k]))
                    out[i] += min(int(d.end[k]), re) - int(d.start[k])
        if first is None:
            continue
        for k in np.flatnonzero(stage):
            if first <= h.start[k] < re:
                out[i] += min(int(h.end[k]), re) - int(h.start[k])
    return out


def test_many_reads_a_step_are_measured_as_one_at_a_time(tmp_path, monkeypatch):
    """The reads' bytes are found by binary search over the sorted transfers and staging copies (was a Python loop
    over reads): 6 reads a step of 4 B to 16 MiB give each read what a read-at-a-time pass gives, and the idle splits
    by the reads' sizes -- only the large ones are the copy's."""
    from tb_gpu_advisor.metrics import syncs

    seen = []
    real = syncs._read_moving

    def spy(ctx, reads):
        out = real(ctx, reads)
        seen.append((ctx, reads, out[0]))
        return out

    monkeypatch.setattr(syncs, "_read_moving", spy)
    sizes = (4, 1 << 20, 4, 16 << 20, 256, 4 << 20)
    m, _ = _report(tmp_path, _mixed_loop(sizes), "mixed")
    ctx, reads, moving = seen[-1]
    assert reads.size >= 6 * 10
    np.testing.assert_array_equal(moving, _naive_moving(ctx, reads))
    assert m.syncs.calls_per_step == pytest.approx(6.0)
    assert m.syncs.copy_calls_per_step == pytest.approx(3.0)  # 1, 16 and 4 MiB; the 4 and 256-byte reads' are latency
