"""A loop whose every call reads back more than once: its steps are its calls (h37-twosync, issue #37 steps class:
"repeated iterations are steps").

The wrong assumption (``job.period._region_steps``): *a loop waits for its GPU once a call, at the boundary, and
nowhere else in the period* -- so where a call also reads a value back mid-call (a router's counts, a norm's
``.item()``) and the host's turn after the boundary is no longer than after that read, no pause stood out, and the
"one wait per period" reading failed: 12 calls read as one pass.  Where the read fell halfway and the host paused long
after each, the halves were taken for iterations of an alternating loop (24 "iterations" of 4 kernels), though they run
different kernels.  On Nsight, a native loop of such iterations was read by its own calls but cut at the mid read.
Now the waits at a few fixed points of every repeat are the iteration's (``_read_points``), the boundary is the one
where the launches begin repeating, and an alternating loop's parts must run the same kernels (``_same_work``).

Truth by construction: ``synthetic.torchtrace.synced_calls`` (Kineto) and ``synthetic.nsysexport.write_reading_loop``
(Nsight): N calls of distinct kernels, a sync after the given launches of each, the same short turn after each.
Controls: one read a call (unchanged), one call that reads twice (one pass), and an alternating loop (still halved:
``tests/job/test_alternating_iterations.py``)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from synthetic import nsysexport, torchtrace
from tb_gpu_advisor import formats
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

CALL = len(torchtrace.SYNCED_CALL)


def _kineto(tmp_path: Path, calls: int, **kw) -> Path:
    sc = torchtrace.Scenario(1, functools.partial(torchtrace.synced_calls, **kw), [], [], "a loop that reads back")
    (path,) = torchtrace.write_run(str(tmp_path), sc, steps=calls, run="loop")
    return Path(path)


def _file(path: Path, fmt: str) -> HostFile:
    return HostFile(path.name, str(path), path.stat().st_size, 0, fmt)


def _report(path: Path, fmt: str):
    rep = analyze_host(_file(path, fmt))
    assert rep.error is None, rep.error
    return rep


def _step_starts_ps(path: Path, fmt: str) -> np.ndarray:
    """The kept steps' starts (ps; from the report's zero)."""
    return np.array([w.start_ms * 1e9 for w in host_metrics(formats.read(_file(path, fmt))).steps.windows])


def _first_launches_us(path: Path, per_call: int) -> np.ndarray:
    """Each call's first launch (us, the file's clock): every ``per_call``-th ``cudaLaunchKernel``."""
    import json
    ev = json.loads(path.read_text())["traceEvents"]
    ts = sorted(e["ts"] for e in ev if e.get("name") == "cudaLaunchKernel")
    assert len(ts) % per_call == 0
    return np.asarray(ts[::per_call], dtype=np.float64)


def _same_phase(starts_ps: np.ndarray, truth_us: np.ndarray) -> bool:
    """Whether the steps start where the calls do, one for one (their offsets from the first: the clocks' zeros
    differ)."""
    a = (starts_ps - starts_ps[0]) / 1e6
    b = truth_us - truth_us[0]
    return a.shape == b.shape and bool(np.allclose(a, b, atol=0.01))


@pytest.mark.parametrize("reads", [(3, CALL), (4, CALL), (2, 5, CALL)], ids=str)
def test_a_loop_reading_back_twice_a_call_has_a_step_per_call(tmp_path: Path, reads: tuple[int, ...]):
    """main: one pass (``single_pass``), 1 step for 12 calls."""
    path = _kineto(tmp_path, 12, reads=reads, turn_us=10.0)
    rep = _report(path, "kineto")
    s = rep.steps
    assert s["source"] == "repeated_launches" and s["found"] == 12 and s["count"] == 10, s
    assert f"same {CALL}-kernel launch sequence" in s["note"] and "(100% of the launches)" in s["note"]
    assert f"{len(reads)} syncs at the same points of every repeat" in s["note"]
    starts, first = _step_starts_ps(path, "kineto"), _first_launches_us(path, CALL)[1:11]  # the ends dropped
    assert _same_phase(starts, first), (starts, first)


def test_a_read_halfway_does_not_halve_the_call(tmp_path: Path):
    """Eight distinct kernels, a read after the fourth and at the end, a long turn after each: the halves run other
    kernels, so they are no iterations of a loop alternating its order (main: 24 "iterations of 4 kernels")."""
    kernels = torchtrace.SYNCED_CALL[:8]
    s = _report(_kineto(tmp_path, 12, reads=(4, 8), turn_us=150.0, kernels=kernels), "kineto").steps
    assert s["source"] == "repeated_launches" and s["found"] == 12, s
    assert "same 8-kernel launch sequence" in s["note"]


def test_control_one_read_a_call_is_unchanged(tmp_path: Path):
    path = _kineto(tmp_path, 12, reads=(CALL,), turn_us=10.0)
    s = _report(path, "kineto").steps
    assert s["source"] == "repeated_launches" and s["found"] == 12 and s["count"] == 10
    assert "a sync at each boundary and nowhere else in the period" in s["note"]


def test_control_one_call_reading_twice_is_one_pass(tmp_path: Path):
    s = _report(_kineto(tmp_path, 1, reads=(3, CALL), turn_us=10.0), "kineto").steps
    assert s["source"] == "single_pass" and s["count"] == 1, s


@pytest.mark.parametrize("reads", [(3, 8), (4, 8), (2, 5, 8)], ids=str)
@pytest.mark.parametrize("scale", [0.05, 1.0], ids=["host-bound", "gpu-bound"])
def test_a_native_loop_reading_back_twice_is_cut_at_its_iterations(tmp_path: Path, reads: tuple[int, ...],
                                                                   scale: float):
    """Nsight, no NVTX: 10 iterations of 8 distinct kernels.  main: 10 steps but each cut at the mid read (96% of the
    launches in the steps, the first iteration's head left out), whether host- or GPU-bound."""
    path = tmp_path / "loop.sqlite"
    truth = nsysexport.write_reading_loop(str(path), reads=reads, kernel_scale=scale)
    s = _report(path, "nsys").steps
    assert s["source"] == "repeated_launches" and s["found"] == truth["iterations"], s
    assert "(100% of the launches)" in s["note"], s["note"]
    starts, first = _step_starts_ps(path, "nsys"), np.asarray(truth["first_launch_ns"][1:-1], np.float64) / 1e3
    assert _same_phase(starts, first), (starts, first)


def test_control_a_native_loop_reading_once(tmp_path: Path):
    path = tmp_path / "loop.sqlite"
    truth = nsysexport.write_reading_loop(str(path), reads=(8,), kernel_scale=0.05)
    s = _report(path, "nsys").steps
    assert s["source"] == "repeated_launches" and s["found"] == truth["iterations"]
    starts, first = _step_starts_ps(path, "nsys"), np.asarray(truth["first_launch_ns"][1:-1], np.float64) / 1e3
    assert _same_phase(starts, first), (starts, first)
