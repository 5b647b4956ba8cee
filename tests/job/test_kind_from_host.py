"""The kind of work from the framework's own host events where no GPU record was kept (issue #37, h37-left34): a
CPU-only capture (``wild/lightning_cpu_fit``: Lightning's ``training_step`` on a laptop, autograd's backward nodes and
``Optimizer.step#Adam.step`` recorded) and one whose GPU side was lost (``wild/gpu_events_stripped``: a TorchRec
step's host events only, DDP's forward, its backward and ``FusedAdam.step`` among them) are training steps, and their fixes loop a
training step.  Control by construction: the same Lightning capture without its training events is work of no known
kind, told to loop its own step.  On main both kept captures got no kind from the host (``run_one_step()`` in the
no-GPU fix; no ``host_kind``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace

from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"


def _report(path: Path) -> dict:
    hosts = [SimpleNamespace(host="h0", path=str(path), format="kineto", size=path.stat().st_size)]
    return analyze_session("r", "s", hosts).to_dict()


def _trace(name: str) -> Path:
    return next(p for p in (WILD / name).rglob("*.pt.trace.json*"))


def _code(rep: dict) -> str:
    return "\n".join(a["snippet"] or "" for f in rep["findings"] for a in f["actions"])


def test_a_cpu_only_lightning_training_step_is_told_a_training_loop():
    rep = _report(_trace("lightning_cpu_fit"))
    job = rep["hosts"][0]["job"]
    assert (job["kind"], job["host_kind"]) == ("no_gpu", "training")
    assert "Optimizer.step#Adam.step" in job["kind_evidence"]
    code = _code(rep)
    assert "train_step(x, y)" in code and "run_one_step" not in code


def test_a_capture_whose_gpu_records_were_lost_keeps_its_training_kind_from_the_host():
    rep = _report(_trace("gpu_events_stripped"))
    job = rep["hosts"][0]["job"]
    assert (job["kind"], job["host_kind"]) == ("unknown", "training")
    said = job["kind_evidence"].split("its host events name a training step: ")[1]
    assert "zero_grad" not in said  # work only training does, not a zero_grad that a no-grad forward may follow
    assert "run_one_step" not in _code(rep)


def test_without_training_events_the_cpu_only_capture_is_work_of_no_known_kind(tmp_path):
    src = _trace("lightning_cpu_fit")
    with gzip.open(src) as f:
        d = json.loads(f.read())
    d["traceEvents"] = [e for e in d["traceEvents"] if not pytorch.is_training_event(str(e.get("name", "")))]
    dst = tmp_path / "cut.1.pt.trace.json"
    dst.write_text(json.dumps(d))
    rep = _report(dst)
    job = rep["hosts"][0]["job"]
    assert (job["kind"], job["host_kind"]) == ("no_gpu", "")
    code = _code(rep)
    assert "run_one_step" in code and "train_step" not in code
