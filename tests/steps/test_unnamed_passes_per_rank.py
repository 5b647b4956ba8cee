"""Unnamed evaluation forwards are left out of each rank's own steps too, from where their code opened them (issue #37
class 2; h37-probe46e *Left* 2).

``synthetic.nsysexport.write_interleaved_evaluation(pass_range=None)``: 8 training steps of ~8.03 ms, each a copy and
20 GEMMs under ``forward`` (7) / ``backward`` (10) / ``optimizer_step`` (3), two unranged evaluation forwards (a
``forward`` range, its copy, 7 GEMMs, a sync) after steps 3 and 7.  ``steps.apart._unnamed_passes`` cut the host's
and each GPU's windows where the forwards' first launch ran, but (1) each rank's own host windows
(``steps.place._own_host_windows``), which book its calls, copies and ranges to its steps, were cut only at named
evaluations -- rank 1's two evaluation ``forward`` ranges were step 3's: 16 ``forward`` ranges in the 6 kept steps of
2 ranks -- and (2) the cut at the first launch left the evaluation's ``forward`` range, opened 1 us before it, in
step 3: 7 ``forward`` ranges in 6 kept steps of one rank.  Now (``apart.own_unnamed_cut``, ``apart._opened``):
6 per rank, every step 8.027 ms.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host


def _op(host: dict, name: str) -> list:
    return next(r for r in host["ops"]["rows"] if r[0] == name)


@pytest.mark.parametrize("form", [dict(ranks=1), dict(ranks=2), dict(ranks=2, rank_lag_us=2000.0)],
                         ids=["one_rank", "two_ranks", "two_ranks_2ms_apart"])
def test_unnamed_evaluation_forwards_are_in_no_ranks_step(tmp_path: Path, form: dict) -> None:
    """BASE: 7 ``forward`` ranges (one rank), 16 (two ranks) in 6 kept steps; now one a kept step per rank."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, pass_range=None, **form)
    host = first_host(path)
    steps, ranks = host["steps"], form["ranks"]
    assert (steps["found"], steps["count"]) == (truth.train_steps, 6), steps["note"]
    kept = steps["count"] * ranks
    assert _op(host, "forward")[3] == kept and _op(host, "forward")[5] == 7 * kept  # ranges, their GEMMs
    assert _op(host, "backward")[3] == _op(host, "optimizer_step")[3] == kept
    assert all(r["step_ms"] == pytest.approx(truth.step_ms, abs=0.0015) for r in host["step_rows"]), host["step_rows"]
