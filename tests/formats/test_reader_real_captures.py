"""Reader on real TensorFlow 2.21 / Keras 3 CPU captures made with scripts/capture_tf_profile.py.

Why these files: synthetic profiles only contain what we thought of.  These
were written by TensorFlow itself, the two ways users capture:

* ``demo_logs/real_tf_cpu_keras``: ``model.fit`` with the Keras 3 TensorBoard
  callback, ``profile_batch=(2, 6)`` -> 5 ``Profiled batch`` markers with
  ``step_num`` 1..5 (the 0-based batch index).
* ``tests/fixtures/real/tf221_cpu_custom_loop.xplane.pb``: a ``tf.function``
  loop under ``tf.profiler.experimental.start/stop`` with
  ``Trace("train", step_num=s, _r=1)`` -> 5 ``train`` markers, steps 0..4.
* ``tests/fixtures/real/tf221_cpu_keras3_fit_mixed.xplane.pb``: ``model.fit``
  under the ``mixed_float16`` policy, ``profile_batch=(2, 4)`` -> 3 markers.

All were captured with TF 2.21.0 (tensorflow-cpu) + Keras 3.15.1, no GPU.
The exact counts below are facts of these files; a reader change that
alters any of them is a real change in what we read.
"""

from __future__ import annotations

import glob
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tb_gpu_advisor.formats.xplane.reader import read_timeline
from tb_gpu_advisor.formats.xplane.timeline import Line, Timeline
from tests.support.paths import REPO
from tests.support.reference_parse import assert_matches_reference

ROOT = REPO
FIXTURES = ROOT / "tests" / "fixtures" / "real"
KERAS_DEMO_RUN = ROOT / "demo_logs" / "real_tf_cpu_keras"
CUSTOM_DEMO_RUN = ROOT / "demo_logs" / "real_tf_cpu_custom"


def _only_profile(run: Path) -> Path:
    """The single ``*.xplane.pb`` under ``run`` (the session folder name is a capture timestamp)."""
    found = sorted(glob.glob(str(run / "**" / "plugins" / "profile" / "*" / "*.xplane.pb"), recursive=True))
    assert len(found) == 1, found
    return Path(found[0])


@dataclass(frozen=True)
class Capture:
    """What we know about one real capture."""

    name: str
    path: Path
    marker: str  # host step marker event name
    step_nums: list[int]
    num_events: int
    host_line_prefixes: tuple[str, ...]  # thread ids differ per capture; the pool names do not
    op_counts: dict[str, int]  # TF op type (after the last ':') -> number of op events


_COMMON_LINES = ("python", "tf_Compute/", "tf_data_iterator_resource/", "tf_numa_-1_Eigen/")

CAPTURES = [
    Capture(
        "keras_fit_demo",
        _only_profile(KERAS_DEMO_RUN),
        "Profiled batch",
        [1, 2, 3, 4, 5],
        3077,
        _COMMON_LINES + ("tf_data_iterator_get_next/",),
        {"_MklNativeFusedMatMul": 15, "_MklMatMul": 25, "BiasAddGrad": 15, "ReluGrad": 10, "MatMul": 0},
    ),
    Capture(
        "custom_loop",
        FIXTURES / "tf221_cpu_custom_loop.xplane.pb",
        "train",
        [0, 1, 2, 3, 4],
        2256,
        _COMMON_LINES,
        {"_MklNativeFusedMatMul": 15, "_MklMatMul": 25, "BiasAddGrad": 15, "ReluGrad": 10, "MatMul": 0},
    ),
    Capture(
        "keras_fit_mixed_float16",
        FIXTURES / "tf221_cpu_keras3_fit_mixed.xplane.pb",
        "Profiled batch",
        [1, 2, 3],
        2111,
        _COMMON_LINES + ("tf_data_iterator_get_next/",),
        # oneDNN has no fused fp16 MatMul on CPU: the float16 layers run plain MatMul;
        # the loss-scale optimizer adds IsFinite checks.
        {"_MklNativeFusedMatMul": 3, "_MklMatMul": 6, "MatMul": 15, "IsFinite": 18, "BiasAddGrad": 9},
    ),
]


@pytest.fixture(scope="module", params=CAPTURES, ids=lambda c: c.name)
def cap(request) -> tuple[Capture, Timeline]:
    c: Capture = request.param
    return c, read_timeline(str(c.path))


def _python_line(tl: Timeline) -> Line:
    line = tl.plane("/host:CPU").line("python")
    assert line is not None
    return line


def _indices(line: Line, name: str) -> np.ndarray:
    return np.nonzero(line.names() == name)[0]


