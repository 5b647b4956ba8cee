"""JAX's reads of device values are the syncs the program asked for (issue #37 class 3, h37-left55).

The assumption was that a sync is a runtime call (``cudaStreamSynchronize`` behind PyTorch's ``.item()``).  JAX's
XPlane records no sync call: every read of a ``jax.Array``'s value (``float(loss)``, ``x.item()``,
``np.asarray(x)``, ``jax.device_get``, ``print(x)``) passes through jax's ``np.asarray(jax.Array)`` annotation, which
spans the host's wait (the real ``host_roundtrip``: 15 of them, 4.1 ms each, holding the D2H copy's
``CommonPjRtBuffer::ToLiteral`` and ``D2H Copy From Staging Buffer``).  So a JAX loop logging ``float(loss)`` each
step left the idle it causes to launch wait, and the capture was "Healthy".

Truth by construction (``synthetic.jaxcapture.jax_read_each_step``): the healthy async bf16 loop with one 4-byte read
at the end of each step; the GPU idles from the read's copy back to the next step's first kernel.  Controls: the
same loop without the read (no sync), a read whose data leaves and comes back (a round trip: its idle is the round
trip's, ``host_op_placement``'s, never a sync's), and the two real runs the design was written on
(``../shared/profiles/real-h100-jax``: ``host_roundtrip`` claims 0 ms of its one read a step, ``implicit_numpy_input``
holds no read -- its host blocks inside the executable's implicit transfer, the copy's cost).
"""

from __future__ import annotations


import numpy as np
import pytest

from synthetic import jaxcapture as jc
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.rules.host_sync import replay_wait_held_by_syncs
from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report
from tests.support.real_checks import REAL_JAX_SET
from tests.support.xplane_paths import written_capture

US = 1_000_000  # ps



def _loop(read_bytes: int) -> jc.JaxCapture:
    """The healthy bf16 loop of ``jax_read_each_step`` (``read_bytes`` 0: no read)."""
    cap = jc.JaxCapture(seed=0, step_annotation=True, command_buffers=True)
    jc._async_loop(cap, jc.mlp_bf16_step(4, command_buffers=True), 20, read_bytes=read_bytes)
    return cap


def _period_ms(cap: jc.JaxCapture) -> float:
    """The loop's step as the GPU runs it: the mean time between consecutive steps' first kernels, over the steps the
    analysis keeps (first and last dropped)."""
    firsts = [min(k[0] for e in s.execs for k in e.kernels) for s in cap.steps]
    return float(np.mean(np.diff(firsts)[1:-1])) / (1000 * US)


def test_a_jax_read_each_step_is_a_sync_claimed_in_jax_words(tmp_path):
    """Truth by construction: what the read costs is the step of the loop with it less the step of the same loop
    without it (``_period_ms``, 2.62 - 2.37 ms): the GPU idles from the drain to the read's copy, for the copy's
    return and for the next dispatch.  Main claimed only the idle after the read's own copy (0.148 ms, 59%); the
    drained stretch from the drain on, capped by the read's wait, is 87% of it (h37-waits2)."""
    cap = _loop(read_bytes=4)
    truth = _period_ms(cap) - _period_ms(_loop(read_bytes=0))
    p = written_capture(tmp_path, cap, "read_each_step")
    m = host_metrics(read_trace(str(p)))
    assert m.syncs.calls_per_step == pytest.approx(1.0)
    assert m.syncs.callers == [("np.asarray(jax.Array)", pytest.approx(1.0))]
    # the twin's saving, less the host's few microseconds between events that no event records
    assert 0.8 * truth <= m.syncs.gpu_idle_ms_per_step <= truth, (m.syncs.gpu_idle_ms_per_step, truth)
    f = next(f for f in host_report(m, p.stat().st_size).findings if f.rule == "host_sync")
    assert f.severity in ("warning", "critical")
    # and the 1.6 us a step before the command-buffer replays the reading host prepares only after its read, the
    # read's too (h37-tiny69: 0.226 ms of the 0.252 the twin gives, main 0.224)
    assert f.saving.ms_per_step == pytest.approx(m.syncs.gpu_idle_ms_per_step + replay_wait_held_by_syncs(m), abs=1e-3)
    assert f.saving.ms_per_step <= truth
    text = f.title + f.summary + f.metric.meaning + " ".join(a.text + (a.snippet or "") for a in f.actions)
    assert "float(loss)" in f.summary and "waits for the GPU" in f.title  # a wait or a read (h37-left61)
    assert not any(w in text for w in ("torch", "cudaStreamSynchronize", "stream/device/event", ".cpu()")), text
    assert f.actions[0].text.startswith("Wait for the GPU or read values off it every N steps")


