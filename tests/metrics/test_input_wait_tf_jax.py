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
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.report_store import session_report

STEPS = 12
PS_PER_MS = 1e9


def grain_capture(root: Path, take_us: float, other_us: float, prefetch_thread: bool = True
                  ) -> tuple[Path, tuple[int, int, int]]:
    """The grain loop's capture written under ``root``, and one middle step's (take, other work, its end), host ps."""
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = jc.mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    spans = jc.grain_loop(cap, kernels, STEPS, take_us, other_us, prefetch_thread=prefetch_thread)
    (path,) = jc.JaxScenario("grain", cap.finish(), cap.truth("grain", "grain loop", "trace_train")).write(root)
    return path, spans[len(spans) // 2]


def _grain(tmp_path: Path, take_us: float, other_us: float, prefetch_thread: bool = True):
    path, (take, other, end) = grain_capture(tmp_path, take_us, other_us, prefetch_thread)
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


# --- h37-grainpaint (issue #37 class 4): a pipeline worker thread's ranges paint none of the loop's own idle.
#
# The step's ledger books the GPU's idle to the host category whose events cover it.  grain's prefetch thread
# (``grain-thread-prefetch-*``: google/grain @f5dd0d8a records each dataset iterator's ``__next__`` as a TraceMe
# range) makes the next batch inside ``BatchDatasetIterator.__next__`` / ``MapDatasetIterator.__next__`` ranges while
# the step runs.  h37-inputwait stopped reading those ranges as the loop's input wait (``context._on_loop_threads``);
# they then fell to host work, and painted the loop's untraced other Python (and its dispatch) as ``host_compute``:
# main 0.32 ms a step where the loop's own host work is 0.085 ms, and a critical "Host-bound" finding of 2.17 ms on the
# slow form, where the loop's 2 ms of untraced Python is host time the capture did not record.
#
# The wrong assumption: *an event that covers the GPU's idle is what the loop does then, whatever thread records it*.
# A thread that records the program's batch-named ranges and dispatches none of the step's work (where some thread
# does) is the pipeline's worker: its time is the pipeline working ahead, not the loop's.  Truth by construction
# (``synthetic.jaxcapture.grain_loop``): the same loop with no prefetch thread recorded (grain's multiprocess prefetch,
# its workers other processes) reads the loop's own time, and the worker's ranges change nothing of it.


def _grain_truth(root: Path, take_us: float, other_us: float, prefetch_thread: bool) -> tuple[Path, float]:
    """The grain loop's capture under ``root`` and the loop's untraced other work per step (ms, the truth)."""
    path, (_, other, end) = grain_capture(root, take_us, other_us, prefetch_thread)
    return path, (end - other) / PS_PER_MS


@pytest.mark.parametrize("take_us, other_us", [(75.0, 150.0), (1000.0, 2000.0)], ids=["fast take", "slow take"])
def test_the_prefetch_threads_ranges_paint_no_host_compute(tmp_path: Path, take_us: float, other_us: float) -> None:
    with_worker, other_ms = _grain_truth(tmp_path / "with", take_us, other_us, prefetch_thread=True)
    alone, _ = _grain_truth(tmp_path / "alone", take_us, other_us, prefetch_thread=False)
    b = host_metrics(read_trace(str(with_worker))).breakdown
    truth = host_metrics(read_trace(str(alone))).breakdown
    # main: host_compute 0.323 ms (fast) / 2.173 ms (slow) where the loop's own host work is 0.085 ms
    assert b.host_compute == pytest.approx(truth.host_compute, abs=0.002)
    assert b.host_compute < 0.1
    # the loop's untraced other work is host time no event records (main: 0.021 ms of it)
    assert other_ms - 0.01 <= b.other <= other_ms + 0.03
    assert b.other == pytest.approx(truth.other, abs=0.002)
    # the loop's dispatch stays its own (main: 0.05 ms of its 0.141 painted as host compute)
    assert b.launch_wait == pytest.approx(truth.launch_wait, abs=0.002)
    assert b.input_wait == pytest.approx(truth.input_wait, abs=0.002)


def test_the_loops_untraced_work_is_named_unrecorded_with_how_to_record_it(tmp_path: Path) -> None:
    _, other_ms = _grain_truth(tmp_path, 1000.0, 2000.0, prefetch_thread=True)
    (s,) = discover(str(tmp_path))
    (h,) = session_report(s).hosts
    # main: one idle finding, "Host-bound: the GPU waits for the host's own work inside the step", 2.17 ms, critical
    (f,) = [f for f in h.findings if f.rule == "unexplained_idle"]
    assert f.id.endswith("#unrecorded") and not f.title.startswith("Host-bound")
    assert f.metric.detail["unrecorded_ms"] == pytest.approx(other_ms, abs=0.03)
    assert "Record what the host does" in f.actions[0].text
    # the take and the batch's copy: the loop's own wait, unchanged
    assert "input_bound" in {g.rule for g in h.findings}