def test_every_event_and_stat_matches_full_parse(cap):
    c, tl = cap
    compared = assert_matches_reference(tl, str(c.path))
    assert compared > 0
    assert compared == tl.num_events == c.num_events


def test_planes_lines_and_host(cap):
    c, tl = cap
    # CPU-only: the host plane and the capture metadata plane, no device planes.
    assert [p.name for p in tl.planes] == ["/host:CPU", "Task Environment"]
    assert tl.gpu_planes() == []
    assert tl.hostnames == ["vm"]  # the capturing machine; fixtures were renamed, so host != hostname
    assert tl.host == c.path.name[: -len(".xplane.pb")]
    assert tl.errors == [] and tl.warnings == []
    lines = [ln.name for ln in tl.plane("/host:CPU").lines]
    assert lines[0] == "python"
    # every line belongs to a known TF thread pool, and every pool is present
    assert all(ln.startswith(c.host_line_prefixes) for ln in lines), lines
    assert all(any(ln.startswith(p) for ln in lines) for p in c.host_line_prefixes), lines
    # raw capture: never post-processed into derived lines
    assert not {"Steps", "TensorFlow Ops", "Framework Ops", "XLA Ops"} & set(lines)


def test_raw_capture_has_no_group_id(cap):
    """Current TF saves profiles ungrouped: the Advisor must find steps itself."""
    _, tl = cap
    for plane in tl.planes:
        assert plane.stat_key("group_id") is None, plane.name


def test_step_markers_match_profiled_steps(cap):
    c, tl = cap
    py = _python_line(tl)
    markers = _indices(py, c.marker)
    assert py.int_stat("step_num")[markers].tolist() == c.step_nums
    assert (py.duration_ps[markers] > 0).all()
    assert (np.diff(py.start_ps[markers]) > 0).all()  # in step order, one after the other
    assert (py.end_ps[markers][:-1] <= py.start_ps[markers][1:]).all()  # no overlap
    # the other marker kind is absent
    other = "train" if c.marker == "Profiled batch" else "Profiled batch"
    assert _indices(py, other).size == 0
    # only the markers carry step_num on the python thread
    assert py.has_stat("step_num").sum() == len(c.step_nums)


def test_markers_carry_root_flag_as_written(cap):
    """Custom loop: ``train`` carries ``_r=1`` (we asked for it). Keras 3: ``Profiled batch`` has no
    ``_r``; the root is the ``FunctionRun`` of the step function, nested inside it."""
    c, tl = cap
    py = _python_line(tl)
    markers = _indices(py, c.marker)
    runs = _indices(py, "FunctionRun")
    r = py.int_stat("_r")
    assert r[markers].tolist() == ([1] * len(markers) if c.marker == "train" else [-1] * len(markers))
    assert r[runs].tolist() == [1] * len(c.step_nums)
    # exactly one FunctionRun inside each marker
    for m in markers:
        inside = (py.start_ps[runs] >= py.start_ps[m]) & (py.end_ps[runs] <= py.end_ps[m])
        assert inside.sum() == 1


def test_step_function_event_and_tf_function_call(cap):
    """Each step runs the step function once: an event named after it, with ``tf_function_call``
    telling how it ran (here ``notTraced-nonXla``: already traced, not XLA-compiled)."""
    c, tl = cap
    host = tl.plane("/host:CPU")
    py = _python_line(tl)
    has_call = py.has_stat("tf_function_call")
    expected = "train_step" if c.marker == "train" else "multi_step_on_iterator"
    assert set(py.names()[has_call]) == {expected}
    assert has_call.sum() == len(c.step_nums)
    calls = py.str_stat("tf_function_call", inherit=False)[has_call]
    assert {host.string(int(i)) for i in calls} == {"notTraced-nonXla"}
    assert (py.int_stat("tracing_count", inherit=False)[has_call] >= 0).all()


def test_tf_op_events_and_known_counts(cap):
    c, tl = cap
    host = tl.plane("/host:CPU")
    counts: dict[str, int] = {}
    for line in host.lines:
        for name in line.names():
            if ":" in name and "::" not in name:  # TF op events are "<op name>:<op type>"
                op_type = name.rsplit(":", 1)[1]
                counts[op_type] = counts.get(op_type, 0) + 1
    assert sum(counts.values()) > 0
    assert {k: counts.get(k, 0) for k in c.op_counts} == c.op_counts


