"""XPlane: the program's own TraceMe ranges told apart from the framework runtime's (issue #37, "where to look").

A ``jax.profiler.TraceAnnotation`` or ``tf.profiler.experimental.Trace`` range is a TraceMe event on the Python thread
like the runtime's own (``PjitFunction(f)``, ``Wait for donation holds``, ``FunctionRun`` ...).  The truth here is by
construction: the generators write the program's ranges where the program opens them and record them apart, and the
GPU's activity; the GPU's idle time inside each range is computed from those records, not from the Advisor's ledger.
No real XPlane capture at hand marks ranges of its own (the 11 JAX H100 runs, the MI300X/MI355X JAX files, the TF
captures: only step markers), so on them nothing may be named.
"""

from __future__ import annotations

import functools
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic import jaxcapture as jc
from synthetic.scenarios import Capture, K, Scenario, _dense_layers, _input_copy
from synthetic.tfcapture import A100
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.frameworks.user_ranges import user_annotations
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.intervals import union
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.tf_ranges import tf_loop_with_ranges

STEPS = 12


def _idle_inside(ranges: list[tuple[str, int, int]], busy: list[tuple[int, int]]) -> dict[str, float]:
    """Range name -> ms per step of the GPU's idle time inside it (ps intervals)."""
    busy = union(busy)
    out: dict[str, float] = {}
    for name, a, b in ranges:
        covered = sum(max(0, min(b, y) - max(a, x)) for x, y in busy)
        out[name] = out.get(name, 0.0) + (b - a - covered) / 1e9 / STEPS
    return out


@functools.cache
def _jax_loop(tmp: str) -> tuple[Path, dict[str, float]]:
    """A JAX loop that syncs on its loss each step, with ``TraceAnnotation('preprocess')`` around 3 ms of Python and
    ``TraceAnnotation('forward_backward')`` around the jitted call; returns the file and the truth."""
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = jc.mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    jc.annotated_loop(cap, kernels, STEPS)
    busy = [k for ex in cap.execs for k in ex.kernels] + [(a, b) for ex in cap.execs for a, b, _ in ex.copies]
    truth = _idle_inside(cap.annotations, [(int(a), int(b)) for a, b, *_ in busy])
    sc = jc.JaxScenario("annotated", cap.finish(), cap.truth("annotated", "TraceAnnotation ranges", "trace_train"))
    (path,) = sc.write(tmp)
    return path, truth


@pytest.fixture(scope="module")
def jax_loop(tmp_path_factory):
    return _jax_loop(str(tmp_path_factory.mktemp("jax")))


def _read(path: Path):
    return read(SimpleNamespace(host="h", path=str(path), format="xplane"))


def test_only_the_programs_annotations_are_told_apart_from_jaxlibs_events(jax_loop):
    """Dozens of runtime event names on the Python thread (the dispatch chain, buffer waits, ``np.asarray``, the
    step marker): exactly the two ranges the program opened are its own.  On main nothing was."""
    t = _read(jax_loop[0])
    got = user_annotations(t.h, frameworks.detect_trace(t))
    names = {t.h.names[t.h.name[i]] for i in got}
    assert names == {"preprocess", "forward_backward"}
    assert got.size == 2 * STEPS


def test_the_gpus_idle_time_is_named_in_the_jax_programs_ranges(jax_loop):
    path, truth = jax_loop
    m = host_metrics(_read(path), release=True)  # as the analysis runs: the stats columns dropped after their use
    got = dict(m.idle_in_ranges)
    assert got.keys() == truth.keys()
    assert [n for n, _ in m.idle_in_ranges] == sorted(truth, key=lambda n: -truth[n])
    for name, v in got.items():
        assert v == pytest.approx(truth[name], rel=0.02, abs=0.005), (name, v, truth[name])
    assert got["preprocess"] == pytest.approx(3.0, rel=0.01)  # the GPU waits out the whole 3 ms
    # a part never exceeds its whole: the ranges hold no more than the GPU's idle time in the step
    assert sum(got.values()) <= m.headline.avg_step_ms - m.breakdown.device_compute + 1e-6
    (f,) = [f for f in evaluate(m) if f.rule == "step_gaps"]
    assert "`preprocess` 3.00 ms" in f.summary and "own ranges" in f.summary
    assert "in each gap: `preprocess`" not in f.summary  # named once, as the program's range


def _tf_callbacks(tmp: Path) -> Path:
    """A Keras-style TF step with ``tf.profiler.experimental.Trace('log_metrics')`` (a plain TraceMe on the Python
    thread, no stats) around 2 ms of host work after each step, while the GPU idles."""
    cap = Capture(1, A100, seed=0, marker="keras3")
    ops = [_input_copy()] + _dense_layers(6, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=200, ew_us=18)
    for _ in range(STEPS):
        cap.step([ops], input_wait_us=25, between_events=[("log_metrics", 2000.0)], jitter=0.0)
    sc = Scenario("tf_ranges", {"worker0": cap.finish()}, None)  # type: ignore[arg-type]
    return Path(sc.write(tmp)[0])


def test_a_tensorflow_programs_trace_range_is_named_in_the_gaps(tmp_path):
    path = _tf_callbacks(tmp_path)
    t = _read(path)
    got = user_annotations(t.h, frameworks.detect_trace(t))
    assert {t.h.names[t.h.name[i]] for i in got} == {"log_metrics"}
    m = host_metrics(t)
    (f,) = [f for f in evaluate(m) if f.rule == "step_gaps"]
    # the GPU idles through the whole range (between steps, nothing queued): 2.00 ms by construction
    assert "own ranges `log_metrics` 2.00 ms" in f.summary


def _real_xplanes() -> list[Path]:
    roots = [SHARED_PROFILES / "real-h100-jax", FIXTURES / "wild" / "jax_mi300x", FIXTURES / "wild" / "jax_mi355x",
             FIXTURES / "real", FIXTURES / "h200_jobs"]
    files = [p for r in roots if r.exists() for p in sorted(r.rglob("*.xplane.pb"))]
    v100 = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"
    return files + ([v100] if v100.exists() else [])


@pytest.mark.parametrize("path", _real_xplanes(), ids=lambda p: p.parts[-5] if "plugins" in p.parts else p.stem)
def test_real_captures_without_annotations_name_none_of_the_runtimes_events(path):
    """The real captures mark only steps (``StepTraceAnnotation``, ``Profiled batch``): none of the runtime's events
    on their Python threads (``shard_args``, ``np.asarray(jax.Array)``, ``TFE_Py_FastPathExecute_C``,
    ``BufferSequencingEvent::ExecuteOrAddToFutureTasks`` ...) may pass for the program's range."""
    t = _read(path)
    got = user_annotations(t.h, frameworks.detect_trace(t))
    assert not got.size, sorted({t.h.names[t.h.name[i]] for i in got})[:10]
    assert isinstance(got, np.ndarray)


def test_a_tensorflow_programs_range_inside_its_step_marker_is_its_own(tmp_path):
    """A custom loop's ``Trace('train', step_num=s, _r=1)`` step marker is the runtime's name, but the program's
    ``Trace('load')`` inside it is no runtime call's child: named, with the 1.5 ms the GPU idles in it each step."""
    path = tf_loop_with_ranges(tmp_path, "tf_in_step", [("load", 1500.0)], STEPS)
    t = _read(path)
    got = user_annotations(t.h, frameworks.detect_trace(t))
    assert {t.h.names[t.h.name[i]] for i in got} == {"load"}
    m = host_metrics(t)
    assert dict(m.idle_in_ranges)["load"] == pytest.approx(1.5, abs=0.01)
