"""The wild scoreboard: every public trace of someone else's job (tests/fixtures/wild, PROVENANCE.md) against what an
expert reads off it (TRUTH.json beside them, SURVEY.md for the reading), with the checks of the real sets
(``../shared/tools/score_real.py``: the top finding, what must not fire, the 16-bit share).  The same scoreboard runs
from the shell: ``python3 ../shared/tools/score_real.py tests/fixtures/wild tests/fixtures/wild/TRUTH.json
tb-gpu-advisor`` (``make real-check`` runs it with the shared sets).

A known miss is an entry's ``known_miss``: check name -> where the cause lies.  The truth still states the truth; the
test expects exactly those checks to fail (xfail), and fails when another check fails or a known miss is mended (then
drop the ``known_miss`` entry), so the scoreboard never hides a change either way."""

from __future__ import annotations

import json

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.real_checks import TRUTH_CHECKS
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"
TRUTH = json.loads((WILD / "TRUTH.json").read_text())


@pytest.fixture(scope="module")
def sessions():
    return {s.run: s for s in discover(str(WILD))}


@pytest.mark.parametrize("run", sorted(TRUTH))
def test_wild_trace_reads_as_an_expert_reads_it(sessions, run):
    s = sessions[run]
    rep = session_report(s).to_dict()
    failed = {v.name: v.detail for v in (check(TRUTH[run], rep) for check in TRUTH_CHECKS.values()) if v.ok is False}
    known = TRUTH[run].get("known_miss") or {}
    assert set(failed) == set(known), (f"{run}: failed {failed}, known misses {sorted(known)} -- truth: "
                                       f"{TRUTH[run]['note']}")
    if known:
        pytest.xfail(f"{run}: known miss " + "; ".join(f"{k}: {failed[k]} ({known[k]})" for k in sorted(known)))
