"""A training loop's evaluation between two of its steps is no part of either (issue #37 class 2, h37-probe45n).

``synthetic.nsysexport.write_interleaved_evaluation``: 8 training steps of ~8.03 ms (a copy, 20 GEMMs under the
user's ``forward`` / ``backward`` / ``optimizer_step``, a sync) in ``train_step {k}`` ranges, and after every 4th
two forwards on held-out data outside them (``eval_step`` each, or one ``validation`` over both).  Host marks tile
time, so the step before each evaluation ran to the next step's mark and held both forwards: 6 steps of 10.7 ms, one
of 24.1 ms (base a3712eb4).  The program names the passes evaluation: the step before ends where they open, on the
host, on each rank's own windows and on each GPU.  Controls: an evaluation at the tail of the step's own range ends
that step where it opens (h37-probe46e; dropped whole by h37-probe45e); steps that are themselves the evaluation
ranges keep their length.
"""

from __future__ import annotations


import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host as _host


def _step_ms(host: dict) -> float:
    return next(m for m in host["headline"] if m["id"] == "device_step_share")["detail"]["avg_step_ms"]


@pytest.mark.parametrize("form", [dict(), dict(around="validation"), dict(ranks=2), dict(pass_range="val_step 3")])
def test_an_evaluation_between_steps_is_left_out_of_them(tmp_path, form) -> None:  # noqa: ANN001 - pytest's
    """The training steps keep their ~8.03 ms (base: 10.7 ms, the evaluation's forwards in the step before it); the
    job is training; the note says how many evaluation ranges were left out and their time."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, **form)
    host = _host(path)
    assert host["job"]["kind"] == "training"
    assert host["steps"]["found"] == truth.train_steps
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)
    ranks = form.get("ranks", 1)
    left = truth.passes // 2  # the first evaluation's (after step 3); the second follows the last step
    noun = "range" if left == 1 else "ranges"
    assert f"{left} evaluation {noun} (" in host["steps"]["note"]
    assert f"{truth.pass_ms / 2:,.1f} ms in all" in host["steps"]["note"]
    assert ranks == 1 or "each rank marks its own steps" in host["steps"]["note"]


def test_an_evaluation_inside_the_steps_range_ends_the_step(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: the user's ``train_step`` range around the evaluation too (its end moved past it): no pass lies
    between marks; the evaluation at the range's tail, after the step's training, ends the step where it opens
    (h37-probe46e: ``steps.apart._mark_cuts``; h37-probe45e dropped the whole 24.1 ms step): step 3 kept, 8.03 ms."""
    import sqlite3

    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path)
    con = sqlite3.connect(path)
    (end,) = con.execute("SELECT max(end) FROM NVTX_EVENTS WHERE text = 'eval_step' AND start < "
                         "(SELECT start FROM NVTX_EVENTS WHERE text = 'train_step 4')").fetchone()
    con.execute("UPDATE NVTX_EVENTS SET end = ? WHERE text = 'train_step 3'", (end + 1000,))
    con.commit()
    con.close()
    host = _host(path)
    assert "left out of the steps: the program names them" not in host["steps"]["note"]
    assert "1 step holds an evaluation (`eval_step`) at the end of its own range" in host["steps"]["note"]
    assert not [d for d in host["steps"]["dropped"] if d["reason"].startswith("evaluating:")]
    assert {r["step"]: r["step_ms"] for r in host["step_rows"]}[3] == pytest.approx(truth.step_ms, rel=0.01)
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)


def test_steps_that_are_the_evaluation_ranges_keep_their_length(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: a loop whose steps are themselves ``eval_step`` ranges (an evaluation benchmark) is not cut at its own
    marks: each step runs to the next."""
    path = str(tmp_path / "evalonly.sqlite")
    truth = nx.write(path, nx.NsysJob(steps=12, autograd_nvtx=False, step_range="eval_step {k}", shuffle=False))
    host = _host(path)
    assert "evaluation range" not in host["steps"]["note"]
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)


def test_an_evaluation_after_every_step_is_a_phase_of_it(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: one evaluation batch after every training step: a phase of each turn of the loop, its time the
    iteration's (as ``synthetic.randjobs``' form 12 runs ``validation_step`` each turn) -- nothing is cut."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, every=1, batches=1)
    host = _host(path)
    assert "evaluation range" not in host["steps"]["note"]
    assert _step_ms(host) == pytest.approx(truth.step_ms + truth.pass_ms / truth.passes, rel=0.01)
