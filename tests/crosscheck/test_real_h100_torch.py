"""Real PyTorch traces from one H100, each with its problem injected by construction (issue #10).

Why: ``torch.profiler`` wrote these (PyTorch 2.11, CUDA 13; ``../shared/profiles/real-h100-torch``):
healthy bf16, 450 tiny ops per step, a 12 ms input stall with a pinned H2D copy, fp32 without TF32,
and ``torch.compile`` with autocast.  Each run is judged as the JAX set is (``tests/support/real_checks.py``,
the checks of ``../shared/tools/score_real.py``) through the CLI's own JSON, one test id per check and
run.  There is no stock cross-check: the stock Profile tab does not read Kineto traces.  The report of
a PyTorch run must also speak PyTorch only: no TensorFlow, JAX or XLA advice.

The traces are read in place from ``<repo>/../shared``; the module is skipped when that set is absent.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.support.real_checks import REAL_TORCH_SET
from tests.support.real_sets import reports_fixture, truth_or_skip, truth_test

TRUTH = truth_or_skip(REAL_TORCH_SET, f"real H100 PyTorch traces not found at {REAL_TORCH_SET} (the shared "
                                      "checkout holds them)")
RUNS = sorted(TRUTH)
#: Words of other frameworks that must not reach a PyTorch user.
FOREIGN = re.compile(r"TensorFlow|\btf\.[a-z_]+|tf_data|Keras|\bJAX\b|\bjax\.|\bXLA\b|jit_compile|\bHLO\b|jitted")
reports = reports_fixture(REAL_TORCH_SET, RUNS)

test_truth = truth_test(TRUTH)  # the score_real.py checks, one test id per run and check


@pytest.mark.parametrize("run", RUNS)
def test_pytorch_words_only(reports, run):
    """The whole JSON report (findings, fixes, cards' meanings) of a PyTorch run names no other framework."""
    rep = reports[run].report
    assert rep is not None, reports[run].error
    (host,) = rep["hosts"] if isinstance(rep, dict) else rep[0]["hosts"]
    assert host["capture"]["framework"] == "pytorch"
    foreign = sorted({m.group(0) for m in FOREIGN.finditer(json.dumps(rep))})
    assert not foreign, f"{run}: {foreign}"


def test_steps_are_the_profiler_steps(reports):
    """Steps come from ``ProfilerStep#N`` (10 active steps per trace; the stock first/last drop leaves 8)."""
    for run in RUNS:
        rep = reports[run].report
        (host,) = rep["hosts"] if isinstance(rep, dict) else rep[0]["hosts"]
        assert host["steps"]["source"] == "profiler_step" and host["steps"]["count"] == 8, (run, host["steps"])


def _profiler_step_ms(run: str) -> float:
    """Mean spacing of the GPU-side ``ProfilerStep#N`` spans (``gpu_user_annotation``) over the kept steps
    (first and last dropped), by plain json: an independent device step time (the truth gives none measured
    outside the profiler).  The host-side marks are no device step time when the host runs ahead: in
    ``torch_fp32`` the host's steps take 2.6 ms while the GPU's come 30.6 ms apart."""
    (path,) = (REAL_TORCH_SET / run).glob("*.pt.trace.json")
    ev = json.loads(path.read_text())["traceEvents"]
    starts = sorted(e["ts"] for e in ev if e.get("ph") == "X" and e.get("cat") == "gpu_user_annotation"
                    and str(e.get("name")).startswith("ProfilerStep#"))
    # step k runs from its mark's start to the next one's (the tiling the report uses)
    spans = [starts[i + 1] - starts[i] for i in range(1, len(starts) - 1)]
    assert len(spans) == 8
    return sum(spans) / len(spans) / 1000.0


@pytest.mark.parametrize("run", RUNS)
def test_step_time_matches_profiler_steps(reports, run):
    rep = reports[run].report
    (host,) = rep["hosts"] if isinstance(rep, dict) else rep[0]["hosts"]
    ours = sum(r["step_ms"] for r in host["step_rows"] if r.get("gpu") is None) / 8
    want = _profiler_step_ms(run)
    assert ours == pytest.approx(want, rel=0.10), (run, ours, want)
