"""The steps ask the capture's framework for the step marks its profiler writes under names of its own
(``Framework.step_marks``: Keras 3's ``Profiled batch``, the ``train``/``test`` roots, ``TraceContext``) and for its
compiled step function (``Framework.step_function``: Keras' ``train_function``), as h37-homes71 made them ask
``Framework.own_step_marks`` (its Left 2; h37-onehome71).  Before (main a717fd14) ``steps.markers._host_candidates``
and ``_last_step_mark_end`` read ``frameworks.tensorflow``'s names for every capture.

Fail on a717fd14: ``frameworks.base.StepMarks`` does not exist; a framework that writes no such mark (``native``)
was read TensorFlow's.  The TensorFlow, JAX, PyTorch(/XLA) and unknown-XPlane readings are the control: the same
steps from the same marks as before (their frameworks share TensorFlow's profiler).
"""

from __future__ import annotations

import dataclasses

import pytest

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats.xplane.adapter import to_trace
from tb_gpu_advisor.formats.xplane.reader import parse_timeline
from tb_gpu_advisor.frameworks import jax, native, pytorch, tensorflow
from tb_gpu_advisor.steps import markers
from tb_gpu_advisor.steps.detect import detect_steps
from tests.support.tiny_capture import Cap

STEPS = 5
SHARING = (tensorflow.FRAMEWORK, jax.FRAMEWORK, pytorch.FRAMEWORK, frameworks.UNKNOWN, None)


def _capture(mark: str, **stats):
    """``STEPS`` host events ``mark`` (with ``stats``; ``step_num`` numbered where given), 1 ms apart, each around one
    launched kernel, and a ``train_function`` call around the last one that returns 0.5 ms after it."""
    cap = Cap()
    for k in range(STEPS):
        t = 1_000.0 * k
        cap.host_ev(mark, t, 400.0, **({**stats, "step_num": k} if "step_num" in stats else stats))
        cap.kernel(t + 100.0, 200.0, launch_us=t + 50.0)
    cap.host_ev("train_function", 1_000.0 * (STEPS - 1) - 10.0, 910.0)
    return to_trace(parse_timeline(cap.space.encode()))


@pytest.mark.parametrize("mark, stats, source", [("Profiled batch", {"step_num": 0}, "keras_profiled_batch"),
                                                 ("train", {"step_num": 0, "_r": 1}, "trace_train"),
                                                 ("TraceContext", {}, "trace_train")])
def test_tensorflow_s_profiler_marks_read_as_before(mark, stats, source):
    """Control (passes on a717fd14): each framework of TensorFlow's profiler reads its marks as before."""
    trace = _capture(mark, **stats)
    for fw in SHARING:
        det = detect_steps(trace, fw=fw).detection
        assert det.source == source and det.found == STEPS, (fw and fw.id, det.source, det.found)


def test_a_framework_that_writes_none_is_not_read_tensorflow_s():
    """``native`` (a CUDA program's Nsight capture) writes no ``Profiled batch`` event: its steps are not read from
    one by TensorFlow's name (on a717fd14: ``keras_profiled_batch``, whatever the framework)."""
    det = detect_steps(_capture("Profiled batch", step_num=0), fw=native.FRAMEWORK).detection
    assert det.source != "keras_profiled_batch", det.source


def test_the_marks_are_the_framework_s():
    """A framework's own marks, by its own predicate and words, read in their place."""
    from tb_gpu_advisor.frameworks.base import StepMarks

    mine = StepMarks("trace_train", "the tool's `my step` marks", lambda h: h.name_mask(lambda n: n == "my step"))
    fw = dataclasses.replace(native.FRAMEWORK, step_marks=(mine,))
    det = detect_steps(_capture("my step"), fw=fw).detection
    assert det.source == "trace_train" and det.found == STEPS and det.note == mine.note, (det.source, det.note)


def test_the_step_function_is_the_framework_s():
    """The last mark ends where the framework's step function around it returns (TensorFlow's ``train_function``:
    0.5 ms after the mark); a framework with no step function keeps the mark's end."""
    trace = _capture("train", step_num=0, _r=1)
    h = trace.h
    mark_end = int(h.end[h.name_mask(lambda n: n == "train")].max())
    fn_end = int(h.end[h.name_mask(lambda n: n == "train_function")].max())
    assert fn_end > mark_end
    assert markers._last_step_mark_end(trace, tensorflow.FRAMEWORK) == fn_end  # control
    fw = dataclasses.replace(tensorflow.FRAMEWORK, step_function=frameworks.never)
    assert markers._last_step_mark_end(trace, fw) == mark_end
