"""A PyTorch trace in which the profiler recorded nothing but its own window is an error, not "no GPU work".

Survey h37-survey7b: MLOps-Team-Spring-2024/Diabetes-Predictor's ``profiling/model_run/DESKTOP-006G4SL_*.pt.trace.json``
(Windows, a ``torch.profiler.profile`` block around an XGBoost fit: no PyTorch op ran) hold four events, all the
profiler's own -- the ``PyTorch Profiler (0)`` span (``Op count: 0``, 1.22 s), its sort index and two instants -- and
main reported "no GPU work [high confidence]" with "No GPU activity" warnings, exit 0.  Nothing was recorded, so
nothing can be said of the job: the README's rule (nothing recorded: an error of that host, exit 2).  The file has no
licence (an empty LICENSE), so the test builds its shape: the same four events.

Survey h37-survey23: ChrisVN123/mlops_testmappe's 832-byte ``log/resnet18/...pt.trace.json`` (a MacBook, no
licence: built here) keeps not even the window's span -- four thread-name events and ``Record Window End`` -- and main
said "no readable event: the "traceEvents" array holds no complete event", the words of a broken file.  It is the
same empty window, said in the same words.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.formats.kineto.parse import KinetoReadError
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

T0 = 1716676590402962


def _window_only(extra: list[dict] | None = None) -> dict:
    """The profiler's own events of an empty window, as Kineto writes them (``extra``: events the program made)."""
    return {"schemaVersion": 1, "profile_memory": 1, "record_shapes": 1, "traceEvents": [
        {"ph": "X", "cat": "Trace", "ts": T0, "dur": 1224673, "pid": "Spans", "tid": "PyTorch Profiler",
         "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
        {"name": "process_sort_index", "ph": "M", "ts": T0, "pid": "Spans", "tid": 0, "args": {"sort_index": 536870912}},
        {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
         "tid": "Trace PyTorch Profiler", "ts": T0},
        {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": T0 + 1224760},
        *(extra or [])], "traceName": "./profiling/model_run/DESKTOP_2108.1716676591627445500.pt.trace.json"}


def _write(tmp_path: Path, doc: dict) -> Path:
    p = tmp_path / "DESKTOP_2108.1716676591627445500.pt.trace.json"
    p.write_text(json.dumps(doc))
    return p


def test_a_window_with_only_the_profilers_own_events_is_nothing_recorded(tmp_path: Path):
    path = _write(tmp_path, _window_only())
    with pytest.raises(KinetoReadError, match=r"nothing recorded: the profiler's window \(1,224\.7 ms, "
                                              r"`PyTorch Profiler \(0\)`\) holds no op"):
        read_trace(str(path))
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error and "nothing recorded" in rep.error and not rep.findings


def test_one_op_in_the_window_is_a_report_of_cpu_work(tmp_path: Path):
    """The control: a single ATen op is something recorded -- the job ran on the CPU, a report as before."""
    op = {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 2108, "tid": 1, "ts": T0 + 100, "dur": 40,
          "args": {"External id": 1}}
    path = _write(tmp_path, _window_only([op]))
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None and rep.job["kind"] == "no_gpu", rep.job


def _marks_only() -> dict:
    """A window that kept not even its own span: thread names twice over and ``Record Window End`` (the real
    file's nine events, its pid, tid and times)."""
    pid, tid = 93917, 3961819
    names = [{"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"name": f"thread {tid} ()"}},
             {"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"sort_index": tid}}]
    end = {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 1736417948403182}
    return {"schemaVersion": 1, "traceEvents": names * 2 + [end],
            "traceName": "./log/resnet18/mbp.local_93917.1736417948403527000.pt.trace.json"}


def test_a_window_that_kept_only_thread_names_and_its_end_mark_is_nothing_recorded(tmp_path: Path):
    """No complete event, only the profiler's own metadata and its end mark: said as the empty window it is, with
    what the file holds -- not as a file with nothing readable in it."""
    path = _write(tmp_path, _marks_only())
    with pytest.raises(KinetoReadError) as e:
        read_trace(str(path))
    msg = str(e.value)
    assert "nothing recorded: the profiler's window holds no op" in msg and "no readable event" not in msg
    assert "only 4 metadata events and 1 instant event:" in msg and "with torch.profiler.profile(...)" in msg
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error and "nothing recorded" in rep.error and not rep.findings


@pytest.mark.parametrize("doc", [{"traceEvents": []},
                                 {"traceEvents": [{"ph": "s", "name": "x", "ts": 1, "pid": 1, "tid": 1, "id": 1}]}])
def test_no_event_or_no_profiler_mark_keeps_the_plain_words(tmp_path: Path, doc: dict):
    """Controls: an empty array, or events that are not the profiler's own marks, hold no window to speak of."""
    path = _write(tmp_path, doc)
    with pytest.raises(KinetoReadError, match="holds no complete event") as e:
        read_trace(str(path))
    assert "nothing recorded" not in str(e.value)
