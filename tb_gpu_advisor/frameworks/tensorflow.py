"""TensorFlow: how its captures look and how its users fix things (the guide's own spelling).

Markers as seen in the real TF 2.4 V100 capture and the TF 2.21 captures under ``tests/fixtures/real``.
"""

from __future__ import annotations

from . import Framework

#: Host event name prefixes written by the TensorFlow runtime only.
HOST_MARKERS = ("__inference_", "Iterator::", "EagerExecute", "EagerLocalExecute", "EagerKernelExecute",
                "FunctionRun", "SessionRun", "ExecutorState::Process")
#: The consumer blocking on tf.data (the ``...Op::DoCompute`` events; tf_data get_next threads carry exactly these).
INPUT_EVENT_PREFIXES = ("IteratorGetNext", "IteratorGetNextAsOptional", "MultiDeviceIteratorGetNext")
#: tf.data, the GPU event manager and collective threads: background work.
BACKGROUND_LINES = ("tf_data_", "tf_GPU_Event_Manager", "collective_ops")


def is_input_event(name: str) -> bool:
    return name.startswith(INPUT_EVENT_PREFIXES) and "Op::" in name


def is_tf_op_event(name: str) -> bool:
    """A host event that is a TF op (``name:Type``; no spaces in the type)."""
    if ":" not in name or name.startswith(("void ", "Memcpy")) or "::" in name:
        return False
    t = name.rsplit(":", 1)[1]
    return bool(t) and t[0].isupper() and " " not in t and "(" not in t


def is_background_line(name: str) -> bool:
    return name.startswith(BACKGROUND_LINES)


CAPTURE = ("# a few dozen steady-state steps (~10 s), after warm-up:\n"
           "tb = tf.keras.callbacks.TensorBoard(log_dir=logdir, profile_batch=(100, 130))\n"
           "# custom loop: tf.profiler.experimental.start(logdir) ... stop(), each step in\n"
           "# with tf.profiler.experimental.Trace('train', step_num=step, _r=1): ...")

FRAMEWORK = Framework(
    id="tensorflow", name="TensorFlow", host_markers=HOST_MARKERS, input_event=is_input_event,
    host_op_event=is_tf_op_event, background_line=is_background_line,
    labels={"op": "TensorFlow op", "ops": "TensorFlow ops", "ops_table": "Top TensorFlow ops (kept steps)",
            "input_wait_meaning": "share of the step the GPU was idle while the host waited in IteratorGetNext (tf.data)",
            "host_op_meaning": "TF ops that launched no GPU work, by count (by time in detail); should be very small"},
    capture_snippet=CAPTURE,
)
