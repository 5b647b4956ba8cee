"""A hand-built Kineto trace of one A100, written where a test wants it: the by-construction tests that spell out a
few events (a launch, a kernel, an allocator call) share its header and its read instead of each writing them."""

from __future__ import annotations

import json
from pathlib import Path

#: the ``deviceProperties`` Kineto records for an A100 80 GB (SXM)
A100 = {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0, "totalGlobalMem": 85e9,
        "numSms": 108}


def mm_launch(at: float, corr: int, kernel_us: float, kernel_at: float | None = None) -> list[dict]:
    """One ``aten::mm`` the host launches at ``at`` (30 us, its ``cudaLaunchKernel`` 5 us in) and its SGEMM of
    ``kernel_us`` on stream 7 of GPU 0, starting at ``kernel_at`` (20 us after the op by default), linked by ``corr``."""
    host, gpu = {"ph": "X", "pid": 1, "tid": 1}, {"ph": "X", "pid": 0, "tid": 7}
    return [{**host, "cat": "cpu_op", "name": "aten::mm", "ts": at, "dur": 30},
            {**host, "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": at + 5, "dur": 10,
             "args": {"correlation": corr}},
            {**gpu, "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "ts": at + 20 if kernel_at is None else kernel_at,
             "dur": kernel_us, "args": {"correlation": corr, "device": 0, "stream": 7}}]


def write(path: Path, events: list[dict], device: dict | None = None) -> Path:
    """``events`` as a Kineto trace of one A100 (or ``device``'s properties) at ``path`` (its folder made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schemaVersion": 1, "deviceProperties": [device or A100], "traceEvents": events}))
    return path


def kept_events(folder: Path) -> list[dict]:
    """The ``traceEvents`` of the one gzipped trace kept in ``folder``: a kept capture read by hand, for the tests
    that check the report against the file's own evidence."""
    import gzip

    (path,) = folder.glob("*.json.gz")
    return json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]


def session_report(logdir: Path, events: list[dict], device: dict | None = None) -> dict:
    """The session report (as JSON) of ``events`` written as ``logdir/run/w.1.pt.trace.json`` (on ``device``'s
    properties where given: an MI300X's)."""
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.runtime.pipeline import analyze_session

    write(logdir / "run" / "w.1.pt.trace.json", events, device)
    s = next(iter(discover(str(logdir))))
    return analyze_session(s.run, s.session, s.hosts).to_dict()


def host_metrics_of(tmp_path: Path, events: list[dict]):  # -> HostMetrics, imported late
    """The host metrics of ``events`` written as ``tmp_path/run/w.1.pt.trace.json``: one read for the tests that
    look at the ledger or the rules of a few hand-built events rather than at the whole report."""
    from types import SimpleNamespace

    from tb_gpu_advisor.formats import read
    from tb_gpu_advisor.runtime.pipeline import host_metrics

    path = write(tmp_path / "run" / "w.1.pt.trace.json", events)
    return host_metrics(read(SimpleNamespace(host="w", path=str(path), format="kineto")))
