"""The iterator's ``__next__`` the profiler's Python tracer records is the input pipeline's own time (issue #37 class 4,
deliverable 4: "the input wait is the input pipeline's own time ... other host time before the first op is named
apart"; h37-tiny70 *Left* 1).

A JAX loop captured with ``python_tracer_level=1``: ``batch = jax.device_put(next(it))`` over tf.data's NumPy iterator,
then the program's logging, then the jitted step.  No TraceMe range names the fetch; the Python tracer records it as
frames on the loop's ``python3`` line (``$builtins next`` > ``$dataset_ops.py:4734 __next__``, ``$api.py:2307
device_put``, ``$train.py:40 log_metrics``), as the real capture ``real-h100-jax/input_bound_pytracer`` records its
``$time sleep``.  The wrong assumption: *a Python tracer frame is the host's own op*.  dbf6cf15 read the frames as ops
("the host's own ops before each step's first launch: `$builtins next` 300 us ... -- the step makes its input
itself"); the iterator's ``__next__`` is the pipeline's own event, as the DataLoader's ``__next__`` is in a PyTorch
capture.  Truth by construction (``synthetic.jaxcapture.traced_fetch_loop``).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import jaxcapture as jc
from synthetic.xla_kernels import TINY_EW, XlaKernel
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics
from tests.support.tf_ranges import tf_loop_with_ranges

STEPS = 24
FETCH_US, OTHER_US = 300.0, 150.0
PS_PER_MS = 1e9


def _loop(root: Path, frames: tuple[str, ...]):
    """A small jitted step (10 tiny kernels, 60 us of GPU) fed by ``traced_fetch_loop``; the capture's path and a
    middle step's (iterator start, its end, the put's end, the dispatch), host ps."""
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = [XlaKernel(f"fusion_{i}", f"fusion_{i}", "jit(train_step)/add", 6.0, TINY_EW, "fp32", gap_us=0.0)
               for i in range(10)]
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    spans = jc.traced_fetch_loop(cap, kernels, STEPS, FETCH_US, OTHER_US, frames=frames)
    (path,) = jc.JaxScenario("traced", cap.finish(), cap.truth("traced", "traced", "trace_train")).write(root)
    return path, spans[len(spans) // 2]


def _input_finding(path: Path) -> dict:
    host = analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(path), format="xplane",
                                                      size=os.path.getsize(path))]).to_dict()["hosts"][0]
    return next(f for f in host["findings"] if f["rule"] == "input_bound")


@pytest.mark.parametrize("frames", [jc.TRACED_NEXT, ("$builtins next", "$loader.py:31 __next__")],
                         ids=["tf.data as_numpy_iterator", "the program's own iterator class"])
def test_the_iterators_traced_next_is_the_input_pipelines_own_time(tmp_path: Path, frames: tuple[str, ...]) -> None:
    path, (i0, i1, put, dispatch) = _loop(tmp_path, frames)
    m = host_metrics(read_trace(str(path)))
    # dbf6cf15: "before_first_op" (the frames read as the host's own ops)
    assert m.input.source == "pipeline"
    assert m.input.own_frame == frames[-1]
    # the iterator's own time is its frame's (2 us of frame edges aside)
    assert (i1 - i0) / PS_PER_MS - 0.005 <= m.input.own_ms_per_step <= (i1 - i0) / PS_PER_MS + 0.01
    # the logging after the put is named apart, not counted as input
    other_ms = (dispatch - put) / PS_PER_MS
    assert other_ms - 0.01 <= m.input.pre_op_ms_per_step <= other_ms + 0.02
    assert m.breakdown.input_wait <= (put - i0) / PS_PER_MS + 0.01


def test_the_finding_says_the_python_tracer_recorded_the_iterator(tmp_path: Path) -> None:
    path, _ = _loop(tmp_path, jc.TRACED_NEXT)
    text = _input_finding(path)["summary"]
    # dbf6cf15: "the host's own ops before each step's first launch: `$builtins next` ... -- the step makes its
    # input itself"
    assert "`__next__ (dataset_ops.py:4734)`, as the Python tracer recorded it" in text
    assert "makes its input itself" not in text and "untraced loader" not in text
    assert "not the input pipeline's" in text  # the logging, named apart


def test_a_tf_loops_traced_next_is_its_input_wait(tmp_path: Path) -> None:
    """TensorFlow's Python tracer writes the same frames: a custom loop's ``next(it)`` over tf.data's iterator
    (``$iterator_ops.py:826 __next__``, 3 ms a step, the GPU idle through it), then 1 ms of logging.  dbf6cf15 found no
    input wait at all: the frame read as the host's own op between steps ("Gaps between steps", critical, 4.01 ms:
    "`$iterator_ops.py:826 __next__` 3.00 ms, `$train.py:40 log_metrics` 1.00 ms")."""
    path = tf_loop_with_ranges(tmp_path, "tf_traced", [("$iterator_ops.py:826 __next__", 3000.0),
                                                       ("$train.py:40 log_metrics", 1000.0)], 10)
    m = host_metrics(read_trace(str(path)))
    assert m.input.source == "pipeline"
    assert m.input.own_frame == "$iterator_ops.py:826 __next__"
    assert m.breakdown.input_wait == pytest.approx(3.0, abs=0.05)
    assert "`__next__ (iterator_ops.py:826)`, as the Python tracer recorded it" in _input_finding(path)["summary"]


def test_control_a_bare_next_is_no_iterators_own_event(tmp_path: Path) -> None:
    """``$builtins next`` alone (a generator the loop pulls from: the tracer writes the C call, no ``__next__``
    frame) names no iterator -- the C call wraps any iterator, a context manager's generator inside every
    ``jax.device_put`` too: the reading stays dbf6cf15's (the lead before the put, no pipeline event)."""
    path, (i0, _, put, _) = _loop(tmp_path, ("$builtins next",))
    m = host_metrics(read_trace(str(path)))
    assert m.input.source == "before_first_op"
    assert getattr(m.input, "own_frame", "") == ""  # (a field dbf6cf15 lacks)
    assert m.breakdown.input_wait == pytest.approx((put - i0) / PS_PER_MS, abs=0.02)


def test_control_a_prefetch_threads_traced_next_is_no_wait(tmp_path: Path) -> None:
    """The tracer records every thread's Python: a prefetch thread (``ThreadPoolExecutor-0_0``) whose iterator's
    ``$dataset.py:400 __next__`` makes the next batch while the step runs is the pipeline working ahead, no wait of
    the loop's -- the loop's thread meanwhile runs 400 us of its own untraced Python.  The reading stays dbf6cf15's
    (no pipeline event); without ``context._traced_on_loop_threads`` the worker's frame held 88 us of the wait."""
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = [XlaKernel(f"fusion_{i}", f"fusion_{i}", "jit(train_step)/add", 60.0, TINY_EW, "fp32", gap_us=0.0)
               for i in range(10)]
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    worker = cap._hashed_line("ThreadPoolExecutor-0_0")
    for _ in range(STEPS):
        cap.begin_step()
        batch = cap.device_put(64 * 256 * 4, "f32[64,256]")
        cap.execute(kernels, inputs=(batch,))
        w0 = cap.t
        cap.host_work(400.0)
        cap.to_host(4)
        worker.add("$dataset.py:400 __next__", w0, cap.t - w0)
        cap.end_step()
    (path,) = jc.JaxScenario("ahead", cap.finish(), cap.truth("ahead", "ahead", "trace_train")).write(tmp_path)
    m = host_metrics(read_trace(str(path)))
    assert m.input.source != "pipeline"
    assert getattr(m.input, "own_frame", "") == ""
