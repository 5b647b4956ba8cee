"""A millisecond of a late launch in which the launching threads record nothing is the host's unrecorded code, not
launch overhead (survey h37-survey18: mholmeslinder/semi-supervised-cv's Keras ``fit`` sessions on TF 2.3 -- the fit
loop's untraced Python ran ~50 ms between the step's last kernel and the next eager op, booked as a critical
launch-bound wait of 56% of the step, where the stock overview's "kernel launch" was 1.6%; the repository has no
licence, so the cause is tested by construction).

Truth by construction (``synthetic.nsysexport.write_eager_training_bursts``): the host's untraced code pauses
``pause_ms`` between bursts of launches, the launching thread recording nothing meanwhile.  A 5 ms pause is the
host's own unrecorded code (the ledger's ``other``, named by the unrecorded-idle finding); a 0.3 ms pause stays
launch wait (``test_launch_wait_held``'s control), as does each burst's first launch call."""

from __future__ import annotations

from synthetic.nsysexport import write_eager_training_bursts
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

BURSTS = 30


def _metrics(path):
    m = host_metrics(read_trace(str(path)))
    return m[0] if isinstance(m, tuple) else m


def test_a_long_silence_before_a_launch_is_no_launch_wait(tmp_path):
    p = tmp_path / "silent.sqlite"
    write_eager_training_bursts(str(p), bursts=BURSTS, pause_ms=5.0)
    m = _metrics(p)
    n = m.steps.count
    pauses_ms = (BURSTS - 1) * 5.0
    assert m.breakdown.launch_wait * n < 0.05 * pauses_ms  # the launch calls only (6 us each), not the pauses
    assert m.breakdown.other * n >= 0.9 * pauses_ms  # the pauses: GPU idle no recorded host event covers
    lb = [f for f in evaluate(m) if f.rule == "launch_bound"]  # the bursts' own launch gaps may still make one
    assert all(f.saving is None or f.saving.ms_per_step * n < 0.05 * pauses_ms for f in lb)


def test_a_short_pause_before_a_launch_stays_launch_wait(tmp_path):
    p = tmp_path / "short.sqlite"
    write_eager_training_bursts(str(p), bursts=BURSTS, pause_ms=0.3)
    m = _metrics(p)
    assert m.breakdown.launch_wait * m.steps.count >= (BURSTS - 1) * 0.3
