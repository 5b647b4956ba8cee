"""Each fix reaches only the jobs it fits (issue #37, h37-words32): JAX's jit of the step in the words of the job's
work (training, a forward pass, a step of no known kind).

Wrong assumption: *a JAX job that dispatches op by op is a training step*.  JAX's ``launch_bound`` and
``eager_execution`` fix was one hedge, "jit the whole step as one function (the forward pass; in training also the
backward pass and the optimizer update)", told to every job: a training job was hedged at, a forward pass told of its
backward pass.  Truth by construction: the job's tags (``job.work_of``) decide the words; the generated eager capture
(``synthetic.jaxcapture.jax_eager_ops``: nothing in it names the kind of work) and its real twin
(real-h100-jax/launch_bound_eager) are work of no known kind.
"""

from __future__ import annotations

import pytest

from synthetic.jaxcapture import jax_eager_ops
from tb_gpu_advisor.frameworks import jax as jax_fw
from tb_gpu_advisor.model.schema import Report
from tests.support.contradictions import _TRAINING_PROSE, job_words_problems
from tests.support.paths import SHARED_PROFILES
from tests.support.run_report import run_report

#: the rule keys whose fixes jit the step, as the rules ask for them (``launch_bound:optimizer``: a variant JAX has no
#: key of, which falls back to the rule's)
_JIT_KEYS = ("launch_bound", "launch_bound:optimizer", "eager_execution")
_VARIANTS = ("launch_bound:replay", "launch_bound:host_loop", "launch_bound:step")


def _texts(fw, key: str) -> str:
    return " ".join(a.text for a in fw.fix(key))


@pytest.mark.parametrize("key", _JIT_KEYS)
def test_a_forward_pass_is_told_to_jit_its_pass_not_a_training_step(key):
    """A forward pass (the ``inference`` tag) is told to jit the pass, with no word of training (main: "in training
    also the backward pass and the optimizer update")."""
    said = _texts(jax_fw.FRAMEWORK.for_job(("inference",)), key)
    assert "jit the whole forward pass" in said, said
    assert _TRAINING_PROSE.search(said) is None, said  # main: 'in training'


@pytest.mark.parametrize("key", _JIT_KEYS)
def test_a_training_step_is_told_plainly_and_work_of_no_known_kind_without_training(key):
    """A training job (no tag) is told its backward pass and update, unhedged; work of no known kind (``any_work``)
    its own step, with no training word (main: one hedged text for both)."""
    trains = _texts(jax_fw.FRAMEWORK.for_job(()), key)
    assert "the backward pass and the optimizer update" in trains and "in training" not in trains, trains
    own = _texts(jax_fw.FRAMEWORK.for_job(("any_work",)), key)
    assert "jit the whole step" in own and _TRAINING_PROSE.search(own) is None, own
    assert "backward" not in own


@pytest.mark.parametrize("tags", [("inference",), ("any_work",)])
def test_the_rules_variants_survive_the_jobs_rewrite(tags):
    """A ``rule@tag`` key rewrites the rule whole (``Framework.for_job``): the variants whose fixes fit any job (a
    replay's wait, a loop run from the host, a step of a few calls) are restated under it, not lost to the rule's."""
    trains, job = jax_fw.FRAMEWORK.for_job(()), jax_fw.FRAMEWORK.for_job(tags)
    for key in _VARIANTS:
        assert job.fix(key) == trains.fix(key), key


def _jit_fixes(r: Report) -> str:
    return " ".join(a.text for h in r.hosts for f in h.findings if f.rule in ("launch_bound", "eager_execution")
                    for a in f.actions)


def _eager_report(tmp_path) -> Report:
    jax_eager_ops(step_mark="step").write(tmp_path, "eager")
    return run_report(tmp_path, "eager")


def test_generated_eager_jax_of_no_known_kind_is_not_told_of_training(tmp_path):
    """Generated eager JAX (``jax_eager_ops``), its steps marked ``step`` (the capture advice's mark for work of no
    known kind; a ``train`` mark names training since h37-names70): nothing says what the work is for, so its
    launch-bound and eager findings jit "the whole step" with no training hedge (main: "...; in training also the
    backward pass ...")."""
    r = _eager_report(tmp_path)
    (h,) = r.hosts
    assert h.job["kind"] != "training" and "inference" not in h.job["tags"], h.job
    said = _jit_fixes(r)
    assert "jit the whole step" in said
    assert "in training" not in said, said  # main: the hedge
    assert job_words_problems(r) == []


def test_real_eager_jax_of_no_known_kind_is_not_told_of_training():
    """Real: real-h100-jax/launch_bound_eager (201 un-jitted ops a step, read as work of no known kind): both findings'
    jit fix without the training hedge (main: 'in training also the backward pass and the optimizer update')."""
    if not (SHARED_PROFILES / "real-h100-jax").is_dir():
        pytest.skip("../shared/profiles is not beside this checkout")
    r = run_report(SHARED_PROFILES / "real-h100-jax", "launch_bound_eager")
    rules = {f.rule for h in r.hosts for f in h.findings}
    assert {"launch_bound", "eager_execution"} <= rules, rules
    said = _jit_fixes(r)
    assert "jit the whole step" in said and "in training" not in said, said
