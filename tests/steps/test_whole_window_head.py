"""Any step whose window the GPU's work bounds -- a burst, one pass, the whole capture -- starts at its first work
launched in the capture, and the host's wait in a sync over the work launched before the capture is no part of the
step nor of the sync's cost (issue #37 classes 1-2; h37-left56 trimmed only a first GPU burst).

The real class: ``../shared/profiles/nsys/h100_fsdp_window`` (GindaChen/nsys-ai, MIT; read in place): one forward
pass (``single_pass``) whose window opens on 233 uploads and 905 kernels per GPU launched before the slice (no
runtime row of the process holds their ``correlationId``: 423.8 ms), while the host sits in a 428.5 ms
``cudaStreamSynchronize`` begun 145 ms before that work ends.  Truth from the export itself (sqlite3).  By
construction: a tiny XPlane capture read as one window with such a head and a sync lying wholly over it.  Controls:
the head's launches recorded (unchanged), a sync after the head (the step's, unchanged).
"""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import pytest

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.formats.xplane.adapter import to_trace
from tb_gpu_advisor.formats.xplane.reader import parse_timeline
from tb_gpu_advisor.job import detect_job
from tb_gpu_advisor.model.trace import device_launches
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tb_gpu_advisor.steps.detect import detect_steps
from tests.support.paths import SHARED_PROFILES
from tests.support.tiny_capture import US, Cap

H100 = SHARED_PROFILES / "nsys" / "h100_fsdp_window" / "h100_2gpu_1s.sqlite"


def _truth(path) -> tuple[dict[int, tuple[int, int, int]], list[tuple[int, int]]]:
    """Per GPU (deviceId): (first record's start, first launched record's start, last record's end), ns; and each
    ``cudaStreamSynchronize`` call's (start, end), ns."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = " UNION ALL ".join(f"SELECT deviceId, start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_{t}"
                              for t in ("KERNEL", "MEMCPY", "MEMSET"))
    launched = ("EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = w.correlationId AND "
                "r.globalTid / 16777216 = w.globalPid / 16777216)")
    gpus = {int(d): (int(a), int(b), int(c)) for d, a, b, c in con.execute(
        f"SELECT deviceId, MIN(start), MIN(CASE WHEN {launched} THEN start END), MAX(end) FROM ({rows}) w "
        "GROUP BY deviceId")}
    syncs = [(int(s), int(e)) for s, e in con.execute(
        "SELECT r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
        "WHERE s.value LIKE 'cudaStreamSynchronize%' AND r.end - r.start > 100000000")]
    con.close()
    return gpus, syncs


def _steps(trace):
    launches = device_launches(trace.h, trace.devices)
    return detect_steps(trace, launches, detect_job(trace, launches, frameworks.detect_trace(trace)))


def test_a_real_whole_pass_starts_at_its_first_launched_work_and_its_wait_on_the_head_leaves():
    """Fails on main: the pass runs from the head (969.4 ms), the host's 428.5 ms sync all the step's wait."""
    if not H100.is_file():
        pytest.skip(f"real Nsight exports not found ({H100})")
    gpus, syncs = _truth(H100)
    assert len(syncs) == 2 and all(own - first > 400e6 for first, own, _ in gpus.values())  # a 400+ ms head
    trace = read(SimpleNamespace(host="h", path=str(H100), format="nsys"))
    st = _steps(trace)
    assert (st.detection.source, st.count) == ("single_pass", 1)
    first_ps = {d.gpu: int(d.start.min()) for d in trace.devices if len(d)}
    for g, (first, own, end) in gpus.items():
        w = st.window(g)
        assert int(w[0, 0]) - first_ps[g] == (own - first) * 1000, g
        assert int(w[0, 1]) == int(st.host_windows[0, 1]), g  # the pass's end, unchanged
    assert int(st.host_windows[0, 0]) == min(int(st.window(g)[0, 0]) for g in gpus)
    note = st.detection.note
    assert "work from before the capture, no part of the pass" in note, note  # a pass, no step (h37-words22)
    assert "`cudaStreamSynchronize` waits on that work for 145." in note, note
    # the syncs' wait is only their part inside the step: each from the step's start (its GPU's) to its end
    m = host_metrics(trace)
    start_ns = min(own for _, own, _ in gpus.values())
    inside = sum(e - max(s, start_ns) for s, e in syncs) / 1e6 / len(gpus)
    assert m.syncs.wait_ms_per_step == pytest.approx(inside, rel=1e-3)
    assert m.syncs.wait_ms_per_step < 0.7 * sum(e - s for s, e in syncs) / 1e6 / len(gpus)
    span_ns = max(e for _, _, e in gpus.values()) - min(own for _, own, _ in gpus.values())
    assert (int(st.host_windows[0, 1]) - int(st.host_windows[0, 0])) / 1e3 == pytest.approx(span_ns, rel=1e-4)


def _window(head_launched: bool, sync_at: float) -> Cap:
    """A window of 60 kernels of 10 us, 1 us apart (no idle to cut at): the first 20 launched before the window unless
    ``head_launched``; the host in a 150 us ``cudaStreamSynchronize`` from ``sync_at`` us."""
    cap = Cap()
    for i in range(60):
        t = 11 * i
        launched = head_launched or i >= 20
        cap.kernel(t, 10, launch_us=(t - 300 if i >= 20 else t - 5) if launched else None)
    cap.host_ev("cudaStreamSynchronize", sync_at, 150)
    return cap


def _one_window(cap: Cap):
    trace = to_trace(parse_timeline(cap.space.encode()))
    st = detect_steps(trace)
    assert st.detection.source == "whole_capture" and st.count == 1, st.detection.source
    return st


def test_a_whole_window_opening_with_work_launched_before_it_starts_at_its_own_work():
    """By construction: fails on main, whose window starts at the head's first kernel; the sync lies wholly over
    the head: said with it, all of it."""
    st = _one_window(_window(head_launched=False, sync_at=20))
    assert int(st.host_windows[0, 0]) == 220 * US  # the 21st kernel's start
    assert "220 us of GPU work whose launches precede the window" in st.detection.note, st.detection.note
    assert "waits on that work for all 150 us of it" in st.detection.note, st.detection.note


@pytest.mark.parametrize("head_launched,sync_at", [(True, 20), (False, 400)])
def test_a_window_whose_work_was_launched_in_it_or_a_sync_after_the_head_is_unchanged(head_launched, sync_at):
    """Controls: the head's launches recorded (the window from its first kernel); a sync after the head: the step's,
    not said as a wait on work from before the capture."""
    st = _one_window(_window(head_launched, sync_at))
    assert "waits on that work" not in st.detection.note
    if head_launched:
        assert int(st.host_windows[0, 0]) == -80 * US  # the earliest launching event (the 21st kernel's): no trim
        assert "before the capture" not in st.detection.note
