"""A CUDA job recorded with Python frames only, on a side stream, whose stacks run through ``torch.cuda``'s own
Python speaks CUDA's words (h37-huntsnap63; issue #37 class 5, session 62's *Left*: the side-stream vendor "unnamed").

Why: with no C++ frame to name the caching allocator, ``formats.snapshot.reader._vendor`` told CUDA's build apart by
its null stream (stream 0), so a CUDA job that ran all its work on ``torch.cuda.Stream()`` read "unnamed" -- an
Ascend build's default stream is a handle too.  A stack through ``torch/cuda/`` (the program's
``torch.cuda.empty_cache()``: ``torch/cuda/memory.py``) is a call into PyTorch's CUDA API -- a CUDA build's, or ROCm's,
which keeps the ``torch.cuda`` names; ``torch_npu``'s Python is its own (``torch_npu/npu/``), XPU's ``torch/xpu/``.
By construction: ``cache_twin(empty_cache=True)``, its segments given back under ``torch/cuda/memory.py:
empty_cache``, recorded ``stacks="python"`` and moved to one side stream's handle.  The first test fails on base;
the second is a control (no ``torch.cuda`` frame: still unnamed)."""

from __future__ import annotations

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import report, written

SIDE = 94_000_000_000_000  # a side stream's handle (``torch.cuda.Stream()``), never the null stream's 0


def test_a_side_stream_job_calling_torch_cuda_speaks_cudas_words(tmp_path):
    sc = ms.cache_twin(empty_cache=True)
    doc = ms.on_stream(ms.as_recorded(sc.doc, stacks="python"), SIDE)
    drops = [e for e in doc["device_traces"][0] if e["action"] == "segment_free"]
    assert drops and all(e["frames"][0]["filename"].endswith("torch/cuda/memory.py") for e in drops)
    rep = report(written(tmp_path, ms.Scenario(doc, sc.truth)))
    assert rep.capture["vendor"] is None  # the CUDA API's build, as on the null stream (base: "unnamed")
    null = report(written(tmp_path, ms.Scenario(ms.as_recorded(sc.doc, stacks="python"), sc.truth), "null.pickle"))
    assert null.capture["vendor"] is None


def test_control_no_cuda_frame_on_a_side_stream_stays_unnamed(tmp_path):
    sc = ms.training_iterations(iterations=3)
    assert not any("torch/cuda/" in f["filename"] for e in sc.doc["device_traces"][0] for f in e.get("frames", []))
    doc = ms.on_stream(ms.as_recorded(sc.doc, stacks="python"), SIDE)
    assert report(written(tmp_path, ms.Scenario(doc, sc.truth))).capture["vendor"] == "unnamed"
