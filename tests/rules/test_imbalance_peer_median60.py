"""``gpu_imbalance`` (each GPU's compute against its peers' median) and ``memory_imbalance`` (the fullest GPU's peak
against the others' median) read one helper of the metrics stage, ``metrics.multigpu.peer_median`` (h37-reads60; the
review of session 59 *Left*: the same median of the others written in each rule, one with numpy inline, one with its
own ``_median``).  numpy's median: the command line imports no ``statistics`` (``tests/cli/test_cli_lazy_imports``).

The first test fails on BASE (3416ad6f: each rule computes its own median); the two others are controls (truth by
construction, pass on base too)."""

from __future__ import annotations

import ast
import inspect

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.metrics.multigpu import peer_median
from tb_gpu_advisor.rules import gpu_imbalance, memory_imbalance
from tests.support.report_store import session_report


def _calls(module) -> set[str]:  # noqa: ANN001 - a rule module
    """The names each call in ``module`` calls (``np.median`` -> ``median``), and its imported modules."""
    tree = ast.parse(inspect.getsource(module))
    out = {n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
           for n in ast.walk(tree) if isinstance(n, ast.Call)}
    out |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return out


@pytest.mark.parametrize("module", [gpu_imbalance, memory_imbalance])
def test_each_imbalance_rule_reads_the_metrics_peer_median(module):  # noqa: ANN001
    calls = _calls(module)
    assert "peer_median" in calls
    assert not calls & {"median", "_median", "statistics"}, calls


def test_the_median_of_the_others_leaves_the_judged_gpu_out():
    # control: with an even count of others, the mean of the middle two; the judged GPU's own value never counts
    assert peer_median({0: 100.0, 1: 1.0, 2: 3.0, 3: 5.0, 4: 7.0}, 0) == 4.0
    assert peer_median({0: 2.0, 1: 9.0}, 1) == 2.0


def test_one_slow_gpu_is_judged_against_the_others_pace(tmp_path):
    # control (passes on base too): 4 ranks, GPU 1 at 1.4x; every other GPU computes the same by construction, so the
    # median of its peers is any one of theirs
    tt.write_one_gpu_apart(str(tmp_path), gpus=4, gpu=1, pace=1.4)
    (s,) = discover(str(tmp_path / "one_gpu_apart"))
    (f,) = [f for f in session_report(s).to_dict()["findings"] if f["rule"] == "gpu_imbalance"]
    detail = f["metric"]["detail"]
    comp = {int(g): v for g, v in detail["compute_ms"].items()}
    assert detail["heaviest_gpu"] == 1
    assert detail["peer_median_ms"] == pytest.approx(comp[0], rel=1e-6) == pytest.approx(comp[3], rel=1e-6)
    assert comp[1] == pytest.approx(1.4 * detail["peer_median_ms"], rel=0.02)
