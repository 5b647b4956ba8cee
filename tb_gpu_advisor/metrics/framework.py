"""Which framework wrote a capture, so fixes are spelled in the user's API.

The guide's fixes are TensorFlow code (``tf.function``, ``tf.data``,
mixed-precision policies); a JAX user handed those is told nothing useful.
The host trace names the framework: only jaxlib wraps each call of a jitted
function in ``PjitFunction(<name>)`` (``jaxlib/.../pjit.cc``), and only the
TensorFlow runtime writes its executor and tf.data events (names below, as
seen in the real TF 2.4 V100 capture and the TF 2.21 captures under
``tests/fixtures/real``).  A file with both, or neither, is ``unknown`` and
gets the TensorFlow spelling, the guide's own.
"""

from __future__ import annotations

from typing import Iterable, Literal

Framework = Literal["tensorflow", "jax", "unknown"]

#: Host event name prefixes written by JAX only.
JAX_EVENT_PREFIXES = ("PjitFunction(",)
#: Host event name prefixes written by the TensorFlow runtime only.
TF_EVENT_PREFIXES = ("__inference_", "Iterator::", "EagerExecute", "EagerLocalExecute", "EagerKernelExecute",
                     "FunctionRun", "SessionRun", "ExecutorState::Process")


def detect_framework(host_event_names: Iterable[str]) -> Framework:
    """``jax`` / ``tensorflow`` from the host planes' event names; ``unknown`` when neither or both."""
    jax = tf = False
    for name in host_event_names:
        jax = jax or name.startswith(JAX_EVENT_PREFIXES)
        tf = tf or name.startswith(TF_EVENT_PREFIXES)
        if jax and tf:
            return "unknown"
    return "jax" if jax else "tensorflow" if tf else "unknown"


def host_event_names(tl) -> Iterable[str]:
    """Event metadata names of the host planes (thousands at most, not per event)."""
    return (n for p in tl.planes if p.name.startswith("/host:") for n in p.event_names)
