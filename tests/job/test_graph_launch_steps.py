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


def test_the_users_one_range_around_none_of_the_repeats_is_the_pass(tmp_path: Path):
    """An eager measured prefill inside `measure`, its launches unlike the 12 filler prefills after it: the pass is
    the range.  main: ``repeated_launches``, the fillers' period (10 steps kept), the measured prefill in none."""
    path = tmp_path / "prefill.sqlite"
    truth = nsysexport.write_graph_decode(str(path), warmup=0, decode=0, fillers=12, measured_prefill=90)
    s = analyze_host(_file(path)).steps
    assert s["source"] == "single_pass" and s["count"] == 1 and "`measure`" in s["note"], s
    (w,) = host_metrics(formats.read(_file(path))).steps.windows
    assert abs((w.end_ms - w.start_ms) - truth["range_ms"]) < 0.05 * truth["range_ms"], (w, truth)


def test_control_a_second_range_of_the_program_names_no_single_pass(tmp_path: Path):
    path = tmp_path / "prefill.sqlite"
    nsysexport.write_graph_decode(str(path), warmup=0, decode=0, fillers=12, measured_prefill=90, frame=None)
    s = analyze_host(_file(path)).steps
    assert s["source"] != "single_pass" or "`measure`" not in s["note"], s


def test_the_users_range_around_an_eager_prefill_and_one_replay_is_the_pass(tmp_path: Path):
    """An eager prefill whose host syncs after every layer, then one decode replay, inside `measure`, between a
    warm-up generate's replays and filler prefills: the range is one pass (h37-serve35).  main:
    ``gpu_busy_clusters``, the prefill's layer bursts read as its iterations."""
    path = tmp_path / "prefill_decode.sqlite"
    truth = nsysexport.write_graph_decode(str(path), decode=1, fillers=0, measured_prefill=96, prefill_syncs=12)
    s = analyze_host(_file(path)).steps
    assert s["source"] == "single_pass" and s["count"] == 1, s
    assert "`measure`" in s["note"] and "1 of the 7 graph launches" in s["note"], s["note"]
    (w,) = host_metrics(formats.read(_file(path))).steps.windows
    assert abs((w.end_ms - w.start_ms) - truth["range_ms"]) < 0.05 * truth["range_ms"], (w, truth)


def test_control_three_replays_inside_the_range_are_still_the_steps(tmp_path: Path):
    """The same prefill followed by 5 replays inside `measure`: the launches mark the steps, the prefill no step."""
    path = tmp_path / "prefill_decode.sqlite"
    truth = nsysexport.write_graph_decode(str(path), decode=5, fillers=0, measured_prefill=96, prefill_syncs=12)
    s = analyze_host(_file(path)).steps
    assert s["source"] == "repeated_launches" and s["found"] == truth["steps"], s
