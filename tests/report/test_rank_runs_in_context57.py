"""The job's other ranks in sibling run folders are part of the context the job rules read (h37-ranks57).

BASE (4b14b7a7) analysed a rank's session without them and rewrote the comm rule's "profile every rank" sentence
after the cache (``report.merge.with_rank_runs``: a word substitution outside the rule).  The report cache keyed the
files only, so the same files read as a linked rank and as a lone rank shared one entry.  Now the runs ride in the
job's context (``JobView.rank_runs``, from ``Session.linked_ranks``), ``comm_exposed`` asks it for its words, the
report stage writes its note from the same value, and the session's cache key holds it.

By construction (``synthetic.torchtrace.write_run("param_allreduce")`` moved into ``rank<r>/`` folders by
``into_rank_folders``): two ranks of one job, each in its own folder, each step paying its per-parameter all-reduce
(``comm_exposed`` on each rank read alone).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from synthetic import torchtrace as tt
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime import pipeline
from tb_gpu_advisor.runtime.cache import ReportCache, session_key
from tb_gpu_advisor.runtime.session import session_report

RUN = "param_allreduce"
LONE = "profile every rank to separate them"


def _sessions(tmp_path: Path) -> dict[str, object]:
    tt.into_rank_folders(tt.write_run(str(tmp_path), RUN, steps=6))
    return {s.run: s for s in discover(str(tmp_path))}


def _unlinked(s):
    return dataclasses.replace(s, rank_runs=(), job_ranks=())


def _comm(report) -> str:
    (f,) = [f for f in report.findings if f.rule == "comm_exposed"]
    return f.summary


def test_the_comm_rule_reads_the_linked_runs_from_its_context(tmp_path: Path) -> None:
    """The analysis itself -- no step after it -- names rank 0's run in rank 1's comm finding and its note."""
    sessions = _sessions(tmp_path)
    s1, s0 = sessions[f"{RUN}/rank1"], sessions[f"{RUN}/rank0"]
    report = pipeline.analyze_session(s1.run, s1.session, list(s1.hosts), rank_runs=s1.linked_ranks)
    assert f"its trace is in run '{s0.stock_run}'" in _comm(report)
    assert LONE not in _comm(report)
    assert any(f"the job's other rank is in run '{s0.stock_run}'" in n for n in report.notes), report.notes
    alone = pipeline.analyze_session(s1.run, s1.session, list(s1.hosts))
    assert LONE in _comm(alone)
    assert not any("other rank is in run" in n for n in alone.notes)


def test_the_cache_key_holds_the_linked_runs(tmp_path: Path) -> None:
    """The same files, linked or not, are two reports: two keys (BASE: one key, the files only)."""
    s1 = _sessions(tmp_path)[f"{RUN}/rank1"]
    assert session_key(s1) != session_key(_unlinked(s1))
    assert session_key(s1) == session_key(dataclasses.replace(s1))


def test_a_cached_report_is_the_report_of_its_context(tmp_path: Path) -> None:
    """Linked first, from the cache second: both name the run; then the same files as a lone rank are analysed
    again and say "profile every rank" (BASE: served the linked session's entry)."""
    sessions = _sessions(tmp_path / "logs")
    s1, s0 = sessions[f"{RUN}/rank1"], sessions[f"{RUN}/rank0"]
    cache = ReportCache(str(tmp_path / "cache"))
    first = session_report(s1, cache=cache)
    again = session_report(s1, cache=cache)
    assert first.stored and again.from_cache
    for a in (first, again):
        assert f"its trace is in run '{s0.stock_run}'" in _comm(a.report)
    lone = session_report(_unlinked(s1), cache=cache)
    assert not lone.from_cache
    assert LONE in _comm(lone.report)
    assert not any("other rank is in run" in n for n in lone.report.notes)
