"""Copies to the GPU launched inside a data-parallel wrapper's parameter-loading hooks are the wrapper's uploads of
parameters offloaded to host memory, not the input batch: the copy finding says so and leads with the wrapper's fix
(offload off, or prefetch), not the DataLoader's workers and pinned memory (issue #37, ``h100_fsdp_window``: 920 ms of
uploads per step, every one launched under ``FSDP::pre_forward``, was told to use DataLoader workers).

By construction (``synthetic.nsysexport``, ``NsysJob.copy_range``): the same job with its copy inside
``FSDP::pre_forward (block.0)``, and without it (a batch's copy); and on the real export, whose copies' enclosing
ranges were read with sqlite3 (every ``cudaMemcpyAsync`` of a pinned host-to-device copy the window launches is under
``FSDP::pre_forward (...) > aten::to > aten::_to_copy > aten::copy_``: 214 calls, 28.8 GB on the two ranks).
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics
from tests.support.paths import SHARED_PROFILES

_UPLOAD_FIX = pytorch.FIXES["excessive_memcpy:param_upload"][0]


def _copies(tmp_path, copy_range: str | None):
    p = tmp_path / f"{'fsdp' if copy_range else 'batch'}.sqlite"
    write(str(p), NsysJob(steps=8, h2d_us=4000, ops=10, copy_range=copy_range))
    rep = analyze_host(HostFile(p.stem, str(p), p.stat().st_size, 0, "nsys"))
    h2d = next(c for c in host_metrics(read_trace(str(p))).memcpy if c.direction == "h2d")
    return next(f for f in rep.findings if f.rule == "excessive_memcpy"), h2d


def test_copies_in_fsdps_pre_forward_lead_with_the_offload_fix(tmp_path):
    f, h2d = _copies(tmp_path, "FSDP::pre_forward (block.0)")
    assert h2d.param_upload_share == pytest.approx(1.0)
    assert "launched inside FSDP's pre-forward / pre-backward hooks" in f.summary
    assert f.actions[0].text == _UPLOAD_FIX.text and "CPUOffloadPolicy" in f.actions[0].snippet
    assert "uploads leave the step (offload off)" in f.saving.assumption and "pinned" not in f.saving.assumption
    assert pytorch.FEWER_BYTES.text in [a.text for a in f.actions[1:]]  # still offered, after the cause's own fix


def test_a_batchs_copy_keeps_the_input_pipelines_fix(tmp_path):
    """The control: the same copy under ``aten::to`` alone is a batch's; the wrapper's fix is not offered."""
    f, h2d = _copies(tmp_path, None)
    assert h2d.param_upload_share == 0.0
    assert "pre-forward" not in f.summary and _UPLOAD_FIX.text not in [a.text for a in f.actions]
    assert f.actions[0].text == pytorch.FEWER_BYTES.text  # pinned, asynchronous, longer than the compute


def test_only_the_wrappers_parameter_loading_hooks_count():
    assert pytorch.is_param_upload_event("FSDP::pre_forward (encoder.block.14.layer.1)")
    assert pytorch.is_param_upload_event("FSDP::pre_backward (layers.3)")
    assert pytorch.is_param_upload_event("FullyShardedDataParallel._pre_forward")
    assert not pytorch.is_param_upload_event("FSDP::post_forward (encoder.block.14.layer.0)")
    assert not pytorch.is_param_upload_event("FSDP::all_gather_copy_in")
    assert not pytorch.is_param_upload_event("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__")


FSDP_WINDOW = SHARED_PROFILES / "nsys" / "h100_fsdp_window" / "h100_2gpu_1s.sqlite"


@pytest.mark.skipif(not FSDP_WINDOW.is_file(), reason=f"{FSDP_WINDOW} not present")
def test_the_real_fsdp_windows_uploads_are_named_as_fsdps():
    """Truth by SQL: the enclosing NVTX ranges of every pinned host-to-device copy's launch the window holds."""
    con = sqlite3.connect(f"file:{FSDP_WINDOW}?mode=ro", uri=True)
    outer = con.execute("""
        with calls as (select r.start, r.end, r.globalTid tid from CUPTI_ACTIVITY_KIND_RUNTIME r
                       join CUPTI_ACTIVITY_KIND_MEMCPY m on m.correlationId = r.correlationId
                        and (r.globalTid >> 24) = (m.globalPid >> 24) where m.copyKind = 1 and m.srcKind = 1)
        select (select coalesce(n.text, s.value) from NVTX_EVENTS n left join StringIds s on s.id = n.textId
                where n.globalTid = c.tid and n.start <= c.start and n.end >= c.end order by n.start limit 1)
        from calls c""").fetchall()
    con.close()
    assert len(outer) == 214 and all(o[0].startswith("FSDP::pre_forward (") for o in outer)
    host = HostFile("h100_2gpu_1s", str(FSDP_WINDOW), FSDP_WINDOW.stat().st_size, 0, "nsys")
    f = next(f for f in analyze_host(host).findings if f.rule == "excessive_memcpy")
    assert "100.0% of the H2D copy time whose launch the capture holds is launched inside FSDP's" in f.summary
    # a forward-only window (FastVideo's text encoder, no op numbered for autograd): FSDP's fix, written for a forward
    assert f.actions[0].text == pytorch.FIXES["excessive_memcpy:param_upload@inference"][0].text


def _kineto_copies(tmp_path, hook: str | None):
    """A PyTorch profiler trace (``synthetic.torchtrace``) of 8 bf16 training steps, each first uploading 256 MB in
    20 ms (longer than the step's compute), inside ``hook`` (a ``record_function`` range, as FSDP writes its hooks)
    or not (a batch's ``x.to("cuda")``)."""
    from synthetic.torchtrace import Rank, forward_backward, optimizer, trace_doc

    def body(r: Rank) -> None:
        span = r.cpu(hook, 0.0, cat="user_annotation", advance=False) if hook else None
        start = r.host_us
        r.copy_h2d(256.0, 20_000.0)
        if span is not None:
            span["dur"] = round(r.host_us - start + 1.0, 3)
            r.host_us += 1.0
        forward_backward(r)
        optimizer(r)
        r.sync()

    r = Rank(rank=0, pid=4242, device=0)
    for n in range(8):
        r.step(n, body)
    p = tmp_path / f"node0_4242.{1_790_857_026_000_000_000 + (1 if hook else 0)}.pt.trace.json"
    p.write_text(json.dumps(trace_doc(r, 1)))
    rep = analyze_host(HostFile(p.stem, str(p), p.stat().st_size, 0, "kineto"))
    return next(f for f in rep.findings if f.rule == "excessive_memcpy")


def test_a_torch_profiler_trace_gets_the_same_reading(tmp_path):
    """Kineto's format reaches the same evidence: the copy's ``cudaMemcpyAsync`` inside ``FSDP::pre_forward`` is an
    offloaded parameter's upload (the wrapper's fix first), the same copy outside it a batch's (the input's fix)."""
    f = _kineto_copies(tmp_path, "FSDP::pre_forward (layers.0)")
    assert "launched inside FSDP's pre-forward / pre-backward hooks" in f.summary
    assert f.actions[0].text == _UPLOAD_FIX.text
    control = _kineto_copies(tmp_path, None)
    assert "pre-forward" not in control.summary and _UPLOAD_FIX.text not in [a.text for a in control.actions]