def test_control_the_same_loop_without_a_read_has_no_sync(tmp_path):
    p = written_capture(tmp_path, _loop(read_bytes=0), "no_read")
    m = host_metrics(read_trace(str(p)))
    assert m.syncs.calls_per_step == 0 and m.syncs.gpu_idle_ms_per_step == 0
    assert not any(f.rule == "host_sync" for f in host_report(m, p.stat().st_size).findings)


def test_control_a_read_inside_a_round_trip_is_the_round_trips(tmp_path):
    """part1 -> np.asarray(activation) (16 MiB) -> host work the program records -> jnp.asarray back -> part2: the
    read waits for the GPU, and the idle after it is the round trip's, sized by host_op_placement."""
    cap = jc.JaxCapture(seed=0, step_annotation=True, command_buffers=True)
    ks = jc.mlp_bf16_step(2, command_buffers=True)
    for _ in range(12):
        cap.begin_step()
        cap.execute(ks, function="part1")
        cap.to_host(16 << 20, shape="bf16[2048,4096]")
        with cap.annotation("clip_on_host"):
            cap.host_work(1500.0)
        cap.execute(ks, function="part2", inputs=(cap.device_put(16 << 20, "bf16[2048,4096]"),))
        with cap.annotation("metrics_on_host"):  # the step's marker closes after part2 has run
            cap.host_work(2500.0)
        cap.end_step()
    p = written_capture(tmp_path, cap, "round_trip_read")
    m = host_metrics(read_trace(str(p)))
    assert m.syncs.calls_per_step == pytest.approx(1.0)  # the read is seen ...
    assert m.round_trip.idle_ms_per_step > 1.0  # ... inside a round trip the copy check sizes ...
    assert m.syncs.gpu_idle_ms_per_step == 0  # ... which owns the idle after it


@pytest.mark.parametrize("run, reads", [("host_roundtrip", 1.0), ("implicit_numpy_input", 0.0)])
def test_real_jax_runs_claim_nothing_of_the_round_trip_or_the_implicit_transfer(run, reads):
    """host_roundtrip: one np.asarray a step, all of its idle inside the round trip (19.6 ms a step); without the
    round trip's stretch taken out first it would claim 2.4 ms a step.  implicit_numpy_input: no read at all -- the
    host blocks 5.5 ms a step inside ``Execute`` for the NumPy batch's transfer, never a read."""
    files = sorted((REAL_JAX_SET / run).glob("plugins/profile/*/*.xplane.pb"))
    if not files:
        pytest.skip(f"{REAL_JAX_SET / run} not here (the shared profiles are read in place)")
    m = host_metrics(read_trace(str(files[0])))
    assert m.syncs.calls_per_step == pytest.approx(reads)
    assert m.syncs.gpu_idle_ms_per_step == 0
    assert not any(f.rule == "host_sync" for f in host_report(m, files[0].stat().st_size).findings)


def test_control_a_healthy_tensorflow_step_has_no_read(tmp_path):
    """TensorFlow names no blocking read (its ``.numpy()`` writes no TraceMe of its own: h37-left55's survey), so a
    healthy TF capture has no sync to claim."""
    from synthetic.scenarios import SCENARIOS

    (host, raw), = list(SCENARIOS["ideal"]().encode().items())[:1]
    p = tmp_path / f"{host}.xplane.pb"
    p.write_bytes(raw)
    trace = read_trace(str(p))
    assert frameworks.detect_trace(trace).id == "tensorflow"
    m = host_metrics(trace)
    assert m.syncs.calls_per_step == 0 and m.syncs.gpu_idle_ms_per_step == 0
    assert not any(f.rule == "host_sync" for f in host_report(m, len(raw)).findings)
