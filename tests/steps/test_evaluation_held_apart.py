"""A training loop's evaluation inside its step's own range is the evaluation's time, not the step's (issue #37
class 2; h37-probe45n's *Left* 1, h37-probe45e's *Left* 2).

``synthetic.nsysexport.write_interleaved_evaluation(inside=True)``: 8 training steps of ~8.03 ms (a copy, 20 GEMMs
under the user's ``forward`` / ``backward`` / ``optimizer_step``, a sync) whose ``train_step {k}`` range wraps
``evaluate()`` after the update: ``batches`` ``eval_step`` forwards (or one ``validation`` over them) at its tail.
With ``every=1`` every step holds one, so no step could be dropped for it: b3e5562e averaged the evaluation into
every step (16.05 ms a step with one batch, 24.08 with two; truth 8.03).  Now the evaluation at a mark's tail -- its
process launching nothing but the evaluation's work after it opens -- ends the step where it opens
(``steps.apart._mark_cuts``), on the host, each rank's own windows and each GPU; one at a mark's head starts the
step where it ends (``_start_after_heads``); the note says the evaluation's time apart, each microsecond once.
Control: an evaluation mid-step (training on both sides of it in one range) is not cut -- a window is not holed --
and that step is dropped as before (``steps.drop._drop_evaluating``).  Kineto: ``torchtrace.evaluation_loop``'s
``record_function("evaluate")`` inside ``ProfilerStep#n``.  Unmarked forwards: ``steps.apart._unnamed_passes``.
"""

from __future__ import annotations

import re

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host


def _step_ms(host: dict) -> float:
    return next(m for m in host["headline"] if m["id"] == "device_step_share")["detail"]["avg_step_ms"]


def _evaluation_ms(note: str) -> tuple[int, float]:
    """(steps, ms) of the note's evaluation cut off the steps' own ranges."""
    m = re.search(r"(\d+) steps? holds? an evaluation \(.*?\) at the end of (?:its|their) own range, after (?:its|their) "
                  r"training: ([\d,.]+) ms of evaluation in all", note)
    assert m, note
    return int(m.group(1)), float(m.group(2).replace(",", ""))


@pytest.mark.parametrize("form", [dict(batches=1), dict(batches=2), dict(batches=1, ranks=2),
                                  dict(batches=2, around="validation"), dict(batches=1, numbers="global")],
                         ids=["one_batch", "two_batches", "two_ranks", "validation", "global"])
def test_an_evaluation_in_every_steps_range_is_its_own_time(tmp_path, form) -> None:  # noqa: ANN001 - pytest's
    """Every step ~8.03 ms (b3e5562e: 16.05 ms, 24.08 with two batches); each GPU's step rows too; the note says the
    evaluation's time, ~the passes' own per rank; steps plus evaluation no more than the loop's span."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, every=1, inside=True, **form)
    host = first_host(path)
    st = host["steps"]
    assert st["found"] == truth.train_steps, st["note"]
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)
    assert all(r["step_ms"] == pytest.approx(truth.step_ms, rel=0.01) for r in host["step_rows"]), host["step_rows"]
    ranks = form.get("ranks", 1)
    n, ms = _evaluation_ms(st["note"])
    assert n == truth.train_steps
    assert ms == pytest.approx(truth.pass_ms / ranks, rel=0.01)
    assert not [d for d in st["dropped"] if d["reason"].startswith("evaluating:")]
    loop_ms = truth.train_steps * truth.step_ms + truth.pass_ms / ranks  # the loop's span, every turn whole
    assert truth.train_steps * _step_ms(host) + ms <= loop_ms * 1.01  # each microsecond once


def test_an_evaluation_every_fourth_step_ends_that_step(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """``every=4``: ``train_step 3`` (and 7) hold two batches at their tail: step 3 is cut to its training, 8.03 ms,
    and kept (h37-probe45e dropped it whole, 24.1 ms); the steady steps ~8.03 ms."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, inside=True)
    host = first_host(path)
    st = host["steps"]
    assert not [d for d in st["dropped"] if d["reason"].startswith("evaluating:")]
    assert 3 in [r["step"] for r in host["step_rows"]]
    assert all(r["step_ms"] == pytest.approx(truth.step_ms, rel=0.01) for r in host["step_rows"]), host["step_rows"]
    assert _evaluation_ms(st["note"]) == (2, pytest.approx(truth.pass_ms, rel=0.01))


