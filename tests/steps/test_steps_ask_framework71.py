"""The steps ask the capture's framework for its profiler's step marks and its words for the program's ranges
(h37-homes71): ``steps.markers._own_step_marks`` called ``frameworks.tensorflow.own_step_marks`` for every capture,
and ``steps.ranges._ranges_word`` wrote "record_function ranges" (PyTorch's word) itself.

Now ``detect_steps`` takes the capture's framework (``frameworks.detect_trace``'s where not given) and reads its
``Framework.own_step_marks``; the ranges' word is ``frameworks.ranges_word``.  Each test fails on main ea5a2537:
``detect_steps`` takes no framework, ``frameworks.ranges_word`` does not exist.  The TensorFlow reading is the control:
the same steps as before, from the same marks.
"""

from __future__ import annotations

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats.xplane.adapter import to_trace
from tb_gpu_advisor.formats.xplane.reader import parse_timeline
from tb_gpu_advisor.frameworks import native, pytorch, tensorflow
from tb_gpu_advisor.steps.detect import detect_steps
from tests.support.tiny_capture import Cap

STEPS = 6


def _marked_capture():
    """Six ``predict`` marks as ``tf.profiler.experimental.Trace('predict', step_num=step, _r=1)`` writes them, 1 ms
    apart, each around one launched kernel: the program's own step marks of a name no step reader knows."""
    cap = Cap()
    for k in range(STEPS):
        t = 1_000.0 * k
        cap.host_ev("predict", t, 800.0, step_num=k, _r=1)
        cap.kernel(t + 100.0, 300.0, launch_us=t + 50.0)
    return to_trace(parse_timeline(cap.space.encode()))


def test_the_steps_read_the_marks_the_framework_writes():
    trace = _marked_capture()
    for fw in (tensorflow.FRAMEWORK, frameworks.UNKNOWN, None):  # control: TF's marks, as before
        det = detect_steps(trace, fw=fw).detection
        assert det.source == "trace_train" and det.found == STEPS, (fw, det.source, det.found)
        assert "the program's own step marks (`predict`" in det.note


def test_a_framework_that_writes_no_step_mark_is_read_none():
    """A framework whose profiler writes no ``_r``/``step_num`` mark (``base.no_step_marks``: ``native``) is not
    asked TensorFlow's: the ``_r`` roots are read as roots of any kind (``root_r``), not as the program's own marks."""
    det = detect_steps(_marked_capture(), fw=native.FRAMEWORK).detection
    assert det.source == "root_r" and "own step marks" not in det.note, (det.source, det.note)


def test_the_ranges_word_is_the_framework_s():
    """Ranges a format keeps among its ops (``Trace.annotations``) are named as the framework names them; a reader's
    range table by the reader's word."""
    trace = _marked_capture()
    trace.ranges, trace.annotations = None, trace.h.name[:0]
    assert frameworks.ranges_word(trace, pytorch.FRAMEWORK) == "record_function ranges"
    assert frameworks.ranges_word(trace, tensorflow.FRAMEWORK) == tensorflow.FRAMEWORK.annotation_ranges
    trace.annotations = None
    assert frameworks.ranges_word(trace) == "NVTX ranges"
