"""A capture that recorded no GPU work makes no claim of how busy its GPU was (issue #37 class 1, h37-steps60b *Left*).

Every guide check of the GPU's time is skipped where no GPU work was recorded (``rules.gpu_steps_to_judge``); the
memory checks still run, since the allocator's events are the capture's own record.  ``batch_size_headroom`` is one of
them, and it said "A larger batch raises device utilization" of a GPU whose work the capture never saw: a Kineto trace
with CUDA unrecorded is no evidence the GPU had time to spare.  Every rule now asks one context,
``rules.base.gpu_work_recorded`` (``Ctx.gpu_recorded``), before it speaks of the GPU's utilization or idle time; the
property ``tests/support/properties.unrecorded_gpu_claims`` (part of ``report_violations``) holds it on every report.

Truth: the real ``wild/cuda_unrecorded_cifar_cnn`` (0x-NaN/ml-profiler, MIT; its 1,631 ``[memory]`` events on CUDA
device 0, 75.6 MiB allocated peak, no CUDA call, kernel or copy -- read by hand) with the one thing it lacks for the
headroom check written into its header: a ``deviceProperties`` entry of a 12 GiB GPU, as torch.profiler writes one
where CUDA is available.  The memory fact stands (84.0 MiB reserved of 12.0 GiB, "could grow about 260x"); the
utilization is not in the capture.  The no-GPU-work wild fixtures (CUDA unrecorded, lost kernels, start-up-only Nsight
windows, CPU-only runs) hold the property too (a control: none said it on base)."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.properties import no_gpu_work_recorded, report_violations, unrecorded_gpu_claims
from tests.support.report_store import session_report

CIFAR = FIXTURES / "wild" / "cuda_unrecorded_cifar_cnn"
#: the wild fixtures whose capture holds no GPU work (base_ctl: "no GPU kernels in this capture"; not
#: ``input_only_rtx4090_unetr`` and ``ptx_refused_rtx4090d``, whose GPUs ran copies: GPU work recorded)
NO_GPU_WORK = ("cuda_unrecorded_cifar_cnn", "cpu_model_a100", "cpu_only_gloo", "cupti_counters_a100",
               "gemm_h200_cuda_unrecorded", "gpu_events_stripped",
               "legacy_list_cudnn_convs", "lightning_cpu_fit", "llm_startup_window", "loop_ended_a100_gnn",
               "lost_gpu_records_rtx3090_pt110", "lost_kernels_a100", "lost_kernels_synced_a40",
               "mpirun_ranks_exception_a100", "scattermoe_h200_item_sync",
               "tracing_off_nvtx_a10_train", "unclosed_rtx3090_solver", "vllm_gb10_frontend")
_PROPS = {"id": 0, "name": "NVIDIA GeForce RTX 3060", "totalGlobalMem": 12 * 2 ** 30, "computeMajor": 8,
          "computeMinor": 6, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 1536, "regsPerBlock": 65536,
          "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
          "sharedMemPerMultiprocessor": 102400, "numSms": 28, "sharedMemPerBlockOptin": 101376}


def _report(folder: Path):
    (session,) = discover(str(folder))
    return session_report(session)


@pytest.fixture(scope="module")
def with_gpu_listed(tmp_path_factory):
    """The real CIFAR trace, its header listing the 12 GiB GPU its allocator's events are on."""
    (src,) = CIFAR.glob("*.pt.trace.json.gz")
    doc = json.loads(gzip.open(src).read())
    doc["deviceProperties"] = [_PROPS]
    out = tmp_path_factory.mktemp("listed") / "cifar"
    out.mkdir()
    with gzip.open(out / src.name, "wt") as fp:
        json.dump(doc, fp)
    return _report(out)


def _headroom(report):
    (host,) = report.hosts
    return host, [f for f in host.findings if f.rule == "batch_size_headroom"]


def test_the_memory_room_is_said_and_the_gpus_utilization_is_not_claimed(with_gpu_listed):
    """Fails on base: "... could grow about 260x before the GPU is 90% full. A larger batch raises device
    utilization."  The room stays (the allocator's record); the utilization is said to be out of the capture."""
    host, (f,) = _headroom(with_gpu_listed)
    assert no_gpu_work_recorded(host)
    assert "of its 12.0 GiB" in f.summary and "could grow about" in f.summary
    assert "raises device utilization" not in f.summary
    assert "this capture cannot show: it holds no record of the GPU's work" in f.summary
    assert unrecorded_gpu_claims(host) == []
    assert [f.rule for f in host.findings][0] == "capture_quality"  # the unrecorded GPU side stays the top


def test_the_property_catches_the_claim(with_gpu_listed):
    """The property is not vacuous: base's sentence put back is caught, and said of a capture with GPU work it is not."""
    host, (f,) = _headroom(with_gpu_listed)
    bad = copy.deepcopy(host)
    (g,) = [x for x in bad.findings if x.rule == "batch_size_headroom"]
    g.summary = g.summary.split(". Whether")[0] + ". A larger batch raises device utilization."
    assert unrecorded_gpu_claims(bad)
    bad.gpus[0].kernel_count = 12  # a GPU that ran kernels: its utilization is the capture's to speak of
    assert unrecorded_gpu_claims(bad) == []


@pytest.mark.parametrize("run", NO_GPU_WORK)
def test_every_capture_with_no_gpu_work_holds_every_property(run):
    """A control on the kept captures with no GPU work (none claimed the GPU's use on base either): each holds every
    report property, this one included."""
    report = _report(FIXTURES / "wild" / run)
    assert all(no_gpu_work_recorded(h) for h in report.hosts if h.error is None)
    assert report_violations(report) == []
