"""A random job (``synthetic.randjobs``) through the whole analysis, and every law its report breaks: the properties
(``properties.report_violations``, ``ledger_savings_violations``), the text's one value per quantity, the job's and
the vendor's words (``contradictions``) and the JSON's agreement with itself (``json_fields``).  Shared by
``tests/report/test_random_jobs.py`` (a few dozen seeds) and ``scripts/randjobs.py`` (a time budget)."""

from __future__ import annotations

import shutil
import tempfile
import traceback

from synthetic import randjobs
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.runtime.pipeline import analyze_session


def laws_broken(report: Report) -> list[str]:
    """Every law ``report`` breaks, one line each."""
    from tb_gpu_advisor.report import render
    from tests.support.contradictions import job_words_problems, text_number_problems, vendor_words_problems
    from tests.support.json_fields import json_field_problems
    from tests.support.properties import ledger_savings_violations, report_violations

    out = report_violations(report) + ledger_savings_violations(report)
    out += text_number_problems(render.to_text(report))
    out += job_words_problems(report) + vendor_words_problems(report) + json_field_problems(report.to_dict())
    return sorted(set(out))


def report_of(job: randjobs.Job, folder: str) -> Report:
    """The report of ``job``, written under ``folder``."""
    randjobs.write(job, folder)
    (s,) = [s for s in discover(folder) if s.run == f"job{job.seed}"]
    return analyze_session(s.run, s.session, s.hosts)


def check(job: randjobs.Job) -> list[str]:
    """The laws the report of ``job`` breaks; an exception in the analysis is one line ``crash: ...``."""
    folder = tempfile.mkdtemp(prefix="randjob")
    try:
        return laws_broken(report_of(job, folder))
    except Exception as e:  # noqa: BLE001 - a crash is a finding of the walk, with its place
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return [f"crash: {type(e).__name__}: {e} ({tb.filename.rsplit('/', 1)[-1]}:{tb.lineno})"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
