"""TensorFlow's fixes define and run the job's own step (issue #37, h37-left36; PyTorch's ``Loop``, h37-left29): the
compile fixes (tf.function, XLA), the sync read, ``strategy.run`` and ``steps_per_execution`` are composed from the
``frameworks.tensorflow.Loop`` the job's kind chooses, so work that does not train is not told ``def train_step``.

Truth by construction (``synthetic.scenarios.launch_bound``): a TensorFlow step with no gradient tape and no
optimizer ops in it, whose launch-bound and no-XLA fixes said ``def train_step(x, y)``.  It read as work of no known
kind until its ops were read as TensorFlow records them (h37-names70: ops recorded one by one, none a gradient's or
an update's, are a forward pass); its fixes now run a forward step, and work of no known kind's fixes are asked of
the framework by their tags below."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic.scenarios import launch_bound
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import tensorflow as tf
from tests.support.report_store import session_report

#: a training step's code: the tape, the optimizer, a train_step
TRAINING = re.compile(r"\btrain_step\b|GradientTape|\boptimizer\b")


def test_work_that_does_not_train_defines_its_own_step_under_the_compile_fixes(tmp_path: Path) -> None:
    launch_bound().write(tmp_path)
    (s,) = discover(str(tmp_path))
    r = session_report(s)
    (h,) = r.hosts
    assert h.job["kind"] == "inference" and "TensorFlow ops ran but no backward pass" in h.job["kind_evidence"]
    found = {f.rule: f for f in h.findings}
    assert {"launch_bound", "xla_not_used"} <= set(found)
    codes = [a.snippet for rule in ("launch_bound", "xla_not_used") for a in found[rule].actions if a.snippet]
    assert any("def predict_step(x):" in c for c in codes)
    assert not [c for c in codes if TRAINING.search(c)]


@pytest.mark.parametrize("tags, fn", [(("inference",), "predict_step"), (("any_work",), "run_one_step")])
def test_no_training_code_in_the_looped_fixes_of_work_that_is_not_training(tags, fn) -> None:
    fw = tf.FRAMEWORK.for_job(tags)
    for key in ("launch_bound", "launch_bound:step", "host_sync", "eager_execution", "excessive_memcpy:d2d",
                "xla_not_used", "sequential_gpus", "step_gaps:host_work"):
        codes = [a.snippet for a in fw.fixes[key] if a.snippet]
        assert codes and not [c for c in codes if TRAINING.search(c)], (key, codes)
    assert any(fn in (a.snippet or "") for a in fw.fixes["eager_execution"])


def test_a_training_job_keeps_its_training_step_and_the_graph_fix_is_still_known_in_use() -> None:
    fw = tf.FRAMEWORK.for_job(())
    assert "GradientTape" in fw.fixes["eager_execution"][0].snippet
    assert "loss = train_step(x, y)" in fw.fixes["host_sync"][0].snippet
    # the fix a trace shows in use is known by its text, the same for every kind of job
    assert {a.text for a in tf.FRAMEWORK.for_job(("any_work",)).fixes["launch_bound"]} == \
        {a.text for a in fw.fixes["launch_bound"]} and tf.TF_FUNCTION.text in tf.FIX_APPLIED


#: capture advice written for a training loop: Keras' callback (fit's batches only), "steady-state training"
TRAINING_CAPTURE = re.compile(r"profile_batch|steady-state training\b|Trace\('train'")


@pytest.mark.parametrize("tags, fn", [(("inference",), "out = predict_step(x)"),
                                      (("any_work",), "out = run_one_step(batch)")])
def test_the_capture_advice_of_work_that_is_not_training_profiles_its_own_steps(tags, fn) -> None:
    """TensorFlow's capture advice was one text for every job: Keras' TensorBoard callback, whose profile_batch
    profiles fit's batches only, "steady-state training".  Work that does not train is now told to start and stop
    the profiler around its own step, each one marked; every capture fix quotes the same advice."""
    fw = tf.FRAMEWORK.for_job(tags)
    assert fn in fw.capture_snippet and "tf.profiler.experimental.Trace(" in fw.capture_snippet
    assert not TRAINING_CAPTURE.search(fw.capture_snippet) and not TRAINING.search(fw.capture_snippet)
    for key in [k for k in fw.fixes if k.startswith("capture_quality")]:
        for a in fw.fixes[key]:
            assert not TRAINING_CAPTURE.search(a.text + (a.snippet or "")), (key, a.text)
            assert fw.capture_snippet in (a.snippet or ""), key


def test_a_training_jobs_capture_advice_is_unchanged() -> None:
    """Control: a training job keeps Keras' callback and the custom loop's start and stop."""
    fw = tf.FRAMEWORK.for_job(())
    assert fw.capture_snippet == tf.CAPTURE
    assert "profile_batch=(100, 120)" in fw.capture_snippet and "steady-state training" in fw.capture_snippet
    assert "Trace('train'" in fw.fixes["capture_quality:few_steps"][0].text


def _compiled_steps(root: Path) -> None:
    """A TensorFlow loop whose steps run one XLA cluster each (``cluster_0:_XlaRun``), marked ``step``: its ops are
    not recorded one by one, so nothing says what the work is for (h37-names70: ``launch_bound``'s recorded ops no
    longer leave its kind unknown)."""
    from synthetic import kernels as K
    from synthetic.tfcapture import A100, Capture, Op

    cap = Capture(1, A100, marker="custom_loop", trace_name="step")
    ops = [Op("cluster_0:_XlaRun", [K.sized(K.EW_ADD_F32, 3.0)] * 40, launch_us=14)]
    for _ in range(8):
        cap.step([ops], input_wait_us=25)
    folder = root / "compiled" / "plugins" / "profile" / "2024_01_01_00_00_00"
    folder.mkdir(parents=True)
    cap.finish().write(folder / "worker0.xplane.pb")


def test_a_tensorflow_job_of_no_known_kind_reports_its_own_capture_advice(tmp_path: Path) -> None:
    """The report's ``job.capture_advice`` (the MCP server's) of the no-known-kind step loops its own step."""
    _compiled_steps(tmp_path)
    (s,) = discover(str(tmp_path))
    (h,) = session_report(s).hosts
    assert h.job["kind"] == "unknown" and "run_one_step(batch)" in h.job["capture_advice"]
    assert not TRAINING_CAPTURE.search(h.job["capture_advice"])


def test_the_real_tensorflow_training_jobs_advice_is_keras_fits() -> None:
    """Control on the real 8 x V100 BERT capture (Keras fit, TF 2.4): its job's advice is the training one."""
    from tests.support.profile_files import V100_CAPTURE

    if not Path(V100_CAPTURE).is_file():
        pytest.skip(f"{V100_CAPTURE} not present")
    from tb_gpu_advisor.discover.logdir import locate_file

    _, s, _ = locate_file(V100_CAPTURE)
    (h,) = session_report(s).hosts
    assert h.job["kind"] == "training" and h.job["capture_advice"] == tf.CAPTURE
