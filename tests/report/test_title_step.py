"""The report's title gives a step time only where a step was timed (tests/fixtures/wild, PROVENANCE.md)."""

from __future__ import annotations

import re

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.report.render import to_text
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"
ZERO_STEP = re.compile(r"\bstep 0(?:\.0+)? ?(?:us|µs|ms|s)\b")


def _title(run: str) -> str:
    (s,) = [s for s in discover(str(WILD)) if s.run == run]
    return to_text(session_report(s)).splitlines()[0]


@pytest.mark.parametrize("run", ["snapshot_compiled_gpt2", "snapshot_windows_gpt"])
def test_a_memory_snapshot_claims_no_step_time(run):
    """A snapshot records allocations, not the GPU's work: its title read "1 host, 0 steps, step 0 us"."""
    title = _title(run)
    assert not ZERO_STEP.search(title), title


def test_a_timed_step_is_still_in_the_title():
    """The control: a trace with steps keeps its step time (nsfw_vit_h100's one ProfilerStep, 7.89 ms)."""
    assert "step 7.89 ms" in _title("nsfw_vit_h100")
