"""Where an analysing process hands its free heap back (common/memory.py): at the phase boundaries and at the end of
each report -- not after every plane of a read, whose leftovers the next plane's decoding reuses.

Why pinned: the minor faults were ~0.4 s of the 100 MB dense report's ~2 s of CPU on a busy machine and ~5 s of the
1 GB one's, and the trims after each plane were ~30 k and ~0.1 M of them for no lower peak (docs/benchmarks.md,
h38-faults); a long-lived worker must not keep a big file's heap after its report.  Each test fails on the policy
before it."""

from __future__ import annotations

import os

from tb_gpu_advisor.common import memory


def _trims(monkeypatch, log: list[str]) -> None:
    monkeypatch.setattr(memory, "_MALLOC_TRIM", lambda pad: log.append("trim") or 1)


def test_reading_a_capture_trims_once_per_pass_not_after_each_plane(tmp_path, monkeypatch):
    """Four GPU planes of ~1.5 MB each: what one plane's decoding frees, the next one's reuses."""
    import numpy as np

    from synthetic.builder import SpaceBuilder
    from tb_gpu_advisor.formats.xplane import adapter

    n = 120_000
    space = SpaceBuilder()
    for g in range(4):
        line = space.plane(f"/device:GPU:{g}").line("stream 7", 7, timestamp_ns=1_000_000)
        line.add_many(["k0", "k1", "k2"] * (n // 3), np.arange(n, dtype=np.int64) * 1000 + g,
                      500 + (np.arange(n) * (g + 1)) % 97)
    assert min(len(p.encode()) for p in space.planes) > 1 << 20  # past the size after which main trimmed each plane
    path = tmp_path / "h.xplane.pb"
    space.write(path)
    log: list[str] = []
    _trims(monkeypatch, log)
    trace = adapter.read_trace(str(path))
    assert sum(len(d.start) for d in trace.devices) == 4 * n
    assert 1 <= len(log) <= 2  # after the host table, after the GPU tables


def test_a_report_ends_with_a_trim_after_its_metrics_are_gone(monkeypatch):
    """A long-lived process (a pool worker, the MCP server) hands a file's heap back once its report is built."""
    from tb_gpu_advisor.discover.logdir import HostFile
    from tb_gpu_advisor.runtime import pipeline
    from tests.support.paths import DEMO_LOGS

    log: list[str] = []
    _trims(monkeypatch, log)
    real = pipeline.build_host_report

    def build(*a, **k):
        out = real(*a, **k)
        log.append("report")
        return out

    monkeypatch.setattr(pipeline, "build_host_report", build)
    path = next(DEMO_LOGS.rglob("*.xplane.pb"))
    st = path.stat()
    report = pipeline.analyze_host(HostFile(path.name.split(".")[0], str(path), st.st_size, st.st_mtime_ns))
    assert report.error is None
    assert log[-2:] == ["report", "trim"]


def child_trims_of_a_report(path: str, progress=None) -> list[str]:
    """In a worker: the trims and the report's build in ``isolation.analyze_host`` (what the tab's worker runs), in
    order."""
    from tb_gpu_advisor.discover.logdir import HostFile
    from tb_gpu_advisor.runtime import isolation, pipeline

    log: list[str] = []
    memory._MALLOC_TRIM = lambda pad: log.append("trim") or 1  # this child's own module: nothing to restore
    real = pipeline.build_host_report

    def build(*a, **k):
        out = real(*a, **k)
        log.append("report")
        return out

    pipeline.build_host_report = build
    st = os.stat(path)
    report = isolation.analyze_host(HostFile("worker0", path, st.st_size, st.st_mtime_ns))
    return log if report.error is None else [report.error]


def test_the_server_s_worker_hands_the_heap_back_after_its_report():
    from tb_gpu_advisor.runtime import isolation
    from tests.support.paths import DEMO_LOGS

    path = next(DEMO_LOGS.rglob("*.xplane.pb"))
    log = isolation.call(child_trims_of_a_report, str(path), limits=isolation.Limits(None, 120.0))
    assert log[-2:] == ["report", "trim"]