@pytest.mark.parametrize("form", [dict(), dict(every=1, batches=1), dict(every=1, batches=1, ranks=2)],
                         ids=["every_4", "every_step", "two_ranks"])
def test_an_evaluation_at_a_steps_head_starts_it_after(tmp_path, form) -> None:  # noqa: ANN001 - pytest's
    """``inside="head"``: the step after each evaluation opens its range before it (``evaluate()`` at the top of the
    loop's turn, then the training): that step starts where the evaluation ends, the step before ends where it
    opens (b3e5562e: step 4 dropped whole every 4th; every step 16.05 ms); ~8.03 ms, each GPU's steps too."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, inside="head", **form)
    host = first_host(path)
    st = host["steps"]
    assert not [d for d in st["dropped"] if d["reason"].startswith("evaluating:")]
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)
    assert all(r["step_ms"] == pytest.approx(truth.step_ms, rel=0.01) for r in host["step_rows"]), host["step_rows"]
    held = 1 if form.get("every", 4) == 4 else truth.train_steps - 1  # none before step 0; the last follows step 7
    assert re.search(rf"{held} steps? opens? (?:its|their) own range with an evaluation \(`eval_step`\)", st["note"])


def test_an_evaluation_mid_step_is_not_cut(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: ``train_step 3``'s range runs on over the evaluation and ``train_step 4``'s training (that range
    removed): training on both sides of the evaluation -- a window is not holed: nothing is cut, the step is dropped
    as holding an evaluation (as on b3e5562e), the steady steps ~8.03 ms."""
    import sqlite3

    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path)
    con = sqlite3.connect(path)
    (end,) = con.execute("SELECT end FROM NVTX_EVENTS WHERE text = 'train_step 4'").fetchone()
    con.execute("DELETE FROM NVTX_EVENTS WHERE text = 'train_step 4'")
    con.execute("UPDATE NVTX_EVENTS SET end = ? WHERE text = 'train_step 3'", (end,))
    con.commit()
    con.close()
    host = first_host(path)
    st = host["steps"]
    assert "own range with an evaluation" not in st["note"] and "at the end of" not in st["note"]
    assert [d["step"] for d in st["dropped"] if d["reason"].startswith("evaluating:")] == [3]
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)


