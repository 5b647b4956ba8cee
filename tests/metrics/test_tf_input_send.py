"""TensorFlow: the graph's hand-over of the tf.data batch to the GPU (``IteratorGetNext/_1:_Send``, the host staging
the copy inside it) is input the GPU waits for, as the stock tool counts it (survey h37-survey18:
aoberai/chess-engine's Keras step on an RTX 2060 Max-Q idled its GPU 17.05 ms of a 41.0 ms step in those sends --
the stock overview's "input" 17.05 ms, read here as the host's own work and told to fuse ops with XLA; its session
at 00:30 waited 0.48 ms, the overview's 0.48 ms.  The repository has no licence: the cause is tested by construction).

Truth by construction: ``synthetic.tfcapture.Capture.step(send_us=...)`` writes the send on the launch thread before
the step's first launch and records it as the step's input wait; a twin without it waits for nothing."""

from __future__ import annotations

from pathlib import Path

from synthetic.scenarios import Capture, K, Scenario, _dense_layers, _input_copy
from synthetic.tfcapture import A100
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

STEPS = 8
SEND_US = 3000.0


def _metrics(tmp: Path, send_us: float, wait_us: float = 25.0):
    cap = Capture(1, A100, seed=0, marker="keras3")
    ops = [_input_copy()] + _dense_layers(6, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=200, ew_us=18)
    for _ in range(STEPS):
        cap.step([ops], input_wait_us=wait_us, send_us=send_us, jitter=0.0)
    sc = Scenario("tf_send", {"worker0": cap.finish()}, None)  # type: ignore[arg-type]
    path = Path(sc.write(tmp)[0])
    truth = cap.truth_numbers()
    return host_metrics(read(HostFile("worker0", str(path), 0, 0, "xplane"))), truth


def test_the_gpu_waiting_for_the_batchs_send_is_input_wait(tmp_path):
    m, truth = _metrics(tmp_path, SEND_US)
    want_ms = SEND_US / 1e3  # per step, by construction (jitter 0); the 25 us get-next wait before it adds
    assert abs(m.breakdown.input_wait - want_ms) <= 0.05 * want_ms + 0.03
    assert m.breakdown.host_compute < 0.5  # not the host's own work
    assert "input_bound" in {f.rule for f in evaluate(m)}


def test_without_the_send_there_is_no_such_wait(tmp_path):
    m, _ = _metrics(tmp_path, 0.0)
    assert m.breakdown.input_wait < 0.1


def test_a_wait_for_the_transfer_is_told_to_prefetch_to_the_gpu(tmp_path):
    m, _ = _metrics(tmp_path, SEND_US)
    assert m.input.transfer_ms_per_step >= 0.95 * SEND_US / 1e3
    (f,) = [f for f in evaluate(m) if f.rule == "input_bound"]
    assert "transfer to the device" in f.summary
    assert "prefetch_to_device" in (f.actions[0].snippet or "")


def test_a_wait_for_the_pipeline_is_not(tmp_path):
    """Control: the same wait in the pipeline itself (``IteratorGetNextOp::DoCompute``): make batches faster."""
    m, _ = _metrics(tmp_path, 0.0, wait_us=SEND_US)
    (f,) = [f for f in evaluate(m) if f.rule == "input_bound"]
    assert m.input.transfer_ms_per_step < 0.1 and "transfer to the device" not in f.summary
    assert not any("prefetch_to_device" in (a.snippet or "") for a in f.actions)
