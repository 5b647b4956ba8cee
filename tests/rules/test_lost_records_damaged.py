"""A damaged file whose readable part holds no GPU record: the records may be past the damage, not lost by the capture.

Survey h37-survey13: ASB1127/HPMLProj's ``rSVD/bert_checkpoints/profile_trace.json`` @c19d37ff is exactly 1 MiB
(1,048,576 bytes) of a PyTorch trace on an A100: the profiler's host ops and allocator events, cut inside an event
before any kernel (PyTorch writes the host's events before the GPU's).  Main said the file was cut off and, beside
it, "The capture lost its GPU records" with the fix "record the GPU's activity and wait for the GPU before the
profile ends" -- a fault of the capture the file does not show, and a fix that would not bring the kernels back.
The file has no licence, so the test builds the case: the synthetic input-bound run (host first, GPU last, as
Kineto writes) cut inside its first GPU event; the control is the same host part closed whole, with no damage.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from synthetic import torchtrace
from tests.support.cli_report import first_report

_GPU_CATS = re.compile(r'"cat": "(?:kernel|gpu_memcpy|gpu_memset|gpu_user_annotation)"')


def _host_part(tmp_path: Path) -> tuple[str, int, str]:
    """The run's text, the offset of its first GPU event's line, and the file name."""
    (path,) = torchtrace.write_run(str(tmp_path / "whole"), "input_bound", steps=4, run="run")
    text = Path(path).read_text(encoding="utf-8")
    first_gpu = text.rfind("\n", 0, _GPU_CATS.search(text).start()) + 1
    assert not _GPU_CATS.search(text[:first_gpu])  # by construction: the host's events, then the GPU's
    return text, first_gpu, os.path.basename(path)


def test_no_gpu_record_before_the_cut_is_the_damage_not_the_capture(tmp_path: Path) -> None:
    text, first_gpu, name = _host_part(tmp_path)
    cut = tmp_path / "cut" / name
    cut.parent.mkdir()
    cut.write_text(text[:first_gpu + 40], encoding="utf-8")  # inside the first GPU event
    rep = first_report(str(cut))
    host = rep["hosts"][0]
    assert any("cut off" in d for d in host["damage"])
    first = rep["findings"][0]
    assert first["title"] == "No GPU record in the part of the damaged file that was read"
    # the damage itself ("cut off at byte ...") is said once, in the report's damage notice, not repeated here
    assert "damaged before them" in first["summary"] and "not shown to have missed" in first["summary"]
    assert "Read the whole file" in first["actions"][0]["text"]
    assert "lost its GPU records" not in json.dumps(rep["findings"])


def test_the_same_host_part_closed_whole_still_lost_its_records(tmp_path: Path) -> None:
    """Control: no damage, no kernel, launches recorded -- the capture did lose the GPU's side."""
    text, first_gpu, name = _host_part(tmp_path)
    whole = tmp_path / "closed" / name
    whole.parent.mkdir()
    head = text[:first_gpu].rstrip().rstrip(",")
    whole.write_text(head + "\n  ],\n  \"traceName\": \"run\"\n}\n", encoding="utf-8")
    rep = first_report(str(whole))
    assert not rep["hosts"][0]["damage"]
    assert rep["findings"][0]["title"] == "The capture lost its GPU records"
