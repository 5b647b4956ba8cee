"""A copy the first kernel after a one-time call waits for is the job's own upload, not start-up, where the export
records the streams' event links (issue #37 classes 1 and 4, h37-onepass32).

The real class: ntua-el20062/gemm_spmm_a100's pipelined GEMMs (A100-PCIE-40GB, Nsight 2024.2; no licence, measured in
SURVEY.md, not kept) queue their pinned uploads on a copy stream, record an event after each, and make the GEMM stream
wait for it (``cudaStreamWaitEvent``); then cuBLAS's first kernel fetch loads its module for 423-726 ms with the
uploads running beneath it.  h37-memsetctx31 booked every copy under such a call as start-up.  But the first GEMM
waits for its own batch's upload whether or not a module loads meanwhile (``db``: 388.4 of the 726 ms; ``ia``: all 395
ms): that part is the copy's cost, the rest (later batches' uploads) merely ran beneath the load.  The export says
which: ``CUPTI_ACTIVITY_KIND_CUDA_EVENT`` (each record's stream) and the sync rows' ``eventId`` (each wait's).

Truth by construction (``synthetic.nsysexport.write_library_kernel_fetch(links=True)``): 2 uploads of 300 ms queued
at once, a 500 ms fetch beneath which the first runs whole and the second 200 ms; the first GEMM waits for the first
upload only.  Control: the same program with no event recorded keeps today's reading (all 500 ms start-up)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from synthetic import nsysexport
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.trace import StreamWaits
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

_SHAPE = {"uploads": 2, "upload_ms": 300.0, "fetch_ms": 500.0, "gemms": 4}


def _write(tmp_path: Path, links: bool) -> tuple[Path, dict]:
    path = tmp_path / "report1.sqlite"
    return path, nsysexport.write_library_kernel_fetch(str(path), links=links, **_SHAPE)


def _report(path: Path):
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "nsys"))
    assert rep.error is None, rep.error
    return rep


def test_the_reader_resolves_each_wait_to_its_record(tmp_path: Path) -> None:
    path, truth = _write(tmp_path, True)
    t = reader.read_trace(str(path))
    assert t.stream_waits is not None
    (w,) = t.stream_waits.values()
    (d,) = t.devices
    assert len(w) == truth["gemms"]  # one wait before each GEMM
    names = [d.stream_names[i] for i in w.stream.tolist()], [d.stream_names[i] for i in w.rec_stream.tolist()]
    assert set(names[0]) == {"stream 13"} and set(names[1]) == {"stream 14"}  # the GEMM stream waits on the copies'
    assert (t.h.start[w.rec_call] < t.h.start[w.call]).all()  # each on a record made before it
    none = tmp_path / "none"
    none.mkdir()
    assert reader.read_trace(str(_write(none, False)[0])).stream_waits is None  # no event recorded: no links


def test_the_upload_the_first_kernel_waits_for_is_a_copy_not_start_up(tmp_path: Path) -> None:
    path, truth = _write(tmp_path, True)
    rep = _report(path)
    assert (rep.steps["source"], rep.steps["count"]) == ("whole_capture", 1), rep.steps
    b = rep.breakdown_ms
    needed = truth["needed_under_ms"]
    assert needed == pytest.approx(300.0, abs=0.2)  # the first upload, whole beneath the fetch
    assert b["memcpy_h2d"] == pytest.approx(needed, abs=0.5)  # main: 0.08 (all of it start-up)
    assert b["startup"] == pytest.approx(truth["fetch_ms"] - needed, abs=0.5)  # the second upload's 200 ms under it


def test_control_without_event_links_the_copies_under_the_call_stay_start_up(tmp_path: Path) -> None:
    path, truth = _write(tmp_path, False)
    b = _report(path).breakdown_ms
    assert b["startup"] == pytest.approx(truth["fetch_ms"], abs=0.5)
    assert b["memcpy_h2d"] < 1.0


def _union_ms(rows: list[tuple[int, int]]) -> float:
    total, reach = 0, 0
    for a, b in sorted(rows):
        total += max(0, b - max(a, reach))
        reach = max(reach, b)
    return total / 1e6


def test_real_uploads_the_first_kernel_queues_behind_are_copies() -> None:
    """wild/streams_pinned_copies (Nsight 2024, CUDA events recorded for timing on stream 7): stream 13's two pinned
    uploads (corr 131-132) run 15.3 ms beneath the 41.2 ms ``cudaLaunchKernel`` (corr 133) that loads the add's
    module -- and that launch queues stream 13's add behind them: the add needs them, load or not.  By hand (SQL):
    the H2D copies' union is the pass's H2D copy time, the load's idle without them its start-up."""
    path = FIXTURES / "wild" / "streams_pinned_copies" / "report1.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        h2d = con.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1").fetchall()
        ((k0, kstream),) = con.execute("SELECT start, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1")
        ((l0, l1, lcorr),) = con.execute("SELECT start, end, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                                         "WHERE end - start > 40000000 AND start < ? AND end > ?", (k0, k0 - 1000000))
        mine = con.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND streamId = ? "
                           "AND correlationId < ?", (kstream, lcorr)).fetchall()
    under = _union_ms([(max(a, l0), min(b, l1)) for a, b in mine if b > l0 and a < l1])
    assert under == pytest.approx(15.33, abs=0.01)  # the first kernel's own stream's uploads, beneath its load
    rep = _report(path)
    b = rep.breakdown_ms
    assert rep.steps["count"] == 1, rep.steps
    assert b["memcpy_h2d"] == pytest.approx(_union_ms(h2d), abs=0.05)  # main: 46.0, the 15.3 ms start-up's
    assert b["startup"] == pytest.approx((l1 - l0) / 1e6 - under, abs=0.05)  # the load's 41.2 ms less the uploads


