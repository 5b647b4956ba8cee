"""A build with ``--default-stream per-thread`` runs its "stream 0" work on each thread's own default stream, not on
the legacy NULL stream that holds every blocking stream in series (issue #37 class 3, each wait to its cause;
h37-stream70's Left 1).

CUDA's headers, with ``--default-stream per-thread`` (``CUDA_API_PER_THREAD_DEFAULT_STREAM``), map each runtime
call that takes a stream to its ``_ptsz`` twin and each default-stream call to its ``_ptds`` one
(``__CUDART_API_PTSZ`` / ``__CUDART_API_PTDS``; CUPTI's callback ids ``cudaLaunchKernel_ptsz_v7000``,
``cudaMemcpyAsync_ptsz_v7000``, ``cudaMemcpy_ptds_v7000``); in them stream 0 is ``cudaStreamPerThread`` (handle 0x2),
not ``cudaStreamLegacy`` (0x1).  CUPTI's stream flags have no per-thread value (unknown, default, non-blocking, NULL),
so a per-thread default stream Nsight lists as the "Null stream" is told apart by the calls that fed it.  And the
per-thread default stream "is not a non-blocking stream and will synchronize with the legacy default stream if both
are used in a program" (CUDA's "Stream synchronization behavior"): it is tied to the legacy stream, to no other.

Truth by construction: h37-stream70's export (kernels on stream 7, pinned asynchronous uploads on stream 13 listed
blocking) with the program's calls renamed to their per-thread twins, stream 7 still listed "Null stream".
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synthetic import nsysexport
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

PID = 31415
_DDL = ("CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT "
        "NULL, processId INTEGER NOT NULL, contextId INTEGER NOT NULL, priority INTEGER NOT NULL, flag INTEGER NOT NULL)")
_TWINS = {"cudaMemcpyAsync_v3020": "cudaMemcpyAsync_ptsz_v7000", "cudaLaunchKernel_v7000": "cudaLaunchKernel_ptsz_v7000"}


def _export(path: Path, per_thread: bool, rows: dict[int, int] | None = None, mirror: bool = False,
            only_kernels: bool = False) -> Path:
    """The loop's export, ``rows`` (streamId -> CUPTI flag as Nsight numbers it: 1 default, 3 NULL) listed;
    ``per_thread``: its calls the per-thread twins (``only_kernels``: the launches only); ``mirror``: the uploads on
    7, the kernels on 13."""
    nsysexport.write_pageable_copy_loop(str(path), iterations=40, pinned=True, async_calls=True, kernel_us=60.0,
                                        upload_stream=13)
    con = sqlite3.connect(path)
    if per_thread:
        for old, new in _TWINS.items():
            if not only_kernels or "Launch" in old:
                con.execute("UPDATE StringIds SET value = ? WHERE value = ?", (new, old))
    if mirror:
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET streamId = CASE streamId WHEN 13 THEN 7 ELSE 13 END")
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = 13")
    if rows is not None:
        con.execute(_DDL)
        con.executemany("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?, 0, 0, ?, 1, 0, ?)",
                        [(s, PID, f) for s, f in rows.items()])
    con.commit()
    con.close()
    return path


def _h2d(p: Path):
    m = host_metrics(read_trace(str(p)))
    m = m[0] if isinstance(m, tuple) else m
    return next(c for c in m.memcpy if c.direction == "h2d")


def _kinds(p: Path) -> dict[str, str]:
    (d,) = read_trace(str(p)).devices
    return {d.stream_names[i]: k for i, k in d.stream_kinds.items()}


def test_the_per_thread_calls_are_known() -> None:
    """Fails on base (no ``devices.is_per_thread_call``)."""
    for name in ("cudaLaunchKernel_ptsz_v7000", "cudaMemcpyAsync_ptsz_v7000", "cudaMemcpy_ptds_v7000",
                 "cuLaunchKernel_ptsz", "cuMemcpyHtoD_v2_ptds"):
        assert devices.is_per_thread_call(name), name
    for name in ("cudaLaunchKernel_v7000", "cudaMemcpy_v3020", "cudaStreamSynchronize_v3020", "cuMemcpyHtoD_v2"):
        assert not devices.is_per_thread_call(name), name


def test_a_null_listed_stream_fed_by_per_thread_calls_is_the_per_thread_default_stream(tmp_path: Path) -> None:
    """Fails on base: stream 7 read as the legacy default stream."""
    kinds = _kinds(_export(tmp_path / "r.sqlite", True, {7: 3, 13: 1}))
    assert kinds == {"stream 7": "per_thread_default", "stream 13": "blocking"}, kinds


def test_uploads_on_a_blocking_stream_beside_the_per_thread_streams_kernels_are_on_their_own(tmp_path: Path) -> None:
    """Fails on base: legacy share 1.0 -- the per-thread build's uploads told to leave the legacy default stream's
    order, which that build does not have."""
    c = _h2d(_export(tmp_path / "r.sqlite", True, {7: 3, 13: 1}))
    assert c.own_stream_share == pytest.approx(1.0) and c.legacy_stream_share is None, (
        c.own_stream_share, c.legacy_stream_share)
    rep = analyze_host(HostFile("r.sqlite", str(tmp_path / "r.sqlite"), (tmp_path / "r.sqlite").stat().st_size, 0,
                                "nsys"))
    (f,) = [f for f in rep.findings if f.rule == "excessive_memcpy"]
    assert "legacy default stream" not in f.summary, f.summary


def test_the_mirror_uploads_on_the_per_thread_stream_are_on_their_own(tmp_path: Path) -> None:
    """Fails on base: the uploads on the per-thread default stream (listed NULL) beside kernels on a blocking stream
    read as tied."""
    c = _h2d(_export(tmp_path / "r.sqlite", True, {7: 3, 13: 1}, mirror=True))
    assert c.own_stream_share == pytest.approx(1.0) and c.legacy_stream_share is None, (
        c.own_stream_share, c.legacy_stream_share)


def test_control_the_legacy_build_stays_tied(tmp_path: Path) -> None:
    """Control (passes on base): the same program built without the flag -- the legacy NULL stream ties them."""
    assert _kinds(_export(tmp_path / "r.sqlite", False, {7: 3, 13: 1})) == {"stream 7": "legacy_default",
                                                                            "stream 13": "blocking"}
    c = _h2d(tmp_path / "r.sqlite")
    assert (c.own_stream_share or 0.0) == 0.0 and c.legacy_stream_share == pytest.approx(1.0)


def test_a_null_stream_fed_by_both_kinds_of_call_states_no_kind(tmp_path: Path) -> None:
    """Fails on base (read legacy): stream 7's kernels came from per-thread launches, its read-backs from legacy
    copies -- which stream 7 is, the calls do not agree: no kind, nothing claimed."""
    p = _export(tmp_path / "r.sqlite", True, {7: 3, 13: 1}, only_kernels=True)
    assert _kinds(p) == {"stream 13": "blocking"}
    assert _h2d(p).legacy_stream_share is None
