"""The framework as it talks to a host's job is made once and shared by every rule, table and job rule (h37-speed59).

Every rule builds its context (``rules.base.Ctx``), which asked ``job.adapt`` -- ``Framework.for_job`` over the
framework's whole fix table -- again: ~40 times a host, up to 6.5% of an analysis (``benchmarks/rule_context.py``).
``adapt`` is a pure function of the framework, the job's tags and its engine, so its answer is kept by the three."""

from __future__ import annotations

from tb_gpu_advisor import frameworks, job
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks.base import Framework
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import DEMO_LOGS


def test_a_hosts_analysis_adapts_its_framework_once(monkeypatch):
    """The demo's fp32 job (one host, many rules firing): ``Framework.for_job`` runs once for the host's one
    (framework, tags, engine), not once per rule (BASE: 40 and more)."""
    monkeypatch.setattr(job, "_ADAPTED", job.Memo(256))
    made: list[tuple[str, ...]] = []
    for_job = Framework.for_job
    monkeypatch.setattr(Framework, "for_job", lambda self, tags: made.append(tuple(tags)) or for_job(self, tags))
    (s,) = [s for s in discover(str(DEMO_LOGS)) if s.run == "fp32_no_tensor_cores"]
    report = analyze_session(s.run, s.session, s.hosts)
    assert any(f.severity == "critical" for h in report.hosts for f in h.findings)  # the rules ran and spoke
    assert len(made) == len(set(made)) >= 1, made


def test_one_answer_per_framework_tags_and_engine():
    """The kept answer is the one made anew, for each of the three; another framework, tag set or engine is another
    answer (never one job's fixes served to another's)."""
    pt, tf = frameworks.get("pytorch"), frameworks.get("tensorflow")
    asks = [(pt, ("training",), None), (pt, ("inference",), None), (tf, ("training",), None),
            (pt, ("inference", "serving"), "vllm")]
    for fw, tags, engine in asks:
        kept = job.adapt(fw, tags, engine)
        assert job.adapt(fw, list(tags), engine) is kept  # asked again: the same object, made once
        assert kept == job._adapt(fw, tags, job.engines.by_id(engine))  # the answer made anew
    answers = [job.adapt(*a) for a in asks]
    assert len({id(a) for a in answers}) == len(asks)
    assert answers[0].fixes != answers[1].fixes and answers[1].fixes != answers[3].fixes
