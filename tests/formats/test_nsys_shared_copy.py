"""A large export is copied once for discovery's probe and the read that follows it, not twice (issue #38: the 1 GB
export's wall time).

Why: SQLite is never given a path into the logdir (``shared_sqlite.open_db``); an export over ``DESERIALIZE_MAX_BYTES`` is
copied through the checked descriptor into a private folder.  The probe (``layout``: three header values) made one
such copy and the report's read a second one, 1 GB each on the issue's export.  The probe's copy is now kept for the
read of the same file -- the same inode, size, mtime and ctime as the read's own descriptor, this process, within
``KEEP_SECONDS`` -- and every copy is still removed: by the read that takes it, by the next probe, by a timer, at
exit.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.formats import sqlite as shared_sqlite
from tb_gpu_advisor.formats.nsys import layout, reader
from tests.support.nsys_reference import trace_differences


@pytest.fixture()
def export(tmp_path, monkeypatch) -> str:
    """A small export read as a large one is (private copies), with every copy made counted in ``copies``."""
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=4, ops=3))
    monkeypatch.setattr(shared_sqlite, "DESERIALIZE_MAX_BYTES", 0)
    shared_sqlite._drop_kept()
    made: list[str] = []
    real = shared_sqlite.private_copy
    monkeypatch.setattr(shared_sqlite, "private_copy", lambda f, suffix: made.append(real(f, suffix)) or made[-1])
    yield p, made
    shared_sqlite._drop_kept()


def _probe(path: str) -> None:
    why, _ = layout._probe(path)
    assert why is None


def test_the_read_takes_the_probes_copy_and_removes_it(export):
    path, made = export
    want = reader.read_trace(path)  # alone: its own copy
    assert len(made) == 1 and not os.path.exists(made[0])
    _probe(path)
    assert len(made) == 2 and os.path.exists(made[1])  # kept
    got = reader.read_trace(path)
    assert len(made) == 2  # no copy of its own
    assert not os.path.exists(made[1]) and shared_sqlite._kept is None
    assert trace_differences(got, want) == []


def test_a_file_changed_since_the_probe_is_copied_again(export):
    path, made = export
    _probe(path)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a write would move mtime and ctime
    reader.read_trace(path)
    assert len(made) == 2 and not any(os.path.exists(m) for m in made)


def test_a_copy_no_read_takes_is_removed(export, monkeypatch):
    path, made = export
    _probe(path)
    shared_sqlite._drop_kept(made[0])  # the timer's call
    assert not os.path.exists(made[0]) and shared_sqlite._kept is None
    monkeypatch.setattr(shared_sqlite, "KEEP_SECONDS", 0.0)
    _probe(path)
    reader.read_trace(path)  # too old: its own copy, the old one removed
    assert len(made) == 3 and not any(os.path.exists(m) for m in made)


def test_another_process_never_takes_or_removes_the_copy(export, monkeypatch):
    """A forked child inherits the kept entry; the copy is its parent's, to read and to remove."""
    path, made = export
    _probe(path)
    parent = os.getpid()
    monkeypatch.setattr(shared_sqlite.os, "getpid", lambda: parent + 1)
    reader.read_trace(path)
    shared_sqlite._drop_kept()
    assert len(made) == 2 and os.path.exists(made[0])
    monkeypatch.setattr(shared_sqlite.os, "getpid", lambda: parent)
    shared_sqlite._drop_kept()
    assert not os.path.exists(made[0]) and not Path(made[0]).parent.exists()
