"""A run folder's suffixless files are sniffed for memory snapshots (session 70 snap70), and that sniff must cost
only their first bytes: a file the snapshot layout leaves out without a word (``Layout.sniff`` ``""``) is asked the
64-byte ``formats.foreign_capture`` and never the 64 KiB ``formats.text_decoded`` (review70: on main 492a2e11 every
dotless ``README``, program or data file of a logdir was read 64 KiB deep and decoded character by character).

Fails on main 492a2e11 (passes on base dbf6cf15, which never sniffed a suffixless name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover, skipped


def test_a_suffixless_file_no_snapshot_is_not_read_deep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    asked: list[str] = []
    monkeypatch.setattr(formats, "text_decoded", lambda p: asked.append(str(p)))
    run = tmp_path / "run"
    path = ms.write(str(run / "ss_3"), ms.training_iterations().doc)
    (run / "README").write_text("epoch snapshots\n" * 10_000)
    (run / "LICENSE").write_bytes(b"\x00\x01\x02" * 30_000)
    sessions = discover(str(run))
    assert [h.path for s in sessions for h in s.hosts] == [path]
    assert skipped(str(run)) == []
    assert asked == []


def test_a_nsys_report_without_a_suffix_is_still_named(tmp_path: Path):
    """Control (passes on main): the 64-byte look still names another tool's capture under a suffixless name."""
    from tb_gpu_advisor.formats import heads

    run = tmp_path / "run"
    run.mkdir()
    ms.write(str(run / "ss_3"), ms.training_iterations().doc)
    (run / "report1").write_bytes(heads.NSYS_REPORT_MAGIC + bytes(4096))
    assert any(p == "report1" for p, _ in skipped(str(run)))
