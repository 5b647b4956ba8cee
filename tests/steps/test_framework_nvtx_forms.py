"""Nsight exports whose NVTX a framework wrote, read as the job they describe (issue #37 class 2, h37-fwnvtx).

Each form is ``synthetic.autograd_nvtx``'s, the ranges as their writers push them (SURVEY.md "h37-fwnvtx": PyTorch's
``emit_nvtx`` and ``record_shapes``, Lightning's ``PyTorchProfiler(emit_nvtx=True)``, DDP under ``emit_nvtx``,
Megatron-LM's ``--profile --nvtx-ranges`` with and without ``--record-shapes``), truth by construction: the
iterations' count and period and the job's kind.

Main misread two of them:

* Megatron-core's ``--nvtx-ranges`` push ``megatron.core.transformer.transformer_layer._forward_attention.
  self_attention`` once a layer and no range around an iteration: main took it for "the most repeated top-level range"
  and cut 12 iterations of 6 layers into 72 "steps" of one layer (0.4-4 ms for 5.85 ms).  A range that repeats
  inside a training job's iterations -- twice as often as its optimizer's updates, or with a backward in fewer than
  half of its windows -- is no step (``steps.nvtx_ranges._within_iterations``);
* without ``--record-shapes`` no op range is there, and once the layers were refused main read the whole window as
  "one pass of the program: no step repeats" and asked for 5 iterations in a window of 12.  The launch sequence
  repeats, the host waits at each repeat (the optimizer's ``.item()`` of its grad norm) and every repeat runs a
  backward: a training job's iterations (``job.period.training_iterations``), read where its GPU bursts read none.

The same reading fixes ``emit_nvtx`` on a loop that updates its parameters itself (no ``Optimizer.`` range): main read
its 12 iterations as the whole window, one pass, with a warning to capture more iterations.  Main also named DDP's own
``DistributedDataParallel.forward`` (a ``record_function`` PyTorch opens) the program's range
that marks its steps.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import autograd_nvtx as an
from tb_gpu_advisor.frameworks import nvtx
from tb_gpu_advisor.runtime.pipeline import analyze_session


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    d = tmp_path_factory.mktemp("fwnvtx")
    out = {}
    for form in an.FORMS:
        p = str(d / f"{form}.sqlite")
        truth = an.write(p, form)
        host = SimpleNamespace(host="h0", path=p, format="nsys", size=os.path.getsize(p))
        out[form] = (analyze_session("w", "s", [host]).to_dict()["hosts"][0], truth)
    return out


def _steady(host: dict) -> list[float]:
    return [r["step_ms"] for r in host["step_rows"] if r.get("gpu") is None] or [r["step_ms"] for r in host["step_rows"]]


@pytest.mark.parametrize("form", an.FORMS)
def test_each_form_reads_as_its_iterations(reports, form):
    """Every form: the job's kind, PyTorch, and steps that are its iterations -- each as long as the period, as many
    as were run less the first and last dropped -- never a layer's range or a GPU burst."""
    host, truth = reports[form]
    assert host["job"]["kind"] == truth["kind"], host["job"]
    assert host["capture"]["framework"] == "pytorch"
    st = host["steps"]
    assert st["source"] not in ("gpu_busy_clusters", "whole_capture", "single_pass"), st
    assert st["found"] == truth["steps"], st  # main (megatron forms): 72, one a layer
    steady = _steady(host)
    assert steady and all(abs(ms - truth["step_ms"]) < 0.01 * truth["step_ms"] for ms in steady), (steady, truth)


@pytest.mark.parametrize("form", ["megatron", "megatron_shapes"])
def test_a_frameworks_per_layer_range_marks_no_step(reports, form):
    host, _ = reports[form]
    assert "self_attention" not in host["steps"]["note"], host["steps"]["note"]  # main: "the most repeated range"
    assert host["steps"]["confidence"] == "medium"


@pytest.mark.parametrize("form", ["megatron", "manual_update"])
def test_a_training_window_of_repeats_is_no_one_pass(reports, form):
    """No update the host names: Megatron without ``--record-shapes`` (no op range; main, once the layers were
    refused), and ``emit_nvtx`` on a loop updating its parameters itself (main: "The capture holds one pass of the
    program: no step repeats", a warning, for 12 iterations) -- the window was read as one pass."""
    host, _ = reports[form]
    assert host["steps"]["source"] == "repeated_launches", host["steps"]
    assert "one pass" not in " ".join(f["title"] for f in host["findings"])


def test_ddps_own_scope_is_pytorchs_not_the_programs(reports):
    assert nvtx.op_name("DistributedDataParallel.forward, op_id = 12") == ("DistributedDataParallel.forward", True)
    assert nvtx.op_name("FullyShardedDataParallel.forward, op_id = 3")[1]
    host, _ = reports["ddp"]
    assert "DistributedDataParallel" not in host["steps"]["note"]  # main: "NVTX ranges `DistributedDataParallel...`"
    assert host["steps"]["source"] == "step_end_events"


@pytest.mark.parametrize("form", an.FORMS)
def test_no_critical_finding_and_no_op_named_the_programs_range(reports, form):
    """Controls for every form: no critical finding (the work is GPU-bound but for its input), and no finding treats
    the framework's op ranges (``aten::``, autograd's backward nodes) as the program's own blocks."""
    host, _ = reports[form]
    assert not [f for f in host["findings"] if f["severity"] == "critical"]
    for f in host["findings"]:
        text = f["summary"] + " ".join(str(e) for e in f.get("evidence", []))
        assert "op_id" not in text and "seq = " not in text, (f["rule"], text[:300])


@pytest.mark.parametrize("form", an.FORMS)
@pytest.mark.parametrize(("steps", "layers"), [(6, 2), (12, 6)])
def test_every_form_holds_every_report_law(form, steps, layers):
    """The random-job laws (``tests/support/random_jobs.check``: parts within their wholes, claims once, orders,
    words) on each form, as ``synthetic.randjobs.fwnvtx_job`` writes it: few and many iterations, few and many
    layers."""
    from synthetic.randjobs import fwnvtx_job
    from tests.support.random_jobs import check

    assert check(fwnvtx_job(form, steps=steps, layers=layers)) == []
