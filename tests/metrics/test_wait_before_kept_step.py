"""The wait in the unkept step before a kept step owns the idle it drains into that kept step (h37-probe47c, issue #37
class 3; h37-probe46b's Left 2).

A loop's wait drains the GPU's queue; the GPU then idles from the end of the work it waited for until the host
launches again.  The last wait of a dropped step (the first step a report keeps follows the warm-up step) drains into
the kept step after it: the kept step's lead idle is that wait's, as every other step's lead is its previous step's
wait's.  Only the kept steps' waits were read (``in_step``), so the first kept step's lead went to the next launch.

Truth by construction (the writers' times, per step):

- sync twin: a 300 us GEMM, ``.item()`` (``cudaStreamSynchronize``: the host waits 298.9 us, returns 6 us after the
  GEMM ends), 100 us of ``aten::add``, the step's 5 + 5 us of untraced host at its boundary, the next GEMM 12.9 us
  after its step starts: the GPU idles 131.9 us a step, all after the sync -- 6 in the sync's call (``other``), 10
  untraced (unrecorded, no wait's), 115.9 of launch wait, all the sync's.  BASE: 115.11 (the first kept step's 7.9 us
  lead, / 10 kept steps, to no wait).
- ``write_cpu_index``: per step 4 x (16.9 - 3.0 + 95.0) = 435.6 us of launch wait, all the index copies' (BASE 434.81).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto import adapter as kineto_adapter
from tb_gpu_advisor.runtime.pipeline import host_metrics

GEMM_US, HOST_US = 300.0, 100.0
IDLE_US = 131.9  # a step's GPU idle between its GEMM's end and the next step's GEMM (the writer's times)
IN_CALL_US, UNTRACED_US = 6.0, 10.0  # of it: in the sync's call after the GEMM; the step boundary's untraced host
COPY_LAUNCH_WAIT_US = 4 * (16.9 - 3.0 + 95.0)


def _sync_loop(r: tt.Rank) -> None:
    r.kernel("aten::mm", tt.GEMM_FWD, GEMM_US)
    r.sync()
    r.cpu("aten::add", HOST_US)


def test_the_first_kept_steps_lead_is_the_sync_before_it(tmp_path: Path) -> None:
    (path,) = tt.write_run(str(tmp_path), tt.Scenario(1, tt._each(_sync_loop), [], [], "item"), steps=12, run="item")
    m = host_metrics(kineto_adapter.read_trace(path))
    assert m.breakdown.launch_wait * 1000 == pytest.approx(IDLE_US - IN_CALL_US - UNTRACED_US, abs=0.01)
    s = m.syncs
    # BASE: 115.11 (the first kept step's 7.9-us lead was no wait's)
    assert s.gpu_idle_ledger_ms["launch_wait"] * 1000 == pytest.approx(IDLE_US - IN_CALL_US - UNTRACED_US, abs=0.01)
    assert s.gpu_idle_ledger_ms["other"] * 1000 == pytest.approx(IN_CALL_US, abs=0.01)
    # the dropped step's sync is counted nowhere: one .item() a kept step
    assert s.calls_per_step == 1.0 and s.callers == [("aten::item", 1.0)]


def test_the_last_kept_steps_untraced_end_is_unrecorded(tmp_path: Path) -> None:
    """Each step's 10 us of untraced host at its boundary (5 at its end, 5 at the next one's start) lies in its
    sync's gap; the last kept step's gap runs into the unkept step after it, and its 5 us before the step's end were
    not measured (h37-probe47e; BASE: 9.5 us a step of 10)."""
    (path,) = tt.write_run(str(tmp_path), tt.Scenario(1, tt._each(_sync_loop), [], [], "item"), steps=12, run="item")
    s = host_metrics(kineto_adapter.read_trace(path)).syncs
    assert s.unrecorded_ms_per_step * 1000 == pytest.approx(UNTRACED_US, abs=0.01)


def test_the_first_kept_steps_lead_is_the_copy_before_it(tmp_path: Path) -> None:
    truth = tt.write_cpu_index(str(tmp_path))
    m = host_metrics(kineto_adapter.read_trace(truth["paths"][0]))
    s = m.syncs
    # BASE: 434.81
    assert s.copy_idle_ledger_ms["launch_wait"] * 1000 == pytest.approx(COPY_LAUNCH_WAIT_US, abs=0.01)
    assert s.copy_calls_per_step == truth["copies_per_step"]


def _nested_reading(tmp_path: Path, op: str, nested: tuple[str, ...]) -> tuple[float, float]:
    """(in-op syncs a step, the syncs' launch wait in us a step) of ``write_implicit_sync(op, nested=)``."""
    path = tmp_path / f"{op}{len(nested)}.1.pt.trace.json"
    tt.write_implicit_sync(str(path), op=op, nested=nested)
    s = host_metrics(kineto_adapter.read_trace(str(path))).syncs
    return s.in_op_calls_per_step, s.gpu_idle_ledger_ms["launch_wait"] * 1000


@pytest.mark.parametrize("op", sorted(tt.IMPLICIT_SYNC_OPS))
def test_an_ops_read_after_its_inner_op_returned_is_the_ops(tmp_path: Path, op: str) -> None:
    """``aten::nonzero`` allocates its pinned count (``aten::empty``, 4 us, ended) before it reads the count and
    launches its select: the read is still inside ``aten::nonzero``, which goes on launching, so its wait lasts until
    the op returns (h37-probe43s) -- as the twin without the inner op reads.  ``Encloser.find`` named the latest-starting
    op, ``aten::empty``, which had ended: the read was inside no op, its wait ended at the select (BASE: 0 in-op syncs,
    71.4 us a step of 409.9).  Truth: the twin's reading less the 5 us the host spends in the inner op before each
    wait, on the 5 layers whose drained idle the wait's held time caps (the 6th's, before the backward, is not)."""
    layers = 6
    plain, plain_us = _nested_reading(tmp_path, op, ())
    inner, inner_us = _nested_reading(tmp_path, op, ("aten::empty",))
    assert plain == inner == layers
    assert inner_us == pytest.approx(plain_us - (layers - 1) * 5.0, abs=0.01)
