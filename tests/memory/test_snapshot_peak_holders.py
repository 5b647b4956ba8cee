"""A snapshot's peak books a block by the maker its stack names, as its OOM does (issue #37 class 5).

SDPA's math backend and a KV cache were booked apart from their phase at an OOM only (h37-snapshot32); the peak's
breakdown still booked them by phase and time -- the math backend's score matrices as the forward's activations
(``activation_memory`` prescribed checkpointing), a cache made before the first forward as "held across steps" with
the weights.  One reading of a block's kind now serves both (``metrics.memory._kind``).  Truth by construction:
``synthetic.memsnapshot.attention_math_steps`` and ``kv_cache_generation`` (bytes counted as the modelled allocator
placed them); real: SketchKV's state, its cache read by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.metrics.types import GpuMemory
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules import memory_near_capacity
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics
from tests.support.paths import REPO

MiB = ms.MiB


def _gpu(path: Path) -> GpuMemory:
    return host_metrics(read_trace(str(path))).memory.gpus[0]


def _findings(path: Path) -> list[Finding]:
    return analyze_host(HostFile("peak", str(path), path.stat().st_size, 0, "snapshot")).findings


def _math(tmp_path: Path, backend: str = "math") -> tuple[Path, ms.Scenario]:
    sc = ms.attention_math_steps(backend)
    return Path(ms.write(str(tmp_path / f"{backend}.pickle"), sc.doc)), sc


def test_the_peak_books_the_math_backends_bytes_by_their_maker(tmp_path: Path):
    """12.2 GiB of the math backend's softmaxes and outputs, kept for the backward, at a 20.8 GiB peak (main: all of
    it "activations", 12.8 GiB with q, k, v)."""
    path, sc = _math(tmp_path)
    g = _gpu(path)
    assert g.peak_allocated_bytes == sc.truth["peak"]
    assert g.breakdown["attention_math"] == sc.truth["peak_attention_math_bytes"]
    assert g.breakdown["activations"] < sc.truth["peak_attention_math_bytes"] / 10  # q, k, v only
    assert g.breakdown["held"] == sc.truth["weight_bytes"]


def test_the_peak_prescribes_a_fused_backend_not_checkpointing(tmp_path: Path):
    """Main: ``activation_memory`` said checkpointing frees 70% of 12.8 GiB of "activations"; the fused backend frees
    the math backend's bytes with no recompute."""
    path, sc = _math(tmp_path)
    found = [f for f in _findings(path) if f.rule == "activation_memory"]
    (f,) = found
    assert f.metric.detail["cause"] == "attention_math"
    assert f.saving_bytes == sc.truth["peak_attention_math_bytes"]
    assert "fused backend" in f.actions[0].text and "_scaled_dot_product_attention_math" in f.summary


def test_control_the_flash_backend_holds_none(tmp_path: Path):
    """The same model with the fused backend: nothing booked to the math backend, no such finding (as main)."""
    path, _ = _math(tmp_path, "flash")
    assert "attention_math" not in _gpu(path).breakdown
    assert not any(f.metric is not None and f.metric.detail.get("cause") == "attention_math" for f in _findings(path))


@pytest.mark.parametrize("cache", ["static", "dynamic"])
def test_a_generations_cache_at_the_peak_is_its_own_kind(tmp_path: Path, cache: str):
    """A static cache made before the first pass (main: 18 GiB "held" with the weights) and one grown in each pass's
    forward (main: held from the step it was made in, or the forward's activations)."""
    sc = ms.kv_cache_generation(cache)
    g = _gpu(Path(ms.write(str(tmp_path / f"{cache}.pickle"), sc.doc)))
    assert g.peak_allocated_bytes == sc.truth["peak"]
    assert g.breakdown["kv_cache"] == sc.truth["peak_kv_bytes"]
    assert g.breakdown["held"] == sc.truth["weight_bytes"]


def test_a_cache_grown_in_the_forward_is_not_kept_by_autograd(tmp_path: Path):
    """``forward_kept`` reads what a forward kept for a backward; a cache is kept on purpose (main: counted)."""
    sc = ms.kv_cache_generation("dynamic")
    g = _gpu(Path(ms.write(str(tmp_path / "dynamic.pickle"), sc.doc)))
    assert g.forward_kept_bytes <= sc.truth["peak"] - sc.truth["weight_bytes"] - sc.truth["peak_kv_bytes"]


@pytest.mark.parametrize("scenario, lever, fix", [
    (lambda: ms.kv_cache_generation("static"), "kv_cache", "fewer tokens in the KV cache"),
    (ms.attention_math_steps, "attention_math", "fused backend")])
def test_a_peak_near_capacity_names_its_maker_and_the_makers_fix(tmp_path: Path, scenario, lever, fix: str):
    """``memory_near_capacity`` frees the most of what holds the peak.  A snapshot records no capacity, so the GPU's
    is given here as ``torch.cuda.mem_get_info`` would (the peak reserved at 95% of it).  Main: the static cache's
    10 GiB were "held" (the lever: sharding the weights, or, to the generation, "load the weights in bfloat16"), the
    math backend's 12.2 GiB "activations" (checkpointing); the inference job's tag dropped any variant's fix."""
    sc = scenario()
    m = host_metrics(read_trace(ms.write(str(tmp_path / f"{lever}.pickle"), sc.doc)))
    g = m.memory.gpus[0]
    g.capacity_bytes, g.capacity_source = int(g.peak_reserved_bytes / 0.95), "given"
    (f,) = memory_near_capacity.check(m)
    assert f.metric.detail["lever"] == lever
    truth = sc.truth.get("peak_kv_bytes", sc.truth.get("peak_attention_math_bytes"))
    assert f.saving_bytes == truth
    assert fix in f.actions[0].text


def test_a_real_cache_made_before_the_history_is_no_weight():
    """SketchKV's Llama-7B state (MIT): a history of one entry (a free of 8 B), 16,397,578,240 B live at the dump; the
    blocks its fork of Hugging Face's cache code made, at addresses the history never names -- 2,911,981,568 B
    (2,777.1 MiB) read by hand (test_snapshot_kv_cache) -- were booked "held" with the weights (main: held
    16,397,578,240)."""
    g = _gpu(REPO / "tests/fixtures/wild/snapshot_llama_kvcache_state/my_snapshot.pickle")
    assert g.breakdown == {"held": 16_397_578_240 - 2_911_981_568, "kv_cache": 2_911_981_568}
