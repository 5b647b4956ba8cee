"""A training job's GPU bursts that mostly hold no backward are no iterations (issue #37, survey h37-survey12;
h37-left13).

VerticalResearchGroup/casio's ``nerf/output-file.sqlite`` @1f3aa89 (TF 1.15 NeRF training on an A100, read locally, no
licence: not kept) runs its GPU work in 85 bursts, the host's untraced eager code between them; only 2 hold a gradient
kernel (``ReluGradHalfKernelVector``).  Main read 83 GPU-burst "steps" of 3.88 ms and a critical finding on them.
Every training iteration runs a backward, so a burst without one cannot be an iteration: the window holds at most as
many iterations as the bursts that hold one, and is read as one pass, saying so.  The export is
``synthetic.nsysexport.write_eager_training_bursts``'s, its bursts and gradient kernels known by construction."""

from __future__ import annotations

from synthetic.nsysexport import write_eager_training_bursts
from tests.support.cli_report import cli_report
from tests.support.paths import FIXTURES


def _host(path) -> dict:
    report = cli_report(path)
    return {"steps": report["hosts"][0]["steps"], "job": report["hosts"][0]["job"], "findings": report["findings"]}


def test_bursts_mostly_without_a_backward_are_one_pass_of_at_most_that_many_iterations(tmp_path):
    p = tmp_path / "nerf.sqlite"
    truth = write_eager_training_bursts(str(p))
    host = _host(p)
    assert host["job"]["kind"] == "training"
    steps = host["steps"]
    assert (steps["source"], steps["count"], steps["confidence"]) == ("whole_capture", 1, "low"), steps
    assert (f"runs in {truth['bursts']} bursts, with a gradient kernel in only {truth['max_iterations']} bursts"
            in steps["note"]), steps["note"]
    assert f"at most {truth['max_iterations']} iterations" in steps["note"]


def test_one_burst_with_a_backward_is_said_in_the_singular(tmp_path):
    p = tmp_path / "one.sqlite"
    write_eager_training_bursts(str(p), grad_bursts=(20,))
    note = _host(p)["steps"]["note"]
    assert "with a gradient kernel in only 1 burst:" in note and "at most 1 iteration;" in note, note


def test_bursts_that_each_hold_a_backward_stay_bursts(tmp_path):
    """Control: a gradient kernel in every burst -- each may be an iteration, the burst reading stands."""
    p = tmp_path / "every.sqlite"
    truth = write_eager_training_bursts(str(p), grad_bursts=tuple(range(30)))
    steps = _host(p)["steps"]
    assert steps["source"] == "gpu_busy_clusters" and steps["found"] == truth["bursts"], steps


def test_no_critical_finding_rests_on_guessed_burst_steps(tmp_path):
    """The finding ``rules.evaluate`` adds last, when every other was a note (the idle no check recognises), rests on
    the same guessed steps: on main it escaped their cap and was critical on casio's 83 burst "steps"; a finding on
    steps of low confidence is never critical."""
    p = tmp_path / "few.sqlite"
    write_eager_training_bursts(str(p), grad_bursts=tuple(range(30)), kernels=2)
    host = _host(p)
    assert host["steps"]["source"] == "gpu_busy_clusters" and host["steps"]["confidence"] == "low"
    assert host["findings"] and not any(f["severity"] == "critical" for f in host["findings"]), \
        [(f["rule"], f["severity"]) for f in host["findings"]]
    (idle,) = [f for f in host["findings"] if f["rule"] == "unexplained_idle"]
    assert idle["confidence"] == "low" and "rests on steps that are a guess" in idle["summary"]


def test_a_gap_note_on_guessed_steps_is_not_raised_back_by_its_saving(tmp_path):
    """The step-confidence cap is a ceiling: a gap finding made a note on guessed boundaries ("reported as a note, not a
    problem") was raised back to a warning by the savings' grading (a note saving more than a warning is raised to
    it), so the finding said "a note" under a WARNING -- seen on this control, a gradient kernel in every burst."""
    p = tmp_path / "every.sqlite"
    write_eager_training_bursts(str(p), grad_bursts=tuple(range(30)))
    host = _host(p)
    assert host["steps"]["confidence"] == "low"
    noted = [f for f in host["findings"] if "reported as a note, not a problem" in f["summary"]]
    assert noted, [(f["rule"], f["severity"]) for f in host["findings"]]
    for f in noted:
        assert f["severity"] == "info", (f["rule"], f["severity"])
        assert f["summary"].count("reported as a note, not a problem") == 1
    assert not any(f["severity"] == "critical" for f in host["findings"])


