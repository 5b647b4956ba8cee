"""A Kineto file that holds two traces' bytes -- processes that exported to one path at once -- is said to, with the
fix of one file per process, not "copy it again" (h37-hunt69, issue #37: captures unlike ours).

The real file: cheese-snowleopard/dist-GNN ``trace_result.json`` @326da70 (MIT; ``tests/fixtures/wild/
two_writers_v100_gloo``, its traceName's user path redacted), BNS-GCN on V100s over gloo, ``distributedInfo`` rank 2 of
4.  Its 1.56 MB hold the events of two processes (pids 62927 and 62928), one's events broken off where the other's begin
(``"cat": "cpu`` then a new event), and two ends (``"traceName"`` twice, the second after the first's closing brace):
the ranks each called ``export_chrome_trace("trace_result.json")`` on one shared path.  Main (b2a0d583) read its first
23 events, said "invalid JSON ... no ',' between events" and told the user to copy the file again and let the profiler
finish writing -- the fix for a copy cut short.  The control: a one-trace file with a comma missing keeps that fix."""

from __future__ import annotations

import gzip
from pathlib import Path

from tests.support.cli_report import first_report

_WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _window(rep: dict) -> dict:
    """The damage's finding: a window without GPU record, or (read past the damage since h37-damage70) the launches
    whose kernels lay in the skipped bytes."""
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality" and not f["id"].endswith("#steps_kept")]
    return f


def _fix_text(f: dict) -> str:
    return " ".join((a["text"] or "") + (a["snippet"] or "") for a in f["actions"])


def test_two_writers_in_one_file_are_said_with_one_file_per_process():
    rep = first_report(_WILD / "two_writers_v100_gloo")
    damage = " ".join(d["detail"] for d in rep["hosts"][0]["damage_records"])
    assert "2 traces' ends" in damage and "more than one trace was written into this one file" in damage, damage
    text = _fix_text(_window(rep))
    assert "its own file" in text and "trace_rank{rank}" in text, text
    assert "copy it again" not in text, text


def test_control_one_trace_with_a_comma_missing_keeps_the_read_the_whole_file_fix(tmp_path: Path):
    src = gzip.decompress((_WILD / "profiler_only_a4000" / "wire_lf_new.527706.pt.trace.json.gz").read_bytes())
    at = src.index(b"},\n  {", src.index(b'"traceEvents"'))
    broken = src[:at + 1] + src[at + 2:]  # the comma after the first event gone: one writer, damaged
    path = tmp_path / "run" / "one.pt.trace.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(broken)
    rep = first_report(path)
    damage = " ".join(d["detail"] for d in rep["hosts"][0]["damage_records"])
    assert "no ',' between events" in damage and "traces' ends" not in damage, damage
    assert "its own file" not in _fix_text(_window(rep)), _fix_text(_window(rep))
