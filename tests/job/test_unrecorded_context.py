"""A CUDA context created in calls the capture does not record is start-up, not the host's own work (issue #37 class 1,
what the window holds; survey h37-survey39's first item left for the lead).

The wrong assumption: start-up is only what runs inside a recorded runtime call.  Nsight skips some calls
(``CUDA_SKIP_SOME_API_CALLS``), and PyTorch's ``.cuda()`` creates the primary context through calls it does not
record.  Truth read off the raw SQLite of ``tests/fixtures/wild/mmagic_a100_pyprof_forward/net.sqlite`` (one forward
pass under PyProf's NVTX on an A100, traced from the process's start with ``-t cuda,nvtx,osrt``): the launching
thread's runtime initialises (``cuModuleGetLoadingMode``), its next recorded call (``cudaStreamIsCapturing``) takes
14 us, and between the two the thread sits 971 ms in the driver's ``ioctl`` -- 965 ms of it inside the first
``Tensor.cuda`` range (1,265 ms) --, with no runtime call around it.  Main booked that time as the host's own work (a host-bound note
naming "`ioctl` 1.01 s"); the cold start counted 981.5 ms.

Generated: ``synthetic.nsysexport.write_unrecorded_context``, the context's ``ioctl`` and the program's own mid-run
``ioctl`` known by construction.  Controls: the program's own ``ioctl`` after its first GPU work stays its wait; a
window that opens after the runtime's start-up takes none; every other kept Nsight export (the context in a recorded
call -- CloverLeaf's 234 ms ``cudaMalloc`` with 16.5 ms of ``ioctl`` before it -- or no runtime start-up in the
window) reads no such context.
"""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import pytest

from synthetic.nsysexport import write_unrecorded_context
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.job import detect_job
from tb_gpu_advisor.model.trace import device_launches
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.intervals import union
from tests.support.paths import FIXTURES

MMAGIC = FIXTURES / "wild" / "mmagic_a100_pyprof_forward" / "net.sqlite"
#: a second real export with its context outside the recorded calls (kept by h37-survey48): the runtime's start-up
#: (``cuModuleGetLoadingMode``) and the first recorded call (``cudaMalloc``, 242 us) lie 94.9 ms apart on the launching
#: thread, 60.1 ms of it in 378 ``ioctl`` calls -- read off its SQLite below
PTX_REFUSED = FIXTURES / "wild" / "ptx_refused_rtx4090d" / "report1.sqlite"
WORDS = "the context created in calls the capture does not record"


def _trace(path):
    return read(SimpleNamespace(host="h", path=str(path), format="nsys"))


def _phase(path):
    trace = _trace(path)
    launches = device_launches(trace.h, trace.devices)
    return trace, detect_job(trace, launches, frameworks.detect_trace(trace)).phase


def _overlap_ms(spans, iv) -> float:
    """ms of the disjoint sorted ``spans`` (ps) inside the disjoint sorted intervals ``iv`` (ps)."""
    return sum(max(0, min(b, d) - max(a, c)) for a, b in spans for c, d in iv) / 1e9


def _raw_context_ioctls() -> tuple[list[tuple[int, int]], float, float, float]:
    """(the launching thread's ``ioctl`` between its runtime's start-up and its next runtime call, merged, ns; their
    ms; the next call's ms; the first ``Tensor.cuda`` range's ms), from the SQLite alone."""
    con = sqlite3.connect(f"file:{MMAGIC}?mode=ro", uri=True)
    try:
        init_end, tid = con.execute(
            "SELECT r.end, r.globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
            "WHERE s.value = 'cuModuleGetLoadingMode' ORDER BY r.start LIMIT 1").fetchone()
        nxt_start, nxt_end = con.execute(
            'SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid = ? AND start > ? ORDER BY start '
            "LIMIT 1", (tid, init_end)).fetchone()
        ioctls = union(con.execute(
            'SELECT o.start, o."end" FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId WHERE s.value = \'ioctl\' '
            "AND o.globalTid = ? AND o.start >= ? AND o.\"end\" <= ?", (tid, init_end, nxt_start)).fetchall())
        (cuda_ms,) = con.execute("SELECT (\"end\" - start) / 1e6 FROM NVTX_EVENTS WHERE text LIKE "
                                 "'{''mod'': ''Tensor'', ''op'': ''cuda''%' ORDER BY start LIMIT 1").fetchone()
    finally:
        con.close()
    return ioctls, sum(b - a for a, b in ioctls) / 1e6, (nxt_end - nxt_start) / 1e6, cuda_ms


def test_the_files_own_evidence_the_context_in_ioctl_between_the_start_up_and_a_quick_call():
    ioctls, ioctl_ms, next_ms, cuda_ms = _raw_context_ioctls()
    assert ioctl_ms == pytest.approx(970.7, abs=0.5)
    assert next_ms < 0.1  # cudaStreamIsCapturing: 14 us, the context existed by then
    assert cuda_ms == pytest.approx(1265.46, abs=0.1)