def test_a_wait_is_its_process_s_and_stream_s_whatever_device_its_sync_row_says(tmp_path: Path) -> None:
    """Real exports write the sync rows' ``deviceId`` 0 for every process (docs/compatibility.md, syncs): a rank on
    its node's second GPU still waits on its own streams.  Truth by construction: the same program on CUDA device 1,
    its kernels, copies and event records there, its waits' rows saying device 0.  Main (this branch before): the
    waits keyed by the row's device were dropped, and the upload went back to start-up (``memcpy_h2d`` 0.08)."""
    path = tmp_path / "report1.sqlite"
    truth = nsysexport.write_library_kernel_fetch(str(path), links=True, device=1, **_SHAPE)
    t = reader.read_trace(str(path))
    (d,) = t.devices
    assert d.gpu in t.stream_waits and len(t.stream_waits[d.gpu]) == truth["gemms"], t.stream_waits
    b = _report(path).breakdown_ms
    assert b["memcpy_h2d"] == pytest.approx(truth["needed_under_ms"], abs=0.5)
    assert b["startup"] == pytest.approx(truth["fetch_ms"] - truth["needed_under_ms"], abs=0.5)


# --------------------------------------------------------------------------- h37-bursts34: a chain of waits


def test_an_upload_the_first_kernel_waits_for_through_a_relay_stream_is_a_copy(tmp_path: Path) -> None:
    """Truth by construction: the GEMM stream waits for the uploads through a third stream (it waits for each
    upload's event, then records its own, which the GEMM stream waits for) -- the order is transitive, so the first
    GEMM needs the first upload as much as with one hop (main: one hop only, the upload booked start-up,
    ``memcpy_h2d`` 0.08)."""
    path = tmp_path / "report1.sqlite"
    truth = nsysexport.write_library_kernel_fetch(str(path), links=True, relay=True, **_SHAPE)
    w = next(iter(reader.read_trace(str(path)).stream_waits.values()))
    assert len(w) == truth["gemms"] + _SHAPE["uploads"]  # the GEMM stream's waits and the relay's
    b = _report(path).breakdown_ms
    assert b["memcpy_h2d"] == pytest.approx(truth["needed_under_ms"], abs=0.5)
    assert b["startup"] == pytest.approx(truth["fetch_ms"] - truth["needed_under_ms"], abs=0.5)


def _waits(rows: list[tuple[int, int, int, int]]) -> StreamWaits:
    """Waits from rows of (waiting stream, its call, recording stream, its call); calls index the host's times."""
    s, c, rs, rc = (np.asarray(col, np.int64) for col in zip(*rows))
    return StreamWaits(stream=s, call=c, rec_stream=rs, rec_call=rc)


def test_the_chain_of_waits_is_followed_to_the_copy_and_no_further_back_than_each_record() -> None:
    """By construction, the calls' times their indices x 10: stream 0 waited (call 5) on stream 1's record (call 4),
    stream 1 had waited (call 3) on stream 2's record (call 2); stream 1's later wait (call 6, on stream 3's record 5)
    came after its record, so stream 3's work is not awaited; stream 2 waits on stream 0 (a cycle: call 1, record 0)."""
    start = np.arange(10, dtype=np.int64) * 10
    w = _waits([(0, 5, 1, 4), (1, 3, 2, 2), (1, 6, 3, 5), (2, 1, 0, 0)])
    assert w.awaited(0, 70, start) == {0: 70, 1: 40, 2: 20}  # stream 2's record at 20 reached; stream 3's never
    assert w.awaited(0, 45, start) == {0: 45}  # queued before the wait of call 5: nothing awaited
    assert w.awaited(2, 90, start) == {2: 90, 0: 0}  # the cycle back: stream 0's work before its record only


def test_real_streams_waiting_on_each_other_in_turn_end_the_walk_at_their_records() -> None:
    """wild/mmagic_a100_pyprof_forward (Nsight, an A100 forward): streams 7 and 16 wait on each other in turn, 18
    waits -- a cycle of links.  From each wait, the walk reaches the stream it waited on up to that wait's record
    (its one hop), every stream's time is the query's or some record's, and no stream's work after the query is
    awaited: the walk ends on a real cycle."""
    t = reader.read_trace(str(FIXTURES / "wild" / "mmagic_a100_pyprof_forward" / "net.sqlite"))
    (w,) = t.stream_waits.values()
    assert len(w) == 18 and set(w.stream.tolist()) == set(w.rec_stream.tolist())  # both streams wait and record
    records = set(t.h.start[w.rec_call].tolist())
    for s, c, rs, rc in zip(w.stream.tolist(), w.call.tolist(), w.rec_stream.tolist(), w.rec_call.tolist()):
        at = int(t.h.start[c]) + 1
        due = w.awaited(s, at, t.h.start)
        assert due[rs] >= int(t.h.start[rc]) and due[s] == at
        assert all(v in records for k, v in due.items() if k != s)
