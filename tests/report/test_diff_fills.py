"""The diff names the GPU's fills apart from its copies (h37-copydir31; issue #37 class 3).

The diff compared a step's time by the saving groups (``rules.savings.GROUPS``), whose ``copies`` holds ``memset``
too: the copies finding recovers fills as well (its fix ``:memset``).  So a run that filled less read "Copies
-0.2 ms" though it copied nothing.  The wrong assumption: *the group a fix recovers time in is the name of that
time* -- a fill moves no byte.  The diff now compares by ``rules.savings.COMPARED_GROUPS``: the saving groups with
``fills`` apart; the savings themselves are unchanged.

Truth by construction: ``write_filled_steps``' MLP steps, a 300 us fill a step in the base and a 100 us one in the
new, no copy in either.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.torchtrace import write_filled_steps
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.report import legend
from tb_gpu_advisor.report.diff import diff_reports
from tb_gpu_advisor.report.diff_render import to_text
from tb_gpu_advisor.rules import savings
from tests.support.report_store import session_report


def _report(folder: Path, fill_us: float):
    folder.mkdir()
    truth = write_filled_steps(str(folder / "fill.pt.trace.json"), fill_us=fill_us)
    (s,) = discover(str(folder))
    return session_report(s), truth


def test_a_diff_names_a_fill_a_fill_not_a_copy(tmp_path):
    (base, tb), (new, tn) = _report(tmp_path / "base", 300.0), _report(tmp_path / "new", 100.0)
    d = diff_reports(base, new)
    by = {c.key: c for c in d.breakdown}
    assert by["fills"].base == pytest.approx(tb["fill_ms"], abs=1e-3)  # main: KeyError 'fills'
    assert by["fills"].new == pytest.approx(tn["fill_ms"], abs=1e-3)
    assert by["copies"].base == by["copies"].new == 0.0  # main: the fills, 0.3 -> 0.1
    assert "Fills" in to_text(d) or "fills" in to_text(d)


def test_the_compared_groups_hold_every_saving_group_s_category_once():
    """The split loses no category and keeps the savings' groups: each category in exactly one compared group, and
    every compared group is a saving group or the fills split off one."""
    compared_groups = savings.COMPARED_GROUPS  # main: AttributeError (the diff compared by the saving groups)
    saving = sorted(c for cats in savings.GROUPS.values() for c in cats)
    compared = sorted(c for cats in compared_groups.values() for c in cats)
    assert compared == saving
    assert set(compared_groups) - set(savings.GROUPS) == {"fills"}
    served = {g["id"]: g for g in legend.legend()["groups"]}
    assert served["fills"]["categories"] == ["memset"] and "memset" not in served["copies"]["categories"]
