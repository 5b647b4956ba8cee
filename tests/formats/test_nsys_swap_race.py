"""A listed Nsight export swapped for a symlink out of the logdir while it is opened, over and over (issue #39):
SQLite must read only bytes that came through the checked descriptor, never the file a path names later.

Before: the reader handed SQLite ``/proc/self/fd/N``; SQLite resolves that link to the file's path and opens the path
again, so a swap in between read the outside file (23-32 in 20,000 opens with default flags, 416 with
``--follow-symlinks``).  The swapper runs in its own process (truly in parallel, whatever the GIL does here); every
open ends in the inside file or a refusal, and the count of outside reads must be 0.  A longer campaign:
``scripts/robustness.py --sqlite`` (its swap race section).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

import pytest

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats import sqlite as shared_sqlite

#: Opens per flag setting (the issue's figure).
OPENS = 20_000

#: Swaps ``target`` between the listed file (a hard link ``aside`` keeps its inode) and a symlink to ``outside``,
#: each by an atomic rename, until ``stop`` exists (``stop.ready`` says it started); prints the number of swaps.
SWAPPER = r"""
import os, sys
target, aside, outside, stop = sys.argv[1:5]
tmp = target + ".swap"
n = 0
open(stop + ".ready", "w").close()
while not os.path.exists(stop):
    for make in (lambda: os.symlink(outside, tmp), lambda: os.link(aside, tmp)):
        try:
            os.remove(tmp)
        except FileNotFoundError:
            pass
        make()
        os.rename(tmp, target)
        n += 1
os.link(aside, tmp)
os.rename(tmp, target)
print(n)
"""


def _marked(path: str, marker: str) -> None:
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE {marker} (x)")
    con.commit()
    con.close()


def race(root: str, listed: fsio.Listed, swapped: str, outside: str, opens: int) -> dict[str, int]:
    """Open ``listed`` ``opens`` times while a child process swaps ``swapped``; what each open read."""
    aside = os.path.join(os.path.dirname(root), "aside.sqlite")
    os.link(swapped, aside)
    stop = os.path.join(os.path.dirname(root), "stop")
    child = subprocess.Popen([sys.executable, "-c", SWAPPER, swapped, aside, outside, stop], stdout=subprocess.PIPE,
                             text=True)
    seen = {"inside": 0, "outside": 0, "refused": 0}
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(stop + ".ready") and time.monotonic() < deadline:  # under load it starts late
            time.sleep(0.01)
        for _ in range(opens):
            try:
                with shared_sqlite.open_db(listed) as con:
                    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
            except OSError:  # a symlink on the way, or the file missing for an instant: refused
                seen["refused"] += 1
                continue
            seen["outside" if "outside_marker" in names else "inside"] += 1
    finally:
        open(stop, "w").close()
        out, _ = child.communicate(timeout=60)
        for leftover in (stop, stop + ".ready", aside):
            if os.path.exists(leftover):
                os.remove(leftover)
    seen["swaps"] = int(out.strip() or 0)
    return seen


@pytest.mark.parametrize("follow", [False, True], ids=["default", "follow-symlinks"])
def test_swapping_a_listed_export_for_a_link_out_never_reads_outside(tmp_path, follow):
    root = str(tmp_path / "logdir")
    run = os.path.join(root, "run")
    os.makedirs(os.path.join(run, "data"))
    outside = str(tmp_path / "outside.sqlite")
    _marked(outside, "outside_marker")
    if follow:  # the listed name is a link inside the logdir; its target is what gets swapped
        swapped = os.path.join(run, "data", "real.sqlite")
        _marked(swapped, "inside_marker")
        os.symlink(os.path.join("data", "real.sqlite"), os.path.join(run, "report.sqlite"))
    else:
        swapped = os.path.join(run, "report.sqlite")
        _marked(swapped, "inside_marker")
    st = os.stat(swapped)
    listed = fsio.Listed(os.path.join(run, "report.sqlite"), root, ("run", "report.sqlite"), (st.st_dev, st.st_ino),
                         follow)
    seen = race(root, listed, swapped, outside, OPENS)
    assert seen["outside"] == 0, seen
    # the race ran: the swapper swapped throughout, and opens both read the file and were refused the link
    assert seen["swaps"] >= 100 and seen["inside"] > 0 and seen["refused"] > 0, seen


@pytest.mark.parametrize("in_memory", [True, False], ids=["deserialized", "private-copy"])
def test_sqlite_is_never_given_a_path_into_the_logdir(tmp_path, monkeypatch, in_memory):
    """Why the race is closed, not just rare: SQLite gets an in-memory image of the descriptor's bytes, or a private
    copy made through the descriptor -- never the logdir's path nor ``/proc/self/fd/N`` (which it resolves to the
    path and reopens)."""
    root = str(tmp_path / "logdir")
    os.makedirs(os.path.join(root, "run"))
    path = os.path.join(root, "run", "report.sqlite")
    _marked(path, "inside_marker")
    st = os.stat(path)
    listed = fsio.Listed(path, root, ("run", "report.sqlite"), (st.st_dev, st.st_ino))
    monkeypatch.setattr(shared_sqlite, "DESERIALIZE_MAX_BYTES", 1 << 30 if in_memory else 0, raising=False)
    given: list[str] = []
    real_connect = sqlite3.connect

    def spy(database, *a, **kw):
        given.append(str(database))
        return real_connect(database, *a, **kw)

    monkeypatch.setattr(sqlite3, "connect", spy)
    with shared_sqlite.open_db(listed) as con:
        assert {r[0] for r in con.execute("SELECT name FROM sqlite_master")} == {"inside_marker"}
    assert given
    for db in given:
        assert "/proc/" not in db and os.path.realpath(root) not in db and root not in db, db
    if not in_memory:  # the private copy is gone once the connection is closed
        copy = [db for db in given if db != ":memory:"][0]
        assert not os.path.exists(copy.split("?")[0].replace("file://", ""))
