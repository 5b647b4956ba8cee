"""TensorFlow's fixes define and run the job's own step (issue #37, h37-left36; PyTorch's ``Loop``, h37-left29): the
compile fixes (tf.function, XLA), the sync read, ``strategy.run`` and ``steps_per_execution`` are composed from the
``frameworks.tensorflow.Loop`` the job's kind chooses, so work that does not train is not told ``def train_step``.

Truth by construction (``synthetic.scenarios.launch_bound``): a TensorFlow step the report reads as work of no known
kind (no gradient tape, no optimizer ops in it) whose launch-bound and no-XLA fixes said ``def train_step(x, y)``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic.scenarios import launch_bound
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import tensorflow as tf
from tb_gpu_advisor.runtime.pipeline import analyze_session

#: a training step's code: the tape, the optimizer, a train_step
TRAINING = re.compile(r"\btrain_step\b|GradientTape|\boptimizer\b")


def test_work_of_no_known_kind_defines_its_own_step_under_the_compile_fixes(tmp_path: Path) -> None:
    launch_bound().write(tmp_path)
    (s,) = discover(str(tmp_path))
    r = analyze_session(s.run, s.session, s.hosts)
    (h,) = r.hosts
    assert h.job["kind"] == "unknown"
    found = {f.rule: f for f in h.findings}
    assert {"launch_bound", "xla_not_used"} <= set(found)
    codes = [a.snippet for rule in ("launch_bound", "xla_not_used") for a in found[rule].actions if a.snippet]
    assert any("def run_one_step(batch):" in c for c in codes)
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
