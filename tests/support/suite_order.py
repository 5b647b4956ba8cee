"""The order ``make test`` hands test files to its pytest-xdist workers: the costliest first (``--dist loadfile``).

Why: xdist's ``loadfile`` scheduler hands out whole files, the files with the most tests first.  A file's count of
tests says little of its cost -- the property walk is 14 tests and ~330 reports, the compiled-vs-Python comparisons a
few dozen cases over every kept capture, the end-to-end tests a handful that start a server and a browser -- so such
files came last, and one worker ran the last of them while the other had long finished (the "tail" of session 69's
survey).  Handing the costliest file out first (longest-processing-time-first, the classic rule for two machines) lets
the cheap files fill in at the end, so both workers finish together.

The cost of a file is what a full run measured (``MODULE_SECONDS``: seconds a file took on one worker, set-up
included, from a run's ``--junitxml``: ``scripts/module_seconds.py`` writes it); a file not measured yet (a new one)
is costed at its count of tests times the measured files' median cost of a test.  Only the order changes: every file
still runs whole on one worker, and the tests of a file in their order, so what a test checks and sees is the same.
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

#: the measured seconds of each test file (path from the repository root, as pytest names it)
COSTS_FILE = Path(__file__).resolve().parent / "module_seconds.json"


def module_seconds() -> dict[str, float]:
    """The measured cost of each file on the decoder path this run takes (the Makefile's pure-Python rerun has its
    own column: its decoders cost more); empty where the table is missing or unreadable (xdist's own order then)."""
    try:
        table = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    column = "pure_python_seconds" if os.environ.get("TB_GPU_ADVISOR_PURE_PYTHON") else "seconds"
    return {str(k): float(v) for k, v in (table.get(column) or table.get("seconds") or {}).items()}


def file_costs(units: dict[str, int], measured: dict[str, float]) -> dict[str, float]:
    """Each file's cost: its measured seconds, else its count of tests (``units``: file -> tests) times the median
    seconds of a test over the measured files this run holds (else of every measured file at one test each)."""
    per_test = [measured[f] / n for f, n in units.items() if f in measured and n]
    rate = statistics.median(per_test) if per_test else (statistics.median(measured.values()) if measured else 1.0)
    return {f: measured.get(f, n * rate) for f, n in units.items()}


def make_scheduler(config, log):  # noqa: ANN001, ANN201 - pytest's config, xdist's log
    """xdist's ``loadfile`` scheduler, handing out the costliest file left each time a worker asks for one."""
    from xdist.scheduler import LoadFileScheduling

    class CostliestFirst(LoadFileScheduling):
        _costs: dict[str, float] | None = None

        def _assign_work_unit(self, node) -> None:  # noqa: ANN001 - xdist's WorkerController
            if self._costs is None:
                self._costs = file_costs({s: len(u) for s, u in self.workqueue.items()}, module_seconds())
            # the costliest file left first; ties in xdist's own order (max keeps the first of equals)
            scope = max(self.workqueue, key=lambda s: self._costs.get(s, 0.0))
            self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)  # pops the first unit: the one chosen here

    return CostliestFirst(config, log)
