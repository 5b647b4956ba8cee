"""The laws h37-walk25's walk (every stream from seed 50000 on main df03124a) broke, each on its seed and on a host
built by hand, with its control:

* ``--forms`` seed 51122, four Nsight ranks read as one pass each: a Broadcast began before one rank's pass (its time
  in the pass, no call counted) and inside another's (1 call); the median over the two ranks that ran it read
  "Broadcast calls 0.50" in a pass -- half a call.  *Wrong assumption: the median of counts is a count*; of an even
  number of ranks it is the mean of the two middle ones.  ``metrics.job.med_count``: where every rank's count is
  whole, the higher middle count, one some rank made;
* default seed 51181 (drawn once the stream drew buffer requests, below), one Kineto rank of 4 ``ProfilerStep``s whose
  steps 2 and 4 held requests, both dropped: kept steps 3 and 5, 51.2 ms each, 40 ms of idle at the end of each
  step's own window.  The gap after step 3 (its part step 3 holds: ``partial``, step 4 dropped) was measured as
  lying between step 3's window and step 5's -- 20.0 of the 20.0 ms mean gap "outside every step's window" -- and
  the finding said "no step's time holds them" beside a saving of 39.1% of the step.  *Wrong assumption: the stretch
  between two kept windows is in no step*; a dropped step's window lies there.  ``rules.step_gaps.outside_steps_ms``:
  a partial gap is the part its kept step holds, none of it between windows.

And the two forms real captures showed that no stream drew (h37-walk25's check of the generator):

* CUPTI's activity buffer requests (Kineto ``overhead`` events, the next launch waiting for each; h37-survey45) in
  some steps of the default stream's Kineto jobs (``randjobs._buffer_requests``, drawn last: every earlier draw as
  before), with their truth: a ``ProfilerStep#n`` holding one of 0.1 ms or more is not kept where two others remain
  (``tests/support/random_jobs._profiler_step_problems``);
* un-jitted JAX (each ``jnp`` call its own ``jit_<op>`` module; h37-survey46) in the ``--xplane`` stream's JAX jobs
  (``eager``, drawn last), with their truth where a ``train`` StepTraceAnnotation marks the steps: every step found,
  ``eager_execution`` where 10 calls or more make each.
"""

from __future__ import annotations


import pytest

from synthetic.randjobs import TRUTH, random_form_job, random_job, random_xplane_job
from tb_gpu_advisor.metrics.job import med, med_count
from tb_gpu_advisor.metrics.types import CollectiveStat, Communication, StepGap
from tb_gpu_advisor.report.build import _communication_table
from tb_gpu_advisor.rules.step_gaps import outside_steps_ms
from tb_gpu_advisor.steps.types import StepWindow
from tests.support.random_jobs import _profiler_step_problems, check, report_of
from tests.support.rules_factory import multi


def _calls(table, typ: str) -> float:
    return next(row for row in table.rows if row[0] == typ)[table.columns.index("calls")]


def test_the_seed_holds_every_law():
    """main: ``whole-count`` on both collective tables ("Broadcast calls 0.5")."""
    assert not check(random_form_job(51122))


def test_a_pass_counts_the_broadcast_one_rank_ran_in_it_whole():
    """The seed's tables: 1 Broadcast call in the pass (main: 0.5), its time unchanged (the median of both ranks')."""
    r = report_of(random_form_job(51122))
    h = r.hosts[0]
    host_t, job_t = h.communication, r.collectives
    assert host_t.title.startswith("Collectives in the pass") and job_t.title.startswith("Collectives in the pass")
    assert _calls(host_t, "Broadcast") == 1 and _calls(job_t, "Broadcast") == 1
    assert _calls(host_t, "AllReduce") == 2  # every rank's 2: unchanged


def test_the_hosts_table_reads_a_count_some_gpu_made():
    """Two of four GPUs ran a Broadcast, 0 and 1 calls in the pass: 1 (main: 0.5); its ms the median of both."""
    m = multi(n=4)
    m.comm = Communication(by_type=[CollectiveStat("Broadcast", 0.25, 0.5, 0.5)],
                           per_gpu={0: [CollectiveStat("Broadcast", 0.0, 0.08, 0.08)],
                                    1: [CollectiveStat("Broadcast", 1.0, 2.1, 2.1)]})
    t = _communication_table(m)
    assert _calls(t, "Broadcast") == 1.0
    assert t.rows[0][t.columns.index("ms")] == pytest.approx(1.09)


def _gaps(partial: bool):
    """51181's kept windows (steps 3 and 5; 4 dropped between them) and the 40.0 ms gap after step 3."""
    from types import SimpleNamespace
    m = SimpleNamespace(steps=SimpleNamespace(windows=[StepWindow(3, 51.464, 102.663), StepWindow(5, 155.066, 206.266)]))
    gap = StepGap(3, 0, 40.046, 0.0, 0.0, 0.0, 40.046, partial=partial)
    return SimpleNamespace(gaps=[gap], count=2), m


