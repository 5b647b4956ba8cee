"""A training step's upload that is pinned and asynchronous yet exposed (the GPU waits for it) is told the
side-stream copy of the next batch, not only the DataLoader's workers (issue #37 classes 1 and 3; h37-probe42s's
Left, h37-probe42c).

``pin_memory=True`` and ``non_blocking=True`` free the host, not the GPU: a copy on the kernels' stream still runs
between them.  Main told such a training step only "Load batches in DataLoader worker processes" -- which makes the
batch sooner, never its copy -- while a forward loop's same upload got the side-stream copy (h37-probe42s).  Which
fix comes first is the trace's: the side stream where the copy's exposed time is larger than the input wait, the
loader's workers where the fetch is.

- generator: ``synthetic.torchtrace.write_exposed_pinned_upload`` (truth by construction: the exposed copy, the input
  wait, the first fix).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

SIDE_STREAM = "Copy the next batch to the GPU while the current step runs"
LOADER = "Load batches in DataLoader worker processes"


def _memcpy(path: Path):  # noqa: ANN202 - the excessive_memcpy finding
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    (f,) = [f for f in rep.findings if f.rule == "excessive_memcpy"]
    return f


def _first(texts: list[str]) -> str:
    at = {"side_stream": next((i for i, t in enumerate(texts) if t.startswith(SIDE_STREAM)), None),
          "loader": next((i for i, t in enumerate(texts) if t.startswith(LOADER)), None)}
    assert None not in at.values(), texts  # both fixes are told: each hides a cost the trace shows
    return min(at, key=at.get)


@pytest.mark.parametrize("fetch_us", [100.0, 200.0, 2_000.0])
def test_the_trace_orders_the_side_stream_and_the_loader(tmp_path, fetch_us):
    """Main: the loader's fix alone (the copy's own fix missing) for every fetch."""
    p = tmp_path / "upload.1.pt.trace.json"
    truth = tt.write_exposed_pinned_upload(str(p), fetch_us=fetch_us)
    f = _memcpy(p)
    assert f.metric.detail["blocking_ms_per_step"] == pytest.approx(truth["exposed_copy_ms"], rel=0.05)
    assert _first([a.text for a in f.actions]) == truth["first_fix"]
    side = next(a for a in f.actions if a.text.startswith(SIDE_STREAM))
    assert "torch.cuda.Stream()" in side.snippet and "wait_stream(copy_stream)" in side.snippet


def test_a_pageable_upload_keeps_pinning_first(tmp_path):
    """Control: a pageable upload is not yet pinned -- pinning is its fix, not the side stream."""
    tt.write_run(str(tmp_path / "run"), tt.PAGEABLE_NON_BLOCKING_INPUT, steps=8, run="pageable")
    (p,) = list((tmp_path / "run").rglob("*.pt.trace.json"))
    texts = [a.text for a in _memcpy(p).actions]
    assert not any(t.startswith(SIDE_STREAM) for t in texts), texts
