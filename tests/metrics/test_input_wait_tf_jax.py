"""The input wait is the input pipeline's own time on TensorFlow and JAX too, on small steps (issue #37 item 4: "The
input wait is the input pipeline's own time (DataLoader ``__next__``, ``tf.data`` iterators, ``Iterator::GetNext``);
other host time before the first op is named apart").  PyTorch's was done (h37-inputwords); these are the others.

JAX fed by grain (google/grain @f5dd0d8a, ``dataset/stats.py`` ``trace_input_pipeline_next``): every dataset iterator's
``__next__`` is a ``jax.profiler.TraceAnnotation`` named ``<IteratorClass>.__next__`` -- the loop's take from the
prefetch buffer (``ThreadPrefetchDatasetIterator.__next__``) on its own thread, and the stages that make the next
batch (``BatchDatasetIterator.__next__``, ``MapDatasetIterator.__next__``) on grain's prefetch thread while the step
runs.  All are named for the data (``names_batch``: "dataset").  The wrong assumption: *a range named for the batch is
the loop waiting for it, whatever thread records it*.  The prefetch thread's ranges are the pipeline working ahead;
the GPU idle under them is whatever the loop's thread does then.  Main read them as input: 0.68 ms of a 3.1 ms step
(22%, critical) where the loop's take and the batch's copy are 0.33 ms, and named the loop's 0.15 ms of other work
twice (as "other host time before the first op", 0.39 ms, beside the batch's copy counted as input).

TensorFlow on a 1.5 ms step: the input wait is ``IteratorGetNextOp::DoCompute`` (and the batch's ``_Send``) alone, the
other host time before the first op booked apart -- already so on main (TF has no dispatch whose lead is read as
input): a control.  No kept real capture is fed by grain or is a tiny TF step; truth by construction
(``synthetic.jaxcapture.grain_loop``, ``synthetic.tfcapture``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import jaxcapture as jc
from synthetic.scenarios import Capture, K, Scenario, _dense_layers, _input_copy
from synthetic.tfcapture import A100
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

STEPS = 12
PS_PER_MS = 1e9


def _grain(tmp_path: Path, take_us: float, other_us: float, prefetch_thread: bool = True):
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = jc.mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    spans = jc.grain_loop(cap, kernels, STEPS, take_us, other_us, prefetch_thread=prefetch_thread)
    (path,) = jc.JaxScenario("grain", cap.finish(), cap.truth("grain", "grain loop", "trace_train")).write(tmp_path)
    take, other, end = spans[len(spans) // 2]
    # truth: the loop's thread takes the batch and puts it on the device (the GPU idle: the loss was read back),
    # then runs its other work (ms)
    return host_metrics(read_trace(str(path))), (other - take) / PS_PER_MS, (end - other) / PS_PER_MS


@pytest.mark.parametrize("take_us, other_us", [(75.0, 150.0), (1000.0, 2000.0)], ids=["fast take", "slow take"])
def test_grains_prefetch_thread_is_no_wait_of_the_loop(tmp_path: Path, take_us: float, other_us: float) -> None:
    m, fetch_ms, other_ms = _grain(tmp_path, take_us, other_us)
    assert m.input.source == "pipeline"
    # main: the prefetch thread's two stages named as ranges of the loop's fetch (0.58 ms each, fast take)
    assert [name for name, _ in m.input.ranges] == [jc.GRAIN_TAKE]
    # main 0.68 ms (fast take), 3.45 ms (slow): the loop's other work and dispatch counted as input.  The wait is the
    # take and the batch's copy on the loop's thread; its worker thread's staging runs ~20 us into the other work, the
    # loop's then, not input (h37-copies23: main 0.327 ms, fast take)
    assert fetch_ms - 0.01 <= m.breakdown.input_wait <= fetch_ms + 0.005
    # input and the other host time before the first op share the lead, never more than it
    assert m.breakdown.input_wait + m.input.pre_op_ms_per_step <= fetch_ms + other_ms + 0.01


def test_the_batchs_copy_is_no_part_of_the_other_host_time(tmp_path: Path) -> None:
    """The take alone recorded (no prefetch thread's ranges): the input wait was right on main, but the other host
    time before the first op held the batch's ``jax.device_put`` too -- counted in both, 0.39 ms of "other" where the
    loop's other work is 0.15 ms.  A part never holds what another part of the same whole holds."""
    m, fetch_ms, other_ms = _grain(tmp_path, 75.0, 150.0, prefetch_thread=False)
    assert fetch_ms - 0.01 <= m.breakdown.input_wait <= fetch_ms + 0.03
    # the other work, and the few us of the marker before the take and of the loop before its dispatch
    assert other_ms <= m.input.pre_op_ms_per_step <= other_ms + 0.01


def test_control_a_tiny_tf_steps_input_wait_is_getnext_alone(tmp_path: Path) -> None:
    """A 1.5 ms Keras step: ``IteratorGetNextOp::DoCompute`` 5% of it (75 us), the batch's ``_Send``, and 10% of
    untraced host time before the first op (150 us); the input wait is the first two, the rest booked apart (other)."""
    cap = Capture(1, A100, seed=0, marker="keras3", step_base=2)
    ops = [_input_copy(1 << 16)] + _dense_layers(3, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=126, ew_us=6)
    for _ in range(STEPS):
        cap.step([ops], input_wait_us=75.0, untraced_us=150.0, jitter=0.0)
    (path,) = Scenario("tf_tiny", {"worker0": cap.finish()}, None).write(tmp_path)  # type: ignore[arg-type]
    m = host_metrics(read_trace(str(path)))
    truth = cap.truth_numbers()
    step_ms = truth["step_time_ps"] / PS_PER_MS
    assert 1.4 <= step_ms <= 1.6 and truth["untraced_ps"] / PS_PER_MS == pytest.approx(0.10 * step_ms, abs=0.01)
    assert m.breakdown.input_wait == pytest.approx(truth["input_wait_ps"] / PS_PER_MS, abs=0.005)
    assert m.breakdown.other >= truth["untraced_ps"] / PS_PER_MS - 0.005  # named apart, not input
