"""A session's job's ranks in sibling run folders are read in one place, ``Session.linked_ranks``, by every path
that analyses or keys a session (h37-tidy61).

Before, the tab's key and ``Advisor.host_report`` and the caches' keys read them with ``getattr(session,
"linked_ranks", None)``, ``runtime.session`` with its own ``_linked`` (the same ``getattr``), and
``pipeline.clock_files`` asked ``hasattr(rank_runs, "clock_files")``: an object that could not say its ranks -- or
ranks passed as the run names (``Session.rank_runs``) -- read as a job with none, its peers silently unplaced and
its report keyed as a rankless one.  Now a session says them (``Session.linked_ranks``) and ``clock_files`` takes a
``RankRuns`` or None.

Real pair: ``wild/tp_rtx4090_two_ranks`` (MIT) moved into ``rank0/`` and ``rank1/`` (as
``tests/runtime/test_peers_every_path60.py``, whose property test holds every path's report equal)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tb_gpu_advisor.model.logdir import RankRuns, Session
from tests.support.paths import TP_PAIR, in_rank_folders


def test_every_reader_gets_the_sessions_own_linked_ranks(tmp_path: Path, monkeypatch) -> None:
    """Control (the same on 3074f48d): each key, ``Advisor.host_report``'s peers and ``session_report``'s
    ``analyze_fn`` get what ``Session.linked_ranks`` says -- asked of it on each path -- and the peers a host's
    analysis places are those of its own clock."""
    from tb_gpu_advisor.runtime import pipeline
    from tb_gpu_advisor.runtime import session as rs
    from tb_gpu_advisor.runtime.advisor import Advisor
    from tb_gpu_advisor.runtime.cache import ReportCache, host_key, session_key
    from tb_gpu_advisor.serve.plugin import _report_key

    advisor = Advisor(str(in_rank_folders(TP_PAIR, tmp_path / "pair")), cache=ReportCache("off"))
    sessions = advisor.sessions()
    assert len(sessions) == 2 and all(s.linked_ranks is not None for s in sessions)
    asked: list[RankRuns] = []
    own = Session.linked_ranks.fget

    def counted(self: Session) -> RankRuns | None:
        asked.append(own(self))
        return asked[-1]

    monkeypatch.setattr(Session, "linked_ranks", property(counted))
    placed: list[tuple] = []
    analyze_host = pipeline.analyze_host
    monkeypatch.setattr(pipeline, "analyze_host",
                        lambda hf, **kw: placed.append(kw["peer_files"]) or analyze_host(hf, **kw))
    seen: list = []

    def analyze_fn(*a, **kw):
        seen.append(kw["rank_runs"])
        return pipeline.analyze_session(*a, **kw)

    for s in sessions:
        h, want = s.hosts[0], own(s)
        n = len(asked)
        got = [json.loads(session_key(s).material)["rank_runs"], json.loads(host_key(s, h).material)["rank_runs"],
               _report_key(s, [h], advisor.options_for(None))[-1]]
        assert len(asked) == n + 3 and got == [want.key_material(), want.key_material(), repr(want.key_material())]
        advisor.host_report(h, session=s)
        assert placed[-1] == pipeline.clock_files(want, h) == want.clock_files(h.host) and placed[-1]
        seen.clear()
        rs.session_report(s, analyze_fn=analyze_fn)
        assert seen == [want]


def test_a_session_that_cannot_say_its_ranks_is_refused_not_read_as_none(tmp_path: Path) -> None:
    """A session-like object without ``linked_ranks`` is no session with no linked ranks: keying or analysing it
    raises (3074f48d keyed and analysed it as a rankless session: its peers unplaced, its key a rankless one's).
    Fails on 3074f48d."""
    from tb_gpu_advisor.runtime import pipeline
    from tb_gpu_advisor.runtime.cache import host_key, session_key

    advisor_session = next(iter(_sessions(tmp_path)))
    h = advisor_session.hosts[0]
    like = SimpleNamespace(run=advisor_session.run, session=advisor_session.session, hosts=advisor_session.hosts)
    with pytest.raises(AttributeError):
        session_key(like)
    with pytest.raises(AttributeError):
        host_key(like, h)
    # the run names (``Session.rank_runs``) are no RankRuns: 3074f48d placed no peer for them, silently
    with pytest.raises(AttributeError):
        pipeline.clock_files(advisor_session.rank_runs, h)


def _sessions(tmp: Path) -> list[Session]:
    from tb_gpu_advisor.discover.logdir import discover

    return discover(str(in_rank_folders(TP_PAIR, tmp / "pair")))
