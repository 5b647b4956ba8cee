"""XLA's while loops run from the host, as an Nsight export shows them (issue #37: advice fitting what the report
already knows; h37-loops2).

Real case (AGPL, read locally only, numbers in SURVEY.md "Fix h37-loops2"): wrf-gpu/wrf_gpu's JAX solver bake-off under
``nsys profile -t cuda,nvtx,osrt``: every call one jitted program, the host time XLA running ``while`` iterations from
the host, which the export shows only as XLA's NVTX ranges -- ``Thunk:#name=jit(_thomas_kernel)/while,hlo_op=while.13#``
around the loop and ``Thunk:#name=jit(_thomas_kernel)/while/body,hlo_op=...#`` around each body thunk, inside
``XlaModule:#hlo_module=...#``.  On main it read critical host-bound with "jit the whole step".

Truth by construction (``synthetic.nsysexport.write_xla_host_loop``): one ``jit_solve`` execution a step whose loop of
48 iterations (three ~2 us kernels each) XLA runs from the host; control: the same ops un-jitted, each its own
one-thunk program dispatched from Python (no loop), which keeps "jit the whole step".
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.rules import launch_bound
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.cli_report import first_report


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("xlaloop")
    loop, eager = str(root / "loop.sqlite"), str(root / "eager.sqlite")
    return {"loop": (loop, nx.write_xla_host_loop(loop)),
            "eager": (eager, nx.write_xla_host_loop(eager, eager=True, step_range="step {k}"))}


def _texts(f: dict) -> str:
    return " ".join(a["text"] for a in f["actions"])


def _snippets(f: dict) -> str:
    return " ".join(a.get("snippet") or "" for a in f["actions"])


def test_nsight_loop_ranges_are_the_loops_host_time_without_a_count(exports) -> None:
    """The loop's thunk ranges are its host time (the ``while.13`` range a step, by construction); they mark no
    iteration's end, so no iteration is counted; the parts nest: the GPU's idle in the loops <= the loops' host time
    <= the executions' <= the step."""
    path, truth = exports["loop"]
    m = host_metrics(reader.read_trace(path))
    d = m.dispatch
    assert d.loop_ms_per_step == pytest.approx(truth["loop_host_ms"], rel=0.02)
    assert d.loop_iterations_per_step == 0  # never a count the capture does not mark
    step_ms = sum(m.breakdown.as_dict().values())
    assert 0 < m.idle_in_host_loops <= d.loop_ms_per_step <= d.execution_ms_per_step <= step_ms
    assert m.idle_in_host_loops >= 0.5 * (step_ms - truth["gpu_busy_ms"])  # most of the GPU's idle is the loop's


def test_host_bound_loop_under_nsight_gets_the_loops_fixes(exports) -> None:
    """On main: host-bound with "jit the whole step" (and "XLA is off" beside a jitted program's XLA ranges)."""
    rep = first_report(exports["loop"][0])
    (f,) = [f for f in rep["findings"] if f["title"].startswith("Host-bound")]
    assert "running while loops from the host" in f["summary"] and "no count is given" in f["summary"]
    assert "WHILE" in f["actions"][0]["snippet"] and "unroll=" in _snippets(f)
    for other in rep["findings"]:
        assert "jit the whole step" not in _texts(other), other["id"]
    assert not [f for f in rep["findings"] if f["id"].startswith("xla_not_used")]


def test_control_eager_dispatch_under_nsight_keeps_jit_the_whole_step(exports) -> None:
    path, _ = exports["eager"]
    m = host_metrics(reader.read_trace(path))
    assert m.dispatch.loop_ms_per_step == 0 and m.idle_in_host_loops == 0
    rep = first_report(path)
    (f,) = [f for f in rep["findings"] if f["title"].startswith("Host-bound")]
    assert "jit the whole step" in _texts(f)
    assert "WHILE" not in " ".join(_snippets(g) for g in rep["findings"])


def _as_launch_wait(m, in_loops: bool):  # noqa: ANN001, ANN202 - HostMetrics
    """The loop export's metrics as a ledger that books the GPU's idle in the loops as launch wait (a framework whose
    dispatch the capture does not name books the idle before a late launch so); ``in_loops`` False: the same wait
    outside any loop."""
    b = m.breakdown
    idle = b.host_compute + b.other
    bd = replace(b, launch_wait=b.launch_wait + idle, host_compute=0.0, other=0.0)
    step = sum(bd.as_dict().values())
    return replace(m, breakdown=bd, headline=replace(m.headline, launch_wait_share=bd.launch_wait / step),
                   launch_wait_in_host_loops=m.idle_in_host_loops if in_loops else 0.0, idle_in_host_loops=0.0)


def test_launch_bound_on_host_run_loops_gives_the_loops_fixes(exports) -> None:
    """launch_bound firing on launches that come from a host-run loop gives the loop's fixes (on main: "@jax.jit",
    jit the whole step); control: the same wait outside any loop keeps the rule's own fixes."""
    m = host_metrics(reader.read_trace(exports["loop"][0]))
    (f,) = launch_bound.check(_as_launch_wait(m, True))
    assert "WHILE" in (f.actions[0].snippet or "") and "running while loops from the host" in f.summary
    assert not any("jit the whole step" in a.text for a in f.actions)
    (g,) = launch_bound.check(_as_launch_wait(m, False))
    assert any("jit the whole step" in a.text for a in g.actions)
    assert not any("WHILE" in (a.snippet or "") for a in g.actions) and "while loops" not in g.summary
