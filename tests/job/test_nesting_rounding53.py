"""Back-to-back spans whose rounded times overlap by a nanosecond are neighbours, not one inside the other (issue #37,
"right on captures unlike ours"; session 52's ``steps.ranges._top_level``, three more places).

Kineto writes each event's start and length in microseconds to three decimals; at a PyTorch 2.x trace's 4.5e12 us a
double holds ~1 ns there, so a span that ends where the next one opens can end a nanosecond after it.  The project's
rule for that is ``model.columns.outermost`` (held only where mostly inside an earlier one); three readers still took
"starts before the earlier one's end" for nested.  Each case below is a writer's job with every such end, or some,
written 1 ns past the next start (``PAST_US``), against the same job written without it:

* ``job.structure.forward_iterations``: ``record_function("forward")`` / ``"backward"`` / ``"optimizer"`` phases back
  to back (``tests.support.phase_spans``' ``ddp_balanced`` job, its ``ProfilerStep``s dropped) -- each backward read
  as inside its forward, so no iteration opened at a forward: d4d3db12 read the ``backward`` spans (62% of the
  launches) as the steps, each a phase late (0.11 ms on one rank, 0.8 ms on 4);
* ``job.structure._outermost`` (``backward_span_steps``): a compiled loop without step marks
  (``torchtrace.write_compiled_loop_unmarked``) whose batch fetch ends where the forward's ``Torch-Compiled Region``
  opens -- 3 of the 6 regions read as inside their fetch: 3 iterations, 2 kept steps of 9.4 and 14.0 ms (truth 6 of
  4.68 ms);
* ``frameworks.user_ranges.evaluation_ranges``: ``torchtrace.evaluation_loop`` with each evaluation batch in its own
  ``record_function("eval_step")``, back to back at the tail of the ``ProfilerStep`` -- all but the first read as
  inside the one before, their forwards as training work after the evaluation, so the tail was not the step's
  evaluation: evaluating after every step, each step 4.90 ms (truth 2.42); every 4th, the evaluation told as
  "forwards that no range names" after 2 steps, 5.0 ms (truth: 3 steps' ``eval_step``, 7.4 ms).
"""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import first_host, ran_report
from tests.support.phase_spans import split_into_phases

#: how far past the next span's start a rounded end lands, us (one unit of Kineto's last written place)
PAST_US = 0.001


def _phases_host(folder: Path, ranks: int, past: float) -> dict:
    """``ddp_balanced``'s first ``ranks`` files with each ``ProfilerStep#k`` dropped and its window split into
    ``forward`` (to the first backward op), ``backward`` (to the all-reduce) and ``optimizer`` (to the next step's
    start) phases, back to back, each ending ``past`` us after the next one starts."""
    paths = tt.write_run(str(folder), "ddp_balanced")
    for p in paths[ranks:]:
        os.remove(p)
    for path in paths[:ranks]:
        split_into_phases(path, lambda t0, t1, bwd, opt, nxt: [
            (name, a, b + past)
            for name, a, b in (("forward", t0, bwd), ("backward", bwd, opt), ("optimizer", opt, nxt))])
    code, report = ran_report(folder)
    assert code in (0, 1)
    (host,) = report["hosts"]
    return host


def _starts(host: dict) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    for r in sorted(host["step_rows"], key=lambda r: r["step"]):
        if r["gpu"] is not None:
            out.setdefault(r["gpu"], []).append(r["start_ms"])
    return out


@pytest.mark.parametrize("ranks", [1, 4])
def test_back_to_back_phases_open_their_iterations_at_each_forward(tmp_path: Path, ranks: int) -> None:
    """Each backward that opens a nanosecond before its forward's rounded end is after it: the iterations open at
    each forward, every GPU's steps where the twin's (phases ending where the next opens) are.  d4d3db12: the
    ``backward`` spans were the steps, 0.109 ms (one rank) and 0.8 ms (4 ranks) late."""
    host = _phases_host(tmp_path / "past", ranks, PAST_US)
    twin = _phases_host(tmp_path / "twin", ranks, 0.0)
    assert "each from a `forward` host event through its `backward`" in twin["steps"]["note"]  # the twin's reading
    assert "each from a `forward` host event through its `backward`" in host["steps"]["note"], host["steps"]["note"]
    assert host["steps"]["count"] == twin["steps"]["count"]
    got, want = _starts(host), _starts(twin)
    assert got.keys() == want.keys()
    for gpu, starts in want.items():
        assert got[gpu] == pytest.approx(starts, abs=0.002), gpu


#: Kineto's name for the DataLoader's fetch of the next batch (``record_function`` in ``torch.utils.data``)
LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"


