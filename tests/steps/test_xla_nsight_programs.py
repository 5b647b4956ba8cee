"""One jitted function compiled into two programs, under Nsight: its XLA NVTX ranges name each program, and the
steps are read program by program (h37-xla68, issue #37).

XLA pushes ``XlaModule:#hlo_module=<module>,program_id=<id>#`` around each execution (the real wrf-gpu/wrf_gpu
bake-off export carries it so: ``jit__thomas_kernel``, ``program_id=186``; AGPL, read locally, numbers in SURVEY.md).
JAX compiles one module name into a program per input shape.  A solver called each iteration on its input and then
once more on a smaller one is two programs of ``jit_solve`` an iteration; read by name, every execution was a step:
twice the steps, each half an iteration.

Truth by construction (``synthetic.nsysexport.write_xla_host_loop(eval_program=9)``): 10 iterations, each one
execution of program 7 (a host-run loop) and one of program 9 (one pass of the body).  The control: program 7
alone, 10 steps, as before.  The first test fails on 225b624d (20 steps).
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.runtime.pipeline import host_metrics


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("xlaprograms")
    two, one = str(root / "two.sqlite"), str(root / "one.sqlite")
    return {"two": (two, nx.write_xla_host_loop(two, iterations=8, eval_program=9)),
            "one": (one, nx.write_xla_host_loop(one, iterations=8))}


def test_two_programs_of_one_name_are_one_iteration_not_two_steps(exports) -> None:
    path, truth = exports["two"]
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches"
    assert det.found == truth["steps"]  # 10 iterations, not 20 executions
    assert "`jit_solve(7)`" in det.note and "`jit_solve(9)`" in det.note  # the step's program, and the one folded in


def test_control_one_program_keeps_its_executions_as_steps(exports) -> None:
    path, truth = exports["one"]
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches" and det.found == truth["steps"]
    assert "`jit_solve`" in det.note  # one program: the module's name, as before
