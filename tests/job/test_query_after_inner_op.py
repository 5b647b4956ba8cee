"""An op's event queries after an op inside it returned are the op's, no poll of the program's (h37-probe47e; issue
#37 class 3: each wait belongs to its cause).

``job.waits.polls`` reads a run of queries outside every framework op, asked until the GPU said done, as the program's
own wait (``while not ev.query()``).  It asked ``Encloser.find`` without nesting, which answers the latest-starting op
and -1 where that one has ended: an op whose inner op (``aten::empty``) returned before its own queries had them read
outside every op -- a poll, and the idle after it that wait's.

Truth by construction (``synthetic.torchtrace``, per step): a 300-us GEMM; ``aten::index_put_`` opens 2 us later,
runs ``aten::empty`` (4 us), asks ``cudaEventQuery`` (GPU busy), 400 us of its own code, asks again (GPU done),
launches its 20-us kernel and returns; then ``.item()``.  The queries are the op's: no poll, one wait a step (the
``.item()``), the same reading as the twin without the inner op: 16.9 us of the sync's idle a step.  BASE: a poll
a step, 2 waits, 146.4 us.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto import adapter as kineto_adapter
from tb_gpu_advisor.runtime.pipeline import host_metrics

SYNC_IDLE_US = 16.9  # the twin's: the .item()'s drained idle a step


def _loop(inner: bool):
    def body(r: tt.Rank) -> None:
        r.kernel("aten::mm", tt.GEMM_FWD, 300.0)
        op = r.cpu("aten::index_put_", 0.0, advance=False)
        r.host_us += 2.0
        if inner:
            r.cpu("aten::empty", 4.0)
            r.host_us += 1.0
        r.query(then_us=400.0)
        r.query(then_us=2.0)
        r.kernel(None, "index_put_kernel", 20.0)
        op["dur"] = round(r.host_us + 2.0 - op["ts"], 3)
        r.host_us += 2.0
        r.sync()
    return body


@pytest.mark.parametrize("inner", [False, True])
def test_an_ops_queries_after_its_inner_op_are_no_poll(tmp_path: Path, inner: bool) -> None:
    (path,) = tt.write_run(str(tmp_path), tt.Scenario(1, tt._each(_loop(inner)), [], [], "q"), steps=12, run="q")
    s = host_metrics(kineto_adapter.read_trace(path)).syncs
    assert s.poll_calls_per_step == 0.0  # BASE (inner): 1.0
    assert s.calls_per_step == 1.0 and s.callers == [("aten::item", 1.0)]
    assert s.gpu_idle_ms_per_step * 1000 == pytest.approx(SYNC_IDLE_US, abs=0.01)  # BASE (inner): 146.4
