"""Forward passes a Kineto trace proves ran with autograd on, in a window with no backward, are told to run without
autograd (``job.Job.autograd_forwards``, ``rules.forward_with_autograd``; h37-recapture71, h37-hunt71b *Left* 1).

pytorch/ao's ``benchmark_intx.py`` (``wild/compiled_linear_gtx1650_no_backward``) calls a ``torch.compile``d
``nn.Linear`` 100 times with autograd on: each call is AOTAutograd's ``CompiledFunction`` (its forward as an
``autograd.Function``, made only with grad mode on and something requiring grad), and no backward or optimizer step
runs.  Main 0af60263 said nothing of it; the memory-snapshot side says ``torch.inference_mode()`` from the bytes a
forward keeps.  The compiled ViT (``wild/compiled_vit_recapture_a100``) is the same (5 calls), and there it is why
CUDAGraph Trees record again, which its recapture finding now cites.  Both fail on main.  Controls (pass on main and
here): compiled forwards under ``inference_mode`` (xDiT's FLUX denoise: ``Torch-Compiled Region`` and no
``CompiledFunction``), a compiled training step (``CompiledFunctionBackward`` beside its forwards) and an eager
forward (nothing in the trace tells grad mode on from ``no_grad``: never told)."""

from __future__ import annotations

import json
import os

import pytest

from tests.support.cli_report import in_process

WILD = os.path.join(os.path.dirname(__file__), "..", "fixtures", "wild")


def _host(name: str) -> dict:
    out = in_process("report", os.path.join(WILD, name), "--format", "json", "--cache-dir", "off")
    return json.loads(out.stdout)["reports"][0]["hosts"][0]


def _found(h: dict, rule: str) -> dict | None:
    return next((f for f in h["findings"] if f["rule"] == rule), None)


def test_a_compiled_forward_loop_with_autograd_on_is_told_inference_mode():
    h = _host("compiled_linear_gtx1650_no_backward")
    f = _found(h, "forward_with_autograd")
    assert f is not None, [x["rule"] for x in h["findings"]]
    assert f["severity"] == "info" and f.get("saving") is None
    assert f["summary"].startswith("The capture holds 100 `CompiledFunction` calls")
    assert any("torch.inference_mode()" in (a.get("snippet") or "") for a in f["actions"])


def test_the_recaptured_vit_cites_its_pending_backward():
    h = _host("compiled_vit_recapture_a100")
    assert _found(h, "forward_with_autograd") is not None
    assert "This capture shows a pending backward: 5 `CompiledFunction` calls" in \
        _found(h, "graph_recaptured")["summary"]


@pytest.mark.parametrize("name", ["xdit_flux_mi300x_denoise", "compiled_graphs_rtx3060", "cuda_only_a4000_swin_fwd"])
def test_no_proof_of_autograd_or_a_backward_present_is_not_told(name):
    assert _found(_host(name), "forward_with_autograd") is None
