"""A snapshot of a forward run under ``no_grad`` in a training script is a forward pass, not a training step (issue #37
survey h37-survey3).

A real CS336 benchmark (silmont2000/assignment2-systems ``memory_forward_bf16_128.pickle``, MIT, kept in
tests/fixtures/wild/snapshot_nograd_bf16) calls ``optimizer.zero_grad()`` and then runs one forward of a 12-layer model
under ``torch.no_grad()`` and bf16 autocast: the snapshot's annotations name ``Optimizer.zero_grad#AdamW.zero_grad``,
and main called the job "training [high]".  Its forward frees each layer's tensors as it goes: 2% of its bytes are
live at the peak, and of those 244 MiB, 231 MiB are autocast's cast cache (16-bit copies of the weights, kept for the
autocast region), which main counted as activations.  Truth by construction: ``synthetic/memsnapshot.forward_only``
with grad off and a cast cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

REAL = FIXTURES / "wild" / "snapshot_nograd_bf16" / "memory_forward_bf16_128.pickle"
ZERO_GRAD = [{"stage": "START", "name": "Optimizer.zero_grad#AdamW.zero_grad", "device": 0, "time_us": ms.T0_US},
             {"stage": "END", "name": "Optimizer.zero_grad#AdamW.zero_grad", "device": 0, "time_us": ms.T0_US + 50}]


def _analyze(path: Path):
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _write(tmp_path: Path, name: str, sc: ms.Scenario) -> Path:
    sc.doc["external_annotations"] = list(ZERO_GRAD)
    return Path(ms.write(str(tmp_path / f"{name}.pickle"), sc.doc))


def test_zero_grad_then_a_no_grad_forward_is_a_forward(tmp_path: Path):
    rep = _analyze(_write(tmp_path, "nograd", ms.forward_only(grad=False)))
    assert rep.job["kind"] == "inference", rep.job
    assert "kept nothing for a backward" in rep.job["kind_evidence"]


def test_zero_grad_then_a_forward_that_keeps_its_tensors_is_training(tmp_path: Path):
    """The training forward dumped before its backward (an OOM in the forward) keeps its tensors: training."""
    rep = _analyze(_write(tmp_path, "grad", ms.forward_only(grad=True)))
    assert rep.job["kind"] == "training" and "zero_grad" in rep.job["kind_evidence"], rep.job


def test_autocast_cast_cache_is_the_weights_copy_not_activations(tmp_path: Path):
    sc = ms.forward_only(grad=False, cast_mib=16)
    path = Path(ms.write(str(tmp_path / "cast.pickle"), sc.doc))
    mem = _analyze(path).gpus[0].memory
    held, act, casts = (mem["breakdown"][k] for k in ("held", "activations", "casts"))
    assert (held, casts) == (sc.truth["params_bytes"], sc.truth["cast_bytes"])  # the 24 casts: the weights' copies
    assert act == mem["peak_allocated_bytes"] - held - casts <= 2 * sc.truth["kept_bytes"]  # one layer's, the next's


@pytest.mark.skipif(not REAL.is_file(), reason="wild fixture missing")
def test_real_no_grad_bf16_benchmark_is_a_forward():
    rep = _analyze(REAL)
    assert rep.job["kind"] == "inference", rep.job
    mem = rep.gpus[0].memory
    assert mem["peak_allocated_bytes"] == 781_312_000  # read off the file: 745 MiB
    # 231 MiB of autocast casts are the weights' copies: what is left of the forward at the peak is one layer's
    assert mem["breakdown"]["activations"] < 16 << 20
    # nothing kept for a backward; the cache itself is a finding of its own (h37-cachefind), and info: 31% of the peak,
    # the GPU's capacity unknown
    assert not any(f.rule == "activation_memory" and f.metric.id != "cast_cache_share" for f in rep.findings)
    cache = [f for f in rep.findings if f.metric is not None and f.metric.id == "cast_cache_share"]
    assert len(cache) == 1 and cache[0].severity == "info", cache
    assert 225 << 20 <= cache[0].metric.detail["cache_bytes"] <= 235 << 20  # read by hand: 231 MiB
