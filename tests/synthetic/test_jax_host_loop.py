"""A jitted JAX program whose ``while`` loop XLA runs from the host (issue #37: advice that fits what the run does).

Truth by construction (``synthetic.jaxcapture.jax_while_on_host``): one ``jit(solve)`` call a step, its loop of 64
iterations launched from the host, three ~2 us kernels an iteration -- the step is compiled already, so the host-bound
finding's fix is the loop's (a WHILE command buffer, ``unroll=``, fewer sequential iterations), never "jit the whole
step".  Control: eager JAX (``jax_eager_ops``: a jit_<op> executable per op, no loop) keeps "jit the whole step".
Real counterpart (AGPL, read locally only): wrf_gpu's solver bake-off, four jitted solvers run once each, 176 host-run
iterations in the pass.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synthetic.jaxcapture import jax_eager_ops, jax_while_on_host
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

ITERATIONS = 64


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("jaxloop")
    return {sc.name: str(sc.write(root)[0]) for sc in (jax_while_on_host(iterations=ITERATIONS), jax_eager_ops())}


def _texts(f) -> str:
    return " ".join(a.text for a in f.actions)


def test_loop_iterations_are_counted_inside_the_executions(written):
    """The metrics count the loop's iterations a step (64 by construction) and their host time, which lies inside the
    jitted program's executions, which lie inside the step (no part exceeds its whole)."""
    m = host_metrics(read_trace(written["jax_while_on_host"]))
    d = m.dispatch
    assert d.loop_iterations_per_step == pytest.approx(ITERATIONS)
    assert 0 < d.loop_ms_per_step <= d.execution_ms_per_step <= d.host_ms_per_step
    step_ms = sum(m.breakdown.as_dict().values())
    assert d.execution_ms_per_step <= step_ms
    # the GPU's idle inside the loops, booked as the host's own time: a part of the loops' host time and of the step's
    # host time, and most of it here (the GPU runs ~6 us of each ~20 us iteration)
    host = m.breakdown.host_compute + m.breakdown.other
    assert 0.5 * host <= m.idle_in_host_loops <= min(d.loop_ms_per_step, host)


def test_host_bound_jitted_loop_gets_the_loops_fixes(written):
    """The host-bound finding of a jitted program running its loop from the host names the loop and gives the loop's
    fixes; "jit the whole step" is not among them."""
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=written["jax_while_on_host"]))
    hb = [f for f in rep.findings if f.title and f.title.startswith("Host-bound")]
    assert hb, [(f.rule, f.title) for f in rep.findings]
    f = hb[0]
    assert f"running {ITERATIONS} iterations of while loops from the host" in f.summary
    texts = _texts(f)
    snippets = " ".join(a.snippet or "" for a in f.actions)
    assert "WHILE" in f.actions[0].snippet and "unroll=" in snippets
    assert "jit the whole step" not in texts
    for other in rep.findings:  # no finding tells a jitted program to be jitted
        assert "jit the whole step" not in _texts(other), other.rule


def test_eager_dispatches_keep_jit_the_whole_step(written):
    """Control: many small un-jitted dispatches and no loop -- "jit the whole step" stays, no loop fix appears."""
    m = host_metrics(read_trace(written["jax_eager_ops"]))
    assert m.dispatch.loop_iterations_per_step == 0 and m.dispatch.loop_ms_per_step == 0
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=written["jax_eager_ops"]))
    texts = " ".join(_texts(f) for f in rep.findings)
    assert "jit the whole step" in texts
    assert "WHILE" not in " ".join(a.snippet or "" for f in rep.findings for a in f.actions)


def test_a_while_loop_on_rocm_is_told_the_fixes_its_xla_build_has(tmp_path):
    """The same loop under XLA's ROCm build on an MI300X (h37-amd69): HIP graphs hold no conditional nodes (XLA's
    ``RocmCommandBuffer``: "Conditionals are not supported on ROCM"), so a WHILE command buffer cannot take the loop
    off the host there.  Before: the AMD job was told the flag and "CUDA 12.3 or newer" (the vendor law's 'CUDA');
    now the loop's other fixes (``jax.DEVICE_FEATURES``).  The NVIDIA run above keeps the WHILE fix (control)."""
    from tests.support.contradictions import vendor_words_problems
    from tests.support.run_report import fresh_report

    jax_while_on_host(iterations=ITERATIONS, rocm=True).write(tmp_path)
    report = fresh_report(tmp_path)
    (host,) = report.hosts
    assert host.capture["vendor"] == "AMD"
    loop = [f for f in host.findings if "iterations of while loops from the host" in f.summary]
    assert loop, [(f.rule, f.title) for f in host.findings]
    snippets = " ".join(a.snippet or "" for a in loop[0].actions)
    assert "WHILE" not in snippets and "unroll=" in snippets, snippets
    assert loop[0].actions[0].text.startswith("Unroll the loop"), loop[0].actions[0].text
    assert vendor_words_problems(report) == []
