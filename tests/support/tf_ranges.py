"""A TensorFlow custom loop whose steps hold the program's own ``tf.profiler.experimental.Trace`` ranges, written as an
XPlane file: the one capture the tests of the program's TraceMe ranges read (``frameworks.user_ranges``, the input
wait's ranges)."""

from __future__ import annotations

from pathlib import Path

from synthetic.scenarios import Capture, K, Scenario, _dense_layers, _input_copy
from synthetic.tfcapture import A100


def tf_loop_with_ranges(folder: Path, run: str, host_ranges: list[tuple[str, float]], steps: int) -> Path:
    """``steps`` training steps on one A100 (the batch's copy, six dense layers), each opening with the program's
    ranges ``host_ranges`` (name, us of Python inside, the GPU idle through them) inside its step marker; jitter off,
    so each step holds exactly those times.  Returns the written ``.xplane.pb``."""
    cap = Capture(1, A100, seed=0, marker="custom_loop")
    ops = [_input_copy()] + _dense_layers(6, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=200, ew_us=18)
    for _ in range(steps):
        cap.step([ops], host_ranges=host_ranges, jitter=0.0)
    (path,) = Scenario(run, {"worker0": cap.finish()}, None).write(folder)  # type: ignore[arg-type]
    return Path(path)
