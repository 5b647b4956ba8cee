"""``common.jsonout`` writes what ``json.dumps(dataclasses.asdict(...))`` wrote, byte for byte (issue #30 item 3).

The reference is the standard library's own round trip -- ``dataclasses.asdict`` then ``json.dumps`` with the same
``indent``, ``allow_nan=False`` and ``default`` -- run on real reports (TensorFlow XPlane, several hosts, PyTorch
ranks, an AMD trace, a diff) and on values chosen for the corners of ``json``'s encoder.  Its speed is measured in
``benchmarks/json_write.py``, never here.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import json
import math
import os
from typing import Any

import numpy as np
import pytest

from tb_gpu_advisor.cli.report import format_reports, report_set, write_reports
from tb_gpu_advisor.common import jsonout
from tb_gpu_advisor.model.schema import HostReport, Report, _json_default
from tb_gpu_advisor.model.steprows import StepRowTable
from tb_gpu_advisor.report.diff import diff_reports
from tb_gpu_advisor.runtime.advisor import Advisor
from tests.support.paths import REPO

DEMO = os.path.join(REPO, "demo_logs")
#: (logdir, run): TF XPlane one host, TF several hosts, PyTorch ranks, an AMD PyTorch trace
SESSIONS = [(DEMO, "input_bound"), (DEMO, "multi_host"), (DEMO, "pytorch_ddp_straggler"),
            (os.path.join(REPO, "tests", "fixtures", "wild", "amd_mi250"), None)]


def _reference(obj: Any, indent: int | str | None) -> str:
    """The writer jsonout replaces: asdict (applied wherever a dataclass sits), then json.dumps."""
    return json.dumps(_asdict_everywhere(obj), indent=indent, allow_nan=False, default=_json_default)


def _asdict(obj: Any) -> Any:
    """``dataclasses.asdict`` of a report as it was built before its step rows became columns: each host's
    ``StepRowTable`` (``model.steprows``) replaced by the list of StepRow it stands for."""
    return dataclasses.asdict(_listed(obj))


def _listed(obj: Any) -> Any:
    if isinstance(obj, Report):
        return dataclasses.replace(obj, hosts=[_listed(h) for h in obj.hosts])
    if isinstance(obj, HostReport) and isinstance(obj.step_rows, StepRowTable):
        return dataclasses.replace(obj, step_rows=list(obj.step_rows))
    return obj


def _asdict_everywhere(v: Any) -> Any:
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return _asdict(v)
    if isinstance(v, dict):
        return type(v)((k, _asdict_everywhere(x)) for k, x in v.items())
    if isinstance(v, list):
        return [_asdict_everywhere(x) for x in v]
    return v


def _report(logdir: str, run: str | None) -> Report:
    advisor = Advisor(logdir, cache="off")
    session = next(s for s in advisor.sessions() if run is None or s.run == run)
    return advisor.report(session).report


@pytest.fixture(scope="module")
def reports() -> list[Report]:
    return [_report(logdir, run) for logdir, run in SESSIONS]


def test_real_reports_are_written_as_asdict_and_json_dumps_wrote_them(reports):
    for r in reports:
        assert r.hosts and any(h.step_rows for h in r.hosts)  # reports with steps, tables and findings to write
        # the step rows are columns (model.steprows), written by their own fast path: it is what is checked here
        assert any(isinstance(h.step_rows, StepRowTable) and len(h.step_rows) for h in r.hosts)
        for indent in (None, 1, 2):
            assert r.to_json(indent=indent) == json.dumps(_asdict(r), indent=indent, allow_nan=False,
                                                          default=_json_default), (r.run, indent)
        assert r.to_dict() == _asdict(r)
        for h in r.hosts:  # the per-host cache's compact JSON
            assert h.to_json() == json.dumps(_asdict(h), allow_nan=False, default=_json_default)
            assert HostReport.from_json(h.to_json()).to_json() == h.to_json()


def test_the_cli_json_is_the_asdict_text(reports):
    single = format_reports(reports[:1], "json", single=True)
    assert single == json.dumps(_asdict(reports[0]), indent=2, allow_nan=False,
                                default=_json_default) + "\n"
    several = format_reports(reports, "json", logdir="logs")
    reference = {**report_set(reports, "logs"), "reports": [_asdict(r) for r in reports]}
    assert several == json.dumps(reference, indent=2, allow_nan=False, default=_json_default) + "\n"
    assert json.loads(several)["reports"] == [json.loads(r.to_json()) for r in reports]


class _Writes(list):
    """A text file that keeps each ``write``."""

    def write(self, text: str) -> None:
        self.append(text)


def test_the_cli_writes_its_json_in_blocks_as_format_reports_makes_it(reports, monkeypatch):
    """``report --format json`` streams the text (``jsonout.dump``, issue #38: a 1 GB export's report was the
    command's memory peak as one string): the same bytes, and with small blocks, in many writes."""
    monkeypatch.setattr(jsonout, "_FLUSH_PIECES", 50)
    for single, some in ((True, reports[:1]), (False, reports)):
        fh = _Writes()
        write_reports(fh, some, "json", single=single, logdir="logs")
        assert "".join(fh) == format_reports(some, "json", single=single, logdir="logs")
        assert len(fh) > 10
    fh = _Writes()
    write_reports(fh, reports, "markdown")
    assert "".join(fh) == format_reports(reports, "markdown")


def test_a_diff_is_written_as_asdict_and_json_dumps_wrote_it():
    d = diff_reports(_report(DEMO, "input_bound"), _report(DEMO, "input_bound_fixed"))
    assert d.findings and d.breakdown
    for indent in (None, 2):
        assert d.to_json(indent=indent) == json.dumps(dataclasses.asdict(d), indent=indent, allow_nan=False,
                                                      default=_json_default)
    assert d.to_dict() == dataclasses.asdict(d)


class _Level(enum.IntEnum):
    HIGH = 3


_Pair = collections.namedtuple("_Pair", "a b")


@dataclasses.dataclass
class _Leaf:
    x: Any
    items: list = dataclasses.field(default_factory=list)
    table: dict = dataclasses.field(default_factory=dict)


CORNERS = [
    _Leaf(1.5, [1, 2.0, "é\n\"\\\x01", None, True, False, -0.0, 1e-7, 1e300, 10**30]),
    _Leaf(np.float64(3.25), [np.int64(7), np.float32(1.25), np.bool_(True), _Level.HIGH, _Pair(1, [2, {}])],
          {"nested": [[], [{}], {"deep": {"er": [1, [2, [3]]]}}], 1: "int key", 2.5: "float key", None: "none key",
           False: "bool key", "dc": [_Leaf("in a list", [_Leaf(None)])]}),
    {"a dict": [_Leaf(0.1)], "tuple": (1, (2, 3)), "empty": {}},
    [_Leaf([]), "top", 0, [[[]]]],
    "a string", 5, 2.0, None, [], {},
]


@pytest.mark.parametrize("obj", CORNERS, ids=range(len(CORNERS)))
@pytest.mark.parametrize("indent", [None, 0, 1, 2, 4, "\t"])
def test_corners_of_the_encoder_match_the_reference(obj, indent):
    assert jsonout.dumps(obj, indent=indent, default=_json_default) == _reference(obj, indent)
    assert json.dumps(jsonout.plain(obj), indent=indent, allow_nan=False, default=_json_default) == \
        _reference(obj, indent)


@pytest.mark.parametrize("bad", [math.nan, math.inf, [1.0, -math.inf], {"k": {"n": math.nan}}, _Leaf(math.nan),
                                 {math.inf: 1}])
@pytest.mark.parametrize("indent", [None, 2])
def test_nan_and_infinity_are_refused_as_json_refuses_them(bad, indent):
    with pytest.raises(ValueError):
        _reference(bad, indent)
    with pytest.raises(ValueError):
        jsonout.dumps(bad, indent=indent, default=_json_default)


@pytest.mark.parametrize("indent", [None, 2])
def test_what_json_cannot_write_is_a_type_error_as_before(indent):
    for bad in (object(), {"k": [object()]}, {(1, 2): "tuple key"}):
        with pytest.raises(TypeError):
            _reference(bad, indent)
        with pytest.raises(TypeError):
            jsonout.dumps(bad, indent=indent, default=_json_default)


def test_plain_copies_containers_as_asdict_does():
    leaf = _Leaf(1, [1, [2]], {"k": [3]})
    out = jsonout.plain(leaf)
    assert out == dataclasses.asdict(leaf)
    out["items"][1].append(9)
    out["table"]["k"].append(9)
    assert leaf.items == [1, [2]] and leaf.table == {"k": [3]}  # the report is not changed through the copy
