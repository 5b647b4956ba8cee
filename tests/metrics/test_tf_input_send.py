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


def test_a_mirrored_replicas_iterator_op_and_its_send_are_input():
    """Real (``v100_bert_8gpu_tf24``, TF 2.4 MirroredStrategy, GPUs 4 and 6 run): each replica's iterator is the op
    numbered for it -- ``IteratorGetNextAsOptional_6:IteratorGetNextAsOptional`` on ``tf_gpu_private_6`` (162 us,
    begun before its ``IteratorGetNextAsOptionalOp::DoCompute`` on the tf.data thread) and its hand-over
    ``IteratorGetNextAsOptional_6/_52:_Send`` (40 us); the distributed dataset's
    ``MultiDeviceIteratorGetNextFromShard`` op records no ``DoCompute`` at all.  Main read only the ``DoCompute``
    events and an unnumbered ``IteratorGetNext/_1:_Send``: the rest of the iterator's own time was the host's work.
    The input wait is the GPU's idle inside every one of them (truth: the file's own intervals)."""
    import os
    from types import SimpleNamespace

    import numpy as np
    import pytest

    from tb_gpu_advisor.formats.xplane.adapter import read_trace
    from tb_gpu_advisor.frameworks import tensorflow
    from tb_gpu_advisor.runtime.pipeline import analyze_session
    from tests.support.intervals import union
    from tests.support.paths import SHARED_PROFILES

    path = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"
    if not path.exists():
        pytest.skip("shared v100_bert_8gpu_tf24 capture not present")
    t = read_trace(str(path))
    h = t.h
    named = {h.names[int(i)] for i in np.unique(h.name)}
    for name in ("IteratorGetNextAsOptional_6:IteratorGetNextAsOptional", "IteratorGetNextAsOptional_6/_52:_Send",
                 "MultiDeviceIteratorGetNextFromShard:MultiDeviceIteratorGetNextFromShard"):
        assert name in named and tensorflow.is_input_event(name)  # main: not input
    assert not tensorflow.is_input_event("cond_6/IteratorGetNextAsOptional_6/_77:Switch")  # control: a consumer's op
    host = analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(path), format="xplane",
                                                      size=os.path.getsize(path))]).to_dict()["hosts"][0]
    # GPU 6's one step (its ``Steps`` line: 2568.9-2590.2 ms): the GPU's idle inside the input events there, read off
    # the file -- the whole the ledger's input wait is part of (the GPU's own switching and work it holds unseen come
    # first in the ledger)
    d = next(d for d in t.devices if d.gpu == 6)
    busy = union(list(zip(d.start.tolist(), d.end.tolist())))
    _, (lo,), (hi,) = t.gpu_step_lines[6]
    lo, hi = int(lo), int(hi)

    def idle_in(rows) -> float:  # noqa: ANN001
        spans = union([(max(int(h.start[i]), lo), min(int(h.end[i]), hi)) for i in rows if h.end[i] > lo and h.start[i] < hi])
        return sum(b - a - sum(max(0, min(b, y) - max(a, x)) for x, y in busy) for a, b in spans) / 1e9

    every = np.flatnonzero(h.name_mask(tensorflow.is_input_event))
    compute = every[h.name_mask(lambda n: n.endswith("Op::DoCompute"))[every]]
    # the iterator's own op and its send hold GPU idle the DoCompute events do not: 170 us by hand
    assert idle_in(every) - idle_in(compute) > 0.15
    got = next(g for g in host["gpus"] if g.get("gpu") == 6)["breakdown"]["input_wait"]
    assert got <= idle_in(every) + 1e-3  # a part never above its whole
