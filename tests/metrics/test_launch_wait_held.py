"""An idle GPU holding work already launched is not waiting for the host to launch it.

VerticalResearchGroup/casio's ``nerf/output-file.sqlite`` @1f3aa89 (TF 1.15 eager NeRF training on an A100, read
locally only: no licence): each of its 85 bursts is launched 0.1-0.3 ms into a 2.7 ms idle, and then the GPU holds it
2.45 ms (median, kernel start - launch return) with the launching thread idle too; 236 of the 250 ms of idle lie in
such holds.  Main booked the whole idle before a late launch's kernel as launch wait, up to the kernel's start: 225 ms,
a critical ``launch_bound`` at 69.5%.  Launch wait now ends where the launch call returned and the driver submitted
(``metrics.breakdown.launch_wait_end``).

Truth by construction (``synthetic.nsysexport.write_eager_training_bursts``, ``held_ms``): the host waits for each
burst, pauses ``pause_ms`` and launches the next, whose kernels the GPU holds ``held_ms``; the launch wait is each
burst's pause and its first launch, never the hold, which is booked apart (``unseen``: the GPU had work it did not
run -- another process's turn on the GPU, or a dependency outside the capture) and said so by ``capture_quality``.
Control: no hold, the same launch wait and nothing held.
"""

from __future__ import annotations

from types import SimpleNamespace


from synthetic.nsysexport import write_eager_training_bursts
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics

BURSTS, PAUSE_MS, HELD_MS = 30, 0.3, 2.4


def _metrics(path):
    m = host_metrics(read_trace(str(path)))
    return m[0] if isinstance(m, tuple) else m


def _launch_wait_ms(path) -> tuple[float, float]:
    """(launch wait, GPU idle) over the window's kept steps, ms."""
    m = _metrics(path)
    n = m.steps.count
    idle = m.headline.avg_step_ms - m.breakdown.device_compute
    return m.breakdown.launch_wait * n, idle * n


def test_a_burst_the_gpu_holds_after_its_launch_is_no_launch_wait(tmp_path):
    p = tmp_path / "held.sqlite"
    truth = write_eager_training_bursts(str(p), bursts=BURSTS, pause_ms=PAUSE_MS, held_ms=HELD_MS)
    wait, idle = _launch_wait_ms(p)
    assert idle >= truth["held_ms_total"] - HELD_MS  # the holds are idle time of the window
    # each burst after the first: its pause, its first launch and the driver's submission -- not the hold
    assert (BURSTS - 1) * PAUSE_MS <= wait <= (BURSTS - 1) * (PAUSE_MS + 0.1), (wait, idle)


def test_without_a_hold_the_pause_before_each_launch_stays_launch_wait(tmp_path):
    p = tmp_path / "control.sqlite"
    write_eager_training_bursts(str(p), bursts=BURSTS, pause_ms=PAUSE_MS)
    wait, _ = _launch_wait_ms(p)
    assert wait >= (BURSTS - 1) * PAUSE_MS


def test_no_critical_launch_bound_rests_on_held_bursts(tmp_path):
    p = tmp_path / "held.sqlite"
    write_eager_training_bursts(str(p), bursts=BURSTS, pause_ms=PAUSE_MS, held_ms=HELD_MS)
    host = SimpleNamespace(host="h", path=str(p), format="nsys", size=0)
    found = analyze_session("h", "s", [host]).to_dict()["hosts"][0]["findings"]
    launch = [f for f in found if f["rule"] == "launch_bound"]
    assert not launch or launch[0]["severity"] != "critical", launch[0]["summary"]


def test_the_hold_is_booked_apart_and_named(tmp_path):
    p = tmp_path / "held.sqlite"
    truth = write_eager_training_bursts(str(p), bursts=BURSTS, pause_ms=PAUSE_MS, held_ms=HELD_MS)
    m = _metrics(p)
    held = m.idle_held * m.steps.count
    # each burst after the first is held its hold less the driver's 50 us, and its kernels' 18 us launch spacing
    assert truth["held_ms_total"] - BURSTS * 0.05 - HELD_MS <= held <= truth["held_ms_total"] + BURSTS * 12 * 0.03
    assert m.breakdown.unseen * m.steps.count >= held - 1e-6
    host = SimpleNamespace(host="h", path=str(p), format="nsys", size=0)
    found = analyze_session("h", "s", [host]).to_dict()["hosts"][0]["findings"]
    (held_f,) = [f for f in found if f["title"] == "The GPU holds work it was given, idle"]
    # its headline metric names the GPU's hold, not a host waiting (the words of the host's case)
    assert held_f["metric"]["label"] == "GPU held work it was given", held_f["metric"]


def test_without_a_hold_nothing_is_held(tmp_path):
    p = tmp_path / "control.sqlite"
    write_eager_training_bursts(str(p), bursts=BURSTS, pause_ms=PAUSE_MS)
    m = _metrics(p)
    assert m.idle_held == 0.0 and m.breakdown.unseen == 0.0



def test_the_legend_names_the_held_idle_it_paints_unseen(tmp_path):
    """The tab paints the hold ``unseen`` while the host is in no call at all (the launching thread idle too), so the
    legend's words for ``unseen`` cannot say the host waits: they must name the GPU holding work already launched
    (main said only "while the host waits for it")."""
    from tb_gpu_advisor.report.legend import CATEGORY_LABELS, IDLE_LABELS

    p = tmp_path / "held.sqlite"
    write_eager_training_bursts(str(p), bursts=BURSTS, pause_ms=PAUSE_MS, held_ms=HELD_MS)
    m = _metrics(p)
    assert m.idle_held > 0 and m.breakdown.unseen >= m.idle_held - 1e-9
    idle = IDLE_LABELS["unseen"].lower()
    assert "launched" in idle and "host wait" in idle.replace("waiting", "wait"), idle
    assert "gpu work" not in CATEGORY_LABELS["unseen"].lower()  # the held case is no missing GPU work
