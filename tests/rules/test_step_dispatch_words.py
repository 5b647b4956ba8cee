"""The host-bound finding of a step too small for its dispatch says "compiled" only where the trace shows it.

h37-survey40 gave the host-bound finding the launch check's step-level reading (a step of a few dispatch calls whose
host time exceeds the GPU's compute: "the dispatch of its N calls ...; the step is compiled already").  The clause
assumed every dispatch call is a compiled one -- true of JAX's jitted calls, not of PyTorch, whose dispatch calls are
any top-level op: an eager step was told it was compiled.  Now the finding names what the trace shows in use
(``Framework.applied``: torch.compile's regions and Triton kernels), and nothing where nothing shows it.

Truth by construction: an eager PyTorch step (two ``aten::mm`` launches, an ``aten::linear`` of 3 ms of host dispatch
between them, then ``.item()``; no compiled region, no Triton kernel).  Session 53: the builder began ``.item()`` 37 us
before ``aten::linear`` returned (the host cannot), which only the strict nesting rule read as inside it.  Controls, real: ``wild/compiled_a100_triton`` (one
``torch.compile``'d call) names torch.compile; ``wild/jax_mi300x`` (jitted GEMM calls) keeps "jitted calls".
"""

from __future__ import annotations

from pathlib import Path

from synthetic import torchtrace as tt
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

SLOW_DISPATCH_US = 3000.0


def _eager_step(r: tt.Rank) -> None:
    r.kernel("aten::mm", tt.GEMM_FWD, 200.0, args=tt.SHAPES_4096["mm"])
    linear = r.host_us
    r.cpu("aten::linear", SLOW_DISPATCH_US, advance=False)  # the op's host time, its launch at the end
    r.host_us += SLOW_DISPATCH_US - 50.0
    r.kernel("aten::mm", tt.GEMM_FWD, 200.0, args=tt.SHAPES_4096["mm"])
    r.host_us = max(r.host_us, linear + SLOW_DISPATCH_US)  # .item() is called once aten::linear has returned
    r.sync()


def _host_bound(rep: dict) -> dict:
    return next(f for f in rep["findings"] if f["rule"] == "unexplained_idle")


def _kept(folder: str) -> dict:
    parent, run = folder.split("/")
    return run_report(FIXTURES / parent, run).to_dict()


def test_an_eager_step_too_small_for_its_dispatch_is_not_told_it_is_compiled(tmp_path: Path) -> None:
    sc = tt.Scenario(1, tt._single(_eager_step), [], [], "an eager step of slow dispatch")
    tt.write_run(str(tmp_path), sc, steps=8, run="eager")
    rep = run_report(tmp_path, "eager").to_dict()
    f = _host_bound(rep)
    # the premise: step-level (aten::mm, aten::linear, the sync's aten::item)
    assert "the dispatch of its 3 top-level op calls" in f["summary"], f["summary"]
    assert "compiled" not in f["summary"] and "torch.compile" not in f["summary"], f["summary"]


def test_control_a_compiled_call_names_torch_compile_and_a_jitted_step_its_jitted_calls() -> None:
    compiled = _host_bound(_kept("wild/compiled_a100_triton"))["summary"]
    assert "already in use: torch.compile" in compiled, compiled
    jitted = _host_bound(_kept("wild/jax_mi300x"))["summary"]
    assert "jitted calls" in jitted and "torch" not in jitted, jitted
