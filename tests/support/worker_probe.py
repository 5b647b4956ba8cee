"""Run in an analysis worker (``runtime.isolation.call``): which modules an analysis imports there, i.e. under the
worker's memory limit, that the forkserver did not load first (``isolation.LAZY_ANALYSIS_MODULES``)."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any


def modules_analyses_import(files: list[tuple[str, str]], progress: Any = None) -> list[str]:
    """Analyse each ``(path, format)`` in this process; the modules that were not loaded before, sorted."""
    before = set(sys.modules)
    from tb_gpu_advisor.runtime import pipeline

    for path, fmt in files:
        report = pipeline.analyze_host(SimpleNamespace(host="probe", path=path, format=fmt, size=0))
        assert report.error is None, (path, report.error)
    return sorted(set(sys.modules) - before)
