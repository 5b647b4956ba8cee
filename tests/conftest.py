"""Every test gets its own report cache: no test reads or writes the user's ~/.cache/tb-gpu-advisor, and no
test sees a report another test stored (subprocesses inherit the variable).  Apart from it, the sessions of the kept
captures are analysed once per test run and shared by every worker (``tests/support/report_store.py``)."""

from __future__ import annotations

import itertools
import logging
import os

import pytest

from tb_gpu_advisor.common import logs
from tb_gpu_advisor.common.cachedir import ENV_DIR
from tb_gpu_advisor.common.thresholds import ENV_MODEL_FLOPS, ENV_NET_GBPS


#: the number of this process's next test's report cache folder (``_private_report_cache``)
_CACHES = itertools.count()
#: this process's one folder of every test's own report cache folder (set by ``_report_store``, the session's)
_CACHE_ROOT: list[str] = []
_CACHE_VAR = ENV_DIR
#: what the command's ``main`` sets for its workers when a test runs it in this process (``cli.main._run``: the cache
#: folder and the settings; ``common.logs.configure``: the debug switch): each put back after every test
_SET_BY_MAIN = (ENV_DIR, ENV_NET_GBPS, ENV_MODEL_FLOPS, logs.ENV_DEBUG)


@pytest.fixture(autouse=True)
def _private_report_cache():
    """A new empty folder per test, numbered in this process's one folder, as the test's report cache: only named
    here (the cache makes its folder when it first stores, as for a user without ``~/.cache/tb-gpu-advisor``).

    Every test pays this fixture, so it is kept to the variable and a counter (10,000 tests: every millisecond here is
    ten seconds of CPU): no ``monkeypatch`` or other fixture (their set-up and undo cost ~0.3 ms a test) and no
    ``mkdir`` per test.  It was ``tmp_path_factory.mktemp`` per test before, which listed the run's whole temporary
    root each time to number it (a cost that grew with every test run before) and made each test's ``tmp_path`` list
    those folders too.  The value before the test (the run's own, or unset) comes back after it, as before.

    Also put back after each test: what the command's ``main`` sets when a test runs it in this process (some 60
    tests do, ``cli_report.ran_report`` among them) -- the settings' variables and the debug switch, and the stderr
    handler it puts on the root logger, bound to that test's redirected stderr.  Left, a later test in the worker read
    ``--model-flops-per-step`` as its own setting, and its warnings went to a dead buffer, so a check that nothing is
    logged on stderr passed whatever was logged (h37-review62).  Every command handler goes after a test, not only the test's own: one a module-scoped
    fixture's ``main`` installed was in place before its tests began, so it stayed for the rest of the worker (CI of
    stop 98: the next in-process ``main`` replaced it and the review62 check saw a handler gone that it had not set)."""
    before = [os.environ.get(v) for v in _SET_BY_MAIN]
    root, package = logging.getLogger(), logging.getLogger(logs.PACKAGE)
    levels = root.level, package.level
    os.environ[_CACHE_VAR] = f"{_CACHE_ROOT[0]}/{next(_CACHES)}"
    yield
    for var, value in zip(_SET_BY_MAIN, before):
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    for h in [h for h in root.handlers if logs.is_command_handler(h)]:
        root.removeHandler(h)  # every one, also one a module or session fixture's ``main`` put there before the test
    root.setLevel(levels[0])
    package.setLevel(levels[1])


@pytest.fixture(scope="session", autouse=True)
def _report_store(tmp_path_factory):
    """The folder where the sessions of kept captures are analysed once for the whole run
    (``tests/support/report_store.py``): the run's temporary root, which every pytest-xdist worker of the run shares
    (each worker's own root is a folder of it).  Also names this process's folder of the tests' own report caches
    (``_private_report_cache``)."""
    from tests.support import report_store

    _CACHE_ROOT[:] = [str(tmp_path_factory.mktemp("report-caches"))]
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    report_store.set_folder(root / "analysed-sessions")
    yield
    report_store.set_folder(None)


def pytest_collection_finish(session):  # noqa: ANN001 - pytest's hook signature
    """Freeze what collection made (``gc.freeze``): the ~1,000 test modules, their functions and the ~11,000 test items
    live to the end of the run, yet every full collection of the cyclic garbage collector walked them all again
    (each worker collects the whole suite: ~430,000 objects).  Frozen, the collector skips them; objects the tests
    make are collected as before.  Measured in one process that collected the whole suite, as a worker does, and ran
    ``tests/metrics`` (759 tests): 11.8 -> 4.2 s of CPU in the collector, 114.8 -> 97.5 s for the tests."""
    import gc

    gc.freeze()


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
