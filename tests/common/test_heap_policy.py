"""The heap policy of an analysing process (common/memory.py): while an XPlane file is read, big arrays come from the
heap, so a freed one's pages are reused by the next instead of faulted in fresh (after the read, blocks over 32 MB are
mapped on their own again), and the free heap is handed back at the phase boundaries and at the end of each report --
not after every plane, whose leftovers the next one reuses.

Why pinned: the minor faults were ~0.4 s of the 100 MB dense report's ~1.6 s of CPU and ~5 s of the 1 GB one's
(docs/benchmarks.md, h38-faults); each test below fails with the policy gone."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tb_gpu_advisor.common import memory

REPO = Path(__file__).resolve().parents[2]
#: A freed array this big is past glibc's own mmap threshold (at most 32 MB): mapped and unmapped on its own.
BIG_WORDS = 8 << 20  # 64 MB of float64
BIG_PAGES = (BIG_WORDS * 8) // resource.getpagesize()

glibc_only = pytest.mark.skipif(memory._MALLOPT is None or memory._MALLOC_TRIM is None,
                                reason="the heap policy is glibc's (mallopt, malloc_trim)")

_SECOND_ARRAY = """
import resource, sys
import numpy as np
from tb_gpu_advisor.common import memory


def second(words):
    a = np.ones(words); del a  # touched, then freed
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    b = np.ones(words)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


if sys.argv[1] == "kept":
    memory.reuse_freed_heap()
with memory.reading_heap(memory.READ_HEAP_MIN_BYTES):
    print(second({words}))
print(second({words}))
"""


def _faults_of_a_second_big_array(policy: str) -> tuple[int, int]:
    """Minor faults of allocating and filling a 64 MB array right after one as big was freed, in a fresh Python:
    inside a read (:func:`memory.reading_heap`), then after it."""
    env = {"PYTHONPATH": str(REPO), "NUMPY_MADVISE_HUGEPAGE": "0", "OPENBLAS_NUM_THREADS": "1",
           "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", _SECOND_ARRAY.format(words=BIG_WORDS), policy], env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    reading, after = map(int, out.stdout.split())
    return reading, after


@glibc_only
def test_while_reading_a_freed_big_array_is_reused_by_the_next():
    kept, default = _faults_of_a_second_big_array("kept"), _faults_of_a_second_big_array("default")
    assert default[0] > BIG_PAGES // 2  # glibc alone: a fresh mapping, every page faulted in again
    assert kept[0] < BIG_PAGES // 16  # the freed array's pages, reused


@glibc_only
def test_after_the_read_big_arrays_are_mapped_on_their_own_again():
    """The analysis' peak: a freed 64 MB temporary goes back to the OS at once, not into a hole in the heap."""
    kept, default = _faults_of_a_second_big_array("kept"), _faults_of_a_second_big_array("default")
    assert kept[1] > BIG_PAGES // 2 and default[1] > BIG_PAGES // 2


def child_faults_of_a_second_big_array(progress=None) -> int:
    """In a worker: a 64 MB array's minor faults right after one as big was freed, in a read (:func:`reading_heap`),
    under the worker's own heap policy."""
    import numpy as np

    # numpy is imported there already: its huge-page advice is switched off instead of by the environment
    with memory.small_pages(), memory.reading_heap(memory.READ_HEAP_MIN_BYTES):
        a = np.ones(BIG_WORDS)
        del a
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        b = np.ones(BIG_WORDS)
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
        del b
    return faults


@glibc_only
def test_the_server_s_worker_process_keeps_the_heap_while_reading():
    from tb_gpu_advisor.runtime import isolation

    faults = isolation.call(child_faults_of_a_second_big_array, limits=isolation.Limits(None, 120.0))
    assert faults < BIG_PAGES // 16


@glibc_only
def test_the_session_pool_s_workers_keep_the_heap_while_reading():
    from tb_gpu_advisor.runtime import session

    with session.process_pool(1) as pool:
        faults = pool.submit(child_faults_of_a_second_big_array).result(timeout=120)
    assert faults < BIG_PAGES // 16


def test_the_command_line_keeps_the_heap_while_reading(monkeypatch):
    from tb_gpu_advisor.cli import main as cli

    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(memory, "_MALLOPT", lambda option, value: calls.append((option, value)) or 1)
    monkeypatch.setattr(memory, "_HEAP_KEPT", False)
    big = memory.READ_HEAP_MIN_BYTES
    with memory.reading_heap(big):  # not an analysing process yet: glibc's own thresholds
        pass
    assert calls == []
    assert cli.main([]) == 2  # no sub-command: the help
    with memory.reading_heap(big - 1):  # a file whose columns glibc's own threshold keeps in the heap
        pass
    assert calls == []
    with memory.reading_heap(big):
        with memory.reading_heap(big):  # a second read at once: the thresholds stay until the last one ends
            pass
        assert calls == [(memory._M_MMAP_THRESHOLD, memory.READ_MMAP_THRESHOLD),
                         (memory._M_TRIM_THRESHOLD, memory.READ_TRIM_THRESHOLD)]
    assert calls[2:] == [(memory._M_MMAP_THRESHOLD, memory.ANALYSIS_MMAP_THRESHOLD),
                         (memory._M_TRIM_THRESHOLD, memory.ANALYSIS_TRIM_THRESHOLD)]


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
