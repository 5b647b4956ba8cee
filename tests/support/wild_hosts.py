"""The wild fixtures' sessions, discovered once per test process, and the first host of a real capture in
tests/fixtures/wild, analysed once per test process and read as the report's JSON: the job tests read one run's host
block each (shared here, not copied into each test module)."""

from __future__ import annotations

from functools import lru_cache

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"


@lru_cache(maxsize=None)
def wild_sessions() -> tuple:
    """``discover`` of every wild fixture, once per test process (the fixtures are read-only and a ``Session`` is
    frozen): the walk of the ~130 runs took ~0.5-1 s, and some 30 test modules did it, several once per test."""
    return tuple(discover(str(WILD)))


@lru_cache(maxsize=None)
def wild_host(run: str) -> dict:
    """``run``'s first host as the report's JSON writes it (cached: several tests read one run)."""
    s = [s for s in wild_sessions() if s.run == run][0]
    return session_report(s).to_dict()["hosts"][0]
