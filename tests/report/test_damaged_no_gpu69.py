"""A damaged file's report never says its window held no GPU work (h37-damage69).

wild/two_writers_v100_gloo is a real Kineto file two processes exported to one path at once: its read stops at the
first broken event (byte 8,372), 540 kernels lie in the bytes past it.  Its damage finding said rightly that the GPU's
records may lie past the damage; its title, its job line and the tab's host line (``job.no_gpu_step``, which
``views.js`` ``noStepTimed`` reads) said "no step: the window holds no GPU work".  The same held for any Kineto trace
cut before its first kernel, plain or gzip'd.  Now a window with no GPU record in a file whose read stopped early is
``Kind.damaged`` (``job.kind._cut_before_gpu``) and every surface says "no GPU record in the part of the damaged file
read" (``report.verdict.NO_STEP_WHY["damaged"]``).  The other formats whose readers stop early (a truncated XPlane, a
damaged Nsight or rocpd database, a cut rocprof CSV, a cut snapshot pickle) make an error host, which claims no kind
(``tests/report/test_damage_records67.py``); the law ``contradictions.damaged_words_problems`` holds over every kept
report (``tests/report/test_properties.py``).

Truth by construction: the real two-writer file, and the real AMD MI300X Kineto trace cut to its first 5% (plain JSON)
and its gzip stream cut to its first 20%; none of the parts read holds a kernel.  Control: the whole AMD trace, which
times its steps.  Fail on base caaafce2: the three damaged cases (the title and job said "the window holds no GPU
work")."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tb_gpu_advisor.report import render
from tb_gpu_advisor.report.verdict import NO_STEP_WHY
from tests.support.contradictions import damaged_words_problems
from tests.support.paths import FIXTURES
from tests.support.run_report import fresh_report, fresh_run_report

AMD = FIXTURES / "wild" / "amd_mi300x" / "bert_small.pt.trace.json.gz"


def _cut(tmp: Path, name: str, data: bytes) -> Path:
    (tmp / "run").mkdir()
    (tmp / "run" / name).write_bytes(data)
    return tmp


def _amd_json_cut(tmp: Path) -> Path:
    raw = gzip.decompress(AMD.read_bytes())
    return _cut(tmp, "vm.pt.trace.json", raw[: len(raw) // 20])


def _amd_gzip_cut(tmp: Path) -> Path:
    raw = AMD.read_bytes()
    return _cut(tmp, "vm.pt.trace.json.gz", raw[: len(raw) // 5])


@pytest.mark.parametrize("case", ["json_cut", "gzip_cut"])
def test_a_damaged_window_without_gpu_record_says_so_of_the_part_read(tmp_path, case):
    # the two-writer file is read past its damage since h37-damage70: its kernels are read (tests/formats/
    # test_kineto_resync70.py); below, its window is never said to hold no GPU work
    report = fresh_report((_amd_json_cut if case == "json_cut" else _amd_gzip_cut)(tmp_path))
    (h,) = report.hosts
    assert h.cuts() and not h.error, h.records()
    text = render.to_text(report)
    assert damaged_words_problems(report, text) == []
    assert h.job["no_gpu_step"] == NO_STEP_WHY["damaged"] and h.job["damaged"] is True, h.job
    assert f"no step: {NO_STEP_WHY['damaged']}" in text.splitlines()[0], text.splitlines()[0]
    assert h.job["summary"].startswith(f"Job: {NO_STEP_WHY['damaged']} ["), h.job["summary"]


def test_the_two_writer_file_read_past_its_damage_holds_gpu_work_and_stays_damaged():
    report = fresh_run_report(FIXTURES / "wild", "two_writers_v100_gloo")
    (h,) = report.hosts
    assert any(r.kind == "unreadable" for r in h.records()) and not h.cuts() and not h.error, h.records()
    text = render.to_text(report)
    assert damaged_words_problems(report, text) == []
    assert not h.job.get("no_gpu_step") and "FINDINGS: partial: " in text, text[:2000]
    assert "training" in h.job["summary"], h.job["summary"]
    # its launches whose kernels lay in the skipped bytes are the damage's, never CUPTI's buffer (h37-damage70)
    assert "their records may be in the damaged file's skipped bytes" in text, text
    assert "smaller `active`" not in text and "their records were not written" not in text, text
    assert "its own file" in text, text


def test_control_the_whole_trace_times_its_steps():
    report = fresh_run_report(FIXTURES / "wild", "amd_mi300x")
    assert all(not h.cuts() and not (h.job or {}).get("no_gpu_step") for h in report.hosts)
