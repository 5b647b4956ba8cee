"""The host's waiting communication calls of each GPU (``metrics.breakdown._waiting_calls``: a pass over every range
of the capture, ~3 ms on a 5,000-step MPI job's 30,000 ranges) are read once per GPU, not once per ledger painted
and once more for their names (four passes on main: ``gpu_step_arrays``, ``host_syncs``' two ledgers,
``comm_calls_in_idle``)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from synthetic.nsysexport import write_mpi_steps
from tb_gpu_advisor.metrics import breakdown as bd
from tb_gpu_advisor.runtime.pipeline import analyze_session


def test_each_gpus_waiting_calls_are_read_once(tmp_path, monkeypatch):
    """One MPI rank's 12 steps, one GPU: one pass; the wait is still booked and named (truth by construction)."""
    path = tmp_path / "train_mpi.sqlite"
    truth = write_mpi_steps(str(path))
    passes = []
    read = bd._waiting_calls
    monkeypatch.setattr(bd, "_waiting_calls", lambda ctx, g: passes.append(g.d.gpu) or read(ctx, g))
    h = analyze_session("rank0", "s", [SimpleNamespace(host="rank0", path=str(path), format="nsys", size=0)]
                        ).to_dict()["hosts"][0]
    assert len(passes) == len(set(passes)) == 1, passes
    assert abs(h["breakdown_ms"]["collectives"] - truth["mpi_ms_per_step"]) < 0.01 * truth["mpi_ms_per_step"]


def test_a_kept_answer_is_read_again_for_other_launches_or_ranges(monkeypatch):
    """The kept answer is the one read from the GPU's launches and the capture's ranges of now: a GPU whose launch
    column was replaced, or a context over other ranges, is read again."""
    reads = []
    monkeypatch.setattr(bd, "_waiting_calls", lambda ctx, g: reads.append(1) or np.array([len(reads)]))
    g = SimpleNamespace(launch=np.arange(3), waiting_memo=None)
    ctx = SimpleNamespace(trace=SimpleNamespace(ranges=object()))
    assert [int(bd.waiting_calls_of(ctx, g)[0]) for _ in range(3)] == [1, 1, 1]
    g.launch = np.arange(3)
    assert int(bd.waiting_calls_of(ctx, g)[0]) == 2
    ctx.trace.ranges = object()
    assert int(bd.waiting_calls_of(ctx, g)[0]) == 3 and len(reads) == 3
