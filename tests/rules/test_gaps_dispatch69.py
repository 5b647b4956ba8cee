"""Gaps between steps that the program's own compute range fills -- the next step's ops dispatched before their first
launch -- are the dispatch's, with its fix (fewer, larger launches), never "CPU tensor work ... do it in the Dataset's
__getitem__" (h37-hunt69, issue #37 class 4: tiny steps judged by their own cause).

Real case: DAntyNoel/GFNonGNN ``profiler_results.json`` @5eaa333 (MIT; ``tests/fixtures/wild/tiny_steps_rtx5070ti_gnn``),
the repository's ``1.py``: a profiler smoke test on an RTX 5070 Ti -- ``nn.Linear(10, 10)`` on a (100, 10) batch, MSE
against ``randn_like``, SGD, ``loss.item()`` logged each step, 10 epochs under ``record_function("GNN_forward")`` /
``("GNN_backward")``.  After a 230 ms first epoch (first launches loading their modules), each step is ~1.1 ms of host
dispatch around ~20 us of GPU work.  The gaps (219 us) hold the ``.item()`` read, the logging, ``zero_grad`` and the
next forward's ``aten::linear`` -> ``addmm`` dispatch before its first kernel (``GNN_forward``, 114 us of the gap).

On b2a0d583 the step-gap finding read "CPU ops between steps (tensor work on the host, no sync among it: often the next
batch being built)" with the fix to move ``GNN_forward`` into the Dataset's ``__getitem__`` or the collate_fn -- the
model's forward taken for batch building, because ``step_gaps._own_ranges`` named any program range filling the gaps.
A range that launches the steps' kernels (``HostMetrics.ranges_computing``) is the step's own compute.  The control is
``write_ranged_phases``' ``h2d`` range, which launches only copies: still the host's own work to move
(``test_gaps_ranged_phases67``)."""

from __future__ import annotations

from pathlib import Path

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

_REAL = (Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "tiny_steps_rtx5070ti_gnn"
         / "gfn_main.pt.trace.json.gz")


def _gaps(path: str):
    m = host_metrics(read_trace(path))
    (f,) = [f for f in evaluate(m) if f.rule == "step_gaps"]
    return m, f


def test_the_forwards_dispatch_in_the_gaps_is_no_batch_building():
    m, f = _gaps(str(_REAL))
    assert "next batch being built" not in f.summary, f.summary
    assert "dispatching the next step's own ops" in f.summary, f.summary
    assert {"GNN_forward", "GNN_backward"} <= set(m.ranges_computing), m.ranges_computing
    first = f.actions[0].text
    assert first == pytorch.COMPILE.text, first
    assert all("__getitem__" not in a.text for a in f.actions), [a.text for a in f.actions]


def test_control_a_range_that_only_copies_stays_the_hosts_own_work(tmp_path: Path):
    path = str(tmp_path / "w.pt.trace.json")
    tt.write_ranged_phases(path)
    m, f = _gaps(path)
    assert "h2d" not in m.ranges_computing, m.ranges_computing
    assert f.actions[0].text.startswith(pytorch.CPU_OPS_OFF_PATH.text.split("{")[0]), f.actions[0].text
    assert "dispatching" not in f.summary, f.summary

