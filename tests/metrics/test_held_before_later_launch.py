"""A kernel waiting on GPU work launched after it is not held while that work is unlaunched: the GPU waits for the host.

``metrics.breakdown._launch_waits`` read held idle (the GPU idle with a kernel whose launch call already returned) off
kernels alone.  A kernel that waits, through an event, on a host-to-device copy the host issues after 5 ms of its own
work was read as held for those 5 ms -- host time booked as the GPU's (h37-left41: the wild capture
torchrec_shampoo_128 turned from host-bound to a held-work warning).  A held stretch now begins only once everything
the GPU ran before the kernel, on any stream and of any kind, had been launched (``_later_returns``), and counts only
where the GPU ran nothing else (``_still_idle``: a copy in the gap is the copy's).

Truth by construction (``synthetic.nsysexport.write_kernel_after_late_copy``): the same GPU timeline twice; with the
copy launched after the host's 5 ms (``late``) that idle is the host's, with the copy launched alongside the kernel
before it (the control) the GPU holds both idle 5 ms a burst.
"""

from __future__ import annotations

from types import SimpleNamespace

from synthetic.nsysexport import write_kernel_after_late_copy
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics

BURSTS, HOST_MS = 30, 5.0
#: the driver's submission after a launch returns (``metrics.breakdown.LAUNCH_START_PS``), per burst
SUBMIT_MS = 0.05
HELD_TITLE = "The GPU holds work it was given, idle"


def _run(tmp_path, late: bool):
    p = tmp_path / f"late_{late}.sqlite"
    truth = write_kernel_after_late_copy(str(p), bursts=BURSTS, host_ms=HOST_MS, late=late)
    m = host_metrics(read_trace(str(p)))
    m = m[0] if isinstance(m, tuple) else m
    host = SimpleNamespace(host="h", path=str(p), format="nsys", size=0)
    found = analyze_session("h", "s", [host]).to_dict()["hosts"][0]["findings"]
    return truth, m, found


def test_the_idle_before_a_later_launched_copy_is_the_hosts_not_held(tmp_path):
    truth, m, found = _run(tmp_path, late=True)
    n = m.steps.count
    assert m.idle_held * n < 0.5, m.idle_held * n  # main: 150.5 ms held
    # the host's 5 ms a burst are host time: launch wait, or host time the capture did not record
    host = (m.breakdown.launch_wait + m.breakdown.other) * n
    assert host >= truth["host_ms_total"], (host, truth)
    assert not [f for f in found if f["title"] == HELD_TITLE]


def test_control_a_kernel_and_its_copy_both_launched_are_held(tmp_path):
    truth, m, found = _run(tmp_path, late=False)
    held = m.idle_held * m.steps.count
    # each burst after the first: the host's 5 ms less the driver's submission; the copy's own time is the copy's
    assert truth["held_ms_total"] - BURSTS * SUBMIT_MS <= held <= truth["held_ms_total"], held
    assert [f for f in found if f["title"] == HELD_TITLE]
