"""Every test gets its own report cache: no test reads or writes the user's ~/.cache/tb-gpu-advisor, and no
test sees a report another test stored (subprocesses inherit the variable)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_report_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_DIR", str(tmp_path_factory.mktemp("report-cache")))
