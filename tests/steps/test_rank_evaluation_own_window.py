"""With several ranks, a step followed by a named evaluation is cut, not dropped as "evaluating" (issue #37 class 2;
h37-probe47n *Left* 3).

``synthetic.nsysexport.write_interleaved_evaluation(ranks=2)``: 8 training steps of ~8.03 ms per rank, two
``eval_step`` forwards after steps 3 and 7, rank 1 ``rank_lag_us`` behind rank 0.  The host's step k runs from the
first rank's kth ``train_step`` to the last rank's kth end, so it holds rank 0's evaluation start (rank 1 still
trains); each rank's own window was cut at its own evaluation (``steps.apart._cut_own``) but ``steps.drop._evaluating``
read the host's window: step 3 dropped as "evaluating", 5 kept.  Now each rank's evaluation is judged in its own
windows: 6 kept (first and last dropped by the stock rule, as for one rank), each 8.027 ms, step 3's work on each GPU
that of step 2 (6.0 ms compute, 2.0 ms upload).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import nsysexport
from tests.support.cli_report import first_host


@pytest.mark.parametrize("lag_us", [50.0, 2000.0])
@pytest.mark.parametrize("form", [{}, {"around": "validation"}, {"numbers": "global"}])
def test_the_step_before_a_ranks_evaluation_is_kept(tmp_path: Path, lag_us: float, form: dict) -> None:
    truth = nsysexport.write_interleaved_evaluation(str(tmp_path / "r.sqlite"), ranks=2, rank_lag_us=lag_us, **form)
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("nvtx_range", truth.train_steps, 6), steps
    reasons = [d["reason"].split(":")[0] for d in steps["dropped"]]
    assert reasons == ["warm-up", "possibly partial"], steps["dropped"]  # BASE: and step 3 "evaluating"
    rows = host["step_rows"]
    numbered = [1, 2, 3, 6, 7, 8] if form.get("numbers") == "global" else [1, 2, 3, 4, 5, 6]  # the ranges' own numbers
    assert [r["step"] for r in rows if r["gpu"] is None] == numbered  # step 3, before the evaluation, kept
    for r in rows:
        assert r["step_ms"] == pytest.approx(truth.step_ms, rel=0.01)
        assert r["breakdown"]["device_compute"] == pytest.approx(6.0, abs=1e-3)
        assert r["breakdown"]["memcpy_h2d"] == pytest.approx(2.0, abs=1e-3)


def test_one_rank_reads_as_before(tmp_path: Path) -> None:
    """Control: one rank (no own windows): the host's windows, the same 6 kept steps (on BASE too)."""
    truth = nsysexport.write_interleaved_evaluation(str(tmp_path / "r.sqlite"))
    steps = first_host(tmp_path)["steps"]
    assert (steps["found"], steps["count"]) == (truth.train_steps, 6), steps
    assert not any(d["reason"].startswith("evaluating") for d in steps["dropped"])
