"""A step row lies inside the capture window the report states (issue #37, h37-left37).

``capture.length_ms`` is the profiler's own window; the report's times count from the viewer's 0.  Where recorded
events precede the window (``foreign/mtia_inference``: MTIA command-processor events 99 ms before the ``PyTorch
Profiler`` span, the trace viewer's 0 among them) or the window is a slice of a longer session (an Nsight export's
``DERIVED_WINDOW_NS``), the window does not start at 0: ``capture.window_start_ms`` says where it does.  Work recorded
after the span closed (kernels a step launched, ending after the profiler's span: ``wild/vit_a4000_pageable_batch``)
is in the window too.  On main mtia's one row read 101.3 ms + 342.1 ms against a 344.6 ms window starting nowhere,
and the ViT's last GPU row ended 0.07 ms past it.  Truth from each file itself (its json, its sqlite)."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES, SHARED_PROFILES

MTIA = FIXTURES / "foreign" / "mtia_inference" / "mtia_inference_rank_0.865.pt.trace.json.gz"
VIT = FIXTURES / "wild" / "vit_a4000_pageable_batch" / "vit_a4000.1436345.pt.trace.json.gz"
SLICE = SHARED_PROFILES / "nsys" / "fsdp_mfu_before" / "mfu_2gpu_before.sqlite"


def _report(path: Path, fmt: str):
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, fmt))
    assert rep.error is None, rep.error
    return rep


def _profiler_span(path: Path) -> tuple[float, float, float]:
    """(the viewer's 0: the earliest event, the profiler span's start, its end), us, from the json."""
    events = [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"]
    (span,) = [e for e in events if e.get("cat") == "Trace"]
    return min(e["ts"] for e in events), span["ts"], span["ts"] + span["dur"]


def _inside(rep) -> list[str]:
    a, n = rep.capture["window_start_ms"], rep.capture["length_ms"]
    return [f"row {r.step} gpu {r.gpu}: [{r.start_ms:.3f}, {r.start_ms + r.step_ms:.3f}] outside [{a:.3f}, {a + n:.3f}]"
            for r in rep.step_rows if r.start_ms < a - 1e-3 or r.start_ms + r.step_ms > a + n + 1e-3]


def test_a_window_that_opens_after_the_viewers_zero_says_where():
    zero, start, end = _profiler_span(MTIA)
    rep = _report(MTIA, "kineto")
    assert rep.capture["window_start_ms"] == pytest.approx((start - zero) / 1000, abs=1e-3)  # 98.97 ms
    assert rep.capture["length_ms"] >= (end - start) / 1000 - 1e-3
    assert _inside(rep) == []


def test_work_recorded_after_the_profilers_span_is_in_the_window():
    zero, start, _ = _profiler_span(VIT)
    rep = _report(VIT, "kineto")
    assert rep.capture["window_start_ms"] == pytest.approx((start - zero) / 1000, abs=1e-3)
    assert _inside(rep) == []


@pytest.mark.skipif(not SLICE.is_file(), reason="the shared nsys set is not here")
def test_a_time_slice_of_an_nsight_session_starts_where_the_slice_does():
    con = sqlite3.connect(f"file:{SLICE}?mode=ro", uri=True)
    (session,) = con.execute("SELECT startTime FROM ANALYSIS_DETAILS LIMIT 1").fetchone()
    (window,) = [v for k, v in con.execute("SELECT name, value FROM META_DATA_EXPORT") if k == "DERIVED_WINDOW_NS"]
    a, _, b = window.partition("-")
    rep = _report(SLICE, "nsys")
    assert rep.capture["window_start_ms"] == pytest.approx((int(a) - session) / 1e6, abs=1e-3)
    assert rep.capture["length_ms"] >= (int(b) - int(a)) / 1e6 - 1e-3
    assert _inside(rep) == []
