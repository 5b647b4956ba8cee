"""FSDP's forward hooks are training's only where the forward records autograd's graph (``job/kind.py``).

FSDP also shards models run forward only: ``../shared/profiles/nsys/h100_fsdp_window`` (GindaChen/nsys-ai's
``h100_2gpu_1s.sqlite``, re-read in the h37-survey14 survey) is FastVideo's T5 text encoder on two H100s -- 116
``FSDP::pre_forward`` / ``post_forward`` hooks, no backward hook, no ``*Backward`` node, no optimizer, and not one of its
16,782 autograd NVTX ranges carries a sequence number (``, seq = N``: grad mode off).  Main called it "training steps
[high confidence]" from the hooks' names alone, and gave a training loop's fixes.  Its twin ``fsdp_mfu_before`` (a
window cut inside an FSDP training step's forward, activation checkpointing) numbers 9,231 ops for the backward and
stays training.  By construction (``synthetic.nsysexport``: an FSDP-wrapped forward loop, with and without the ops'
sequence numbers, and with a backward hook)."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import SHARED_PROFILES


def _job(path, hook: str, grad: bool) -> dict:
    write(str(path), NsysJob(steps=6, step_range="iteration {k}", extra_ranges=(hook,), shuffle=False))
    if not grad:  # the forward under torch.no_grad(): autograd numbers no op (``aten::mm, op_id = 12``)
        con = sqlite3.connect(path)
        con.execute("UPDATE NVTX_EVENTS SET text = substr(text, 1, instr(text, ', seq = ') - 1) || "
                    "substr(text, instr(text, ', op_id = ')) WHERE text LIKE '%, seq = %'")
        con.commit()
        con.close()
    host = SimpleNamespace(host="fsdp", path=str(path), format="nsys", size=0)
    return analyze_session("fsdp", "s", [host]).to_dict()["hosts"][0]["job"]


@pytest.mark.parametrize("hook, grad, kind", [
    # the hooks as PyTorch's autograd NVTX writes them: ops, with their ``op_id``
    ("FSDP::pre_forward (blocks.0), op_id = 1", False, "inference"),   # a sharded model run forward only
    ("FSDP::pre_forward (blocks.0), op_id = 1", True, "training"),     # a training step's forward, its graph recorded
    ("FSDP::pre_backward (blocks.0), op_id = 1", False, "training"),   # the backward's hook, whatever the forward did
])
def test_fsdp_hooks_name_training_only_with_a_recorded_graph_or_a_backward(tmp_path, hook, grad, kind):
    job = _job(tmp_path / "fsdp.sqlite", hook, grad)
    assert job["kind"] == kind, job["kind_evidence"]


def test_the_sharded_text_encoder_is_inference_and_gets_inference_fixes():
    path = SHARED_PROFILES / "nsys" / "h100_fsdp_window" / "h100_2gpu_1s.sqlite"
    if not path.exists():
        pytest.skip("the shared Nsight captures are not here")
    host = SimpleNamespace(host="modal", path=str(path), format="nsys", size=path.stat().st_size)
    rep = analyze_session("h100_fsdp_window", "s", [host]).to_dict()
    job = rep["hosts"][0]["job"]
    assert job["kind"] == "inference", job["kind_evidence"]
    (copies,) = [f for f in rep["findings"] if f["rule"] == "excessive_memcpy"]
    advice = " ".join(a["text"] for a in copies["actions"])
    assert "before its forward, on every call" in advice and "backward" not in advice
    text = " ".join(a["text"] + (a.get("snippet") or "") for f in rep["findings"] for a in f["actions"])
    assert "GradScaler" not in text and "loss.backward" not in text
