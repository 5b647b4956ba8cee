"""Where the GPU's clock and the host's disagree, no launch call's return is read against its kernel's start: the idle
between kernels is not booked as the GPU holding launched work (``metrics.breakdown._launch_waits``), as the idle
before a step's first work already was not (``_leading_held``, h37-left31) -- one gate, ``clocks_disagree``.

Truth by construction: ``synthetic.nsysexport.write_eager_training_bursts`` (a native eager program: the launch-wait
reading of ``_launch_waits``, no framework dispatch) with no hold -- every kernel starts 10 us after its launch call
returned, on the host's clock -- written once with one clock and once with the GPU's drifting from 100 us early to
400 us late (``gpu_clock_drift_us``).  What the GPU held is nothing in both; the launch wait is the one-clock
capture's, give or take the drift.
"""

from __future__ import annotations


from synthetic.nsysexport import write_eager_training_bursts
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

DRIFT_US = (-100.0, 400.0)
HELD = "The GPU holds work it was given, idle"


def _run(tmp_path, name: str, **kw):
    p = tmp_path / f"{name}.sqlite"
    write_eager_training_bursts(str(p), **kw)
    m = host_metrics(read_trace(str(p)))
    m = m[0] if isinstance(m, tuple) else m
    return m, evaluate(m)


def test_drifting_clocks_book_nothing_held_between_kernels(tmp_path):
    """Fails on main: 8.1 ms of the 88 ms pass booked held (``unseen``), a warning that the GPU held its work, and the
    launch wait cut to 2.9 ms -- the launch-bound warning demoted to info."""
    one, one_f = _run(tmp_path, "one_clock")
    m, findings = _run(tmp_path, "drift", gpu_clock_drift_us=DRIFT_US)
    assert m.capture.clock_skew.max_lead_us > 10.0  # the guard sees the clocks disagree
    assert m.idle_held == 0.0 and m.breakdown.unseen == 0.0
    assert not [f for f in findings if f.title == HELD]
    drift_ms = (DRIFT_US[1] - DRIFT_US[0]) / 1e3
    assert one.breakdown.launch_wait - drift_ms <= m.breakdown.launch_wait <= one.breakdown.launch_wait + drift_ms
    sev = {f.rule: f.severity for f in one_f}
    assert {f.rule: f.severity for f in findings}.get("launch_bound") == sev["launch_bound"] == "warning"


def test_one_clock_keeps_what_the_gpu_held(tmp_path):
    """Control (main too): with one clock the GPU holding each burst 2.4 ms after its launches returned is still held."""
    m, findings = _run(tmp_path, "held", held_ms=2.4)
    assert m.capture.clock_skew is None or m.capture.clock_skew.max_lead_us <= 10.0
    assert m.idle_held > 0.0
    assert [f for f in findings if f.title == HELD]
