"""A copy on a stream no kernel runs on, that the legacy default stream still holds in series with the kernels, is not
"a stream of its own": its wait is that stream's (issue #37 class 3, each wait to its cause; h37-copy70's Left 2).

CUDA's legacy default stream (the NULL stream) waits for the work queued before it on every blocking stream of its
context and makes their later work wait for it; a stream created ``cudaStreamNonBlocking`` does neither.  Which
stream is which only the format can say: Nsight's export lists each stream's kind in ``TARGET_INFO_CUDA_STREAM.flag``
(``ENUM_CUPTI_STREAM_TYPE``: 1 "Default stream", 2 "Non-blocking stream", 3 "Null stream" -- the real exports'
NULL stream is ``streamId`` 7 in a one-process program: ``wild/cuda_reduce_baseline``, ``wild/mmagic_a100_pyprof_forward``
(PyTorch's side stream 16 there "Non-blocking"), ``wild/streams_pinned_copies`` (four ``cudaStreamCreate`` streams,
"Default stream")), while Kineto's ``stream`` is CUPTI's number alone: the H100 FSDP export's two processes ran
PyTorch's default stream as 7 and 15, so no number marks it.

Truth by construction: ``synthetic.nsysexport.write_pageable_copy_loop(pinned=True, async_calls=True, kernel_us=60)``
(h37-copy63's native loop: kernels on stream 7, its pinned asynchronous uploads on stream 13, no kernel on it) with
``TARGET_INFO_CUDA_STREAM`` rows added as Nsight writes them: 7 the NULL stream, 13 created blocking -> tied (the
fix: non-blocking streams or ``--default-stream per-thread``, not "issue them ahead" on the stream they have); 13
non-blocking -> a stream of its own as before; no table -> as before (the controls); and the mirror: the uploads on
the NULL stream 7, the kernels on a blocking stream 13.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synthetic import nsysexport
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

PID = 31415  # the writer's process
# ``model.trace.STREAM_*`` (spelled here so the controls import on base, which has no such names)
LEGACY, BLOCKING, NON_BLOCKING = "legacy_default", "blocking", "non_blocking"
_DDL = ("CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT "
        "NULL, processId INTEGER NOT NULL, contextId INTEGER NOT NULL, priority INTEGER NOT NULL, flag INTEGER NOT NULL)")
_ENUM = [(0, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN", "Unknown stream type"),
         (1, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT", "Default stream"),
         (2, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING", "Non-blocking stream"),
         (3, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL", "Null stream")]


def _export(tmp_path: Path, flags: dict[int, int] | None, mirror: bool = False, enum: bool = True) -> Path:
    """The loop's export; ``flags``: streamId -> CUPTI flag rows of ``TARGET_INFO_CUDA_STREAM`` (None: no table, as
    an export without it); ``mirror``: the kernels on stream 13 and the uploads on 7."""
    p = tmp_path / "report1.sqlite"
    nsysexport.write_pageable_copy_loop(str(p), iterations=40, pinned=True, async_calls=True, kernel_us=60.0,
                                        upload_stream=13)
    con = sqlite3.connect(p)
    if mirror:  # uploads on 7, kernels (and the read-backs) on 13
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET streamId = CASE streamId WHEN 13 THEN 7 ELSE 13 END")
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = 13")
    if flags is not None:
        con.execute(_DDL)
        # Nsight's own rows beside the program's: its internal streams 6 and 12 (one "Default", one "Non-blocking")
        rows = {6: 1, 12: 2, **flags}
        con.executemany("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?, 0, 0, ?, 1, 0, ?)",
                        [(s, PID, f) for s, f in rows.items()])
        if enum:
            con.execute("CREATE TABLE IF NOT EXISTS ENUM_CUPTI_STREAM_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT)")
            con.executemany("INSERT OR REPLACE INTO ENUM_CUPTI_STREAM_TYPE VALUES (?, ?, ?)", _ENUM)
    con.commit()
    con.close()
    return p


def _h2d(p: Path):  # the uploads' MemcpyStat
    return next(c for c in _metrics(p).memcpy if c.direction == "h2d")


def _finding(p: Path):  # the excessive_memcpy finding
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "nsys"))
    (f,) = [f for f in rep.findings if f.rule == "excessive_memcpy"]
    return f


@pytest.mark.parametrize("enum", [True, False])
def test_the_reader_keeps_each_streams_stated_kind(tmp_path: Path, enum: bool) -> None:
    """Fails on base (no ``stream_kinds``).  Through the export's enum labels and, without them, CUPTI's numbers."""
    (d,) = read_trace(str(_export(tmp_path, {7: 3, 13: 1}, enum=enum))).devices
    kinds = {d.stream_names[i]: k for i, k in d.stream_kinds.items()}
    assert kinds == {"stream 7": LEGACY, "stream 13": BLOCKING}, (d.stream_names, kinds)
    (tmp_path / "nb").mkdir()
    (d,) = read_trace(str(_export(tmp_path / "nb", {7: 3, 13: 2}, enum=enum))).devices
    kinds = {d.stream_names[i]: k for i, k in d.stream_kinds.items()}
    assert kinds == {"stream 7": LEGACY, "stream 13": NON_BLOCKING}, (d.stream_names, kinds)


def test_uploads_on_a_blocking_stream_beside_the_null_streams_kernels_are_not_on_a_stream_of_their_own(
        tmp_path: Path) -> None:
    """Fails on base: ``own_stream_share`` 1.0 (and no ``legacy_stream_share``)."""
    c = _h2d(_export(tmp_path, {7: 3, 13: 1}))
    assert (c.own_stream_share or 0.0) == 0.0, c.own_stream_share
    assert c.legacy_stream_share == pytest.approx(1.0), c.legacy_stream_share


def test_uploads_on_the_null_stream_beside_a_blocking_streams_kernels_are_tied_too(tmp_path: Path) -> None:
    """Fails on base: the mirror, read as on a stream of their own."""
    c = _h2d(_export(tmp_path, {7: 3, 13: 1}, mirror=True))
    assert (c.own_stream_share or 0.0) == 0.0 and c.legacy_stream_share == pytest.approx(1.0), (
        c.own_stream_share, c.legacy_stream_share)


def test_the_legacy_streams_uploads_are_told_its_fix(tmp_path: Path) -> None:
    """Fails on base: told to issue each upload ahead on "a stream of their own" -- the stream they have, which the
    legacy default stream holds in series with the kernels whenever they are issued."""
    f = _finding(_export(tmp_path, {7: 3, 13: 1}))
    said = " ".join(a.text for a in f.actions)
    assert "cudaStreamNonBlocking" in f.actions[0].text and "per-thread" in f.actions[0].text, said
    assert "already come from pinned memory, asynchronously, on a stream of their own" not in said, said
    assert "legacy default stream" in f.summary, f.summary


@pytest.mark.parametrize("flags", [{7: 3, 13: 2}, None], ids=["non_blocking", "no_table"])
def test_control_a_non_blocking_or_unstated_stream_stays_their_own(tmp_path: Path, flags: dict | None) -> None:
    """Controls (pass on base): a non-blocking stream is not tied to the NULL stream; an export without the table
    states no kind, so nothing is claimed."""
    p = _export(tmp_path, flags)
    c = _h2d(p)
    legacy = getattr(c, "legacy_stream_share", None)  # base has no such field
    assert c.own_stream_share == pytest.approx(1.0) and legacy is None, (c.own_stream_share, legacy)
    f = _finding(p)
    assert "legacy default stream" not in f.summary
    assert "ahead of the kernels that need it" in f.actions[0].text, f.actions[0].text


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


@pytest.mark.parametrize(("run", "truth"), [
    # read by hand (sqlite3: ``TARGET_INFO_CUDA_STREAM`` beside the kernels' and copies' ``streamId``)
    ("mmagic_a100_pyprof_forward/net.sqlite", {"stream 7": LEGACY, "stream 16": NON_BLOCKING}),
    ("streams_pinned_copies/report1.sqlite", {f"stream {s}": BLOCKING for s in (13, 14, 15, 16)}),
    ("cuda_reduce_baseline/report1.sqlite", {"stream 7": LEGACY}),
    ("counted_steps_rtx3090_solver/report8.sqlite", {"stream 7": LEGACY}),  # its stream 0 (page migrations) unlisted
    # one process, three contexts, each with its NULL stream (7, 14, 21): its work runs on context 2's
    ("matmul_rtx3060_laptop_pinned_sync/results.sqlite", {"stream 14": LEGACY}),
])
def test_real_exports_streams_read_as_nsight_lists_them(run: str, truth: dict) -> None:
    """Fails on base (no ``stream_kinds``).  PyTorch's side stream in the mmagic export is non-blocking (its stream
    pool's ``cudaStreamNonBlocking``), the streams sample's four ``cudaStreamCreate`` streams blocking."""
    (d,) = read_trace(str(FIXTURES / run)).devices
    assert {d.stream_names[i]: k for i, k in d.stream_kinds.items()} == truth, (d.stream_names, d.stream_kinds)
    c = next((c for c in _metrics(FIXTURES / run).memcpy if c.direction == "h2d"), None)
    assert c is None or c.legacy_stream_share is None, c  # no copy of theirs is tied by the NULL stream


def _metrics(p: Path):  # the HostMetrics of the export at ``p``
    m = host_metrics(read_trace(str(p)))
    return m[0] if isinstance(m, tuple) else m
