"""The suite's store of analysed kept sessions (``tests/support/report_store.py``) hands out the report analysis makes:
the same JSON, a copy of its own per call, a session of a test's own folder never stored, and a file rewritten in
the run analysed again (its key moves with the file's size and mtime)."""

from __future__ import annotations

import dataclasses
import json
import shutil

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support import report_store
from tests.support.paths import FIXTURES

KEPT = FIXTURES / "waits"  # one small kept session


def _json(report) -> str:  # noqa: ANN001 - a Report
    """The report's JSON but the hour it was made (a stored report keeps its analysis' hour)."""
    return json.dumps({k: v for k, v in report.to_dict().items() if k != "generated_at"}, sort_keys=True)


def test_a_kept_session_is_analysed_once_and_read_back_as_analysis_makes_it(tmp_path, monkeypatch):
    monkeypatch.setattr(report_store, "_FOLDER", tmp_path / "store")
    (s,) = discover(str(KEPT))
    first = report_store.session_report(s)
    (stored,) = (tmp_path / "store").iterdir()
    second = report_store.session_report(s)
    assert second is not first and _json(second) == _json(first) == _json(analyze_session(s.run, s.session, s.hosts))
    second.hosts[0].findings.clear()  # an edit of one copy is no other's
    assert _json(report_store.session_report(s)) == _json(first)
    assert [p.name for p in (tmp_path / "store").iterdir()] == [stored.name]


def test_a_session_of_a_tests_own_folder_is_never_stored(tmp_path, monkeypatch):
    monkeypatch.setattr(report_store, "_FOLDER", tmp_path / "store")
    shutil.copytree(KEPT, tmp_path / "own")
    (s,) = discover(str(tmp_path / "own"))
    assert report_store.session_report(s).hosts
    assert not (tmp_path / "store").exists()


def test_a_rewritten_file_has_a_key_of_its_own():
    (s,) = discover(str(KEPT))
    h = s.hosts[0]
    moved = dataclasses.replace(s, hosts=(dataclasses.replace(h, mtime_ns=h.mtime_ns + 1),) + tuple(s.hosts[1:]))
    grown = dataclasses.replace(s, hosts=(dataclasses.replace(h, size=h.size + 1),) + tuple(s.hosts[1:]))
    assert len({report_store._key(s), report_store._key(moved), report_store._key(grown)}) == 3


def test_a_threshold_overridden_has_a_key_of_its_own():
    from tb_gpu_advisor.common.thresholds import override

    (s,) = discover(str(KEPT))
    before = report_store._key(s)
    with override(**{"excessive_memcpy.warning": 0.015}):
        assert report_store._key(s) != before
    assert report_store._key(s) == before


def test_a_generated_corpus_set_is_written_once_per_run_and_its_sessions_are_stored(tmp_path, monkeypatch):
    """``tests/support/corpus.py``: a set asked twice is the one folder written once (the second ask writes nothing,
    not even under its own scratch folder), and its sessions are a kept tree's, stored once like the fixtures'."""
    from tests.support.corpus import corpus

    monkeypatch.setattr(report_store, "_FOLDER", tmp_path / "store")
    first = corpus("corpus_jax", tmp_path / "scratch")
    stamps = {p: p.stat().st_mtime_ns for p in first.rglob("*") if p.is_file()}
    assert first == tmp_path / "generated-captures" / "corpus_jax" and len(stamps) >= 10
    assert corpus("corpus_jax", tmp_path / "scratch2") == first and not list(tmp_path.glob("scratch*"))
    assert {p: p.stat().st_mtime_ns for p in first.rglob("*") if p.is_file()} == stamps
    s = discover(str(first))[0]
    report_store.session_report(s)
    assert len(list((tmp_path / "store").iterdir())) == 1
    # without a run's folder (a script) the set is written under the caller's own scratch folder, never stored
    monkeypatch.setattr(report_store, "_FOLDER", None)
    assert corpus("corpus_jax", tmp_path / "scratch") == tmp_path / "scratch" / "corpus_jax"
