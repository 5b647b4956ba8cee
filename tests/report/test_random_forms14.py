"""A GPU host's loop that only loads data, drawn as random jobs with truth by construction (h37-inputgen,
``scripts/randjobs.py --forms14``; #37 deliverable 6 for h37-survey53's class, kept real as
``tests/fixtures/wild/input_only_rtx4090_unetr``).

``synthetic.randjobs._write_input_only`` writes N DataLoader fetches (``enumerate(DataLoader)#...__next__``), each
batch copied to the GPU in 1-2 tensors (pinned, returning at once, or pageable, the call blocking until the copy is
done; a ``torch.cuda.synchronize()`` after or not) or kept on the CPU, the device queried before the loop or not, and
no kernel.  Its truth (``window``, read by ``tests.support.random_jobs.window_problems`` off the capture-quality
finding): ``input_only`` where N >= 2; ``startup`` where N <= 1 and the host made a runtime call or a copy; a model's
``aten::linear`` on the CPU each batch is no loop without a model (``cpu_model``), nor is a loop with no runtime call
at all, which shows no reach for a GPU (``cpu_loop``): neither reads as either window.
"""

from __future__ import annotations

from synthetic import randjobs
from synthetic.randjobs import FORMS14, form14_job, input_window, random_form14_job
from tests.support.cli_report import first_report
from tests.support.random_jobs import report_of, walk, window_problems

#: one seed of each window and copy: start-up (0: one fetch; 6, 13: none, a pageable or a pinned upload; 18: one
#: pinned batch synced), input-only (1: no copy; 3, 5: pinned, synced or not; 16, 22: pageable, synced or not; 23),
#: a loop of fetches with no runtime call (2: 8 fetches, ``input_on_cpu``), one fetch and no call (11, ``cpu_loop``) and a
#: model on the CPU (7, 9)
SEEDS = (0, 1, 2, 3, 5, 6, 7, 9, 11, 13, 16, 18, 22, 23)

BASE = {"loader": randjobs.LOADERS[1], "loader_us": 800.0, "collate_ops": 2, "copies": "pageable", "tensors": 2,
        "batch_mib": 64.0, "sync": True, "query": False, "cpu_model": False, "linear_us": 300.0, "marker": "none"}


def test_random_form14_jobs_hold_every_law_and_their_window():
    """The kept walk: every report law, the kind (no GPU work), the one finding and the window, on every variant."""
    assert {input_window(random_form14_job(s).params) for s in SEEDS} == {"input_only", "startup", "cpu_model",
                                                                          "cpu_loop", "input_on_cpu"}
    assert walk(SEEDS, random_form14_job) == set(FORMS14)


def test_the_input_only_words_count_the_fetches_and_copies_the_loop_made(tmp_path):
    """The window's words hold the loop's numbers by construction: 5 fetches, 2 copies each of 64 MiB (640 MiB)."""
    randjobs.write(form14_job("kineto_input_only", 5, fetches=5, **BASE), str(tmp_path))
    job = first_report(tmp_path)["hosts"][0]["job"]
    assert job["kind"] == "no_gpu", job
    evidence = job["kind_evidence"]
    assert evidence.startswith("the input pipeline only: 5 batch fetches"), evidence
    assert "10 copies, 640 MiB in all, on GPU 0" in evidence, evidence


def test_the_window_check_fails_a_wrong_reading(tmp_path):
    """The truth check can fail: a loop of two fetches is read as ``input_only``, so holding it to ``startup`` (or a
    model on the CPU to ``input_only``) is a problem it names."""
    for params, right, wrong in (({**BASE, "fetches": 2}, "input_only", "startup"),
                                 ({**BASE, "fetches": 1}, "startup", "input_only"),
                                 ({**BASE, "fetches": 3, "copies": "none", "cpu_model": True, "query": True},
                                  "cpu_model", "input_only")):
        job = form14_job("kineto_input_only", 1, **params)
        assert input_window(job.params) == right
        report = report_of(job, str(tmp_path / f"{right}{params['fetches']}"))
        assert window_problems({"window": right}, report.hosts[0].findings) == []
        assert window_problems({"window": wrong}, report.hosts[0].findings), (right, wrong)



def test_a_loop_of_fetches_with_no_call_names_no_model_it_never_ran(tmp_path):
    """h37-nogpu2: 4 fetches, no model op, no runtime call (``input_on_cpu`` by construction).  Main read "the host made
    no GPU runtime call: the work ran on the CPU", with the fix "Move the model and every input of the step to the GPU"
    -- a model the trace shows none of.  The loop is named, and the fix is to run the model's step inside the block."""
    params = {**BASE, "fetches": 4, "copies": "none"}
    job = form14_job("kineto_input_only", 2, **params)
    assert input_window(job.params) == "input_on_cpu"
    report = report_of(job, str(tmp_path / "loop"))
    host = report.hosts[0]
    assert host.job["kind"] == "no_gpu", host.job
    assert host.job["kind_evidence"].startswith("the input pipeline only: 4 batch fetches"), host.job["kind_evidence"]
    assert "no model op (no matmul or convolution)" in host.job["kind_evidence"], host.job["kind_evidence"]
    (f,) = [f for f in host.findings if f.rule == "capture_quality"]
    fix = " ".join(a.text for a in f.actions)
    assert "run the model's step on each batch inside the profiled block" in fix, fix
    assert "Move the model and every input" not in fix and "the work ran on the CPU" not in f.summary, (fix, f.summary)
    assert window_problems({"window": "input_on_cpu"}, host.findings) == []
    assert window_problems({"window": "cpu_loop"}, host.findings), "the truth check can fail"


def test_one_fetch_with_no_call_is_no_loop(tmp_path):
    """Control: one fetch and no runtime call is no loop over the input (``cpu_loop``): neither loop window."""
    job = form14_job("kineto_input_only", 11, **{**BASE, "fetches": 1, "copies": "none"})
    assert input_window(job.params) == "cpu_loop"
    report = report_of(job, str(tmp_path / "one"))
    assert window_problems({"window": "cpu_loop"}, report.hosts[0].findings) == []


def test_control_a_real_cpu_training_loop_is_no_loop_without_a_model():
    """Control (real): a TensorFlow training loop on the CPU (``demo_logs/real_tf_cpu_custom``) fetches batch after
    batch and no op the matmul test knows, but its host events name a training step (``gradient_tape/...``): a model
    ran, so it keeps "No GPU activity in the capture" and the CPU's words -- a first cut of h37-nogpu2 read it as a
    loop of fetches with no model."""
    from tests.support.paths import DEMO_LOGS

    rep = first_report(DEMO_LOGS / "real_tf_cpu_custom")
    job = rep["hosts"][0]["job"]
    assert "its host events name a training step" in job["kind_evidence"], job["kind_evidence"]
    assert [f["title"] for f in rep["findings"] if f["rule"] == "capture_quality"] == ["No GPU activity in the capture"]
