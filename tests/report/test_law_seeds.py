"""The generated jobs that broke the report's laws on main too (h37-lawseeds; found by h37-tinyiter's walks past the
kept ranges), each held to the quantity it read two ways -- the part and the whole it was measured against:

* ``--forms`` seed 30061, four Nsight ranks that run in turn (31 ms apart, longer than their steps): a Broadcast two of
  the four GPUs ran in the kept steps read 0.138 ms a step in the host's table (the median with the two GPUs that ran
  none as zeros) and 0.277 ms in the session's (over the ranks that run it); the launch skew, measured in the 2 steps
  two GPUs ran in (29.5 ms each), read "209.4% of the 5.31 ms step" -- the mean of all 18 steps.  Both rested on
  the step reading h37-turns corrected (each process's 5 steps its own, no kept step holding another rank's set-up):
  the seed now holds no Broadcast in its steps and no skew, so the one median is held on a host built by hand
  (:func:`test_a_collective_some_gpus_ran_reads_the_median_of_those_gpus`) and the skew's part of its measured steps
  by ``tests/rules/test_launch_skew_measured.py``;
* ``--forms5`` seed 30059, two Kineto ranks whose all-reduces (10.5 ms) start before the kept steps and run through
  them: each GPU's "AllReduce ms/step" read 0 (no call *started* in the steps) beside its 2.23 ms of AllReduce;
* ``--forms5`` seed 30099: an all-reduce queued in the last kept step ran 1.37 ms past it, its whole time a part of the
  steps -- "kernel class collective 514.1 us/step in a 0.493 ms step";
* ``--forms5`` seed 30392, two burst steps of a rocpd trace around a 37.6 ms unrecorded stretch: 10 us of that gap
  lie inside step 0's window, 0.03% of the gap (under the half percent that "shows") but 1.4% of the 72 us step the
  saving is a share of -- "no step's time holds it" beside a saving of 1.4% of the step;
* the default stream's seed 52518 (h37-lastwin), two Kineto ranks in step, a 0.67 ms buffer request before the first
  launch of the last of 4 steps: each GPU's window #4 (holding the request on the GPU's clock) was dropped, its last
  window -- measured by its host annotation from its late span's start -- read the request again after its work and
  was kept at 1.594 ms beside two of the 0.923 ms period (the walk's several-rank request truth);
* the default stream's seed 72504 (h37-probe43q), two Kineto ranks tied by an all-reduce, buffer requests in host
  steps #8, #13, #16: each GPU's window #7 (holding the 108 us request's host time, but busy with #7's all-reduce
  through it) was dropped, and #8, where the GPU idled for the launches the request delayed, was kept at 1.98 ms;
* ``--forms`` seed 50018 (found by h37-forms10num's walk), one pass of two jitted JAX programs read by blocking reads:
  ``host_sync``'s opening named the reads "in the step" from JAX's words, fixed text, on a window of one pass
  (``one-pass-words``): the window's noun now fills the words;
* ``--xplane`` seed 52430 (h37-onestepjax), one JAX step with no marker read as the capture's one pass: its only
  ``jit_train_step:XLA GPU module`` event starts 26 us before the pass (which opens at the GPU's first work), so
  keyed by its host start no execution lay in the pass -- MFU n/a, "no execution ... was found in the kept steps (no
  `<module>:XLA GPU module` host event)" beside the event (``one-pass-words``); the text's "per step and GPU" alike.
"""

from __future__ import annotations


import pytest

from dataclasses import replace

from synthetic.randjobs import random_form5_job, random_form_job, random_job, random_xplane_job
from tb_gpu_advisor.common.fmt import pct_part
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.types import CollectiveStat, Communication
from tb_gpu_advisor.report.build import _communication_table
from tb_gpu_advisor.report import render
from tb_gpu_advisor.rules.step_gaps import gap_inside_steps
from tests.support.random_jobs import check, report_of
from tests.support.rules_factory import multi


def _report(job):
    return report_of(job)


def _finding(h, rule):
    return next(f for f in h.findings if f.rule == rule)


