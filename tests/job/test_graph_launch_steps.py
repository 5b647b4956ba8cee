"""A serving engine's decode loop that launches one CUDA graph per iteration: its steps are those launches inside the
user's one range (h37-serve34, issue #37 class 2).

The wrong assumption (``steps.framed._framed_bursts``): *inside the program's frame the GPU's bursts are its
iterations* -- an overlap scheduler keeps the GPU busy across iterations, so bursts merge: YiconRain/profiling's
SGLang Qwen3.5-0.8B capture (128 decode replays of ~1.44 ms inside `measure`) read as 102 "steps" of 2.05 ms.  Now one
thread's graph launches inside the frame (:func:`~tb_gpu_advisor.steps.framed._framed_graph_launches`) mark the
steps, each from its launch to the next.

Truth by construction: ``synthetic.nsysexport.write_graph_decode`` -- a warm-up generate, the measured generate
inside `measure` (an eager prefill and N graph launches ``period_us`` apart, a few eager launches and an event sync
in each), and one-token filler generates after it.  Control: without the range nothing frames the launches, and
the graph launches are not read as steps by this rule."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from synthetic import nsysexport
from tb_gpu_advisor import formats
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics


def _file(path: Path) -> HostFile:
    return HostFile(path.name, str(path), path.stat().st_size, 0, "nsys")


def test_graph_launches_inside_the_users_range_are_the_decode_steps(tmp_path: Path):
    """main: ``gpu_busy_clusters``, 10 bursts for the 40 iterations."""
    path = tmp_path / "decode.sqlite"
    truth = nsysexport.write_graph_decode(str(path))
    rep = analyze_host(_file(path))
    assert rep.error is None, rep.error
    s = rep.steps
    assert s["source"] == "repeated_launches" and s["found"] == truth["steps"], s
    assert "`measure`" in s["note"] and "graph per iteration" in s["note"], s["note"]
    windows = host_metrics(formats.read(_file(path))).steps.windows
    lengths = np.array([w.end_ms - w.start_ms for w in windows])
    assert abs(float(np.median(lengths)) - truth["step_ms"]) < 0.05 * truth["step_ms"], (lengths, truth)


def test_control_without_the_users_range_the_launches_frame_nothing(tmp_path: Path):
    path = tmp_path / "decode.sqlite"
    nsysexport.write_graph_decode(str(path), frame=None)
    s = analyze_host(_file(path)).steps
    assert "graph per iteration" not in s["note"], s
