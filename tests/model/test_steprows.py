"""Step rows kept as columns (issue #38 deliverable 4): ``model.steprows.StepRowTable`` reads and writes as the list of
StepRow it stands for, and ``metrics.types.StepTable`` as the list of StepMetrics.

The reference is the standard library: ``json.dumps`` of ``dataclasses.asdict`` of the StepRow list, with the same
indent, at every nesting depth, on values chosen for the corners where msgspec's float text and ``float.__repr__``
part (exponents below 1e-4 and from 1e16 up, negative zero, None), and with msgspec off.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pickle

import numpy as np
import pytest

from tb_gpu_advisor.common import jsonout
from tb_gpu_advisor.metrics.breakdown import StepArrays
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES, Breakdown, StepMetrics, StepTable, rows_of_gpu
from tb_gpu_advisor.model import steprows
from tb_gpu_advisor.model.schema import StepRow
from tb_gpu_advisor.model.steprows import StepRowTable

CATS = BREAKDOWN_CATEGORIES
WIDTH = 2 + len(CATS)
#: values where repr and msgspec's shortest text differ, or that json spells its own way
CORNERS = [0.0, -0.0, 1e-4, 9.99999e-05, 1e-05, 1e-06, -3e-06, 7.4e-05, 0.000123, 1e15, 1e16, 1.5e16, -2e17, 1e22,
           123456789012345.6, 5e-324, 1.0, 2.5, 1234.567891, 0.1, 0.3, float(2 ** 53), 1e-300, 1e300, np.nan]


def _table(n: int, seed: int = 0, gpus: list | None = None) -> StepRowTable:
    rng = np.random.default_rng(seed)
    vals = np.round(rng.exponential(5.0, (n, WIDTH)), 6)
    corners = np.array(CORNERS * (n * WIDTH // len(CORNERS) + 1))[: n * WIDTH]
    pick = rng.random((n, WIDTH)) < 0.3
    vals[pick] = rng.permutation(corners).reshape(n, WIDTH)[pick]
    steps = rng.integers(0, 10 ** 6, n)
    return StepRowTable(steps, gpus if gpus is not None else [int(g) for g in rng.integers(0, 8, n)], vals, CATS)


def _as_list(t: StepRowTable) -> list[StepRow]:
    """The rows built the way the report built them before the table: a None for each NaN."""
    out = []
    for s, g, row in zip(t.step.tolist(), t.gpu, t.values.tolist()):
        row = [None if math.isnan(v) else v for v in row]
        out.append(StepRow(step=s, start_ms=row[0], step_ms=row[1], breakdown=dict(zip(CATS, row[2:])), gpu=g))
    return out


@pytest.mark.parametrize("indent", [2, 1, 4, "\t"])
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_indented_text_is_json_dumps_of_the_rows(indent, depth):
    t = _table(400, seed=depth)
    rows = _as_list(t)
    obj, ref_obj = t, [dataclasses.asdict(r) for r in rows]
    for _ in range(depth):  # nest the list as a report nests it (a host inside a list inside an object)
        obj, ref_obj = {"x": [obj]}, {"x": [ref_obj]}
    assert jsonout.dumps(obj, indent=indent) == json.dumps(ref_obj, indent=indent, allow_nan=False)


@pytest.mark.parametrize("rows", [1, 6, 7, 8, 21])
def test_streamed_blocks_are_the_rows_text(monkeypatch, rows):
    """Written a block of rows at a time through ``jsonout.dump`` (the CLI's ``--format json``), at every boundary
    of 7-row blocks (one row, a block less one, a full block, one over, three blocks), and as one string."""
    import io

    monkeypatch.setattr(steprows, "_BLOCK_ROWS", 7)
    t = _table(rows, seed=rows)
    ref_obj = {"x": [{"step_rows": [dataclasses.asdict(r) for r in _as_list(t)], "after": 1}]}
    want = json.dumps(ref_obj, indent=2, allow_nan=False)
    obj = {"x": [{"step_rows": t, "after": 1}]}
    fp = io.StringIO()
    jsonout.dump(obj, fp, indent=2)
    assert fp.getvalue() == want
    assert jsonout.dumps(obj, indent=2) == want
    assert len(list(t.__json_indented_blocks__("  ", 3))) == -(-rows // 7)


def test_host_rows_gpu_none_and_empty_table():
    t = _table(50, gpus=[None] * 50)
    assert jsonout.dumps(t, indent=2) == json.dumps([dataclasses.asdict(r) for r in _as_list(t)], indent=2)
    empty = StepRowTable(np.zeros(0, np.int64), [], np.zeros((0, WIDTH)), CATS)
    assert jsonout.dumps({"step_rows": empty}, indent=2) == json.dumps({"step_rows": []}, indent=2)
    assert jsonout.dumps(empty) == "[]" and jsonout.plain(empty) == []


def test_every_corner_value_is_written_as_repr_writes_it():
    vals = np.array(CORNERS * WIDTH, dtype=np.float64)[: len(CORNERS) * WIDTH].reshape(-1, WIDTH)
    want = ["null" if math.isnan(v) else float.__repr__(v) for v in vals.ravel().tolist()]
    assert steprows._tokens(vals) == want
    assert steprows._tokens(vals, fast=False) == want  # the path without msgspec


def test_random_magnitudes_match_repr():
    rng = np.random.default_rng(7)
    vals = np.concatenate([10.0 ** rng.uniform(-12, 22, 20000), -np.round(rng.exponential(1e-4, 20000), 6),
                           np.round(rng.exponential(10.0, 20000), 6)])
    assert steprows._tokens(vals) == [float.__repr__(v) for v in vals.tolist()]


def test_reads_as_the_list_it_stands_for():
    t = _table(30)
    rows = _as_list(t)
    assert len(t) == 30 and list(t) == rows and t[3] == rows[3] and t[-1] == rows[-1] and t[2:5] == rows[2:5]
    assert t == rows and t == StepRowTable(t.step, t.gpu, t.values, CATS) and t != rows[:-1]
    back = pickle.loads(pickle.dumps(t))  # reports cross worker processes pickled
    assert isinstance(back, StepRowTable) and back == rows
    assert t.column("step_ms") == [r.step_ms for r in rows]
    assert t.column("collectives") == [r.breakdown["collectives"] for r in rows]
    assert jsonout.plain(t) == [dataclasses.asdict(r) for r in rows]
    assert jsonout.dumps({"r": t}) == json.dumps({"r": [dataclasses.asdict(r) for r in rows]})


def _arrays(gpu: int | None, n: int, seed: int) -> StepArrays:
    rng = np.random.default_rng(seed)

    def f() -> np.ndarray:
        return rng.exponential(3.0, n)

    return StepArrays(gpu=gpu, step=np.arange(n, dtype=np.int64) + 5, start_ms=np.cumsum(f()), step_ms=f(),
                      mat=rng.exponential(1.0, (n, len(CATS))), busy=f(), kernels=rng.integers(0, 9, n),
                      collectives=rng.integers(0, 3, n), memcpys=rng.integers(0, 3, n),
                      first_kernel_ms=np.where(rng.random(n) < 0.2, np.inf, f()), first_launch_ms=f())


def test_step_table_is_the_rows_of_its_blocks_in_order():
    host = [StepMetrics(step=i, gpu=None, start_ms=float(i), step_ms=2.0, breakdown=Breakdown(other=2.0),
                        device_busy_ms=0.0, kernel_count=0) for i in range(4)]
    blocks = [_arrays(0, 6, 1), _arrays(1, 6, 2), host]
    t = StepTable(blocks)
    rows = blocks[0].rows() + blocks[1].rows() + host
    assert len(t) == 16 and list(t) == rows and t == rows and t[7] == rows[7]
    assert t.of_gpu(1) == blocks[1].rows() and t.of_gpu(None) == host
    assert rows_of_gpu(t, 0) == rows_of_gpu(rows, 0) == blocks[0].rows()
    steps, gpus, mat = t.columns()
    assert steps.tolist() == [r.step for r in rows] and gpus == [r.gpu for r in rows]
    assert mat.tolist() == [[r.start_ms, r.step_ms, *(getattr(r.breakdown, c) for c in CATS)] for r in rows]
    assert pickle.loads(pickle.dumps(t)) == rows
