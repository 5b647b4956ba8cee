"""A blocking copy inside an op that goes on to launch owns the idle its wait causes, as a sync does (h37-probe46b,
issue #37 class 3).

``x[idx]`` with a CPU ``idx`` (``synthetic.torchtrace.write_cpu_index``): ``aten::index`` uploads the index in a
pageable ``aten::copy_`` (``cudaStreamSynchronize``: the host waits for the layer's GEMM), launches its gather, and
the host then runs 100 us of ``aten::add`` before the next layer's GEMM.  The wait drained the queue, so the GPU runs
the gather and idles through the host's work: without the wait the host (~130 us a layer) stays ahead of the GPU
(223 us a layer) and the GPU never idles.  The copy's idle was measured to its return only (to the gather: 17 us a
layer), and the 95 us after the gather read as launch_bound critical 380 us.

Truth by construction (the writer's times; per layer): the GEMM ends, the 3 us upload runs, the GPU idles 16.9 us to
the gather (3.0 us of it while the host is still in the sync call: the ledger's ``other``), then 95 us after the
gather (launch wait; at a step's end 10 us of it is host code the profiler did not record).  Per step 4 x (13.9 + 95)
= 435.6 us of launch wait, all the copies' -- the first kept step's 7.9 us before its first GEMM too, drained by the
wait in the unkept step before (h37-probe47c; 434.81 us a kept step before it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto import adapter as kineto_adapter
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

LAUNCH_WAIT_US = 4 * (16.9 - 3.0 + 95.0)  # per step, by the writer's times
COPY_IDLE_MS_BATCH = 0.0169  # the batch upload's 16.9 us from its transfer to the next launch (main the same)


def test_the_index_uploads_wait_owns_the_idle_it_drained(tmp_path: Path) -> None:
    truth = tt.write_cpu_index(str(tmp_path))
    m = host_metrics(kineto_adapter.read_trace(truth["paths"][0]))
    assert m.breakdown.launch_wait * 1000 == pytest.approx(LAUNCH_WAIT_US, abs=0.01)
    s = m.syncs
    assert s.copy_calls_per_step == pytest.approx(truth["copies_per_step"])
    # main: {'launch_wait': 55.6, 'other': 12.0} (the 13.9 us before each gather alone)
    assert s.copy_idle_ledger_ms["launch_wait"] * 1000 == pytest.approx(LAUNCH_WAIT_US, abs=0.01)
    assert s.copy_idle_ledger_ms["other"] * 1000 == pytest.approx(4 * 3.0, abs=0.01)  # in the sync call
    assert s.calls_per_step == 0 and not s.gpu_idle_ledger_ms  # no sync of the program's: every wait is a copy's


def test_launch_bound_claims_only_what_launches_cost(tmp_path: Path) -> None:
    """Each microsecond once: the copies' launch wait and launch_bound's together are the ledger's; launch_bound's
    share is no finding (main: critical, 380 us)."""
    truth = tt.write_cpu_index(str(tmp_path))
    p = Path(truth["paths"][0])
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "kineto"))
    assert not [f for f in rep.findings if f.rule == "launch_bound"]
    (f,) = [f for f in rep.findings if f.rule == "excessive_memcpy"]
    words = " ".join(f.summary.split())
    assert f"({truth['op']} ×{truth['copies_per_step']})" in words and "idles 448 us per step" in words, words


def test_a_batch_upload_before_other_ops_keeps_its_reading(tmp_path: Path) -> None:
    """Control: ``x.to('cuda')`` of a pageable batch (``aten::to`` launches nothing after its copy) is measured as
    before: to the first device event after the copy returned."""
    truth = tt.write_pageable_to_device(str(tmp_path))
    m = host_metrics(kineto_adapter.read_trace(truth["paths"][0]))
    assert m.syncs.copy_calls_per_step > 0
    assert m.syncs.copy_idle_ms_per_step == pytest.approx(COPY_IDLE_MS_BATCH, abs=1e-4)
