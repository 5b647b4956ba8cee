"""The legacy default stream orders work within its own CUDA context only: a second process on the GPU, a second
context of one process, or a rank of the same pid in another export, runs beside it unordered (issue #37 class 3,
each wait to its cause; h37-stream70's Left 3).

CUPTI lists each stream with the context it was created in (``CUpti_ActivityStream.contextId``: "The ID of the
context where the stream was created"); Nsight's export keeps it in ``TARGET_INFO_CUDA_STREAM.contextId`` beside
``processId``.  The real ``wild/matmul_rtx3060_laptop_pinned_sync`` ran one process with three contexts, their NULL
streams 7, 14 and 21.

Truth by construction: h37-stream70's export (``synthetic.nsysexport.write_pageable_copy_loop(pinned=True,
async_calls=True, kernel_us=60, upload_stream=13)``: kernels on stream 7, pinned asynchronous uploads on stream 13)
with 7 listed as the NULL stream and 13 as a blocking ("Default") stream -- tied when both are one process's one
context (h37-stream70's test) --, and then 13 moved to a second context of the process, or with its uploads and
their calls to a second process: no NULL stream of theirs runs a kernel, so the uploads are on a stream of their own.
And two exports of two ranks in containers, both pid 31415 (the same pid and ``streamId`` in two exports are two
streams): rank 0 lists 13 blocking, rank 1 non-blocking; base merged the two keys and, finding two kinds, dropped
both, so rank 0's tie was lost.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synthetic import nsysexport
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

PID, OTHER = 31415, 27182
_DDL = ("CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT "
        "NULL, processId INTEGER NOT NULL, contextId INTEGER NOT NULL, priority INTEGER NOT NULL, flag INTEGER NOT NULL)")
NULL, DEFAULT, NON_BLOCKING = 3, 1, 2  # CUPTI's flags as Nsight numbers them (``ENUM_CUPTI_STREAM_TYPE``)


def _export(path: Path, rows: list[tuple[int, int, int, int]], uploads_pid: int = PID) -> Path:
    """The loop's export at ``path`` with ``TARGET_INFO_CUDA_STREAM`` ``rows`` (streamId, processId, contextId,
    flag); ``uploads_pid``: the process whose thread issues the uploads (stream 13) and owns them."""
    nsysexport.write_pageable_copy_loop(str(path), iterations=40, pinned=True, async_calls=True, kernel_us=60.0,
                                        upload_stream=13)
    con = sqlite3.connect(path)
    if uploads_pid != PID:
        gpid, gtid = nsysexport._gid(uploads_pid), nsysexport._gid(uploads_pid, uploads_pid)
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = ? WHERE correlationId IN "
                    "(SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE streamId = 13)", (gtid,))
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET globalPid = ? WHERE streamId = 13", (gpid,))
    con.execute(_DDL)
    con.executemany("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?, 0, 0, ?, ?, 0, ?)", rows)
    con.commit()
    con.close()
    return path


def _h2d(trace):  # the uploads' MemcpyStat
    m = host_metrics(trace)
    m = m[0] if isinstance(m, tuple) else m
    return next(c for c in m.memcpy if c.direction == "h2d")


def _shares(c) -> tuple[float, float]:
    return (c.own_stream_share or 0.0, getattr(c, "legacy_stream_share", None) or 0.0)


def test_one_context_ties_as_before(tmp_path: Path) -> None:
    """Control (passes on base): one process, one context -- the NULL stream's kernels hold the blocking stream's
    uploads in series."""
    c = _h2d(read_trace(str(_export(tmp_path / "r.sqlite", [(7, PID, 1, NULL), (13, PID, 1, DEFAULT)]))))
    assert _shares(c) == (0.0, pytest.approx(1.0)), _shares(c)


def test_a_blocking_stream_of_a_second_context_is_not_held_by_the_first_null_stream(tmp_path: Path) -> None:
    """Fails on base: legacy share 1.0 -- the NULL stream of context 1 read as ordering context 2's stream."""
    c = _h2d(read_trace(str(_export(tmp_path / "r.sqlite", [(7, PID, 1, NULL), (13, PID, 2, DEFAULT)]))))
    assert _shares(c) == (pytest.approx(1.0), 0.0), _shares(c)


def test_a_second_process_stream_is_not_held_by_the_first_null_stream(tmp_path: Path) -> None:
    """Fails on base: legacy share 1.0 -- process A's NULL stream read as ordering process B's uploads on B's
    blocking stream (each process has a context of its own on the GPU)."""
    p = _export(tmp_path / "r.sqlite", [(7, PID, 1, NULL), (13, OTHER, 1, DEFAULT)], uploads_pid=OTHER)
    (d,) = read_trace(str(p)).devices
    assert {d.stream_names[i] for i in d.stream_kinds} == {"stream 7 (pid 31415)", "stream 13 (pid 27182)"}
    c = _h2d(read_trace(str(p)))
    assert _shares(c) == (pytest.approx(1.0), 0.0), _shares(c)


def test_two_exports_of_one_pid_keep_their_own_streams(tmp_path: Path) -> None:
    """Fails on base: rank 0's stream 13 (blocking) and rank 1's (non-blocking), both pid 31415 in their containers,
    were merged to one key and dropped as of two kinds, so rank 0's tied uploads read as on a stream of their own."""
    r0 = _export(tmp_path / "rank0.sqlite", [(7, PID, 1, NULL), (13, PID, 1, DEFAULT)])
    r1 = _export(tmp_path / "rank1.sqlite", [(7, PID, 1, NULL), (13, PID, 1, NON_BLOCKING)])
    t = read_trace(str(r0), ranks=[str(r0), str(r1)])
    assert len(t.devices) == 2
    kinds = [{d.stream_names[i]: k for i, k in d.stream_kinds.items()} for d in t.devices]
    assert kinds[0]["stream 13"] == "blocking" and kinds[1]["stream 13"] == "non_blocking", kinds
