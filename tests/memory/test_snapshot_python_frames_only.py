"""A snapshot recorded with Python frames only reads as the same history recorded with C++ frames too (issue #37
class 5; session 54's metamorphic checks).

``_record_memory_history(stacks="python")`` -- and every snapshot PyTorch dumps on Windows, where it unwinds no C++
-- keeps a stack's Python frames and drops the rest; an allocation on autograd's engine thread (the backward) keeps
none.  The checks: each real snapshot of tests/fixtures/wild, its C++ frames dropped, read against itself whole.
Two readings leaned on a C++ frame:

* the allocator's retry (``DeviceCachingAllocator::malloc`` giving its cache back inside the allocation the driver
  refused): the 2.7B SGD step at its GPU's limit read healthy again, its capacity unknown.  The drops and the
  segment asked for again are one call's: they share its stack, where the program's ``empty_cache()`` carries its
  own frame (``formats.snapshot.reader._same_call_retries``);
* autocast's cast cache (``at::autocast::cached_cast``): the bf16 forward's 253 copies of the weights (1.78 GiB)
  read as activations kept for a backward, the ``inference_mode`` saving 4.83 GB instead of 2.94 GB, because 109
  small tensors of the run (16 KiB and 512 B, half a norm's weight) broke "one copy per weight" for every copy
  (``_without_strays``).

Generator: ``synthetic.memsnapshot.retry_training`` recorded with ``stacks="python"`` (truth by construction), and
its ``empty_cache`` twin, whose segments now carry the program's call (``EMPTY_CACHE``) as a real one does."""

from __future__ import annotations

import gzip
import os
import pickle

import numpy as np

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot import reader
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"
RETRY = WILD / "snapshot_retry_full_gpu_sgd" / "memory_snapshot_fwd_bwd_ctx128.pickle.gz"
BF16_FORWARD = WILD / "snapshot_forward_rebound_bf16_autograd"


def _load(path) -> dict:
    with gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb") as f:
        return pickle.load(f)


def _python_only(doc: dict) -> dict:
    """``doc`` as ``stacks="python"`` records it: each stack's Python frames (a ``.py`` file, or a frozen module's
    ``<frozen ...>``), in order; the C++ and C frames dropped."""
    def keep(frames):
        return [f for f in frames or [] if f.get("filename", "").endswith(".py") or f.get("filename", "").startswith("<")]
    for seg in doc["segments"]:
        seg["frames"] = keep(seg.get("frames"))
        for b in seg.get("blocks", []):
            b["frames"] = keep(b.get("frames"))
            b.pop("history", None)
    for trace in doc["device_traces"]:
        for e in trace:
            if "frames" in e:
                e["frames"] = keep(e["frames"])
    return doc


def _write(tmp_path, name: str, doc: dict):
    path = tmp_path / f"{name}.pickle"
    with open(path, "wb") as f:
        pickle.dump(doc, f)
    return path


def _report(path):
    rep = analyze_host(HostFile(path.name.split(".")[0], str(path), os.path.getsize(path), 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _one(folder):
    return next(p for p in folder.iterdir() if ".pickle" in p.name)


def test_a_retry_recorded_with_python_frames_only_bounds_the_capacity_as_recorded_whole(tmp_path):
    doc = _python_only(_load(RETRY))
    backward = [e for e in doc["device_traces"][0] if e["action"] == "segment_free"]
    assert backward and not any(e["frames"] for e in backward)  # autograd's thread: the drops keep no frame
    whole, python = _report(RETRY), _report(_write(tmp_path, "retry_python", doc))
    g, w = python.gpus[0].memory, whole.gpus[0].memory
    assert w["capacity_source"] == "reserved when the driver refused more"
    assert (g["capacity_bytes"], g["capacity_source"]) == (w["capacity_bytes"], w["capacity_source"])
    near = [f for f in python.findings if f.rule == "memory_near_capacity"]
    assert near and near[0].severity == "critical" and "266 segments" in near[0].summary


def test_a_cast_cache_recorded_with_python_frames_only_is_the_cache_it_is_whole(tmp_path):
    src = _one(BF16_FORWARD)
    path = _write(tmp_path, src.name.split(".")[0], _python_only(_load(src)))
    whole = reader.read_trace(str(src)).memory[0]
    python = reader.read_trace(str(path)).memory[0]
    assert int(whole.cast_copy.sum()) == 253  # the C++ frames' reading: cached_cast under each copy
    assert np.array_equal(np.flatnonzero(python.cast_copy), np.flatnonzero(whole.cast_copy))
    a, b = _report(src), _report(path)
    kept = {f.id: f.saving_bytes for f in a.findings if f.rule == "activation_memory"}
    assert {f.id: f.saving_bytes for f in b.findings if f.rule == "activation_memory"} == kept
    assert any(i.endswith("#cast_cache_share") for i in kept)


def test_generated_retry_recorded_with_python_frames_bounds_the_capacity(tmp_path):
    sc = ms.retry_training()
    doc = ms.as_recorded(sc.doc, stacks="python")
    g = _report(_write(tmp_path, "retry", doc)).gpus[0].memory
    assert g["capacity_bytes"] == sc.truth["bound"]


def test_control_the_programs_empty_cache_recorded_with_python_frames_is_no_retry(tmp_path):
    sc = ms.retry_training(empty_cache=True)
    assert not sc.truth["retries"]
    doc = ms.as_recorded(sc.doc, stacks="python")
    dropped = [e for e in doc["device_traces"][0] if e["action"] == "segment_free"]
    assert dropped and all(e["frames"][-2]["name"] == "empty_cache" for e in dropped)
    r = _report(_write(tmp_path, "emptied", doc))
    assert r.gpus[0].memory["capacity_bytes"] is None
    assert "memory_near_capacity" not in {f.rule for f in r.findings}
