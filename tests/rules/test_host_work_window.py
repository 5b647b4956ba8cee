"""A window that is mostly the host's own CPU work between the GPU's is said to be so, and how to see that work
(issue #37, survey h37-survey7a).

The real case (fckwader/shitbox ``report1.sqlite`` @c98ad5b2, no licence, so not kept: ``tests/fixtures/wild/
SURVEY.md``): an A100 ``./hello``: three pageable 32 MB uploads, then 14.8 s of host work with no CUDA call, then one
8.7 ms kernel and a read-back.  Main said only "most of it is host work between iterations" (info); nothing covers
that time on the host thread, so the capture cannot say what it is.  Since h37-paced the window is one pass analysed
whole (its two GPU bursts share no work: no iterations), and the time inside it that no event covers is named as
such -- the host's own code or a wait, which a capture without a scheduler trace cannot tell apart -- with how to
record it; with the scheduler's trace (the real file) it is the host's own code (``test_paced_loop.py``).

By construction (``synthetic.nsysexport.write_host_work_window``): the host's work is known, unrecorded, or inside the
program's NVTX range ``cpu_reference`` (the control: recorded, named by its range).
"""

from __future__ import annotations

import re

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_report


def _findings(path: str) -> list[dict]:
    return first_report(path)["findings"]


@pytest.mark.parametrize("ranged", [False, True])
def test_the_hosts_own_work_is_named_with_how_to_see_it(tmp_path, ranged: bool) -> None:  # noqa: ANN001
    """The window is one pass, analysed whole (h37-paced: its two GPU bursts share no work, so they are no steps), and
    the time inside that one step is named: unrecorded (no scheduler trace: code or wait, the capture cannot tell),
    or the host's work in its range."""
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_host_work_window(path, ranged=ranged)
    found = _findings(path)
    assert not any(f["rule"] == "step_gaps" for f in found)  # one pass: no steps, so no gap between them
    if truth["recorded"]:
        (f,) = [f for f in found if f["title"].startswith("Host-bound")]
        assert f["saving"]["ms_per_step"] == pytest.approx(truth["host_ms"], rel=0.02)
        assert not any("did not record" in x["summary"] for x in found)
    else:
        (f,) = [f for f in found if f["id"].endswith("#unrecorded")]
        assert f["metric"]["detail"]["unrecorded_ms"] == pytest.approx(truth["host_ms"], rel=0.02)
        assert f["severity"] == "warning" and f["saving"] is None  # the cause is not in the capture
        # the window is the one pass it was read as (h37-words20: said once, of the pass, not again of the window)
        assert "the host's own code, or a wait" in f["summary"] and re.search(r"of the [\d.]+ m?s pass", f["summary"])
        assert "NVTX" in f["actions"][0]["text"] and "--sample" in (f["actions"][0]["snippet"] or "")
