"""``common.jsonout`` writes exactly what ``dataclasses.asdict`` and ``json.dumps(indent=...)`` write."""

from __future__ import annotations

import collections
import dataclasses
import json
import math
from typing import NamedTuple

import numpy as np
import pytest

from tb_gpu_advisor.common import jsonout
from tb_gpu_advisor.model.schema import Report, _json_default


class Pair(NamedTuple):
    a: int
    b: str


@dataclasses.dataclass
class Leaf:
    x: float
    name: str
    flag: bool | None = None


@dataclasses.dataclass
class Tree:
    leaves: list[Leaf]
    by_name: dict[str, Leaf]
    pair: Pair
    tup: tuple
    arr: np.ndarray
    misc: object = None


def _tree() -> Tree:
    leaves = [Leaf(0.1, "a"), Leaf(-2.5e-300, "\u00e9\u2603\U0001f600 \"q\" \\ \n\t\x01", True), Leaf(1e22, "", False)]
    return Tree(leaves, {"x": leaves[0]}, Pair(1, "b"), (1, [2, {"y": None}]), np.arange(3), {1: [Leaf(3.0, "c")]})


def test_as_dict_equals_dataclasses_asdict_and_shares_no_container():
    tree = _tree()
    ours, stdlib = jsonout.as_dict(tree), dataclasses.asdict(tree)
    assert repr(ours) == repr(stdlib)  # same values, same key order, same container types
    assert type(ours["pair"]) is Pair
    assert ours["arr"] is not tree.arr and (ours["arr"] == tree.arr).all()  # non-atomic leaves are copied
    ours["leaves"][0]["x"] = 9.0
    assert tree.leaves[0].x == 0.1
    with pytest.raises(TypeError):
        jsonout.as_dict(Leaf)


def test_as_dict_rebuilds_a_defaultdict_with_its_factory():
    # Python 3.11's dataclasses.asdict fails on a defaultdict (fixed in 3.12, which rebuilds it so)
    @dataclasses.dataclass
    class Holder:
        counts: collections.defaultdict

    out = jsonout.as_dict(Holder(collections.defaultdict(list, {"k": [Leaf(1.0, "x")]})))
    assert type(out["counts"]) is collections.defaultdict and out["counts"].default_factory is list
    assert out["counts"] == {"k": [{"x": 1.0, "name": "x", "flag": None}]}


VALUES = [
    {},
    [],
    {"a": [], "b": {}, "c": [[], [{}]]},
    [1, -0.0, 0.1, 1e300, 2.5e-8, 123456789012345678901234567890, True, False, None],
    {"s": "\u00e9\u2603\U0001f600 \"q\" \\ \n\t\x01\x7f", "n": {"deep": [{"x": [1, [2, [3]]]}]}},
    {1: "int key", 2.5: "float key", None: "null key", "z": (1, 2)},
    {True: "bool key", False: "other bool key"},
    {"np": [np.int64(7), np.float64(0.25), np.bool_(True), np.int32(-3), np.float32(0.5)]},
]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("indent", [1, 2, 4])
def test_dumps_equals_json_dumps(value, indent):
    assert jsonout.dumps(value, indent, _json_default) == json.dumps(value, indent=indent, allow_nan=False,
                                                                      default=_json_default)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_dumps_refuses_what_json_dumps_refuses(bad):
    for value in ([bad], {"k": bad}, {bad: 1}):
        with pytest.raises(ValueError):
            json.dumps(value, indent=2, allow_nan=False)
        with pytest.raises(ValueError):
            jsonout.dumps(value, 2, _json_default)
    with pytest.raises(TypeError):
        jsonout.dumps({(1, 2): 1}, 2, _json_default)
    with pytest.raises(TypeError):
        jsonout.dumps([object()], 2, _json_default)


def test_a_real_report_is_written_byte_for_byte_as_json_dumps_writes_it(tmp_path):
    from synthetic import scenarios
    from tb_gpu_advisor.runtime.advisor import Advisor

    scenarios.SCENARIOS["multi_gpu_gpu0_oversubscribed"]().write(tmp_path, run="multi")
    adv = Advisor(str(tmp_path))
    reports = [adv.report(s).report for s in adv.sessions()]
    assert reports and all(isinstance(r, Report) and r.hosts for r in reports)
    for rep in reports:
        assert rep.to_dict() == dataclasses.asdict(rep)
        stdlib = json.dumps(dataclasses.asdict(rep), indent=2, allow_nan=False, default=_json_default)
        assert rep.to_json(indent=2) == stdlib
        assert len(stdlib) > 10_000  # a report with steps, tables and findings, not an empty shell