def test_a_gap_its_kept_step_holds_lies_in_no_stretch_between_windows():
    """main: 20.02 ms a step outside every window (the gap set against step 5's start, past dropped step 4's window)."""
    assert outside_steps_ms(*_gaps(partial=True)) == 0.0


def test_control_a_whole_gap_between_kept_windows_keeps_its_outside_part():
    assert outside_steps_ms(*_gaps(partial=False)) == pytest.approx(40.046 / 2)


def test_the_seed_whose_middle_step_held_a_request_holds_every_law():
    """51181 (main: ``no-step-time``, "no step's time holds them" beside 39.1% of the step)."""
    job = random_job(51181)
    assert job.params["buffer_requests"] == ((2, 109.775), (4, 1199.276))
    assert not check(job)


@pytest.mark.parametrize("counts, want", [((0.0, 1.0), 1.0), ((2.0, 3.0, 3.0, 4.0), 3.0), ((2.0, 2.0), 2.0),
                                          ((1.0, 2.0, 5.0), 2.0)])
def test_the_median_of_whole_counts_is_a_count(counts, want):
    assert med_count(counts) == want


@pytest.mark.parametrize("means", [(2.5, 3.5), (15.5, 16.0, 16.5, 17.0), (0.5,)])
def test_control_per_step_means_keep_the_median(means):
    """Counts already per-step means (15.5 calls a step) keep the plain median: a mean of means says it is one."""
    assert med_count(means) == med(means)


#: default-stream seeds whose one-rank Kineto job holds buffer requests of 0.1 ms or more in ``ProfilerStep#n``
#: steps, and ``--xplane`` seeds of eager JAX: marked (``train``) and unmarked
REQUEST_SEEDS = (50047, 50053, 50078, 50086, 50998)
EAGER_SEEDS = (50049, 50283, 50010, 50001)


def test_the_default_stream_draws_the_profilers_buffer_requests():
    drawn = [random_job(s).params.get("buffer_requests") for s in range(50000, 50200)]
    assert sum(bool(d) for d in drawn) >= 20
    assert all(70.0 <= us <= 2200.0 for d in drawn if d for _, us in d)


@pytest.mark.parametrize("seed", REQUEST_SEEDS)
def test_a_job_with_buffer_requests_holds_every_law_and_its_truth(seed):
    job = random_job(seed)
    assert not check(job)
    assert TRUTH[seed]["profiler_steps"]  # the truth was there to hold


@pytest.mark.parametrize("seed", (50030, 50301))
def test_control_several_ranks_requests_carry_a_time_truth_not_step_numbers(seed):
    """Several ranks' steps are each rank's GPU-side spans, where a request's idle falls in the step before its own:
    no step numbers to hold (h37-walk25's Left); their truth is a time instead -- the period of the iterations no
    request held (h37-ranksreq, ``request_free_ms``), which the laws check with the rest."""
    job = random_job(seed)
    assert job.params["ranks"] > 1 and job.params["buffer_requests"]
    assert not check(job)
    assert TRUTH[job.seed]["request_free_ms"] > 0 and "profiler_steps" not in TRUTH[job.seed]


def test_the_truth_catches_a_kept_step_that_held_a_request():
    """The law can fail: a step that held a request, kept beside two clean kept steps, is named; dropped, or with
    fewer than two clean steps kept (50998: the stock rule took steps 2 and 7, one clean step left), it is not."""
    truth = {"profiler_steps": (3, 5), "profiler_numbers": (2, 9)}
    steps = {"source": "profiler_step", "found": 8, "dropped": [{"step": 3, "reason": "profiler"}]}
    assert _profiler_step_problems(truth, steps) == [
        "truth: step 5 held the profiler's buffer request and is kept beside 6 steps that held none"]
    few = {"profiler_steps": (3, 4, 6), "profiler_numbers": (2, 7)}
    assert not _profiler_step_problems(few, {**steps, "dropped": [{"step": 2}, {"step": 7}]})
    assert not _profiler_step_problems(truth, {**steps, "dropped": [{"step": 3}, {"step": 5}]})


def test_the_xplane_stream_draws_eager_jax():
    drawn = [random_xplane_job(s) for s in range(50000, 50400)]
    eager = [j for j in drawn if j.fmt == "jax" and j.params.get("eager")]
    assert len(eager) >= 15 and {j.params["marker"] for j in eager} >= {"train", "none"}


@pytest.mark.parametrize("seed", EAGER_SEEDS)
def test_an_eager_jax_job_holds_every_law_and_its_truth(seed):
    job = random_xplane_job(seed)
    assert job.params["eager"]
    assert not check(job)
    assert (seed in TRUTH) == (job.params["marker"] == "train")