def test_each_seed_holds_every_law():
    """The walks' own check on the five jobs (each broke a law on main: ``one-value``, ``part<=whole``,
    ``no-step-time``, ``one-pass-words``)."""
    bad = {job.seed: v for job in (random_form_job(30061), random_form5_job(30059), random_form5_job(30099),
                                   random_form5_job(30392), random_form_job(50018)) if (v := check(job))}
    assert not bad, bad


def test_a_one_step_gaps_tables_say_the_step():
    """Session 42's ``--xplane`` walk: seed 63216 (two JAX hosts, one step kept each) titled the gap finding's tables
    "(ms per step, on average)" and "(...; ms per step)" in a capture of one step (``one-step``)."""
    assert not check(random_xplane_job(63216))


def test_a_one_pass_host_loop_says_its_program_is_compiled():
    """Session 42's ``--forms`` walk: seeds 52092 (a native XLA loop's one pass, Nsight) and 52156 (one pass of a JAX
    program whose while loop runs from the host) said of the loop "so the step is compiled already" in a window of
    one pass (``one-pass-words``): what is compiled is the program the loop runs, whatever the window."""
    bad = {job.seed: v for job in (random_form_job(52092), random_form_job(52156)) if (v := check(job))}
    assert not bad, bad


def test_a_collective_some_gpus_ran_reads_the_median_of_those_gpus():
    """Two of four GPUs ran a Broadcast (0.277 and 0.279 ms a step): the host's table reads the median over those two,
    as the session's is over the ranks that run it -- never the median with the other two GPUs' zeros (0.138)."""
    m = multi(n=4)
    ran = {0: 0.277, 1: 0.279}
    m.comm = Communication(by_type=[CollectiveStat("Broadcast", 0.5, 0.139, 0.139)],
                           per_gpu={g: [CollectiveStat("Broadcast", 1.0, v, v)] for g, v in ran.items()})
    rows = {row[0]: row for row in _communication_table(m).rows}
    assert rows["Broadcast"][2] == pytest.approx(0.278)  # main before h37-lawseeds: 0.138


def test_ranks_that_ran_in_turn_each_keep_their_steps():
    """h37-turns: the seed's four processes ran one after another; each keeps its own 5 steps (main: one host-wide
    sequence of 20, 18 kept) and no rank's start is a launch skew against one that had ended."""
    r = _report(random_form_job(30061))
    h = r.hosts[0]
    assert (h.steps["found"], h.steps["count"]) == (5, 5)
    assert "launch_skew" not in {f.rule for f in h.findings}


def test_a_call_run_into_the_kept_steps_is_the_gpus_allreduce():
    r = _report(random_form5_job(30059))
    h = r.hosts[0]
    f = _finding(h, "gpu_imbalance")
    (t,) = [t for t in f.evidence if "AllReduce ms/step" in t.columns]
    col = t.columns.index("AllReduce ms/step")
    started = []
    for row in t.rows:
        g = next(g for g in h.gpus if g.gpu == row[0])
        started.append(g.collectives["AllReduce"][0])
        assert row[col] > 1.5 and abs(row[col] - g.collectives["AllReduce"][1]) < 1e-3, (row, g.collectives)  # main: 0
    # GPU 0's kept steps start no call (the case); GPU 1's last kept step holds the start of a call queued behind the
    # others since h37-nsyslast placed the late rank's last step at its own launches: its kept steps are each the
    # period long (2.23 ms; main cut its step 4 at 0.54 ms, before that call's start)
    assert 0 in started, started


def test_a_kernel_class_is_its_time_inside_the_steps():
    r = _report(random_form5_job(30099))
    h = r.hosts[0]
    step = h.gpus[0].step_ms
    (coll,) = [c for c in h.kernel_classes if c["class"] == "collective"]
    assert coll["us_per_step"] / 1000 <= step  # main: 514.1 us in a 0.493 ms step
    # the calls' time inside the kept steps, those that started before them and ran in included: the GPUs' AllReduce ms
    # (h37-review21; the transfer column matched it only while no call ran into the steps)
    assert abs(coll["us_per_step"] / 1000 - h.gpus[0].collectives["AllReduce"][1]) < 1e-3
    # the kernels table still holds each call's whole time
    (k,) = [row for row in h.kernels.rows if "AllReduce" in str(row[0]) or "nccl" in str(row[0]).lower()]
    assert k[h.kernels.columns.index("total us")] > coll["us_per_step"] * 8 * 1.2


