"""The report cache keys on every threshold changed from the table's (h37-speed59): a report made at one threshold
is never served for another, and an unchanged one still hits.

Truth by construction: ``severity.critical_min_saving`` is the share of the step below which a finding is at most a
warning (``common.thresholds``); at 0.99 no finding of the demo's fp32 job (critical ``mixed_precision_off``, a saving
of a fraction of its step) can stay critical, so its report differs from the table's -- a cache that served the
table's report under the change returned a stale one (BASE: one key for both)."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.common import thresholds
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.cache import ReportCache, make_key, session_key
from tb_gpu_advisor.runtime.session import session_report
from tests.support.paths import DEMO_LOGS

CHANGE = {"severity.critical_min_saving": 0.99}


@pytest.fixture(scope="module")
def fp32():
    (s,) = [s for s in discover(str(DEMO_LOGS)) if s.run == "fp32_no_tensor_cores"]
    return s


def _criticals(report) -> list[str]:
    return sorted(f.rule for h in report.hosts for f in h.findings if f.severity == "critical")


def test_a_changed_threshold_is_a_new_report_and_an_unchanged_one_hits(tmp_path, fp32):
    cache = ReportCache(str(tmp_path / "cache"))
    first = session_report(fp32, cache=cache)
    assert not first.from_cache and first.stored and _criticals(first.report)  # the table's: criticals
    with thresholds.override(**CHANGE):
        tuned = session_report(fp32, cache=cache)
        assert not tuned.from_cache  # BASE: the table's report, served from the cache
        assert _criticals(tuned.report) == []  # made at the changed threshold
        again = session_report(fp32, cache=cache)
        assert again.from_cache and again.report.to_json() == tuned.report.to_json()
    back = session_report(fp32, cache=cache)
    assert back.from_cache and _criticals(back.report) == _criticals(first.report)


def test_the_key_holds_the_changed_thresholds_only(fp32):
    """Each changed threshold's value is in the key; at the table's values the key keeps its earlier form (no entry
    made before is lost to the change)."""
    plain = session_key(fp32)
    assert "thresholds" not in plain.material
    with thresholds.override(**CHANGE):
        tuned = session_key(fp32)
        assert thresholds.tuned() == CHANGE
    with thresholds.override(**{"severity.critical_min_saving": 0.5}):
        other = session_key(fp32)
    with thresholds.override(**{"severity.critical_min_saving": thresholds.THRESHOLDS[
            "severity.critical_min_saving"].value}):  # "changed" to its own value: the table's key
        same = session_key(fp32)
    assert len({plain.digest, tuned.digest, other.digest}) == 3 and same.digest == plain.digest
    hosts = make_key(fp32.run, fp32.session, fp32.hosts, scope="host")
    with thresholds.override(**CHANGE):
        assert make_key(fp32.run, fp32.session, fp32.hosts, scope="host").digest != hosts.digest  # per-host too


def test_an_edit_to_a_compiled_decoders_source_misses_the_cache(tmp_path):
    """The C decoders are analysing code: a copy of the package with one C source changed (every Python file the
    same) gives another analyzer version, hence another key (BASE: the fingerprint hashed the Python only)."""
    from tests.support.package_copy import analyzer_version as version
    from tests.support.package_copy import copy_package

    copy = copy_package(tmp_path / "pkg", "*.so", "static")
    before = version(copy)
    source = copy / "tb_gpu_advisor" / "formats" / "kineto" / "_cscan.c"
    source.write_text(source.read_text() + "\n/* an edit */\n")
    assert version(copy) != before


def test_the_tabs_in_memory_key_holds_the_changed_thresholds(fp32):
    """The tab keeps reports in memory by ``serve.plugin._report_key``: a threshold changed is another key there too
    (BASE: the files and the settings only)."""
    pytest.importorskip("tensorboard")
    from tb_gpu_advisor.common.options import UserOptions
    from tb_gpu_advisor.serve.plugin import _report_key

    plain = _report_key(fp32, list(fp32.hosts), UserOptions())
    with thresholds.override(**CHANGE):
        tuned = _report_key(fp32, list(fp32.hosts), UserOptions())
    assert tuned != plain and plain == _report_key(fp32, list(fp32.hosts), UserOptions())
