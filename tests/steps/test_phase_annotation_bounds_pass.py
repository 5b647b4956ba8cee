"""A one-pass Kineto capture whose program marks its measured pass with a *phase*-named ``record_function`` range
(a benchmark's ``measure|forward``) is that range, as a step-named one is (``test_step_range_bounds_pass.py``); and a
pass bounded after the start-up is no first call, so its host time is graded as any step's.

Real capture, kept: ``wild/cold_a100_alexnet`` (PARAM's AlexNet benchmark from process start on an A100, HTA's test
data, MIT): 29.9 s of context creation, a 12.74 s warm-up forward in ``...|warmup|forward`` ranges, then the measured
pass in ``[param|pytorch.model.alex_net|0|0|0|measure|forward]`` (79.7 ms: the benchmark's 43.1 ms
``[param|clear_cache]`` on the CPU, a ``cudaFree`` that empties the caching allocator, then the 36.4 ms forward whose
``cudaMalloc`` calls refill it).  Main read the whole 12.92 s window as the step, since Kineto's phase annotations
were no bounds (``steps.passes._pass_phase_window``, h37-left15's left).  Truth: the range's timestamps, read from the
file here, independently of the reader.
"""

from __future__ import annotations

import gzip
import json
from types import SimpleNamespace

import pytest

from tb_gpu_advisor import formats
from tb_gpu_advisor.report.render import to_text
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics
from tests.support.paths import FIXTURES
from tests.support.properties import order_problems

_MEASURE = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"


def _file():
    return next((FIXTURES / "wild" / "cold_a100_alexnet").glob("*.pt.trace.json.gz"))


def _events(path) -> list[dict]:
    return json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]


def _measure_ms(events: list[dict]) -> float:
    """From the first ``measure|forward`` range's start to the last one's end, ms (Kineto's ``ts``/``dur`` in us)."""
    rs = [e for e in events if e.get("cat") == "user_annotation" and e.get("name") == _MEASURE]
    return (max(e["ts"] + e["dur"] for e in rs) - min(e["ts"] for e in rs)) / 1000.0


def _metrics(path):
    m = host_metrics(formats.read(SimpleNamespace(host="h", path=str(path), format="kineto", size=0)))
    return m[0] if isinstance(m, tuple) else m


def test_the_benchmarks_measure_range_bounds_its_one_pass():
    path = _file()
    m = _metrics(path)
    truth = _measure_ms(_events(path))
    assert truth == pytest.approx(79.678, abs=0.001)  # the file as kept
    assert m.steps.count == 1 and m.steps.source == "single_pass"
    # the last kernel ends 0.3 ms before the range does (the host syncs inside it): the step is the range
    assert m.headline.avg_step_ms == pytest.approx(truth, abs=0.005)
    assert f"`{_MEASURE}`" in m.steps.note and "set-up before them is not the pass" in m.steps.note
    assert m.breakdown.startup == 0.0  # the start-up lies before the pass, none of it inside


def test_a_pass_after_the_start_up_is_graded_as_a_step_in_the_stated_order():
    """The pass holds no one-time cost, so its host time (the benchmark's cache flush) is no first call's: not a note
    saving more than the critical allocator churn beside it (h37-left15's try: info 53.8% above critical 39.6%)."""
    report = analyze_session("wild", "s", [SimpleNamespace(host="h", path=str(_file()), format="kineto", size=0)])
    assert order_problems("session", report.findings) == []
    by_rule = {f.rule: f for f in report.findings}
    host, churn = by_rule["unexplained_idle"], by_rule["allocator_churn"]
    assert host.saving.percent_of_step > churn.saving.percent_of_step
    assert host.severity == churn.severity == "critical" and "A note, not a problem" not in host.summary
    # the capture is still said to be mostly start-up, first, without a step saving (the costs lie outside the step)
    assert report.findings[0].rule == "cold_start" and report.findings[0].saving is None
    title = to_text(report).splitlines()[0]  # the pass is the one step kept, not the start-up it followed
    assert "one pass of 79.7 ms" in title and "start-up only" not in title


@pytest.mark.parametrize("end_ms", [20.0, 60.0])
def test_phase_ranges_that_do_not_enclose_the_pass_keep_the_whole_window(tmp_path, end_ms):
    """The controls: the same file with both ``measure|forward`` ranges moved onto the first ``end_ms`` of the measured
    region -- 20 ms: the CPU's cache flush only (``aten::zeros``, no launch); 60 ms: the first convolution and pool
    launched inside, the other three convolutions and the classifier launched after the ranges end (a ``forward``
    range with the rest of the pass outside it) -- bound nothing: the window stays the 12.92 s one, as on main."""
    doc = json.loads(gzip.decompress(_file().read_bytes()))
    rs = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation" and e.get("name") == _MEASURE]
    start = min(e["ts"] for e in rs)
    for e in rs:
        e["ts"], e["dur"] = start, end_ms * 1000
    path = tmp_path / "cut.pt.trace.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    m = _metrics(path)
    assert m.steps.source == "single_pass" and "set-up before them" not in m.steps.note
    assert m.headline.avg_step_ms == pytest.approx(12_920, rel=0.01)
