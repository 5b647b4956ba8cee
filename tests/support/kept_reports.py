"""The report of one kept capture file (``tests/fixtures/<set>/...``, ``../shared/profiles/<set>/...``), as its
session's report gives it: analysed once per test run and shared (``report_store.session_report``).

Why: the memory tests read findings off kept real captures, and each module analysed its file again with
``analyze_host`` -- one file up to four times in one module, and once more in each module that reads it --, while
the property walk (``tests/report/test_properties.py``) analyses every session of these sets anyway.  Here the file's
session is the one the walk discovers at its set's root (the same run name and linked ranks, so the same key and the
same stored report), found by discovering only the file's run folder (discovering a whole set costs ~1 s: 131 runs
in ``wild``) and naming the run as the root's discovery names it; a session whose key still differed (a job linked
to sibling runs) would be analysed once more, never reported wrong.  Each call returns a report of its own
(unpickled afresh): no test sees another's edits.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.schema import HostReport
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.report_store import session_report


@functools.cache
def _sessions(folder: Path) -> tuple:
    return tuple(discover(str(folder)))


def _set_root(path: Path) -> Path:
    """The set folder ``path`` lies in: ``FIXTURES/<set>`` or ``SHARED_PROFILES/<set>``, spelt as the property walk
    spells its logdirs (the report's key holds the files' paths)."""
    for top in (FIXTURES, SHARED_PROFILES):
        rel = path.relative_to(top.resolve()) if path.is_relative_to(top.resolve()) else None
        if rel is not None and len(rel.parts) > 1:
            return top / rel.parts[0]
    raise ValueError(f"{path} lies in no kept set")


def is_kept(path: str | Path) -> bool:
    """Whether ``path`` lies in a kept set (else it is a test's own file, analysed by the test)."""
    try:
        _set_root(Path(path).resolve())
    except ValueError:
        return False
    return True


def kept_sessions(folder: str | Path) -> list:
    """The sessions of the kept run folder ``folder`` (``FIXTURES/<set>/<run>``) as the discovery of its set's root
    gives them: discovered in the folder alone, each named ``<run>`` (or ``<run>/<sub>``) as the root names it."""
    folder = Path(folder).resolve()
    root = _set_root(folder)
    (run,) = folder.relative_to(root.resolve()).parts
    return [dataclasses.replace(s, run=run if s.run == "." else f"{run}/{s.run}") for s in _sessions(root / run)]


def _session(path: Path):  # noqa: ANN202 - a discovered Session
    """The session holding ``path`` as the discovery of its set's root gives it."""
    root = _set_root(path)
    rel = path.relative_to(root.resolve())
    # a file directly in the set folder is in the root's own run
    for s in kept_sessions(root / rel.parts[0]) if len(rel.parts) > 1 else _sessions(root):
        if any(Path(h.path).resolve() == path for h in s.hosts):
            return s
    raise ValueError(f"no session holds {path}")


def kept_host_report(path: str | Path) -> HostReport:
    """The host report of the kept capture file ``path`` in its session's report (asserted read without error)."""
    path = Path(path).resolve()
    (rep,) = [h for h in session_report(_session(path)).hosts if Path(h.path).resolve() == path]
    assert rep.error is None, rep.error
    return rep


def snapshot_report(path: str | Path) -> HostReport:
    """A memory snapshot's host report: a kept one's from its session's report (:func:`kept_host_report`), a test's
    own file (a generated snapshot) analysed here; asserted read without error.  One helper for the snapshot tests
    that read both (each module wrote its own)."""
    path = Path(path)
    if is_kept(path):
        return kept_host_report(path)
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep
