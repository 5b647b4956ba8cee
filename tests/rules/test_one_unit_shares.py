"""A share that rounds to zero says so, and the one-time costs inside several steps are said in one unit (h37-coldshare34).

Wrong assumption 1: *a share printed to a tenth of a per cent reads 0.0% only when it is zero.*  ``common.fmt.pct``, the
one formatter of shares, printed any share under 0.05% as "0.0%": wild/pexsi_a100_pageable_sync's cold-start warning
read "the GPU waiting in them 15 us of the 585.2 ms pass (0.0%)", a wait of none beside 15 us.  Now a share above zero
that rounds to zero reads "<0.1%" ("<1%" at no digits) on every screen that prints shares.

Wrong assumption 2: *the one-time costs inside the kept steps and the GPU's wait in them are of one unit.*  The part
inside was a total over the steps, the wait beside it the ledger's mean per step: wild/mordred_rtx6000_hashjoin read
"130.0 ms of them ran inside the 6 steps analysed, the GPU waiting in them 4.84 ms of each 877.5 ms step".  One-time
costs do not repeat, so both are now totals over the kept steps, the unit said once: "... the GPU waiting in them
29.0 ms of the steps' 5.26 s in all (0.6%)" (the share is the same either way)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import nsysexport
from tb_gpu_advisor.common.fmt import pct, pct_part
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.properties import report_violations, zero_share_problems
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


@pytest.mark.parametrize(("share", "digits", "said"), [
    (0.00026, 1, "<0.1%"), (0.0, 1, "0.0%"), (0.004, 0, "<1%"), (0.0049, 0, "<1%"), (0.005, 0, "<1%"),
    (1e-6, 2, "<0.01%"), (0.0006, 1, "0.1%"), (0.1234, 1, "12.3%"), (None, 1, "n/a")])
def test_a_share_above_zero_never_reads_zero(share: float | None, digits: int, said: str) -> None:
    """Main: pct(0.00026) == "0.0%".  0.005 at no digits prints as zero (Python rounds 0.5 half to even), so it too
    reads "<1%": what decides is the printed share, not a cut-off of our own."""
    assert pct(share, digits) == said


def test_a_part_below_a_tenth_of_a_per_cent_reads_below_it() -> None:
    assert pct_part(0.00001) == "<0.1%"


def _cold(rep) -> str:  # noqa: ANN001 - a HostReport or a report dict's finding list
    (f,) = [f for f in rep.findings if f.rule == "cold_start"]
    return " ".join(f.summary.split())


def test_a_tiny_wait_in_a_long_pass_reads_below_a_tenth_of_a_per_cent(tmp_path: Path) -> None:
    """Truth by construction: the library's start-up leaves the GPU idle 0.33 ms inside a 2.56 s pass (0.013%).
    Main: "(0.0%)"."""
    path = tmp_path / "report1.sqlite"
    truth = nsysexport.write_one_pass_gemm(str(path), startup_ms=0.3, gemm_ms=2000.0)
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "nsys"))
    said = _cold(rep)
    assert 0 < truth["startup_idle_ms"] / truth["pass_ms"] < 0.0005, truth
    assert re.search(r"the GPU waiting in them \d+ us of the 2\.56 s pass \(<0\.1%\)", said), said
    assert "(0.0%)" not in said and zero_share_problems("f", said) == [], said


def _session(run: str) -> dict:
    (s,) = [s for s in wild_sessions() if s.run == run]
    return session_report(s)


def test_a_real_wait_of_microseconds_is_not_said_none() -> None:
    """wild/pexsi_a100_pageable_sync: 15 us of the GPU's wait inside the 585.2 ms pass.  Main: "(0.0%)", and the law
    ``zero-share`` reports it."""
    rep = _session("pexsi_a100_pageable_sync")
    (h,) = rep.hosts
    said = _cold(h)
    assert "the GPU waiting in them 15 us of the 585.2 ms pass (<0.1%)" in said, said
    assert not [v for v in report_violations(rep) if v.startswith("zero-share")]
    # the law would catch main's words
    assert zero_share_problems("f", said.replace("(<0.1%)", "(0.0%)"))


def test_one_time_costs_inside_several_steps_are_totals_with_their_wait() -> None:
    """wild/mordred_rtx6000_hashjoin: 130.0 ms of first uploads inside 6 kept steps, the GPU waiting in them 4.84 ms
    a step.  Main: "130.0 ms of them ran inside the 6 steps analysed, the GPU waiting in them 4.84 ms of each 877.5 ms
    step (0.6%)" -- a total beside a mean.  Here both are totals over the 6 steps: 6 x 4.84 ms."""
    rep = _session("mordred_rtx6000_hashjoin")
    (h,) = rep.hosts
    said = _cold(h)
    steps, step_ms, wait = h.steps["count"], h.mean_step_ms(), h.breakdown_ms["startup"]
    assert steps == 6, h.steps
    assert "130.0 ms of them ran inside the 6 steps analysed" in said, said
    m = re.search(r"the GPU waiting in them ([\d.]+) ms of the steps' ([\d.]+) s in all \(([\d.]+)%\)", said)
    assert m, said
    assert float(m.group(1)) == pytest.approx(wait * steps, abs=0.05)
    assert float(m.group(2)) * 1000 == pytest.approx(step_ms * steps, abs=5)
    assert float(m.group(3)) == pytest.approx(100 * wait / step_ms, abs=0.05)
    assert "of each" not in said.split("ran inside the 6 steps analysed")[1].split(" -- ")[0], said
