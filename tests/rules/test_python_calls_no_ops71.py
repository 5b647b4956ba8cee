"""A Python call the profiler's Python tracer recorded is said as a Python call, by the name the program calls it --
never as "the host's own ops" under the tracer's raw name (issue #37 classes 3 and 4; h37-pyinput70 *Left* 1).

real-h100-jax ``input_bound_pytracer`` (``python_tracer_level=1``) sleeps 10 ms in its loop before each put; main
read "the host's own ops before each step's first launch: `$time sleep` 10.1 ms".  ``time.sleep`` is a Python call
the tracer recorded (``$<module> <function>``, a C function), no op.  Truth by construction
(``synthetic.jaxcapture.traced_fetch_loop`` with the loop's own ``time.sleep`` where the iterator was).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from synthetic import jaxcapture as jc
from synthetic.xla_kernels import TINY_EW, XlaKernel
from tb_gpu_advisor.frameworks import xla
from tb_gpu_advisor.rules.input_bound import _made_by_ops
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _sleeping_loop(root: Path) -> dict:
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = [XlaKernel(f"fusion_{i}", f"fusion_{i}", "jit(train_step)/add", 6.0, TINY_EW, "fp32", gap_us=0.0)
               for i in range(10)]
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    jc.traced_fetch_loop(cap, kernels, 24, 2_000.0, 20.0, frames=("$time sleep",))
    (path,) = jc.JaxScenario("sleep", cap.finish(), cap.truth("sleep", "sleep", "trace_train")).write(root)
    host = analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(path), format="xplane",
                                                      size=os.path.getsize(path))]).to_dict()["hosts"][0]
    return next(f for f in host["findings"] if f["rule"] == "input_bound")


def test_a_traced_sleep_is_a_python_call_not_an_op(tmp_path: Path) -> None:
    text = " ".join(_sleeping_loop(tmp_path)["summary"].split())
    # main: "the host's own ops before each step's first launch: `$time sleep` 2.00 ms -- the step makes its input
    # itself"
    assert "the host's own Python calls before each step's first launch: `time.sleep` 2.0" in text
    assert "Python tracer recorded them" in text
    assert "$time sleep" not in text and "own ops" not in text


def test_a_c_functions_frame_is_said_as_the_program_calls_it() -> None:
    assert xla.frame_label("$time sleep") == "time.sleep"  # main: "$time sleep"
    assert xla.frame_label("$builtins next") == "next"
    assert xla.frame_label("$dataset_ops.py:4734 __next__") == "__next__ (dataset_ops.py:4734)"  # as before
    assert xla.frame_label("aten::randn") == "aten::randn"


def test_control_ops_are_still_ops() -> None:
    said = _made_by_ops([("aten::randn", 9.0)], 10.0)
    assert said.startswith("; the host's own ops before each step's first launch: `aten::randn` 9.00 ms")
    assert "Python" not in said