def test_a_gap_part_inside_a_step_shows_against_that_step():
    r = _report(random_form5_job(30392))
    f = _finding(r.hosts[0], "step_gaps")
    assert f.saving.percent_of_step >= 0.5
    text = render.to_text(r)
    assert "no step's time holds it," not in " ".join(text.split())  # main: said beside the 1.4% saving
    assert "the saving is the part inside the steps" in " ".join(f.summary.split())
    assert "(99.97% of it)" in " ".join(f.summary.split())  # never "100.0%" beside the part inside


def test_gap_inside_steps_against_the_gap_or_the_step():
    assert not gap_inside_steps(37.635, 37.625)  # 0.03% of the gap
    assert gap_inside_steps(37.635, 37.625, 0.072)  # 14% of a 72 us step
    assert not gap_inside_steps(37.635, 37.635, 0.072)  # all of it outside
    assert gap_inside_steps(10.0, 9.0)  # 10% of the gap, with or without the step
    assert not gap_inside_steps(100.0, 99.9999, 5.0)  # 0.1 us: shows against neither (control)


def test_pct_part_never_prints_the_whole():
    assert pct_part(0.99973) == "99.97%"
    assert pct_part(0.5) == "50.0%"
    assert pct_part(1.0) == "100.0%"
    assert pct_part(0.99995) == "99.995%"
    assert pct_part(0.123) == "12.3%"  # a share that prints under the whole keeps pct's one digit (control)


def test_a_last_window_after_a_request_is_the_period():
    """Seed 52518: each GPU keeps its steps #3 and #4 at the request-free period (the writer's own, 0.9228 ms), #5
    (the request's host step: its GPU's window opens at its host's mark, h37-probe44r, and holds the wait) left out,
    and #2 within ``job.one_time_call_ms`` of it (0.94 ms: the 17 us its host ran ahead of its GPU in every later
    step, built once in the first -- too little to drop it, ``steps.drop._queue_fill``).  Fails on 6f44e79f: #5 read
    1.594 ms (the truth's law breaks).  (With span-to-span windows the wait lay in #4, which dropped: h37-probe44q.)"""
    job = random_job(52518)
    assert job.params["ranks"] == 2 and job.params["buffer_requests"] == ((5, 666.39),)
    assert check(job) == []
    h = _report(job).hosts[0]
    assert [d["step"] for d in h.steps["dropped"]] == [5]
    rows = [(r.gpu, r.step, r.step_ms) for r in h.step_rows if r.gpu is not None]
    assert {(g, n) for g, n, _ in rows} == {(g, n) for g in (0, 1) for n in (2, 3, 4)}
    assert all(ms == pytest.approx(0.9228, abs=0.001) for _, n, ms in rows if n != 2), rows
    assert all(0.9228 - 0.001 < ms < 0.9228 + T("job.one_time_call_ms") for _, n, ms in rows if n == 2), rows


def test_a_request_behind_a_busy_gpu_drops_the_window_that_waited():
    """Seed 72504 (2 ranks, a 1.6 ms DataLoader each step, an all-reduce the next step's compute waits for, buffer
    requests of 108 / 591 / 219 us in host steps #8, #13, #16): busy with #7's all-reduce through the 108 us request,
    each GPU idles inside #8 instead, for the launches the request delayed -- #8 and #13 (the 591 us request's host
    step: each GPU's window opens at its host's mark, h37-probe44r, and holds the idle its launches waited for) are
    left out, #7 (clean) is kept, and every kept window is the writer's 1.8705 ms period.  Fails on c1588118: #7, #12
    and #15 dropped, #8 and #13 kept at 1.98 and 2.03 ms (the truth's law breaks).  (With span-to-span windows #12
    held 0.43 ms of the 591 us request and dropped too: h37-probe44q.)"""
    job = random_job(72504)
    assert job.params["ranks"] == 2 and [n for n, _ in job.params["buffer_requests"]] == [8, 13, 16]
    assert check(job) == []
    h = _report(job).hosts[0]
    assert sorted(d["step"] for d in h.steps["dropped"] if d["reason"].startswith("profiler:")) == [8, 13]
    rows = {(r.gpu, r.step): r.step_ms for r in h.step_rows if r.gpu is not None}
    assert set(rows) == {(g, n) for g in (0, 1) for n in (3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15)}
    assert all(ms == pytest.approx(1.8705, abs=0.001) for ms in rows.values()), rows


