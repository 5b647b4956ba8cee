"""``schema.problem``'s quick yes/no check says what its field-by-field walk says (issue #38: the report cache checks
every report it reads back; the walk formatted a path string for every value, 0.4 s on a 6 MB host report).

Why: the walk stays the reference and gives the message; the quick check only decides whether the walk runs.  Both
are run on real reports (the demo logs' JSON, every section) and on thousands of their mutations -- a key removed, a
value of another type -- and must agree on each."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from tb_gpu_advisor.cli.main import main
from tb_gpu_advisor.model import schema
from tests.support.paths import DEMO_LOGS

#: Values a mutation puts in place of one found in a report: each scalar type, containers, a non-string key.
_VALUES = (None, "x", "", 0, 7, -1, 1.5, True, False, [], [1], ["a"], {}, {"a": 1}, {1: 2}, [{}], "error")


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> list[dict]:
    out = []
    for name in ("pytorch_ddp_straggler", "launch_bound", "multi_host"):
        path = tmp_path_factory.mktemp("r") / "report.json"
        assert main(["report", str(DEMO_LOGS / name), "--format", "json", "--output", str(path),
                     "--cache-dir", "off"]) in (0, 1, 2)
        out += json.loads(path.read_text())["reports"]
    assert out
    return out


def _places(doc: Any, path: tuple = ()) -> list[tuple]:
    """Every (container, key) of a parsed JSON document."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        out.append((doc, k))
        out += _places(v)
    return out


def _mutate(rng: random.Random, doc: str) -> dict:
    """1-3 mutations of the report ``doc``, given as its JSON text: parsed afresh, the copy a mutation edits (a deep
    copy's twin -- the document is parsed JSON -- at half its cost)."""
    doc = json.loads(doc)
    for _ in range(rng.randint(1, 3)):
        parent, key = rng.choice(_places(doc))
        if isinstance(parent, dict) and rng.random() < 0.3:
            del parent[key]
        else:
            parent[key] = copy.deepcopy(rng.choice(_VALUES))
    return doc


def _agree(cls: type, doc: Any) -> None:
    walk = schema._problem(cls, doc, cls.__name__)
    assert schema._checker(cls)(doc) == (walk is None), walk
    assert schema.problem(cls, doc) == walk


def test_the_quick_check_agrees_with_the_walk_on_real_and_mutated_reports(reports):
    rng = random.Random(38)
    refused = 0
    for doc in reports:
        _agree(schema.Report, doc)
        for host in doc["hosts"]:
            _agree(schema.HostReport, host)
        text = json.dumps(doc)
        for _ in range(150):
            bad = _mutate(rng, text)
            _agree(schema.Report, bad)
            refused += schema.problem(schema.Report, bad) is not None
    assert refused > 100, "the mutations hardly ever broke a report: the test tests little"


def test_a_valid_report_is_checked_without_the_walk(reports, monkeypatch):
    """The walk (which formats a path per value) runs only for a document the quick check refuses."""
    def walk(*a):
        raise AssertionError("the walk ran on a valid report")

    monkeypatch.setattr(schema, "_problem", walk)
    assert all(schema.problem(schema.Report, doc) is None for doc in reports)


def test_a_refused_report_still_says_where(reports):
    doc = copy.deepcopy(reports[0])
    doc["hosts"][0]["headline"][0]["value"] = "ten"
    assert schema.problem(schema.Report, doc) == "Report.hosts[0].headline[0].value: not float | None"
