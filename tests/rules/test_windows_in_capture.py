"""A finding's trace window lies in the capture it points into (h37-audit31, law ``in-capture``).

Wrong assumption on main: *the time around a spot lies in the capture*.  A memory peak in a snapshot's last half
millisecond opened "a millisecond around the peak" past the snapshot's end, and the gap after the last kept step of
wild/mordred_rtx6000_hashjoin was shown with a gap's length of a next step the capture never recorded (to 6742.8 ms
of a 6703.0 ms capture).  ``rules.windows_in_capture`` ends every window at the capture's end."""

from __future__ import annotations

from synthetic import memsnapshot as ms
from tests.support.properties import in_capture_problems
from tests.support.snapshot_report import report
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


def _windows(rep) -> list:
    return [w for f in rep.findings for w in f.windows]


def test_a_peak_at_the_snapshots_end_opens_no_window_past_it(tmp_path):
    """By construction: one forward dumped before its output is dropped, so the peak is the trace's last allocation;
    the window is the millisecond before the peak up to the capture's end, not past it."""
    rep = report(tmp_path, ms.forward_only(grad=True, passes=1, dump_before_drop=True).doc)
    end = rep.capture["length_ms"]
    peaks = [w for w in _windows(rep) if w.label.startswith("memory peak")]
    assert peaks, [w.label for w in _windows(rep)]
    assert all(w.end_ms <= end for w in peaks), ([(w.start_ms, w.end_ms) for w in peaks], end)
    assert in_capture_problems(rep) == []


def test_an_oom_instant_at_the_capture_end_is_kept(tmp_path):
    """The bound drops nothing at the end: an OOM's instant is the snapshot's last moment."""
    rep = report(tmp_path, ms.oom_activations().doc)
    ooms = [w for w in _windows(rep) if w.label.startswith("out of memory")]
    assert len(ooms) == 1 and ooms[0].start_ms == ooms[0].end_ms == rep.capture["length_ms"]


def _wild(run: str):
    s = next(s for s in wild_sessions() if s.run == run)
    return session_report(s)


def test_the_gap_after_the_last_kept_step_ends_with_the_capture():
    """Real trace: mordred's last kept step (7) runs 6601.571 - 6702.830 ms and holds its 39.99 ms gap at its end
    (read off the steps: its window runs to the dropped step 8's start); the capture ends at 6702.972 ms."""
    rep = _wild("mordred_rtx6000_hashjoin")
    h = rep.hosts[0]
    gap = next(w for f in h.findings for w in f.windows if w.label.startswith("gap after step 7"))
    assert (gap.start_ms, gap.end_ms) == (6662.841, 6702.972)
    assert in_capture_problems(h) == []


def test_a_real_snapshots_peak_window_ends_with_the_capture():
    """Real snapshot (silmont2000's no_grad bf16 forward, MIT): the 745 MiB peak at 15.6 ms of a 15.781 ms capture."""
    h = _wild("snapshot_nograd_bf16").hosts[0]
    assert in_capture_problems(h) == []
    assert max(w.end_ms for w in _windows(h)) <= h.capture["length_ms"]


def test_a_snapshots_capture_runs_to_its_last_annotation(tmp_path):
    """By construction: a training history whose last optimizer step ends 5 ms after its last allocator entry (a step
    that frees nothing then); the annotation is on the entries' clock, so the capture runs to it (main: the capture
    ended with the last entry, 5 ms before the step that closes the iteration)."""
    doc = ms.ring_buffer_training(max_entries=None).doc
    last = doc["external_annotations"][-1]
    assert last["stage"] == "END" and last["name"].startswith("Optimizer.step")
    first_us = min(e["time_us"] for e in doc["device_traces"][0])
    last["time_us"] = max(e["time_us"] for e in doc["device_traces"][0]) + 5000
    rep = report(tmp_path, doc)
    end_ms = (last["time_us"] - first_us) / 1000
    assert abs(rep.capture["length_ms"] - end_ms) < 1e-3, (rep.capture["length_ms"], end_ms)
    assert in_capture_problems(rep) == []


def test_a_real_snapshots_last_optimizer_step_ends_in_its_capture():
    """Real snapshot (snapshot_adam_iterations): its last `Optimizer.step#NIUAdam.step` ends at 1019.590 ms, 73 us
    after its last allocator entry (1019.517 ms; both read off the pickle by hand)."""
    h = _wild("snapshot_adam_iterations").hosts[0]
    assert h.capture["length_ms"] == 1019.59
    assert in_capture_problems(h) == []