def _compiled_loop_with_fetches(path: Path, past_in: tuple[int, ...], fetch_us: float = 300.0) -> dict:
    """``write_compiled_loop_unmarked``'s loop, each iteration opening with its batch's fetch (``LOADER``,
    ``fetch_us``) on the loop's thread that ends where the forward's first region opens -- ``PAST_US`` after it in
    the iterations ``past_in``; its truth."""
    truth = tt.write_compiled_loop_unmarked(str(path))
    doc = json.loads(path.read_text())
    ev = doc["traceEvents"]
    regions = sorted((e for e in ev if e.get("name") == "Torch-Compiled Region: 0/0"), key=lambda e: e["ts"])
    for k, r in enumerate(regions):
        a = round(r["ts"] - fetch_us, 3)
        ev.append({"ph": "X", "cat": "user_annotation", "name": LOADER, "pid": r["pid"], "tid": r["tid"], "ts": a,
                   "dur": round(r["ts"] - a + (PAST_US if k in past_in else 0.0), 3), "args": {}})
    tt.write_doc(str(path), doc)
    return truth


@pytest.mark.parametrize("past_in", [(1, 3, 4), (1, 2, 3, 4, 5)], ids=["some", "all_but_the_first"])
def test_a_compiled_loops_regions_opening_as_their_fetch_ends_are_each_an_iteration(tmp_path: Path,
                                                                                  past_in: tuple[int, ...]) -> None:
    """Every ``Torch-Compiled Region: 0/0`` opens an iteration, its fetch's end a nanosecond past its start or not:
    6 iterations of the loop's period.  d4d3db12: the regions after such a fetch were inside it, no instance of the
    span -- 3 iterations (2 kept steps of 9.4 and 14.0 ms), or one region: the whole capture as one pass."""
    path = tmp_path / "loop.pt.trace.json"
    truth = _compiled_loop_with_fetches(path, past_in)
    host = first_host(path)
    steps = host["steps"]
    assert steps["source"] == "annotation_spans" and steps["found"] == truth["iterations"], steps["note"]
    assert "`Torch-Compiled Region: 0/0`" in steps["note"] and "opening a training iteration" in steps["note"]
    rows = [r["step_ms"] for r in host["step_rows"] if r["gpu"] == 0]
    assert rows and all(ms == pytest.approx(truth["iteration_ms"], rel=0.02) for ms in rows), rows


def _evaluation_loop_host(folder: Path, every: int, past: float, batches: int = 3) -> dict:
    """``torchtrace.evaluation_loop(every, batches)`` (12 steps) with each ``evaluate`` range split into one
    ``eval_step`` range a batch, back to back, each ending ``past`` us after the next one starts."""
    tt.write_run(str(folder), tt.Scenario(1, tt.evaluation_loop(every=every, batches=batches), [], [], "evaluation"),
                 steps=12, run="run")
    (path,) = glob.glob(str(folder / "run" / "*.pt.trace.json"))
    doc = json.loads(Path(path).read_text())
    ev, out = doc["traceEvents"], []
    for e in ev:
        if e.get("name") != tt.EVALUATE_RANGE:
            out.append(e)
            continue
        end = e["ts"] + e["dur"]
        gemms = sorted(x["ts"] for x in ev if x.get("name") == "aten::addmm" and x.get("tid") == e["tid"]
                       and e["ts"] <= x["ts"] < end)
        cuts = [e["ts"]] + [gemms[4 * b] for b in range(1, batches)] + [end]  # 4 layers' GEMMs a batch
        for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
            a, b = round(a, 3), round(b, 3)
            out.append({**e, "name": "eval_step", "ts": a, "dur": round(b - a + (past if k < batches - 1 else 0.0), 3)})
    doc["traceEvents"] = out
    tt.write_doc(path, doc)
    return first_host(folder / "run")


def _step_ms(host: dict) -> float:
    return next(m for m in host["headline"] if m["id"] == "device_step_share")["detail"]["avg_step_ms"]


@pytest.mark.parametrize("every", [1, 4])
def test_back_to_back_eval_step_ranges_are_each_the_steps_evaluation(tmp_path: Path, every: int) -> None:
    """Each ``eval_step`` at a ``ProfilerStep``'s tail is the evaluation, whatever its rounded end: the steps read
    their training (~2.42 ms, as the twin does), the note the ``eval_step`` evaluation of every evaluating step.
    d4d3db12: every step evaluating, 4.90 ms steps; every 4th, "forwards that no range names" after 2 steps."""
    host = _evaluation_loop_host(tmp_path / "past", every, PAST_US)
    twin = _evaluation_loop_host(tmp_path / "twin", every, 0.0)
    evaluating = 12 // every
    said = f"{evaluating} steps hold an evaluation (`eval_step`) at the end of their own range"
    assert said in twin["steps"]["note"]  # the twin's reading
    assert said in host["steps"]["note"], host["steps"]["note"]
    assert "forwards that no range names" not in host["steps"]["note"]
    assert _step_ms(host) == pytest.approx(_step_ms(twin), rel=0.005)
    assert [r["step_ms"] for r in host["step_rows"]] == pytest.approx([r["step_ms"] for r in twin["step_rows"]],
                                                                      rel=0.005)
