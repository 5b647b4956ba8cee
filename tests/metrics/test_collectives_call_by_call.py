"""A collective's transfer is the least time any GPU spends in *each call*, not the least GPU's total (h37-left47).

Every GPU leaves a collective together, so in each call the GPU that enters last spends only the transfer in it and
the others wait.  Where the last one changes from call to call, each GPU's total holds the waits of the calls it was
early for, and the least total counted them as transfer.  Calls are matched across GPUs by their order in each step
(every rank issues its collectives in one order), and only where each pair ends together.

Real truth: ``../shared/profiles/nsys/fsdp_mfu_after`` (2 GPUs, 31 NCCL kernels each, read here with ``sqlite3``): in
every call both GPUs' kernels end within the call's least time of each other, and the GPU that waits changes --
GPU 1 spends 7.29 ms in a call GPU 0 spends 0.25 ms in, GPU 0 3.23 ms in one GPU 1 spends 0.26 ms in.  Synthetic truth
by construction: two GPUs whose extra work alternates step by step.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synthetic import kernels as K
from synthetic.scenarios import _dense_layers, _replica_ops, _single, multi_gpu_gpu0_oversubscribed
from synthetic.tfcapture import A100, Capture
from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import SHARED_PROFILES
from tests.support.report_store import session_report

FSDP = SHARED_PROFILES / "nsys" / "fsdp_mfu_after"


def _nccl_calls(sqlite: Path) -> dict[int, list[tuple[int, int, int]]]:
    """Each GPU's NCCL kernels (start, end ns, 1 where the export holds its launch -- a runtime row of its process with
    its correlation id -- else 0) in time order, straight from the export."""
    with sqlite3.connect(f"file:{sqlite}?mode=ro", uri=True) as c:
        rows = c.execute("SELECT k.deviceId, k.start, k.end, EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                         "WHERE r.correlationId = k.correlationId AND r.globalTid / 16777216 = k.globalPid / 16777216)"
                         " FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                         "WHERE s.value LIKE 'nccl%' ORDER BY k.start").fetchall()
    out: dict[int, list[tuple[int, int, int]]] = {}
    for dev, b, e, launched in rows:
        out.setdefault(dev, []).append((b, e, launched))
    return out


@pytest.mark.skipif(not FSDP.exists(), reason="needs ../shared/profiles")
def test_a_real_two_gpu_jobs_transfer_is_the_least_in_each_call() -> None:
    calls = _nccl_calls(next(FSDP.glob("*.sqlite")))
    a, b = calls[0], calls[1]
    assert len(a) == len(b) == 31
    least = [min(x[1] - x[0], y[1] - y[0]) for x, y in zip(a, b)]
    assert all(abs(x[1] - y[1]) <= m for x, y, m in zip(a, b, least))  # one collective per pair: they end together
    least_total = min(sum(e - s for s, e, _ in a), sum(e - s for s, e, _ in b))
    assert sum(least) < 0.6 * least_total  # the GPU that waits changes: the least total is mostly waiting

    (s,) = discover(str(FSDP))
    report = session_report(s)
    steps = report.hosts[0].steps["count"]
    assert steps == 1  # one window since h37-left58: its one long GPU gap lies inside one op, no step boundary
    table = report.collectives
    col = table.columns.index("transfer ms")
    # the steps' calls: each window's first call was launched before the capture, in the head its first step no
    # longer holds (h37-left56: 2.739 ms with it)
    own = [m for x, y, m in zip(a, b, least) if x[2] and y[2]]
    assert len(own) == 30
    assert sum(r[col] for r in table.rows) == pytest.approx(sum(own) / 1e6 / steps, abs=2e-4)  # main: 4.99 ms
    m = host_metrics(formats.read(s.hosts[0]))
    own = {c.type: min(x.ms_per_step for g in m.comm.per_gpu.values() for x in g if x.type == c.type)
           for c in m.comm.by_type}
    for c in m.comm.by_type:  # accounting: no call's transfer exceeds any GPU's time in it
        assert c.transfer_ms_per_step <= own[c.type] + 1e-9


def _alternating(num_steps: int = 8):  # noqa: ANN202 - (Scenario, Capture)
    """2 GPUs of one host: in even steps GPU 0 runs three more dense layers, in odd steps GPU 1; each GPU enters the
    AllReduce when its own work is done and spins in it until the other enters."""
    cap = Capture(2, A100, seed=0, marker="keras3", thread_mode="gpu_private")
    base = [_replica_ops(g, 6) for g in range(2)]
    extra = _dense_layers(3, K.GEMM_FP16_TC, K.EW_ADD_HALF, prefix="extra/model", gemm_us=200, ew_us=18)
    for s in range(num_steps):
        ops = [o + extra if g == s % 2 else o for g, o in enumerate(base)]
        cap.step(ops, input_wait_us=25, allreduce=[K.sized(K.NCCL_ALLREDUCE, 150)], peer_wait_us=[0.0, 0.0])
    return _single("alternating_straggler", "the late GPU alternates step by step", cap, {}, None), cap


def _read(sc, tmp_path: Path):  # noqa: ANN001, ANN202 - a Scenario -> HostMetrics
    sc.write(tmp_path)
    (s,) = discover(str(tmp_path))
    (h,) = s.hosts
    return host_metrics(formats.read(h))


def test_a_straggler_that_alternates_leaves_the_transfer_and_the_rest_to_waiting(tmp_path: Path) -> None:
    sc, cap = _alternating()
    m = _read(sc, tmp_path)
    n = m.steps.count
    per_step = [[e.dur for e in st.events if e.kind == "nccl"] for st in cap.steps]
    assert all(len(d) == 2 for d in per_step)
    truth_ms = sum(min(d) for d in per_step) / len(per_step) / 1e9  # the late GPU's time: the transfer
    totals = [sum(d[g] for d in per_step) / len(per_step) / 1e9 for g in range(2)]
    assert min(totals) > 2 * truth_ms  # each GPU waited in half the steps: its total is mostly waiting
    (ar,) = [c for c in m.comm.by_type if c.type == "AllReduce"]
    assert n >= len(per_step) - 2
    assert ar.transfer_ms_per_step == pytest.approx(truth_ms, rel=0.03)
    assert m.multi_gpu.allreduce_transfer_ms_per_step == pytest.approx(truth_ms, rel=0.03)


def test_one_gpu_last_in_every_call_reads_as_before(tmp_path: Path) -> None:
    """Control: GPU 0 does more work in every step, so it enters every AllReduce last: the least in each call is its
    time, and the least GPU's total -- the reading before -- is the same number."""
    m = _read(multi_gpu_gpu0_oversubscribed(), tmp_path)
    (ar,) = [c for c in m.comm.by_type if c.type == "AllReduce"]
    least_total = min(x.ms_per_step for g in m.comm.per_gpu.values() for x in g if x.type == "AllReduce")
    assert ar.transfer_ms_per_step == pytest.approx(least_total, rel=0.03)