def _mfu(h):
    return next(m for m in h.headline if m.id == "mfu")


def test_a_one_pass_jax_step_counts_its_module_run_in_the_pass():
    """Seed 52430: the pass holds the work of the module's one execution, its FLOPs counted -- the MFU the same job
    reads over 4 marked steps (17.5%), within the pass's own lead-in -- and its card and text say "in the pass".
    Fails on main: MFU n/a, the note "found in the kept steps"."""
    job = random_xplane_job(52430)
    assert job.params["steps"] == 1 and job.params["marker"] == "none" and job.params["hlo"]
    assert check(job) == []
    h = _report(job).hosts[0]
    assert h.steps["source"] == "whole_capture" and h.steps["count"] == 1
    card = _mfu(h)
    assert card.value == pytest.approx(0.174, abs=0.002), card.detail
    assert card.detail["flops_per"] == "in the pass, per GPU"
    note = render.card_note(card)
    assert "in the pass, per GPU at" in note and "step" not in note.split("; not flagged")[0], note
    marked = _mfu(_report(replace(job, params={**job.params, "steps": 6, "marker": "train"})).hosts[0])
    assert marked.value == pytest.approx(0.175, abs=0.002) and "flops_per" not in marked.detail  # control


def test_a_one_pass_without_module_events_says_the_pass():
    """The same pass with no ``<module>:XLA GPU module`` event: MFU is n/a, its reason said of the pass; over several
    steps of kept steps (control).  Fails on main: "found in the kept steps" in the one pass."""
    job = random_xplane_job(52430)
    one = replace(job, params={**job.params, "marker": "none_no_module_events"})
    assert check(one) == []
    why = _mfu(_report(one).hosts[0]).detail["not_available"]
    assert "no execution of a module with matmul work was found in the pass (" in why, why
    many = _mfu(_report(replace(one, params={**one.params, "steps": 6})).hosts[0])
    assert "was found in kept steps (" in many.detail["not_available"]


def test_a_module_run_a_step_behind_its_host_counts_in_the_step_of_its_kernels():
    """Two steps, the GPU a step behind its host: the first module's D2D copy runs at once, before the GPU's first
    window, its kernels in that window; the second's kernels queue into the next.  Read from XLA's module launches
    (GPU windows), each execution counts once, by its first kernel; read from the program's markers, by the marker
    that encloses it.  A control main holds (by the host starts): counted by its first device event, the first fell
    outside the steps and MFU halved (8.7%)."""
    job = random_xplane_job(52430)
    for marker in ("train", "none"):
        h = _report(replace(job, params={**job.params, "steps": 2, "marker": marker})).hosts[0]
        assert h.steps["count"] == 2 and h.steps["source"] == {"train": "trace_train", "none": "xla_module_launches"}[marker]
        assert _mfu(h).value == pytest.approx(0.174, abs=0.002), (marker, _mfu(h).display)


