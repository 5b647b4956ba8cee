"""The report of one session of a kept capture, analysed once per test run and shared by every test process.

Why: the kept captures (``tests/fixtures/*``, ``../shared/profiles``) are read-only, and analysis is deterministic for
one tree, yet the same run was analysed again by each helper (``run_report``, ``wild_host``), by the property walk,
and on each pytest-xdist worker (a file runs whole on one worker: its neighbours' analyses were out of its reach).
Here the first process to analyse a session pickles its ``Report`` into a folder of the run's temporary root
(``tests/conftest.py`` names it; all workers of one run share it); the others load it.  Each call returns a report of
its own (unpickled afresh, or kept in this process by the caller's own cache): no test sees another's edits.

The key is the report cache's (``runtime.cache.session_key``: the files' path, size and mtime, the settings, the
analyzer's code), the decoder switch and the thresholds (a test's ``thresholds.override``): a tree rewritten in the
run, or read under other thresholds, is analysed again.  One run of pytest
takes one decoder path (the pure-Python rerun is another run, with its own root), so the stored report is the one
this process would make.  Without a folder (``set_folder`` not called: a script) every call analyses.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path

from tb_gpu_advisor.common.thresholds import THRESHOLDS
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.runtime.cache import session_key
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import DEMO_LOGS, FIXTURES, SHARED_PROFILES

#: the read-only trees whose sessions are shared (a test's own folder may be rewritten under one name)
KEPT = tuple(p.resolve() for p in (FIXTURES, DEMO_LOGS, SHARED_PROFILES))

_FOLDER: Path | None = None


def set_folder(folder: Path | None) -> None:
    """Where this test run keeps its analysed sessions (None: keep none)."""
    global _FOLDER
    _FOLDER = folder


def _key(session) -> str:  # noqa: ANN001 - a discovered Session
    """The report cache's own key of the session (its files and what is read beside them, the settings, the
    analyzer's code), the decoder switch and every threshold's value now (a test's ``thresholds.override``)."""
    material = [session_key(session).digest, os.environ.get("TB_GPU_ADVISOR_PURE_PYTHON", ""),
                sorted((name, t.value) for name, t in THRESHOLDS.items())]
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()


def generated_folder() -> Path | None:
    """Where this test run writes the captures it generates once for all its tests (``tests/support/corpus.py``):
    beside the analysed sessions, kept as they are written, so their sessions are stored too; None without a folder."""
    return None if _FOLDER is None else _FOLDER.parent / "generated-captures"


def shared_cache_dir(logdir: Path) -> Path | None:
    """The report cache folder (``--cache-dir``) this test run shares for the CLI's reports of a logdir in a kept tree
    (the real sets the truth checks, the viewer-window checks and the stock cross-checks all report on): the product's
    own cache, keyed on the files' identity, the settings, every changed threshold and the analyzer's code, so a later
    test's report is the first one's JSON read back.  None for any other logdir, or without a folder (a script)."""
    if _FOLDER is None or not any(Path(logdir).resolve().is_relative_to(t) for t in KEPT):
        return None
    return _FOLDER.parent / "cli-report-cache"


def _kept(session) -> bool:  # noqa: ANN001 - a discovered Session
    """Every file of the session lies in a kept tree (the repository's fixtures and demo logs, ``../shared``, the
    captures this run generated once for all its tests)."""
    paths = [h.path for h in session.hosts] + [r.path for h in session.hosts for r in h.ranks]
    paths += [p for h in session.hosts for p, _, _ in h.beside]
    kept = KEPT + ((generated.resolve(),) if (generated := generated_folder()) is not None else ())
    return bool(paths) and all(any(Path(p).resolve().is_relative_to(t) for t in kept) for p in paths)


def _analyze(session) -> Report:  # noqa: ANN001 - a discovered Session
    """The session analysed as the product analyses it: with the job's other ranks in sibling run folders
    (``Session.linked_ranks``), which the job rules read and the cache key holds."""
    return analyze_session(session.run, session.session, session.hosts,
                           rank_runs=session.linked_ranks)


def _stored(key: str, make):  # noqa: ANN001, ANN202 - make(): any picklable result
    """``make()``, pickled under ``key`` in the run's folder by the first process to ask; the others load it."""
    path = _FOLDER / (key + ".pickle")
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except FileNotFoundError:
        pass
    result = make()
    _FOLDER.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)  # whole or absent: a worker that reads meanwhile computes too
    return result


def file_result(kind: str, path, make):  # noqa: ANN001, ANN201 - a file's path; make(): any picklable result
    """``make()``, a deterministic result of the file at ``path`` that tests of several modules compute alike
    (``kind`` names what it is), kept once per test run like :func:`session_report`'s reports: keyed on ``kind``, the
    file's path, size and mtime, the decoder switch and every threshold's value.  A file outside the kept trees
    (a test's own), or no folder (a script): computed here."""
    p = Path(path).resolve()
    kept = KEPT + ((generated.resolve(),) if (generated := generated_folder()) is not None else ())
    if _FOLDER is None or not any(p.is_relative_to(t) for t in kept):
        return make()
    st = p.stat()
    material = [kind, str(p), st.st_size, st.st_mtime_ns, os.environ.get("TB_GPU_ADVISOR_PURE_PYTHON", ""),
                sorted((name, t.value) for name, t in THRESHOLDS.items())]
    return _stored(hashlib.sha256(json.dumps(material).encode()).hexdigest(), make)


def session_report(session) -> Report:  # noqa: ANN001 - a discovered Session
    """``analyze_session`` of ``session`` (from ``discover``): a session of the kept trees analysed once per test run,
    any other (a test's own files) analysed here."""
    if _FOLDER is None or not _kept(session):
        return _analyze(session)
    return _stored(_key(session), lambda: _analyze(session))
