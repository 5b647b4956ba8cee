"""A copy that blocks the host is graded against the recorded iteration, not a stretch nothing recorded (issue #37,
h37-left27, h37-left30).

The real class: Aphelack/efficient-dl-systems ``week02_fast_pipelines/homework/task3/torch_profiler_trace.json``
@7e6cd43 (MIT, kept: ``wild/vit_a4000_pageable_batch``) -- CUDA activities only, so its steps are GPU bursts, and
3.78 s in which nothing was recorded lay inside the first.  Its one iteration copies the 154 MB batch from pageable
memory (``Memcpy HtoD (Pageable -> Device)``, 31.3 ms, the host held 31.4 ms in ``cudaMemcpyAsync``); it was judged
against the 1.94 s mean "step" (0.8%) and named nowhere.  The steps are now cut at that stretch (``steps.detect``,
``tests/steps/test_unrecorded_stretch.py``), and the first burst, the tail of an iteration launched before the window,
is dropped as partial (h37-left46), so the copy is judged against the one iteration the capture recorded whole.  Truth
from the file itself: the pageable copies' time over the time recorded after the longest stretch no event covers.  Controls: the same copy made pinned and asynchronous is no pageable copy; a recorded OS wait
between bursts stays in the step the copy is judged against.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support import unrecorded
from tests.support.paths import FIXTURES

TRACE = FIXTURES / "wild" / "vit_a4000_pageable_batch" / "vit_a4000.1436345.pt.trace.json.gz"
PAGEABLE = "Memcpy HtoD (Pageable -> Device)"


def _events() -> dict:
    return json.loads(gzip.decompress(TRACE.read_bytes()))


def _truth(events: list[dict]) -> float:
    """The pageable copies' time over the iteration the window holds whole: the recorded time after the longest
    stretch no event (runtime call, kernel, copy) covers -- before it lies only the tail of an iteration launched before
    the capture, a partial step no average keeps (h37-left46)."""
    busy = unrecorded.timed(events)
    _, hole1 = unrecorded.longest_hole(events)
    copies = sum(e["dur"] for e in events if e.get("name") == PAGEABLE)
    return copies / (busy[-1][1] - hole1)


def _report(path: Path):
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    return rep


def test_the_pageable_batch_copy_is_named_against_the_recorded_time():
    doc = _events()
    truth = _truth(doc["traceEvents"])
    assert truth > 0.25, truth  # the copy is over a quarter of what the capture recorded
    found = [f for f in _report(TRACE).findings if f.rule == "excessive_memcpy"]
    assert found, "the blocking pageable copy is named by no finding"
    f = found[0]
    assert abs(f.metric.value - truth) <= 0.05 * truth, (f.metric.value, truth)
    assert f.severity == "warning", f.severity  # a third of the iteration: a problem, not a note
    assert "pageable" in f.summary, f.summary
    assert "pin" in f.actions[0].text.lower(), f.actions[0].text  # the copy's own fix comes first


def test_a_pinned_asynchronous_copy_in_the_same_steps_is_no_pageable_copy(tmp_path):
    doc = _events()
    events = doc["traceEvents"]
    copy = next(e for e in events if e.get("name") == PAGEABLE)
    copy["name"] = "Memcpy HtoD (Pinned -> Device)"
    corr = copy["args"]["correlation"]
    call = next(e for e in events if e.get("cat") == "cuda_runtime" and e.get("args", {}).get("correlation") == corr)
    call["dur"] = 15.0  # a pinned, asynchronous copy's call returns once queued
    path = tmp_path / TRACE.name
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    # no compute runs beside it, so it still holds the GPU; but nothing of it is pageable, and the host never waits --
    # no cost is put on pageable memory (the trace's other, small pageable upload may be named as too small to pin:
    # h37-pinned32's ``capture.applied`` words)
    for f in _report(path).findings:
        if f.rule == "excessive_memcpy":
            assert "is from pageable host memory" not in f.summary, f.summary


def test_a_recorded_os_wait_between_guessed_steps_stays_in_the_step():
    """Control: ``wild/mordred_rtx6000_hashjoin`` (a hash-join benchmark, its steps GPU bursts too) spends the
    stretch between its uploads and its queries blocked in ``getc`` on its standard input: the OS runtime trace
    records it, so its pageable copies are judged against the whole step, the wait in it."""
    path = FIXTURES / "wild" / "mordred_rtx6000_hashjoin" / "report1.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        longest = db.execute("SELECT max(o.end - o.start) FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId "
                             "WHERE s.value = 'getc'").fetchone()[0]
    assert longest > 4e9, longest  # the recorded wait on stdin, ns
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "nsys"))
    assert rep.error is None, rep.error
    found = [f for f in rep.findings if f.rule == "excessive_memcpy"]
    assert found, [f.rule for f in rep.findings]
    f = found[0]
    steps = [r.step_ms for r in rep.step_rows if r.gpu is None]
    assert max(steps) > 4650.0, steps  # the step holding the 4.65 s wait (tests/steps/test_unrecorded_stretch.py)
    mean = sum(steps) / len(steps)
    assert abs(f.metric.value - f.metric.detail["blocking_ms_per_step"] / mean) <= 0.01 * f.metric.value, f.metric
