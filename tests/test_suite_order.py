"""The order ``make test`` hands test files to its workers (``tests/support/suite_order.py``): the costliest first.

Only the order is the scheduler's: each file still goes whole to one worker, each test to exactly one.  These fail
on dbf6cf15 (no such module; xdist's own order there is by count of tests, so a file of few costly tests came last).
"""

from __future__ import annotations

import json

import pytest

from tests.support import suite_order

xdist = pytest.importorskip("xdist")


class _Config:
    """What xdist's scheduler reads of pytest's config: two workers, ``--dist loadfile``."""

    def getvalue(self, name: str):  # noqa: ANN201 - pytest's signature
        return {"numprocesses": 2, "tx": ["2*popen"], "dist": "loadfile", "maxworkerrestart": None}.get(name)


class _Node:
    """A worker: what it was sent (indices into its collection)."""

    def __init__(self, name: str) -> None:
        self.name, self.sent, self.shutting_down = name, [], False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append(indices)


def _scheduler(monkeypatch: pytest.MonkeyPatch, table: dict[str, float], files: dict[str, int]):
    """A scheduler over ``files`` (file -> its count of tests) with ``table`` as the measured seconds."""
    monkeypatch.setattr(suite_order, "module_seconds", lambda: dict(table))
    sched = suite_order.make_scheduler(_Config(), None)
    collection = [f"{f}::test_{i}" for f, n in files.items() for i in range(n)]
    sched.collection = collection
    for f, n in files.items():
        sched.workqueue[f] = {f"{f}::test_{i}": False for i in range(n)}
    return sched, collection


def _handed(sched, collection: list[str]) -> list[tuple[str, str]]:
    """(worker, file) in the order the scheduler hands the files out, the two workers asking in turn."""
    nodes = [_Node("gw0"), _Node("gw1")]
    for n in nodes:
        sched.registered_collections[n] = collection
    out = []
    while sched.workqueue:
        node = nodes[len(out) % 2]
        sched._assign_work_unit(node)
        out.append((node.name, collection[node.sent[-1][0]].split("::")[0]))
    return out


def test_the_costliest_file_goes_first_whatever_its_count_of_tests(monkeypatch):
    """The property walk (few tests, minutes) before a file of many cheap tests: xdist's own order (most tests first)
    handed it out last."""
    files = {"tests/a/test_many.py": 200, "tests/report/test_walk.py": 3, "tests/b/test_mid.py": 20}
    sched, coll = _scheduler(monkeypatch, {"tests/a/test_many.py": 10.0, "tests/report/test_walk.py": 300.0,
                                           "tests/b/test_mid.py": 50.0}, files)
    assert _handed(sched, coll) == [("gw0", "tests/report/test_walk.py"), ("gw1", "tests/b/test_mid.py"),
                                    ("gw0", "tests/a/test_many.py")]


def test_every_test_of_every_file_is_sent_once(monkeypatch):
    """Only the order changes: each file whole to one worker, each test once."""
    files = {f"tests/x/test_{i}.py": i % 7 + 1 for i in range(30)}
    sched, coll = _scheduler(monkeypatch, {f: float(i * 13 % 11) for i, f in enumerate(files)}, files)
    handed = _handed(sched, coll)
    assert sorted(f for _, f in handed) == sorted(files)
    sent = [i for w in (sched.registered_collections) for batch in w.sent for i in batch]
    assert sorted(sent) == list(range(len(coll)))


def test_a_file_not_measured_is_costed_by_its_count_of_tests():
    """A new file: its tests times the median measured cost of a test (here 1 s), so it neither jumps the queue nor
    waits for the end whatever its size."""
    costs = suite_order.file_costs({"tests/a.py": 10, "tests/b.py": 4, "tests/new.py": 30},
                                   {"tests/a.py": 10.0, "tests/b.py": 4.0})
    assert costs == {"tests/a.py": 10.0, "tests/b.py": 4.0, "tests/new.py": 30.0}


def test_without_a_table_the_order_is_by_count_of_tests(monkeypatch, tmp_path):
    """No table (or an unreadable one): every file at one cost per test -- xdist's own order, most tests first."""
    monkeypatch.setattr(suite_order, "COSTS_FILE", tmp_path / "absent.json")
    assert suite_order.module_seconds() == {}
    assert suite_order.file_costs({"tests/a.py": 3, "tests/b.py": 9}, {}) == {"tests/a.py": 3.0, "tests/b.py": 9.0}


def test_the_pure_python_rerun_reads_its_own_column(monkeypatch, tmp_path):
    """The Makefile's rerun (``TB_GPU_ADVISOR_PURE_PYTHON=1``) costs its files on the Python decoders."""
    table = tmp_path / "t.json"
    table.write_text(json.dumps({"seconds": {"tests/a.py": 1.0}, "pure_python_seconds": {"tests/a.py": 9.0}}))
    monkeypatch.setattr(suite_order, "COSTS_FILE", table)
    monkeypatch.delenv("TB_GPU_ADVISOR_PURE_PYTHON", raising=False)
    assert suite_order.module_seconds() == {"tests/a.py": 1.0}
    monkeypatch.setenv("TB_GPU_ADVISOR_PURE_PYTHON", "1")
    assert suite_order.module_seconds() == {"tests/a.py": 9.0}


def test_the_hook_orders_loadfile_only(request):
    """``--dist loadfile`` (``make test``) gets this scheduler; another mode keeps xdist's own."""
    from tests.conftest import pytest_xdist_make_scheduler

    class Other(_Config):
        def getvalue(self, name: str):  # noqa: ANN201
            return "load" if name == "dist" else super().getvalue(name)

    assert type(pytest_xdist_make_scheduler(_Config(), None)).__name__ == "CostliestFirst"
    assert pytest_xdist_make_scheduler(Other(), None) is None
