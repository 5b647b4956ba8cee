"""A snapshot's own record of the profiler's ranges says what the job was (issue #37 survey h37-survey-torch).

``torch.cuda.memory._snapshot()`` keeps the ``record_function`` ranges the allocator saw open in
``external_annotations`` (``{"stage": "START", "name": "Optimizer.zero_grad#AdamW.zero_grad", ...}``).  A real
3-GPU training snapshot (Constructor-Sun/code_location, no licence: checked, not kept; SURVEY.md) ran out of memory in
the forward pass of a GNN on GPU 1 before any backward: its stacks hold only the forward, and main called the job
"inference" and told it to run under ``torch.inference_mode()`` -- while its annotations name ``AdamW.zero_grad``.
Here by construction: the forward-only scenario, dumped with and without such a range.
"""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _report(tmp_path: Path, name: str, annotations: list[dict]):
    sc = ms.forward_only(grad=True)
    sc.doc["external_annotations"] = annotations
    path = Path(ms.write(str(tmp_path / f"{name}.pickle"), sc.doc))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _range(name: str, t0: int, t1: int) -> list[dict]:
    return [{"stage": "START", "name": name, "device": 0, "time_us": t0},
            {"stage": "END", "name": name, "device": 0, "time_us": t1}]


def test_an_optimizer_range_in_the_snapshot_makes_the_forward_a_training_step(tmp_path: Path):
    """A training loop dumped mid-forward (its backward never reached): training, and no inference_mode advice."""
    rep = _report(tmp_path, "train", _range("Optimizer.zero_grad#AdamW.zero_grad", ms.T0_US, ms.T0_US + 50)
                  + _range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", ms.T0_US + 60, ms.T0_US + 90))
    assert rep.job["kind"] == "training", rep.job
    assert "AdamW.zero_grad" in rep.job["kind_evidence"]
    assert not any("inference_mode" in (a.snippet or "") for f in rep.findings for a in f.actions)


def test_ranges_that_name_no_training_leave_the_forward_a_forward(tmp_path: Path):
    rep = _report(tmp_path, "fwd", _range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", ms.T0_US,
                                          ms.T0_US + 30))
    assert rep.job["kind"] == "inference", rep.job
    assert any(f.rule == "activation_memory" and f.metric.detail.get("cause") == "forward_kept" for f in rep.findings)
