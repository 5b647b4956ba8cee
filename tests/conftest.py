"""Every test gets its own report cache: no test reads or writes the user's ~/.cache/tb-gpu-advisor, and no
test sees a report another test stored (subprocesses inherit the variable)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_report_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_DIR", str(tmp_path_factory.mktemp("report-cache")))


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ANN001 - pytest's hook signature
    """Say in one line why tests were skipped, by cause: the real captures of ``../shared`` missing, the browser
    missing, root's permissions -- so a skip count is never a mystery (issue #21 item 5)."""
    from tests.support.paths import SHARED_PROFILES

    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    causes = {"real captures (../shared/profiles) not beside the repo": ("shared", "real ", "not found", "not here"),
              "browser (chromium) or its driver missing": ("chromium", "playwright", "browser"),
              "running as root (permission tests)": ("root",)}
    counts = dict.fromkeys(causes, 0)
    other = 0
    for rep in skipped:
        reason = str(rep.longrepr[-1] if isinstance(rep.longrepr, tuple) else rep.longrepr).lower()
        cause = next((c for c, words in causes.items() if any(w in reason for w in words)), None)
        if cause is None:
            other += 1
        else:
            counts[cause] += 1
    parts = [f"{n} because the {c}" for c, n in counts.items() if n]
    if other:
        parts.append(f"{other} because a check does not apply to that run or scenario")
    terminalreporter.write_line(f"skipped: {len(skipped)} tests -- " + "; ".join(parts) + ".")
    if counts["real captures (../shared/profiles) not beside the repo"] and not SHARED_PROFILES.is_dir():
        terminalreporter.write_line(f"  the real-capture tests read {SHARED_PROFILES}: put the shared checkout there "
                                    "to run them")