def test_task_environment_and_relative_timestamps(cap):
    """Event times are relative to ``profile_start_time`` (TF normalizes them), all inside the window."""
    c, tl = cap
    env = tl.plane("Task Environment").stats
    start, stop = env["profile_start_time"], env["profile_stop_time"]
    assert 1.7e18 < start < stop < start + 10**9  # epoch ns, a capture of well under a second
    assert isinstance(env["profile_options"], bytes)
    # ProfileOptions.repository_path (field 10) is the run directory the profile was written to
    assert re.search(rb"R.(/tmp/\S+/(keras/train|custom))$", env["profile_options"])
    host = tl.plane("/host:CPU")
    first = min(int(ln.start_ps.min()) for ln in host.lines if len(ln))
    last = max(int(ln.end_ps.max()) for ln in host.lines if len(ln))
    assert 0 <= first and last <= (stop - start) * 1000


def test_memory_allocation_stats_types():
    """Real value types: ints, a NaN double, ref-valued strings and value-less stats."""
    tl = read_timeline(str(FIXTURES / "tf221_cpu_custom_loop.xplane.pb"))
    host = tl.plane("/host:CPU")
    rows = 0
    for line in host.lines:
        alloc = _indices(line, "MemoryAllocation")
        if alloc.size == 0:
            continue
        rows += alloc.size
        assert (line.int_stat("data_type")[alloc] == 1).all()  # DataType enum DT_FLOAT, an int, not a string
        assert {host.string(int(i)) for i in line.str_stat("allocator_name")[alloc]} == {"mklcpu"}
        assert "[256,256]" in {host.string(int(i)) for i in line.str_stat("shape")[alloc]}
        frag = line.float_stat("fragmentation")[alloc]
        assert np.isnan(frag).any()  # TF writes NaN fragmentation; must survive as NaN
    assert rows == 20


def test_demo_runs_are_small_and_shaped_like_real_logdirs():
    """What a user's logdir looks like after each capture style (and small enough to ship)."""
    keras_files = sorted(p.relative_to(KERAS_DEMO_RUN).as_posix() for p in KERAS_DEMO_RUN.rglob("*") if p.is_file())
    assert len(keras_files) == 2
    assert re.fullmatch(r"train/events\.out\.tfevents\.\d+\.vm\.\d+\.0\.v2", keras_files[0])
    assert re.fullmatch(r"train/plugins/profile/\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d/vm\.xplane\.pb", keras_files[1])
    # the custom loop writes no event files: a profile-only run, invisible to TensorBoard's run list
    custom_files = [p for p in CUSTOM_DEMO_RUN.rglob("*") if p.is_file()]
    assert [p.name for p in custom_files] == ["vm.xplane.pb"]
    assert not list(CUSTOM_DEMO_RUN.rglob("events.out.tfevents.*"))
    for run in (KERAS_DEMO_RUN, CUSTOM_DEMO_RUN):
        assert sum(p.stat().st_size for p in run.rglob("*") if p.is_file()) < 5 << 20
    for f in FIXTURES.glob("*.xplane.pb"):
        assert f.stat().st_size < 2 << 20, f
    # the demo custom run is the same capture as the fixture
    assert _only_profile(CUSTOM_DEMO_RUN).read_bytes() == (FIXTURES / "tf221_cpu_custom_loop.xplane.pb").read_bytes()


# --- what the stock converter makes of the same files (documents its Keras 3 blind spot) ---

def _stock_overview(path: Path, tmp_path: Path) -> list[dict]:
    raw_to_tool_data = pytest.importorskip("xprof.convert.raw_to_tool_data")
    copy = tmp_path / path.name  # the converter writes cache files next to its input
    shutil.copy(path, copy)
    data, _ = raw_to_tool_data.xspace_to_tool_data([str(copy)], "overview_page", {"use_saved_result": False})
    return json.loads(data)


@pytest.mark.parametrize("c", [c for c in CAPTURES if c.marker == "Profiled batch"], ids=lambda c: c.name)
def test_stock_overview_finds_no_steps_in_keras3_captures(c, tmp_path):
    tables = _stock_overview(c.path, tmp_path)
    assert tables[1]["p"]["steptime_ms_average"] == "0.0"
    assert tables[1]["p"]["input_conclusion"].startswith("No step time measured")
    assert tables[1].get("rows", []) == []


def test_stock_overview_steps_of_custom_loop_are_the_train_events(tmp_path):
    c = next(c for c in CAPTURES if c.marker == "train")
    tables = _stock_overview(c.path, tmp_path)
    rows = tables[1]["rows"]
    cols = [col["id"] for col in tables[1]["cols"]]
    steps = [r["c"][cols.index("stepnum")]["v"] for r in rows]
    step_ms = [r["c"][cols.index("stepTimeMs")]["v"] for r in rows]
    assert steps == [f"train {s}" for s in c.step_nums]
    py = _python_line(read_timeline(str(c.path)))
    ours = py.duration_ps[_indices(py, "train")] / 1e9
    np.testing.assert_allclose(step_ms, ours, rtol=1e-6)
