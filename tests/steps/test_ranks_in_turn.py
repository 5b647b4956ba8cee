"""Each process of a multi-rank Nsight export executes its own steps (issue #37, h37-turns).

Walk ``--forms`` seed 30061: four JAX ranks, one process each, each executing ``jit_train_step`` 5 times behind an
``XlaModule`` range, rank r starting 31 ms after rank r-1 -- longer than its 5 steps, so the ranks run one after
another.  Main merged every process's executions by time into one host-wide sequence: 20 "steps" (18 kept, two of
them 29.5 ms spanning another rank's set-up) and a critical launch skew between GPUs whose processes had already ended.
The same merge chained ranks that run together (50 us apart: each execution overlaps the next rank's) into one step
of the whole window.

The wrong assumption: a host's processes run their steps together, so their executions merged by time are the
host's steps.  Each process's kth execution is its own step k (``steps.xla_modules._module_processes``); each GPU is
placed by its own process's windows.  Truth by construction (``synthetic.nsysexport.write``): 5 steps a rank, every
one of the template's period."""

from __future__ import annotations

import numpy as np
import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor import rules
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.runtime.pipeline import host_metrics

XLA_STEP = "XlaModule:#prefix=jit(train_step),hlo_module=jit_train_step,program_id=7#"
XLA_OP = "Thunk:#name=dot_general,hlo_op=fusion.{seq},unique_hlo_op_id={op_id}#"
IN_TURN_US = 45_000.0  # longer than a rank's 5 steps of 7.1 ms and its set-up (seed 30061: 31.4 ms, its steps 0.47 ms)


def _read(tmp_path, ranks: int, lag_us: float, setup_ms: float = 49.773):
    """(metrics, truth) of a JAX job's Nsight export: ``ranks`` processes, rank r starting ``r * lag_us`` late."""
    p = tmp_path / f"jax_{ranks}_{lag_us}.sqlite"
    truth = write(str(p), NsysJob(steps=5, ranks=ranks, ops=17, step_range=XLA_STEP, autograd_nvtx=False,
                                  op_text=XLA_OP, op_domain="TSL", rank_lag_us=lag_us, setup_ms=setup_ms))
    return host_metrics(reader.read_trace(str(p))), truth


def _rows(m, gpu: int) -> list:
    """The GPU's own per-step rows, in step order."""
    return sorted((r for r in m.steps_detail if r.gpu == gpu), key=lambda r: r.step)


@pytest.mark.parametrize("lag_us", [IN_TURN_US, 50.0], ids=["in_turn", "together"])
def test_each_process_keeps_its_own_steps(tmp_path, lag_us):
    m, truth = _read(tmp_path, 4, lag_us)
    assert m.steps.source == "xla_module_launches"
    assert (m.steps.found, m.steps.count) == (truth.steps, truth.steps)  # main: 20/18 in turn, 1/1 together
    for g in m.gpus:
        rows = _rows(m, g.gpu)
        # every step but the last (it ends at its own work) is one period of this rank's own loop
        assert np.allclose([r.step_ms for r in rows[:-1]], truth.step_ms, rtol=0.01)
        assert g.kernel_count == 17 * truth.steps


def test_ranks_in_turn_are_not_compared_as_one_step(tmp_path):
    m, _ = _read(tmp_path, 4, IN_TURN_US)
    starts = [_rows(m, g.gpu)[0].start_ms for g in m.gpus]
    # rank r's first step lies where rank r ran: its own process's, one lag after the rank before
    assert np.allclose(np.diff(starts), IN_TURN_US / 1000, rtol=0.01)
    assert "one after another" in m.steps.note
    assert m.multi_gpu.launch_skew_ms is None  # main: a skew of ranks whose steps had ended
    fired = {f.rule for f in rules.evaluate(m)}
    assert not fired & {"launch_skew", "gpu_imbalance", "sequential_gpus"}


def test_one_process_reads_as_before_control(tmp_path):
    """Control: one rank's executions are its steps, as on main (5 of the period, the note unchanged)."""
    m, truth = _read(tmp_path, 1, 50.0)
    assert (m.steps.found, m.steps.count) == (truth.steps, truth.steps)
    assert "processes" not in m.steps.note
