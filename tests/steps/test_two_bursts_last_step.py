"""The last of two GPU-burst steps runs past its work by the time the first held after its burst (h37-seeds23;
``scripts/randjobs.py --forms11`` walk seed 6675, left by h37-ranksteps).

Each burst's step runs to the next burst's start, so it holds the host's time between its work and the next (untraced
host code, the next batch's wait); the last has no next burst, and ended at its work it lacked that time: 2 ranks'
node-mode CUDA graphs with 8.46 ms of untraced host time a step read 8.923 and 7.112 ms on each GPU (mean 8.018 of the
8.923 ms period).  Of three or more bursts such a last step is dropped as partial (``tests/steps/test_last_burst.py``);
of two, dropping leaves one step, so the last is stretched by the first's gap -- ``steps.place._last_device_end``,
the rule the host-window readings take (h37-nsyslast).  Controls: a last burst longer than the first's step (not
stretched) and the three-or-more readings of ``test_last_burst.py`` (unchanged).
"""

from __future__ import annotations

from synthetic.randjobs import TRUTH, random_form11_job
from tests.support.random_jobs import gpu_step_rows as _rows, laws_broken, truth_problems
from tests.support.tiny_capture import US, Cap, bursts as _bursts, capture_steps as _steps


def test_two_ranks_bursts_both_steps_the_period():
    """Fails on main (each GPU 8.923, 7.112 ms): every GPU's two steps the job's period, to 0.1% + 2 us."""
    job = random_form11_job(6675)
    r, rows = _rows(job)
    assert job.params["ranks"] == 2 and TRUTH[6675]["steps"] == 2, job  # premise: the walk's job
    assert r.hosts[0].steps["source"] == "gpu_busy_clusters", r.hosts[0].steps
    period = TRUTH[6675]["step_ms"]
    assert sorted(rows) == [0, 1] and all(len(ms) == 2 for ms in rows.values()), rows
    assert all(abs(x - period) <= 0.001 * period + 0.002 for ms in rows.values() for x in ms), (rows, period)
    assert not truth_problems(job, r) and not laws_broken(r), (truth_problems(job, r), laws_broken(r))


def _two_bursts(second: int) -> Cap:
    """A burst of four 10 us kernels at 0, one of ``second`` at 3 ms, and the host's recorded work between them (a
    2.8 ms ``load`` that launches nothing: the gap is the host's time, not a stretch nothing recorded)."""
    cap = _bursts([0])
    for i in range(second):
        cap.kernel(3000 + 11 * i, 10)
    cap.host_ev("load", 100, 2800)
    return cap


def test_the_last_of_two_bursts_holds_the_firsts_gap():
    """Fails on main (the last step 43 us, its work): two bursts of 43 us 3 ms apart -- the last runs 3 ms too."""
    st = _steps(_two_bursts(4))
    assert (st.detection.source, st.count) == ("gpu_busy_clusters", 2), st.detection.note
    assert st.host_windows.tolist() == [[0, 3000 * US], [3000 * US, 6000 * US]]
    assert "runs past its work by the time the first held" in st.detection.note


def test_a_last_burst_longer_than_the_first_step_is_not_stretched_control():
    """Control (as on main): a last burst of 400 kernels (4.4 ms) after a first step of 3 ms lacks nothing the first
    step shows: it ends at its own work."""
    st = _steps(_two_bursts(400))
    assert (st.detection.source, st.count) == ("gpu_busy_clusters", 2), st.detection.note
    assert st.host_windows.tolist() == [[0, 3000 * US], [3000 * US, (3000 + 11 * 399 + 10) * US]]
    assert "runs past its work" not in st.detection.note


def test_two_bursts_of_a_gpu_only_capture_are_not_stretched_control():
    """Control (as on main): with nothing recorded between the bursts the first step is cut at its work's end (the
    stretch is between steps, ``test_unrecorded_stretch.py``), so it held no time after its work to lend the last."""
    st = _steps(_bursts([0, 3000]))
    assert st.host_windows.tolist() == [[0, 43 * US], [3000 * US, 3043 * US]], st.detection.note
