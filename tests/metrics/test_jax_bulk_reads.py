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
    p = tmp_path / name / f"{name}.xplane.pb"
    p.parent.mkdir(parents=True)
    cap.finish().write(p)
    m = host_metrics(read_trace(str(p)))
    return m, host_report(m, p.stat().st_size).findings


def test_a_large_read_each_step_is_the_copys_cost_in_jaxs_words(tmp_path):
    cap = _loop(BIG)
    truth = _period_ms(cap) - _period_ms(_loop(0))  # what the read adds to the step: ~8.6 ms
    m, findings = _report(tmp_path, cap, "big_read")
    assert m.syncs.calls_per_step == 0 and m.syncs.gpu_idle_ms_per_step == 0  # no sync: main claimed 7.5 ms here
    assert m.syncs.copy_calls_per_step == pytest.approx(1.0)
    assert m.syncs.copy_callers == [("np.asarray(jax.Array)", pytest.approx(1.0))]
    assert not any(f.rule == "host_sync" for f in findings)
    f = next(f for f in findings if f.rule == "excessive_memcpy")
    assert f.severity == "critical" and findings[0] is f
    # the transfer (1.22 ms) and the GPU's idle while the bytes leave the staging buffer, less the host's few
    # microseconds no event records: within 10% of the twin's difference, never above it
    assert 0.9 * truth <= f.saving.ms_per_step <= truth, (f.saving.ms_per_step, truth)
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
