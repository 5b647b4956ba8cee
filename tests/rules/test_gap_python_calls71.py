"""The host time the profiler recorded only as a Python call is recorded, and named by its call: a gap a loop's
``time.sleep`` fills is no "Python, .item() and other syncs" (issue #37 classes 3 and 4; h37-pyinput70 *Left* 2).

A PyTorch loop captured with ``with_stack=True`` sleeps 10 ms at each step's start, then copies its batch and runs
a healthy bf16 step.  The profiler records the sleep as a ``python_function`` frame ``<built-in function sleep>``
(``Trace.spans``), no op.  Main read "most of it is host work between steps (Python, .item() and other syncs)",
named nothing and put the sync fix first.  Truth by construction (``synthetic.torchtrace``).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics

SLEEP_US = 10_000.0


def _loop(root: Path, recorded: bool) -> str:
    def body(r: tt.Rank) -> None:
        if recorded:
            r.cpu("<built-in function sleep>", SLEEP_US, cat="python_function")
        else:
            r.host_us += SLEEP_US
        r.copy_h2d(32.0, 1_300.0)
        tt._healthy(r)
    sc = tt.Scenario(1, tt._single(body), [], [], "a loop sleeping before each step", dtype="bfloat16")
    (path,) = tt.write_run(str(root), sc, steps=10, run=f"sleep{int(recorded)}")
    return path


def _findings(path: str) -> list[dict]:
    return analyze_session("w", "s", [SimpleNamespace(host="h0", path=path, format="kineto",
                                                      size=os.path.getsize(path))]).to_dict()["hosts"][0]["findings"]


def test_the_gaps_recorded_python_call_is_named(tmp_path: Path) -> None:
    path = _loop(tmp_path, True)
    m = host_metrics(read_trace(path))
    # main: no Gaps.top_frames (the frame is no host event: nothing named the 10 ms)
    ((name, v),) = m.gaps.top_frames
    assert name == "<built-in function sleep>" and abs(v - SLEEP_US / 1000) < 0.05
    f = next(f for f in _findings(path) if f["rule"] == "step_gaps")
    text = " ".join(f["summary"].split())
    assert "the host's own Python calls between steps" in text and "`sleep` 10.0 ms" in text
    assert ".item()" not in text and "op `sleep`" not in text
    # the first fix takes the call off the step's path, no sync's fix
    assert f["actions"][0]["text"].startswith("Take the Python calls that fill the gaps (`sleep` 10.0 ms a step)")
    assert not any(".item()" in a["text"] for a in f["actions"])


def test_control_the_same_sleep_unrecorded_stands_for_an_untraced_loader(tmp_path: Path) -> None:
    text = " ".join(next(f for f in _findings(_loop(tmp_path, False)) if f["rule"] == "input_bound")["summary"].split())
    assert "stands for an untraced loader" in text


def test_a_c_functions_frame_is_said_as_the_program_calls_it() -> None:
    assert pytorch.frame_label("<built-in function sleep>") == "sleep"  # main: as recorded
    assert pytorch.frame_label("<built-in method item of Tensor object at 0x7f3a2c1d5e40>") == "Tensor.item"
    assert pytorch.frame_label("train.py(40): load_batch") == "load_batch (train.py:40)"


def test_a_jax_gaps_traced_sleep_is_a_python_call(tmp_path: Path) -> None:
    """JAX's Python tracer records the same sleep between steps as a host event (``$time sleep``): said as a Python
    call by the name the program calls it, never "the host's own ops" under the tracer's raw name."""
    from synthetic import jaxcapture as jc
    from synthetic.xla_kernels import TINY_EW, XlaKernel

    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = [XlaKernel(f"fusion_{i}", f"fusion_{i}", "jit(train_step)/add", 200.0, TINY_EW, "fp32", gap_us=0.0)
               for i in range(10)]
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    for _ in range(12):
        cap.begin_step()
        cap.execute(kernels)
        cap.end_step()
        t = cap.t
        cap.host_work(3_000.0)
        cap.python.add("$time sleep", t, cap.t - t)
    (path,) = jc.JaxScenario("gap", cap.finish(), cap.truth("gap", "gap", "trace_train")).write(tmp_path)
    host = analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(path), format="xplane",
                                                      size=os.path.getsize(path))]).to_dict()["hosts"][0]
    f = next(f for f in host["findings"] if f["rule"] == "step_gaps")
    text = " ".join(f["summary"].split())
    # main: "the host's own ops between steps (work on the CPU, no wait for the GPU) (in each gap: `$time sleep` ...)"
    assert "the host's own Python calls between steps" in text and "`time.sleep`" in text, text
    assert "$time sleep" not in text and "own ops" not in text
    assert f["actions"][0]["text"].startswith("Take the Python calls that fill the gaps (`time.sleep`")