def _kineto_truth(folder: str) -> tuple[float, float]:
    """(training ms a step, evaluation ms in all) as written: each kept ``ProfilerStep#n`` mark (the first and last
    are dropped, as the stock tool does) up to the ``evaluate`` range it holds; every mark's stretch from its
    ``evaluate`` to its end (the next ``prof.step()``) -- what the steps leave out."""
    import glob
    import json

    (path,) = glob.glob(f"{folder}/*.pt.trace.json")
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "user_annotation"]
    marks = sorted((e for e in ev if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    starts = [e["ts"] for e in ev if e["name"] == "evaluate"]
    held = [min([t for t in starts if m["ts"] <= t < m["ts"] + m["dur"]], default=m["ts"] + m["dur"]) for m in marks]
    train = [h - m["ts"] for m, h in zip(marks[1:-1], held[1:-1])]
    return sum(train) / len(train) / 1000.0, sum(m["ts"] + m["dur"] - h for m, h in zip(marks, held)) / 1000.0


@pytest.mark.parametrize("every", [4, 1])
def test_a_kineto_evaluation_in_the_profiler_step_is_its_own_time(tmp_path, every) -> None:  # noqa: ANN001 - pytest's
    """``torchtrace.evaluation_loop``: ``prof.step()`` is the training loop's, so each ``ProfilerStep#n`` after which
    the loop evaluates holds the ``record_function("evaluate")`` forwards at its tail.  The steps read the training,
    ~2.42 ms (b3e5562e: 2.75 ms with every 4th evaluating, 4.08 with every step); the note says the evaluation's ms."""
    from synthetic import torchtrace as tt

    tt.write_run(str(tmp_path), tt.Scenario(1, tt.evaluation_loop(every=every), [], [], "evaluation loop"), steps=12,
                 run="run")
    train_ms, eval_ms = _kineto_truth(str(tmp_path / "run"))
    host = first_host(tmp_path / "run")
    st = host["steps"]
    assert st["source"] == "profiler_step" and st["found"] == 12, st["note"]
    assert _step_ms(host) == pytest.approx(train_ms, rel=0.01)
    assert all(r["step_ms"] == pytest.approx(train_ms, rel=0.01) for r in host["step_rows"]), host["step_rows"]
    assert _evaluation_ms(st["note"]) == (12 // every, pytest.approx(eval_ms, rel=0.01))


@pytest.mark.parametrize("form", [dict(), dict(ranks=2), dict(numbers="global")], ids=["one", "two_ranks", "global"])
def test_unmarked_evaluation_forwards_are_no_steps(tmp_path, form) -> None:  # noqa: ANN001 - pytest's
    """``pass_range=None``: the two evaluation forwards after every 4th step carry no range (``model.eval()`` and
    ``torch.no_grad()`` record nothing).  Their work repeats the head of the steady step's (the copy and the 7 forward
    GEMMs) with no backward or update after it: the step before ends where they start (``steps.apart._unnamed_passes``):
    ~8.03 ms a step (b3e5562e: 10.70 ms, step 3 holding 24.1), each GPU's too, the note saying their time."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, pass_range=None, **form)
    host = first_host(path)
    st = host["steps"]
    assert st["found"] == truth.train_steps, st["note"]
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.01)
    assert all(r["step_ms"] == pytest.approx(truth.step_ms, rel=0.01) for r in host["step_rows"]), host["step_rows"]
    m = re.search(r"forwards that no range names and no backward or update follows, after the training of 1 step "
                  r"\(([\d.]+) ms in all\)", st["note"])
    assert m, st["note"]
    assert float(m.group(1)) == pytest.approx(truth.pass_ms / 2 / form.get("ranks", 1), rel=0.01)


def test_unmarked_evaluation_forwards_after_every_step_are_not_told(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: one unmarked forward after every step: no step runs without it, so nothing tells the training's work
    from the evaluation's by what the GPUs ran -- nothing is cut, the steps hold both (as on b3e5562e)."""
    path = str(tmp_path / "eval.sqlite")
    truth = nx.write_interleaved_evaluation(path, pass_range=None, every=1, batches=1)
    host = first_host(path)
    assert "forwards that no range names" not in host["steps"]["note"]
    assert _step_ms(host) == pytest.approx(truth.step_ms + truth.pass_ms / truth.passes, rel=0.01)


def test_unmarked_kineto_evaluation_forwards_are_no_steps(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """``torchtrace.evaluation_loop(words="none")``: two forwards after every 4th training step inside its
    ``ProfilerStep#n``, nothing naming them: each step reads its training, as the steps that do not evaluate run
    (b3e5562e: 2.75 ms, the evaluating steps 4.08)."""
    import glob
    import json

    from synthetic import torchtrace as tt

    tt.write_run(str(tmp_path), tt.Scenario(1, tt.evaluation_loop(words="none"), [], [], "evaluation loop"), steps=12,
                 run="run")
    (path,) = glob.glob(str(tmp_path / "run" / "*.pt.trace.json"))
    marks = [e["dur"] / 1000.0 for e in json.load(open(path))["traceEvents"]
             if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    train_ms = min(marks)  # a step that does not evaluate: its training alone
    host = first_host(tmp_path / "run")
    st = host["steps"]
    assert _step_ms(host) == pytest.approx(train_ms, rel=0.01)
    assert all(r["step_ms"] == pytest.approx(train_ms, rel=0.01) for r in host["step_rows"]), host["step_rows"]
    assert "after the training of 2 steps" in st["note"]  # the third evaluating step is the last: left whole
