"""A KV cache live at an OOM is a kind of its own, with its own fix (issue #37 class 5).

A cache holds the tokens a generation keeps: neither the weights (it grows with the batch and the context) nor the
activations (no backward frees it).  Made before the first forward -- a static cache, a serving engine's after its
profiling pass -- it lives as long as the weights, and the reader's lifetime rule (h37-heldlife31) booked it with
them: the OOM prescribed sharding the weights.  Grown in ``generate()``'s forward (``DynamicCache``'s ``torch.cat``),
it was the forward's activations: checkpointing prescribed to a job with no backward.  Known by the frames of the
cache's code (``frameworks.pytorch.is_kv_cache_frame``).  Truth by construction: ``synthetic.memsnapshot.oom_kv_cache``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

MiB = ms.MiB
#: How the same history is recorded: every frame, or as Windows writes it (Python frames, ``C:\\`` paths).
RECORDED = {"all": lambda doc: doc, "windows": ms.as_windows}


def _write(tmp_path: Path, cache: str, recorded: str = "all") -> tuple[Path, ms.Scenario]:
    sc = ms.oom_kv_cache(cache)
    assert sc.truth["oom"]
    return Path(ms.write(str(tmp_path / f"kv_{cache}_{recorded}.pickle"), RECORDED[recorded](sc.doc))), sc


@pytest.mark.parametrize("recorded", list(RECORDED))
def test_a_static_cache_made_before_the_first_forward_is_no_weight(tmp_path: Path, recorded: str):
    """10 GiB of cache and 8 GiB of weights, both made before the first forward and never freed (main: one 18 GiB
    "held")."""
    path, sc = _write(tmp_path, "static", recorded)
    (oom,) = host_metrics(read_trace(str(path))).memory.ooms
    assert oom.by_category == {"kv_cache": sc.truth["kv_bytes"], "held": sc.truth["weight_bytes"],
                               "activations": 512 * MiB}


@pytest.mark.parametrize("recorded", list(RECORDED))
def test_a_cache_grown_in_the_forward_is_no_activation(tmp_path: Path, recorded: str):
    """``DynamicCache`` grown token by token under ``generate()``: its blocks are made in the model's forward (main:
    the forward's activations, 15 GiB)."""
    path, sc = _write(tmp_path, "dynamic", recorded)
    (oom,) = host_metrics(read_trace(str(path))).memory.ooms
    assert oom.by_category == {"kv_cache": sc.truth["kv_bytes"], "held": sc.truth["weight_bytes"]}


@pytest.mark.parametrize("cache", ["static", "dynamic"])
def test_the_oom_finding_prescribes_fewer_or_smaller_cached_tokens(tmp_path: Path, cache: str):
    """Main: sharding / offloading 18 GiB of "weights" (static), checkpointing 70% of "activations" (dynamic)."""
    path, sc = _write(tmp_path, cache)
    rep = analyze_host(HostFile("oom", str(path), path.stat().st_size, 0, "snapshot"))
    f = next(f for f in rep.findings if f.rule == "oom_snapshot")
    assert f.metric.detail["cause"] == "kv_cache"
    assert f.saving_bytes == sc.truth["kv_bytes"]
    assert "KV cache" in f.actions[0].text and "checkpoint" not in " ".join(a.text for a in f.actions).lower()


def test_a_real_forks_cache_code_is_read_as_the_cache():
    """SketchKV's Llama-7B state (tests/fixtures/wild/snapshot_llama_kvcache_state, MIT): its K/V cache made by its
    fork of Hugging Face's cache code (``cache_utils_V2.py update_new``: 1002.25 + 1000.75 + 9.38 MiB, and four of
    0.25 MiB and one of 0.02) and the quantised residuals that code calls (``myquant.py`` under it: 568.61 + 114.13 +
    80.95 MiB) -- 2,777.1 MiB read by hand from the dump's blocks, grouped by their Python frames; the weights (no
    frames), the model's own forward (8.12 MiB) and ``generate``'s ``_sample`` (0.03 MiB) are no cache."""
    from tb_gpu_advisor.formats.snapshot.reader import _holder
    from tb_gpu_advisor.formats.snapshot.unpickle import loads
    from tests.support.paths import REPO

    doc = loads((REPO / "tests/fixtures/wild/snapshot_llama_kvcache_state/my_snapshot.pickle").read_bytes())
    by: dict[str, int] = {}
    for seg in doc["segments"]:
        for b in seg["blocks"]:
            if b["state"] == "active_allocated":
                by[_holder(b["frames"])] = by.get(_holder(b["frames"]), 0) + b["size"]
    assert round(by["kv_cache"] / MiB, 1) == 2777.1
    assert set(by) == {"", "kv_cache"}