def test_the_context_created_outside_recorded_calls_is_start_up_real():
    ioctls, ioctl_ms, _, _ = _raw_context_ioctls()
    trace, phase = _phase(MMAGIC)
    # the trace's clock: ps from its origin (the first runtime call), the SQLite's ns from the session's start
    con = sqlite3.connect(f"file:{MMAGIC}?mode=ro", uri=True)
    (origin,) = con.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    con.close()
    iv = [((a - origin) * 1000, (b - origin) * 1000) for a, b in ioctls]
    spans = list(zip(phase.start.tolist(), phase.end.tolist()))
    assert _overlap_ms(spans, iv) == pytest.approx(ioctl_ms, abs=0.5)
    assert WORDS in phase.evidence and "`ioctl`, 970.7 ms" in phase.evidence, phase.evidence
    m = host_metrics(trace, release=True)
    assert m.breakdown.startup >= 981.5 + 0.9 * ioctl_ms  # main: 981.5 ms (the first launches' module loading)
    assert m.breakdown.host_compute <= 2009.0 - 0.9 * ioctl_ms  # main: 2,009 ms
    assert not [v for n, v in m.idle_in_os_waits if n == "ioctl" and v > 100.0], m.idle_in_os_waits


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = {}
    for key, kw in (("start", {"own_ioctl_ms": 300.0}), ("cut", {"own_ioctl_ms": 300.0, "start_in_window": False})):
        path = tmp_path_factory.mktemp(key) / "r.sqlite"
        truth = write_unrecorded_context(str(path), **kw)
        con = sqlite3.connect(str(path))
        (origin,) = con.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
        (first_call,) = con.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON "
                                    "s.id = r.nameId WHERE s.value LIKE 'cudaStreamIsCapturing%'").fetchone()
        rows = con.execute('SELECT start, "end" FROM OSRT_API ORDER BY start').fetchall()
        con.close()
        ps = [((a - origin) * 1000, (b - origin) * 1000) for a, b in rows]
        before = [iv for iv, (a, _) in zip(ps, rows) if a < first_call]  # the context's, by construction
        after = [iv for iv, (a, _) in zip(ps, rows) if a >= first_call]  # the program's own wait
        out[key] = (truth, path, before, after)
    return out


def test_the_generated_contexts_ioctl_is_start_up_and_the_programs_own_is_not(generated):
    truth, path, context, own = generated["start"]
    trace, phase = _phase(path)
    spans = list(zip(phase.start.tolist(), phase.end.tolist()))
    assert _overlap_ms(spans, context) == pytest.approx(truth["context_ms"], abs=0.1)
    assert _overlap_ms(spans, own) == 0.0  # the program's own wait, after its first GPU work
    assert phase.phase == "warm-up" and WORDS in phase.evidence, phase.evidence
    m = host_metrics(trace, release=True)
    assert sum(v for n, v in m.idle_in_os_waits if n == "ioctl") * m.steps.count == pytest.approx(
        truth["own_ioctl_ms"], abs=1.0)


def test_control_a_window_opened_after_the_start_up_takes_no_context(generated):
    truth, path, context, _ = generated["cut"]
    assert truth["context_ms"] == 0.0 and context
    _, phase = _phase(path)
    spans = list(zip(phase.start.tolist(), phase.end.tolist()))
    assert _overlap_ms(spans, context) == 0.0 and WORDS not in phase.evidence


def test_a_second_real_export_creates_its_context_outside_the_recorded_calls():
    """The driver-refused RTX 4090 D export: the SQL facts first (the gap and its ``ioctl``), then the reading."""
    db = sqlite3.connect(PTX_REFUSED)
    (first, tid), (second, name) = (
        db.execute("select r.end, r.globalTid from CUPTI_ACTIVITY_KIND_RUNTIME r order by r.start limit 1").fetchone(),
        db.execute("select r.start, s.value from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id = r.nameId "
                   "order by r.start limit 1 offset 1").fetchone())
    n, ns = db.execute("select count(*), sum(o.end - o.start) from OSRT_API o join StringIds s on s.id = o.nameId "
                       "where s.value like '%ioctl%' and o.globalTid = ? and o.start >= ? and o.end <= ?",
                       (tid, first, second)).fetchone()
    assert name.startswith("cudaMalloc") and n == 378 and ns / 1e6 == pytest.approx(60.1, abs=0.1)
    _, phase = _phase(PTX_REFUSED)
    assert WORDS in phase.evidence and "60.1 ms" in phase.evidence, phase.evidence


@pytest.mark.parametrize("path", sorted(p for p in (FIXTURES / "wild").glob("*/*.sqlite")
                                        if p not in (MMAGIC, PTX_REFUSED)), ids=lambda p: p.parent.name)
def test_control_other_exports_read_no_unrecorded_context(path):
    """Every other kept export: the context in a recorded call (CloverLeaf's ``cudaMalloc``, a hash join's), or no
    runtime start-up in the window, or no OS runtime trace -- none reads a context created outside the calls."""
    try:
        _, phase = _phase(path)
    except Exception as e:  # noqa: BLE001 - a window with no GPU work has no job to read (its own tests)
        pytest.skip(f"no job: {e}")
    assert WORDS not in phase.evidence
