"""A collective inherited from before the window is typed like the same kernel's calls in it (h37-follow30, issue #37
class 1 "windows that inherit work").

The wrong assumption (``metrics.comm._types``): *a kernel's collective type is known only from its own call*.  A
kernel launched before the window has no call in it (its correlation id matches none), so no host op tells its type
and NCCL's point-to-point kernel name (``ncclKernel_SendRecv``, which NCCL before 2.19 runs for all-reduce and
all-to-all alike) typed it SendRecv.  ``torchrec_a100_stalls``' first step inherits the step before's big all-reduce
(23.8 ms): main read AllReduce 1.8 calls / 20.9 ms a step and put that call in a SendRecv row.  Now it takes the type
that every in-window call of the same kernel, launch configuration and stream took from its op; where those disagree
(one stream runs all-gathers and reduce-scatters with one grid) it keeps the name's.

Generator: :func:`synthetic.torchtrace.write_step_in_flight` with ``collectives=True``, truth by construction.
"""

from __future__ import annotations

import gzip
import json

import pytest

from synthetic.torchtrace import write_step_in_flight
from tests.support.paths import FIXTURES
from tests.support.run_report import one_file_host

TORCHREC = FIXTURES / "wild" / "torchrec_a100_stalls" / "rank0.1.pt.trace.json.gz"


def _rows(host: dict) -> dict[str, list]:
    """The collectives table's rows by type."""
    return {r[0]: r for r in host["communication"]["rows"]}


def _allreduce_ops_per_step(path) -> list[int]:
    """By hand: the ``c10d::allreduce_`` host ops each ``ProfilerStep`` holds."""
    with gzip.open(path, "rt") as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e["name"].startswith("ProfilerStep#")
                   and e.get("cat") == "user_annotation")
    ops = [e["ts"] for e in ev if e["name"] == "c10d::allreduce_" and e.get("cat") == "cpu_op"]
    return [sum(s <= t < e for t in ops) for s, e in steps]


def test_an_inherited_all_reduce_is_typed_like_its_kernels_calls_in_the_window():
    """By hand every step issues 2 all-reduces; main read AllReduce ``1.8 == 2.0`` and a SendRecv row of 1 call, 4.99 ms
    a step (the inherited 23.8 ms one).  What stays SendRecv: the two inherited grid-24 kernels of the all-gather /
    reduce-scatter stream, whose in-window peers disagree (0.14 ms a step)."""
    per_step = _allreduce_ops_per_step(TORCHREC)
    assert set(per_step) == {2}, per_step
    rows = _rows(one_file_host(str(TORCHREC), "kineto"))
    assert rows["AllReduce"][1] == pytest.approx(2.0), rows
    assert rows["AllReduce"][2] > 25.0, rows  # the inherited 23.8 ms call's time inside step 550 is the type's
    assert rows["SendRecv"][2] < 0.5, rows


@pytest.mark.parametrize("steps", [3, 5])
def test_a_generated_inherited_all_reduce_takes_its_peers_type(tmp_path, steps):
    """Truth by construction: one all-reduce and one all-to-all a step, both NCCL's point-to-point kernel on one stream
    told apart by grid, and the window opens on the step before's all-reduce.  Main added a SendRecv row for it."""
    path = tmp_path / "w.pt.trace.json"
    truth = write_step_in_flight(str(path), steps=steps, collectives=True)
    host = one_file_host(str(path), "kineto")
    rows = _rows(host)
    assert set(rows) == set(truth["calls"]), rows
    for t, n in truth["calls"].items():
        assert rows[t][1] == pytest.approx(n), rows
    assert "1 AllReduce call started before the first kept step" in host["communication"]["title"], host["communication"]


def test_control_steps_that_drop_the_inherited_call_read_alike(tmp_path):
    """8 steps: the stock rule drops the first (holding the inherited call) and the last; main read it alike."""
    path = tmp_path / "w.pt.trace.json"
    truth = write_step_in_flight(str(path), steps=8, collectives=True)
    rows = _rows(one_file_host(str(path), "kineto"))
    assert {t: r[1] for t, r in rows.items()} == pytest.approx({t: float(n) for t, n in truth["calls"].items()})
