"""A range named like a warm-up that recurs inside every iteration is a phase of it, never the program's warm-up (issue
#37, h37-left51).

Megatron-core's 1F1B schedule (``megatron/core/pipeline_parallel/schedules.py``,
``forward_backward_pipelining_without_interleaving``) pushes ``<schedule>.warmup``, ``.steady`` and ``.cooldown``
ranges inside every iteration under ``--nvtx-ranges``.  Main read every ``.warmup`` as the program's warm-up: with the
steps marked by a ``train_step`` range, each step's start fell inside one, so the program's own leading ``Warm-up``
range could drop nothing (a drop needs steps outside it) and its iterations were kept as steady steps.

By construction (``synthetic.nsysexport.write_pipeline_schedule``): the iterations, their length and the leading
warm-up known.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.frameworks import user_ranges
from tests.support.cli_report import first_report


def _trace(path: str):  # noqa: ANN202 - the reader's Trace
    t = read_trace(path)
    return t[0] if isinstance(t, list) else t


def test_a_leading_warm_up_is_dropped_beside_the_schedules_phases(tmp_path) -> None:  # noqa: ANN001 - pytest's
    path = str(tmp_path / "pp.sqlite")
    truth = nx.write_pipeline_schedule(path, iteration_range="train_step", leading_warmup=3)
    host = first_report(path)["hosts"][0]
    steps = host["steps"]
    assert "inside the program's own `Warm-up` range" in steps["note"]
    assert steps["count"] <= truth["iterations"]  # no iteration of the leading warm-up kept
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["step_ms"], rel=0.03)
    assert host["job"]["kind"] == truth["kind"]


def test_the_schedules_warmup_is_a_phase_and_the_programs_warm_up_is_not(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "pp.sqlite")
    nx.write_pipeline_schedule(path, iteration_range="train_step", leading_warmup=3)
    t = _trace(path)
    h = t.h
    names = {h.names[int(h.name[i])] for i in user_ranges.warmup_ranges(h, t.ranges).tolist()}
    assert names == {"Warm-up"}


@pytest.mark.parametrize("kw", [{}, {"iteration_range": "iteration"}, {"warm": 4, "microbatches": 4}])
def test_control_no_warm_up_no_step_dropped_as_one(tmp_path, kw: dict) -> None:  # noqa: ANN001
    """Controls: with no warm-up of the program's, no step is dropped as inside one, the job stays training."""
    path = str(tmp_path / "pp.sqlite")
    truth = nx.write_pipeline_schedule(path, **kw)
    host = first_report(path)["hosts"][0]
    assert "own `" not in host["steps"]["note"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["step_ms"], rel=0.03)
    assert host["job"]["kind"] == "training"