def test_a_one_pass_with_the_users_flops_says_no_step(tmp_path):
    """The same pass analysed with the model's FLOPs given (``--model-flops-per-step``): the card's source reads "the
    model FLOPs given as a setting", the window said once, by the meaning ("FLOPs in the pass / ...").  Fails on main:
    "(the model FLOPs per step given as a setting)" in the card's meaning (``one-pass-words``)."""
    from tb_gpu_advisor.common.options import UserOptions
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.runtime.pipeline import analyze_session
    from synthetic.randjobs import write
    from tests.support.properties import one_pass_words_problems

    folder = str(tmp_path)
    write(random_xplane_job(52430), folder)
    (s,) = discover(folder)
    h = analyze_session(s.run, s.session, s.hosts, options=UserOptions(model_flops=1.5e12)).hosts[0]
    card = _mfu(h)
    assert card.detail["source"] == "user" and card.value == pytest.approx(0.172, abs=0.002)
    assert one_pass_words_problems(h) == []
    assert card.meaning.startswith("FLOPs in the pass / (pass time x") and "given as a setting" in card.meaning


def test_a_marked_steps_calls_count_by_their_marker():
    """Control on a real capture (real-h100-jax input_bound: 18 StepTraceAnnotation steps, the GPU idle between them):
    each step's ``jit_train_step`` runs its kernels past its marker's end (8 of 18 start in the next step's window,
    the last after every kept step), so counted by the kernels 17 executions made 18 steps' FLOPs (8.0%); by the
    marker that encloses each call, 18 (8.5%, as on main)."""
    from tb_gpu_advisor.formats.xplane.adapter import read_trace
    from tb_gpu_advisor.runtime.pipeline import host_metrics
    from tests.support.paths import SHARED_PROFILES

    found = sorted((SHARED_PROFILES / "real-h100-jax" / "input_bound").glob("plugins/profile/*/*.xplane.pb"))
    if len(found) != 1:
        pytest.skip("../shared/profiles/real-h100-jax/input_bound is absent")
    m = host_metrics(read_trace(str(found[0])))
    assert m.steps.count == 18 and m.steps.source == "trace_train"
    assert m.flops.mfu == pytest.approx(0.0852, abs=0.0005), m.flops.mfu


def test_a_one_pass_jax_copy_lever_says_the_pass():
    """Session 44's ``--xplane`` walk: seeds 83277, 83820, 83964 and 84879 (a JAX job read as one unmarked pass, its
    copies blocking) said the copy finding's levers "read every N steps ... jax.device_put ahead of the step"
    (``one-pass-words``): the framework's levers now take the window's noun ("ahead of the pass")."""
    bad = {s: v for s in (83277, 84879) if (v := check(random_xplane_job(s)))}
    assert not bad, bad


def test_a_ranks_fetch_begun_before_the_pass_names_its_wait():
    """Session 44's default walk: seed 82693 (4 ranks in one Nsight export, 50 us apart, each fetching its batch
    through the DataLoader before its own work) booked 75 us of input wait a pass -- the later ranks' ``__next__``
    ending inside the pass opened by the first -- and named no part of it (``input<=account``): the pipeline's events
    were taken by their starts alone, all before the pass.  Now an event ending inside a kept step is the pipeline's
    too, and the finding names the DataLoader's ``__next__`` with its 75 us."""
    job = random_job(82693)
    assert not check(job), check(job)


def test_a_mean_count_that_rounds_to_whole_prints_its_decimal():
    """Session 48's ``--xplane`` walk: seed 170171 (an un-jitted JAX loop read by its `jit_multiply` executions, one
    step of 57 holding an extra kernel: 3.018 kernels per step) said "3 of 3 kernels per step" (``one-count``): a
    mean rounded to 0.1 printed as a whole count, with no "on average".  A mean that is not whole prints its decimal
    ("3.0 of 3.0 kernels per step on average"); a whole one stays whole."""
    from tb_gpu_advisor.rules.base import mean_count, n_of

    assert not check(random_xplane_job(170171)), check(random_xplane_job(170171))
    assert (mean_count(3.01818), mean_count(3.0), mean_count(92 / 4 * 4), mean_count(7.46)) == ("3.0", "3", "92", "7.5")
    assert (n_of(3.01818, "kernel", mean=True), n_of(1.0, "copy", mean=True), n_of(1.02, "copy", mean=True)) == (
        "3.0 kernels", "1 copy", "1.0 copies")
    h = report_of(random_xplane_job(170171)).hosts[0]
    said = _finding(h, "launch_bound").summary
    assert "3.0 of 3.0 kernels per step on average" in said, said
