"""A leak read from a snapshot of unknown capacity says so, and how to record it (issue #37 deliverable 5: "findings
relative to the peak when capacity is unknown, saying capacity is unknown and how to record it"; session 70 snap70).

A snapshot does not record the GPU's capacity.  ``memory_leak`` counts "another <peak> (the peak again) in N more
iterations" -- the peak is all it can count to -- but on base dbf6cf15 it alone among the snapshot's findings
(``activation_memory``, ``memory_fragmentation`` say it) said neither that the capacity is unknown nor how to record
it (``torch.cuda.mem_get_info`` beside the dump, or ``profile_memory=True``).  With the capacity recorded beside the
snapshot (``synthetic.memsnapshot.write_capacity``) the words and the fix stay out (control).  Truth by construction
(``training_iterations(leak="list")``: 16 MiB kept each iteration), read through the CLI, stacks and without."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.rules._memory import CAPACITY_UNKNOWN
from tests.support.cli_report import cli_report


def _leak(report: dict) -> dict:
    (f,) = [f for f in report["findings"] if f["rule"] == "memory_leak"]
    return f


def _fix_text(f: dict) -> str:
    return " ".join(str(a) for a in f["actions"])


@pytest.mark.parametrize("context", ["all", None])
def test_a_leak_of_unknown_capacity_says_so_and_how_to_record_it(tmp_path: Path, context: str | None):
    doc = ms.as_recorded(ms.training_iterations(leak="list", iterations=6).doc, context=context)
    f = _leak(cli_report(ms.write(str(tmp_path / "run" / "snapshot.pickle"), doc)))
    assert "(the peak again)" in f["summary"] and CAPACITY_UNKNOWN in f["summary"]
    assert "mem_get_info" in _fix_text(f) and "profile_memory=True" in _fix_text(f)


def test_a_leak_beside_its_capacity_record_says_nothing_of_it(tmp_path: Path):
    """Control (passes on base): the capacity recorded, nothing said of its absence."""
    path = ms.write(str(tmp_path / "run" / "snapshot.pickle"), ms.training_iterations(leak="list", iterations=6).doc)
    ms.write_capacity(path, total=80 * ms.GiB, free=70 * ms.GiB)
    f = _leak(cli_report(path))
    assert CAPACITY_UNKNOWN not in f["summary"] and "mem_get_info" not in _fix_text(f)
