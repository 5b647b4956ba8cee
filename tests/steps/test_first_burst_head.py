"""A first GPU burst that opens with work launched before the capture and runs on into work launched in it starts at
its own first launched work: the head is no part of the step (h37-left56, issue #37; the leftover of h37-left46).

The real class: ``../shared/profiles/nsys/fsdp_mfu_before`` (GindaChen/nsys-ai, MIT; read in place) -- its first
burst opens with 16 / 15 kernels (GPU 0 / 1) whose launch calls the window does not hold, 9.4-9.5 ms of them, then
282 ms of work launched in the window.  Main kept the head in the first step (291.7 ms).  Truth from the export itself
(sqlite3): per GPU, the first kernel whose ``correlationId`` has a runtime row.  Any format: a tiny XPlane capture
(correlation ids on its launches) built with such a head.  Controls: the same capture with its head's launches
recorded (unchanged), a first burst of unlaunched work alone (dropped as partial, as before), the second step's
window (unchanged, it holds no such work).
"""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import pytest

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.job import detect_job
from tb_gpu_advisor.model.trace import device_launches
from tb_gpu_advisor.steps.detect import detect_steps
from tests.support.paths import SHARED_PROFILES
from tests.support.tiny_capture import US, Cap

FSDP = SHARED_PROFILES / "nsys" / "fsdp_mfu_before" / "mfu_2gpu_before.sqlite"
STARTS = [0, 3000, 6000, 9000]  # us: four bursts of four 10 us kernels, 3 ms apart


def _first_launched_ns(path) -> dict[int, tuple[int, int]]:
    """Per GPU (deviceId): (its first record's start, its first record with a launch in the export's start), ns --
    kernels, copies and memsets alike; a launch is a runtime row of the same process with the record's
    ``correlationId`` (ids repeat across processes)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = " UNION ALL ".join(f"SELECT deviceId, start, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_{t}"
                              for t in ("KERNEL", "MEMCPY", "MEMSET"))
    launched = ("EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = w.correlationId AND "
                "r.globalTid / 16777216 = w.globalPid / 16777216)")
    out = {int(dev): (int(first), int(own)) for dev, first, own in con.execute(
        f"SELECT deviceId, MIN(start), MIN(CASE WHEN {launched} THEN start END) FROM ({rows}) w GROUP BY deviceId")}
    con.close()
    return out


def test_a_real_first_burst_starts_at_its_first_launched_work():
    """Fails on main: the first step starts at the head (291.7 ms)."""
    if not FSDP.is_file():
        pytest.skip(f"real Nsight exports not found ({FSDP})")
    truth = _first_launched_ns(FSDP)
    assert all(launched - first > 9e6 for first, launched in truth.values())  # a head of 9+ ms on each GPU
    trace = read(SimpleNamespace(host="h", path=str(FSDP), format="nsys"))
    first_ps = {d.gpu: int(d.start.min()) for d in trace.devices if len(d)}
    launches = device_launches(trace.h, trace.devices)
    st = detect_steps(trace, launches, detect_job(trace, launches, frameworks.detect_trace(trace)))
    # one window since h37-left58 (its one long gap lies inside one op: tests/steps/test_gap_inside_one_op.py), trimmed
    # alike: the rule holds for every step the GPU's work bounds (tests/steps/test_whole_window_head.py)
    assert (st.detection.source, st.count) == ("whole_capture", 1)
    assert not st.detection.dropped
    assert "work from before the capture" in st.detection.note, st.detection.note
    assert set(truth) == set(first_ps)
    for g, (first, launched) in truth.items():  # each GPU's first step from its own first launched kernel
        assert int(st.gpu_windows[g][0, 0]) - first_ps[g] == (launched - first) * 1000, g
        assert int(st.gpu_windows[g][0, 1]) == int(st.host_windows[0, 1])
    # the host window starts at the earliest GPU's own first work
    assert int(st.host_windows[0, 0]) == min(int(w[0, 0]) for w in st.gpu_windows.values())


def _bursts(head_launched: bool | None) -> Cap:
    """Four bursts of launched kernels; the first opens with two 10 us kernels: launched in the window
    (``head_launched``), launched before it (False), or none (None)."""
    cap = Cap()
    if head_launched is not None:
        for i in range(2):
            cap.kernel(i * 11, 10, launch_us=i * 3 - 10 if head_launched else None, name="tail")
    for s in STARTS:
        for i in range(4):
            t = s + 22 + 11 * i
            cap.kernel(t, 10, launch_us=t - 5)
    return cap


def test_a_burst_opening_with_work_launched_before_the_window_starts_at_its_own_work():
    """By construction (XPlane, correlation ids): fails on main, whose first step starts at the head's first kernel."""
    st = _bursts(head_launched=False).steps()
    # 4 bursts found; the last, its 44 us of work with nothing after it in the window, holds no whole 3 ms step: it is
    # dropped as partial (h37-laststep), and the first is what this test reads
    assert (st.detection.source, st.detection.found, st.count) == ("gpu_busy_clusters", 4, 3)
    own = [(s + 22) * US for s in STARTS]  # each burst's first launched kernel
    assert st.host_windows[:, 0].tolist() == own[:-1]  # the first from its own first kernel, not the head's
    assert st.host_windows[:, 1].tolist() == own[1:]
    assert st.detection.dropped[0].window[0] == own[-1]
    assert "22 us of GPU work whose launches precede the window" in st.detection.note, st.detection.note
    # several steps: the first of them is "the first step" (a capture read as one pass says "the pass", h37-words22)
    assert "; the first step starts at its first work launched" in st.detection.note
    assert "no part of the step" in st.detection.note and "the pass" not in st.detection.note


@pytest.mark.parametrize("head_launched", [True, None])
def test_a_burst_whose_work_was_launched_in_the_window_is_unchanged(head_launched):
    """Controls: the same head with its launches recorded, and no head at all: the burst starts at its first work."""
    st = _bursts(head_launched).steps()
    # the last of the 4 bursts dropped as partial, as above (h37-laststep)
    assert (st.detection.source, st.detection.found, st.count) == ("gpu_busy_clusters", 4, 3)
    assert int(st.host_windows[0, 0]) == (0 if head_launched else 22 * US)
    assert "before the capture" not in st.detection.note
