"""A compiled training loop profiled without ``prof.step()``'s marks has its iterations as steps (issue #37, survey
h37-survey16).

Wings236/model_inference's ``pytorch_compile/profiling/trace.json`` and ``trace_break.json`` (no licence: not kept)
are ``torch.compile``d forward + backward loops (a ResNet-18, an MLP with three graph breaks) profiled with
``torch.profiler.profile()`` and no schedule, so ``prof.step()`` wrote no ``ProfilerStep#N``.  Each iteration is the
forward's ``Torch-Compiled Region: 0/0`` on the loop's thread and the backward on autograd's, with the host's own
Python between them.  Main read GPU bursts (low confidence): the ResNet's 3 "steps" of 8.25 ms all inside its cold
first iteration (truth: 5.2 and 4.9 ms after it), the MLP's 2 of 4.52 ms (truth ~1.4 ms).  The forward's span holds
under half the launches, so the program's-spans reading refused it; every iteration runs a backward, so the span each
of whose tiles holds one opens the iterations.  The loop here is
``synthetic.torchtrace.write_compiled_loop_unmarked``'s, its iterations known by construction."""

from __future__ import annotations

import pytest

from synthetic.torchtrace import write_compiled_loop_unmarked
from tests.support.cli_report import cli_report


def _host(path) -> dict:
    report = cli_report(path)
    return report["hosts"][0]


@pytest.mark.parametrize("regions", [1, 3])
def test_a_compiled_loop_without_step_marks_has_its_iterations_as_steps(tmp_path, regions):
    p = tmp_path / "loop.pt.trace.json"
    truth = write_compiled_loop_unmarked(str(p), regions=regions)
    assert truth["forward_share"] < 0.5  # the forward's span alone cannot hold the step's work
    host = _host(p)
    assert host["job"]["kind"] == "training"
    steps = host["steps"]
    assert steps["source"] == "annotation_spans" and steps["confidence"] == "medium", steps
    assert steps["found"] == truth["iterations"], steps
    assert "`Torch-Compiled Region: 0/0`" in steps["note"] and "opening a training iteration" in steps["note"]
    rows = [r for r in host["step_rows"] if r["gpu"] == 0]
    mean = sum(r["step_ms"] for r in rows) / len(rows)
    assert mean == pytest.approx(truth["iteration_ms"], rel=0.02), (mean, truth)


def test_the_same_loop_forward_only_is_not_read_as_iterations(tmp_path):
    """Control: no backward between the regions -- no training iteration for a span to open."""
    p = tmp_path / "fwd.pt.trace.json"
    write_compiled_loop_unmarked(str(p), backward=False)
    steps = _host(p)["steps"]
    assert "opening a training iteration" not in steps["note"], steps
