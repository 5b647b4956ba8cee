"""An un-jitted JAX loop is stepped by the function it repeats, not by its most used op (issue #37 class 2, survey
h37-survey46).

Without ``jax.jit`` every ``jnp`` call is its own one-op XLA module (``jit_add``, ``jit_matmul``), so the module
executed most often -- the step reading of a raw JAX capture -- is the most used op, run several times inside each
call of the Python function the loop repeats.  TraceLens' JAX 0.8 fixtures on an MI300X (kept here, MIT) call an
eager ``elementwise_ops`` 5 times (~2.0 ms apart, 13 dispatches each, the GPU 38% busy) and an eager
``transformer_block`` 3 times; main read 10 ``jit_add`` executions as steps of 0.98 ms and 24 ``jit_matmul``
executions as steps of 1.47 ms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tb_gpu_advisor.job.structure import SpanSteps
from tb_gpu_advisor.steps.windows import MarkedSteps
from tb_gpu_advisor.steps.xla_modules import _runs_several_per_span
from tests.support.cli_report import first_host
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"


def _host(run: str, root: Path = WILD) -> dict:
    return first_host(root / run)


def _steps(run: str, root: Path = WILD) -> dict:
    return _host(run, root)["steps"]


def test_an_eager_jax_loop_is_stepped_by_its_repeated_function() -> None:
    """jax_eager_mi300x_elementwise: 5 calls of ``elementwise_ops``, 2.04 ms each (by hand: 1.9-2.5 ms apart)."""
    host = _host("jax_eager_mi300x_elementwise")
    steps = host["steps"]
    assert steps["count"] == 5
    assert "elementwise_ops" in steps["note"] and "jit_add" not in steps["note"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(2.04, abs=0.05)


def test_an_eager_transformer_block_is_one_step_not_eight_matmuls() -> None:
    """jax_eager_mi300x_attention: 3 ``transformer_block`` calls, not 22 kept ``jit_matmul`` executions."""
    steps = _steps("jax_eager_mi300x_attention")
    assert steps["found"] == 3
    assert "transformer_block" in steps["note"] and "jit_matmul" not in steps["note"]


def test_control_a_jitted_loop_keeps_its_module_steps() -> None:
    """jax_mi300x (the same fixtures' jitted GEMM loop): its module's executions stay the steps."""
    steps = _steps("jax_mi300x")
    assert steps["source"] in ("xla_module_launches", "xla_modules")


def _span(starts: list[int], ends: list[int]) -> SpanSteps:
    return SpanSteps(name="f", source="annotation_spans", start=np.array(starts, np.int64),
                     end=np.array(ends, np.int64), coverage=1.0, confidence="medium", note="")


def _xla(starts: list[int]) -> MarkedSteps:
    s = np.array(starts, np.int64)
    return MarkedSteps("xla_module_launches", "", np.arange(s.size), s, s + 1, {})


def test_a_module_once_per_span_is_the_iteration() -> None:
    """By construction: a jitted step executed once inside each of the loop's spans keeps its reading; twice in each
    (one op of many) does not; an execution outside every span keeps it too (the spans are not the whole loop)."""
    own = _span([0, 100, 200], [90, 190, 290])
    assert not _runs_several_per_span(_xla([10, 110, 210]), own)
    assert _runs_several_per_span(_xla([10, 50, 110, 150, 210, 250]), own)
    assert not _runs_several_per_span(_xla([10, 50, 110, 150, 210, 250, 295]), own)
    assert not _runs_several_per_span(_xla([10, 50, 110, 210, 250]), own)  # one span holds it once
    assert not _runs_several_per_span(_xla([10, 50, 110, 150, 210, 250])._replace(source="xla_modules"), own)
    assert not _runs_several_per_span(_xla([10, 50]), None)