def test_two_bursts_one_with_a_backward_are_one_iteration(tmp_path):
    """h37-wild56x: two bursts were below the reading's floor (three), so a training window cut once by a host pause
    between its forward and its backward read as 2 burst "steps".  A burst without a backward is no iteration: two
    bursts, one holding it, are at most one iteration -- the window read as one pass, a guess."""
    p = tmp_path / "two.sqlite"
    truth = write_eager_training_bursts(str(p), bursts=2, grad_bursts=(1,))
    assert truth["max_iterations"] == 1
    steps = _host(p)["steps"]
    assert (steps["source"], steps["count"], steps["confidence"]) == ("whole_capture", 1, "low"), steps
    assert "runs in 2 bursts, with a gradient kernel in only 1 burst:" in steps["note"], steps["note"]


def test_two_bursts_each_with_a_backward_stay_two_steps(tmp_path):
    """Named control (passes on base too): a backward in both bursts -- each may be an iteration."""
    p = tmp_path / "two_each.sqlite"
    write_eager_training_bursts(str(p), bursts=2, grad_bursts=(0, 1))
    steps = _host(p)["steps"]
    assert (steps["source"], steps["found"]) == ("gpu_busy_clusters", 2), steps


def test_pyprof_lm_one_iteration_is_read_as_one_pass():
    """The real window (``wild/pyprof_lm_v100_nvprof``: nvprof's database of ONE training iteration of PyProf's LM
    between ``profiler.start()`` and ``stop()``): its forward's burst (the embedding, 0.3 ms of kernels) and its
    backward-and-update burst were 2 burst steps of 33.7 and 41.4 ms; the window is the one iteration."""
    report = cli_report(FIXTURES / "wild" / "pyprof_lm_v100_nvprof")
    host = report["hosts"][0]
    assert host["job"]["kind"] == "training"
    assert (host["steps"]["source"], host["steps"]["count"]) == ("whole_capture", 1), host["steps"]
    assert "at most 1 iteration" in host["steps"]["note"]
    assert report["findings"][0]["rule"] == "cold_start"


def test_an_autotuners_checks_across_bursts_are_no_iterations(tmp_path):
    """A first call's algorithm search (XLA's ``redzone_checker`` after each candidate, one burst per candidate) is
    one pass of the program, not steps: the checker runs in every burst, but only as the search's, never a loop's
    (h37-wild57n: jakemdaly's TensorFlow ``trace_l1_20200329_1.csv`` read as 12 burst "steps" of 583.8 ms).  Truth by
    construction (``synthetic.nvprofcsv.write_first_call_autotuned``): no iteration."""
    from synthetic import nvprofcsv
    from tests.support.cli_report import first_host

    (tmp_path / "run1").mkdir()
    truth = nvprofcsv.write_first_call_autotuned(tmp_path / "run1" / "trace.csv")
    steps = first_host(tmp_path)["steps"]
    assert truth["iterations"] == 0 and steps["source"] == "whole_capture" and steps["count"] == 1


def test_control_the_same_bursts_with_a_kernel_of_the_program_repeating_stay_steps(tmp_path):
    """Named control: the same shape with the program's own kernel in place of the checker (a loop's body repeating in
    each burst) stays burst steps."""
    from synthetic import nvprofcsv
    from tests.support.cli_report import first_host

    (tmp_path / "run1").mkdir()
    nvprofcsv.write_first_call_autotuned(tmp_path / "run1" / "trace.csv",
                                         checker="void at::native::vectorized_elementwise_kernel<4>(int)")
    steps = first_host(tmp_path)["steps"]
    assert steps["source"] != "whole_capture" and steps["count"] > 1
