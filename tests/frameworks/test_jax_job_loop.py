"""JAX's capture advice marks the job's own steps (h37-audit68, the audit of session 68's control reports): one text
told every JAX job to mark its steps ``StepTraceAnnotation('train', ...)``, forward passes and work of no known kind
too, as TensorFlow's one text did before h37-left43 (``test_tf_job_loop``).  Now the mark is named for the job's work
(``frameworks.jax.STEP_MARKS``, chosen by ``base.job_loop`` as every framework's loop is) and every capture fix quotes
the same advice.

On base 225b624d the real MI300X JAX captures read as forward passes (wild/jax_eager_mi300x_attention,
jax_eager_mi300x_elementwise, jax_mi300x) were told ``StepTraceAnnotation('train', step_num=step)`` in their capture
advice and capture fixes; the law (``contradictions.job_words_problems``' ``_TRAINING_CAPTURE``) did not know JAX's
spelling, so the walk passed them."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.frameworks import jax
from tests.support.contradictions import job_words_problems
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


@pytest.mark.parametrize("tags, mark", [((), "train"), (("inference",), "predict"), (("any_work",), "step"),
                                        (("any_work", "alone", "cold"), "step")])
def test_the_capture_advice_marks_the_jobs_own_steps(tags, mark) -> None:
    fw = jax.FRAMEWORK.for_job(tags)
    assert f"StepTraceAnnotation('{mark}', step_num=step)" in fw.capture_snippet
    quoting = [k for k in fw.fixes if k.startswith("capture_quality")
               and any(fw.capture_snippet in (a.snippet or "") for a in fw.fixes[k])]
    assert len(quoting) >= 10  # every capture fix that quotes the advice quotes this job's
    for k in fw.fixes:
        for a in fw.fixes[k]:
            assert "StepTraceAnnotation('" not in (a.snippet or "") or fw.capture_snippet in a.snippet, k


def test_a_training_jobs_capture_advice_is_unchanged() -> None:
    """Control: a training job keeps JAX's own example, ``'train'``, and the general advice is still that."""
    assert jax.FRAMEWORK.for_job(()).capture_snippet == jax.CAPTURE == jax.FRAMEWORK.capture_snippet
    assert "StepTraceAnnotation('train', step_num=step)" in jax.CAPTURE


def test_a_real_jax_forward_pass_is_not_told_to_mark_training_steps() -> None:
    """wild/jax_eager_mi300x_attention (MI300X, JAX eager attention; no backward, no optimizer): its capture advice
    and its capture fixes mark ``'step'`` (its kind is a low-confidence forward: work of no confident kind), and the
    job-words law holds; on base both said ``'train'`` (2 problems)."""
    (s,) = [s for s in wild_sessions() if s.run == "jax_eager_mi300x_attention"]
    r = session_report(s)
    (h,) = r.hosts
    assert h.job["kind"] == "inference" and h.job["capture_advice"] == jax.FRAMEWORK.for_job(("any_work",)).capture_snippet
    fixes = [a.snippet for f in h.findings if f.rule == "capture_quality" for a in f.actions if a.snippet]
    assert fixes and all("StepTraceAnnotation('step', step_num=step)" in c for c in fixes)
    assert not job_words_problems(r)
