"""Each step counts the call that launched it: a step cut where XLA's execution begins starts inside its call
(h37-twosync, issue #37 steps class).

``wild/jax_mi355x`` runs one ``jit_loss_fn`` call a step, each followed by ``block_until_ready``.  Its steps are cut
at XLA's executions (``jit_loss_fn:XLA GPU module``), which begin ~55 us after their ``PjitFunction`` call does.  The
wrong assumption: *a call belongs to the step its start lies in*.  Counted so, each call fell in the step before its
own and the first in none: 4 calls in 5 steps, 0.8 a step (main), below the one call a step the program makes.  A
call that holds a step's start is that step's call (``metrics.compute._call_steps``).

Truth read from the trace itself below: the outermost ``PjitFunction`` events and their host time.  Control:
``wild/jax_mi300x``, one ``jit_dot`` step per call with eager calls between, whose first and last calls launch
dropped steps (the stock rule's warm-up and last): its count stays 36 calls in 16 kept steps, now with the kept
steps' own calls (the dropped last step's call no longer stands in for the first kept step's)."""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np

from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _trace(name: str):
    (path,) = glob.glob(str(WILD / name / "plugins" / "profile" / "*" / "*.xplane.pb"))
    return read_trace(path)


def _outer_calls(t, prefix: str) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (ps) of the outermost ``prefix`` events (each call's nested twin dropped), by start."""
    m = t.h.name_mask(lambda n: n.startswith(prefix))
    idx = np.flatnonzero(m)
    idx = idx[np.argsort(t.h.start[idx], kind="stable")]
    s, e = t.h.start[idx].astype(np.int64), t.h.end[idx].astype(np.int64)
    keep = np.ones(idx.size, dtype=bool)
    keep[1:] = s[1:] >= np.maximum.accumulate(e)[:-1]
    return s[keep], e[keep]


def test_premise_each_step_starts_inside_its_call():
    t = _trace("jax_mi355x")
    m = host_metrics(t)
    s, e = _outer_calls(t, "PjitFunction(loss_fn)")
    ex = np.sort(t.h.start[t.h.name_mask(lambda n: n == "jit_loss_fn:XLA GPU module")])
    assert m.steps.source == "xla_module_launches" and m.steps.count == 5 and s.size == ex.size == 5
    assert np.all((s < ex) & (ex < e))  # each execution, where its step begins, begins inside its call


def test_one_call_a_step_counts_one_call_a_step():
    """main: 0.8 calls and 0.73 ms a step (4 calls, the first missed)."""
    t = _trace("jax_mi355x")
    s, e = _outer_calls(t, "PjitFunction(loss_fn)")
    d = host_metrics(t).dispatch
    assert d.calls_per_step == 1.0, d
    assert abs(d.host_ms_per_step - float((e - s).sum()) / 1e9 / 5) < 1e-6, (d.host_ms_per_step, (e - s) / 1e9)


def test_control_dropped_steps_keep_their_calls():
    """Kept steps 1..16 of 18 ``jit_dot`` executions: their 16 ``dot`` calls and the 20 eager calls between them;
    the 17th ``dot`` launches the dropped last step and is not counted (main: counted in place of the first kept
    step's call, 36 calls and 0.2543 ms a step)."""
    t = _trace("jax_mi300x")
    m = host_metrics(t)
    assert m.steps.count == 16 and m.steps.found == 18
    s, e = _outer_calls(t, "PjitFunction(dot)")
    ex = np.sort(t.h.start[t.h.name_mask(lambda n: n == "jit_dot:XLA GPU module")])
    assert s.size == ex.size == 18 and np.all((s < ex) & (ex < e))
    lo, hi = ex[1], ex[17]  # the kept steps' span: from the first kept execution to the dropped last one
    es, ee = _outer_calls(t, "PjitFunction(")
    eager = (es >= lo) & (es < hi) & ~np.isin(es, s)
    assert eager.sum() == 20
    truth_ms = (float((e[1:17] - s[1:17]).sum()) + float((ee[eager] - es[eager]).sum())) / 1e9 / 16
    d = m.dispatch
    assert d.calls_per_step == 36 / 16, d
    assert abs(d.host_ms_per_step - truth_ms) < 1e-6, (d.host_ms_per_step, truth_ms)
