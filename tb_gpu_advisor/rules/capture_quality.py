"""Q&A: is the capture trustworthy? Short steady-state window (~10 s), enough steps.

Fires: no GPU activity at all (warning; the other checks are skipped), no step found / fewer than ``capture.min_steps`` kept steps
(warning), capture longer than ``capture.max_seconds`` (info), step times
varying more than ``capture.max_step_cv`` (info).  No saving.
"""

from __future__ import annotations

from . import _jax
from .base import T, Ctx, action, finding, is_jax, rule, value_metric

ID = "capture_quality"

_CAPTURE = ("# capture ~10 s of steady-state training, after warm-up:\n"
            "tf.keras.callbacks.TensorBoard(log_dir=logdir, profile_batch=(100, 120))\n"
            "# or: tf.profiler.experimental.start(logdir); ...20 steps...; tf.profiler.experimental.stop()")


@rule(ID, "Q&A", "The capture is too short or not steady",
      thresholds=("capture.min_steps", "capture.max_seconds", "capture.max_step_cv"))
def check(m) -> list:
    ctx = Ctx(m)
    c, s = m.capture, m.steps
    out = []
    if not any(g.active for g in m.gpus):
        out.append(finding(
            ctx, ID, "warning",
            f"No GPU kernel or copy in this capture ({len(m.gpus)} GPU planes, {c.num_events:,} events): the guide's "
            f"GPU checks were skipped. Was the GPU visible to TensorFlow, and did the profiled window include "
            f"training steps?",
            title="No GPU activity in the capture",
            metric=value_metric("active_gpus", "GPUs with activity", 0, "count", "0", severity="warning",
                                good_direction="higher"),
            actions=[action("Check that JAX sees the GPU, then profile steady-state training steps.",
                            "print(jax.devices())  # expect CudaDevice(id=0), ...\n" + _jax.CAPTURE) if is_jax(m) else
                     action("Check that TensorFlow sees the GPU, then profile steady-state training steps.",
                            "print(tf.config.list_physical_devices('GPU'))\n" + _CAPTURE)],
        ))
    if s.source == "whole_capture" or s.count < T("capture.min_steps"):
        why = s.note or ("no step markers found" if s.source == "whole_capture" else "")
        out.append(finding(
            ctx, ID, "warning",
            f"Only {s.count} complete steps were kept ({s.found} found, step source '{s.source}'"
            f"{'; ' + why if why else ''}); at least {T('capture.min_steps'):g} steady-state steps make averages "
            f"trustworthy.",
            title="Too few steps in the capture",
            metric=value_metric("steps_kept", "Steps kept", s.count, "count", str(s.count), "capture.min_steps",
                                severity="warning", good_direction="higher"),
            actions=[action("Profile a window of a few dozen steps after warm-up (about ten seconds), and mark "
                            "steps with jax.profiler.StepTraceAnnotation.", _jax.CAPTURE) if is_jax(m) else
                     action("Profile a window of a few dozen steps after warm-up (about ten seconds), and mark "
                            "steps (Keras does; custom loops: tf.profiler.experimental.Trace('train', step_num=s, _r=1)).",
                            _CAPTURE)],
        ))
    seconds = (c.length_ms or 0) / 1000.0
    if seconds > T("capture.max_seconds"):
        out.append(finding(
            ctx, ID, "info",
            f"The capture spans {seconds:.0f} s; profiling overhead distorts long captures — about ten seconds of "
            f"steady-state steps is enough.",
            title="The capture is long",
            metric=value_metric("capture_seconds", "Capture length", seconds, "s", f"{seconds:.0f} s",
                                "capture.max_seconds", severity="info"),
            actions=[action("Profile a short steady-state window instead of the whole run.", _capture(m))],
        ))
    if c.step_time_cv is not None and c.step_time_cv > T("capture.max_step_cv") and s.count >= 2:
        out.append(finding(
            ctx, ID, "info",
            f"Step times vary by {c.step_time_cv:.0%} (stddev / mean over {s.count} steps): the window is not steady "
            f"state, so per-step averages hide outliers.",
            title="Step times are not steady",
            metric=value_metric("step_time_cv", "Step time variation", c.step_time_cv, "ratio", f"{c.step_time_cv:.0%}",
                                "capture.max_step_cv", severity="info"),
            actions=[action("Skip warm-up and evaluation/checkpoint steps in the profiled window.", _capture(m))],
        ))
    if len(out) > 1:  # keep ids unique: suffix the secondary ones
        for i, f in enumerate(out[1:], 1):
            f.id = f"{f.id}#{f.metric.id if f.metric else i}"
    return out


def _capture(m) -> str:
    """How to capture a short steady-state window, in the capture's framework."""
    return _jax.CAPTURE if is_jax(m) else _CAPTURE
