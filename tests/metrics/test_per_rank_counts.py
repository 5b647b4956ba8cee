"""Per-step counts of a file holding several ranks are each rank's, as its times are (h37-left57).

An Nsight export of two processes (one GPU each) holds both ranks' host calls and kernels in one capture.  Its times
per step were per GPU (the breakdown, the syncs' wait, the copies), but its counts per step the host's over both ranks:
``metrics/syncs.host_syncs`` and ``metrics/kernels.small_kernels`` divided by the steps alone, so the shared
``nsys/h100_fsdp_window`` read "the host waits for the GPU in 4 copies to the device per step" where each rank waits in
2 (by SQL), and a two-rank loop making one sync a step read two.  (Kernels per step were made one GPU's in the rule by
h37-review8; they now come from the same division as the rest.)  Every count per step is now divided as the times are, in one place: ``Context.per_step``
(kept steps x active GPUs; docs/metrics.md, "Per step and rank").

Truth by construction: a Kineto job of two ranks on one machine, each calling ``.item()`` six times a step
(``synthetic.torchtrace._sync_item``: main said "12.0 times per step"); ``synthetic.nsysexport.NsysJob`` with ``ranks=2`` -- each rank launches ``ops`` kernels, one
``.item()`` sync and one blocking read-back a step.  Control: the same job on one rank, whose counts stay what they
were (and equal the two-rank job's per rank).
"""

from __future__ import annotations

import re

import sqlite3

import pytest

from synthetic import torchtrace as TT
from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import SHARED_PROFILES
from tests.support.properties import per_rank_problems
from tests.support.report_store import session_report

OPS = 20


def _metrics(path):
    m = host_metrics(read_trace(str(path)))
    return m[0] if isinstance(m, tuple) else m


def _job(tmp_path, ranks: int):
    p = tmp_path / f"ranks{ranks}.sqlite"
    truth = write(str(p), NsysJob(ranks=ranks, ops=OPS, kernel_us=15.0, d2h_us=500.0))
    return _metrics(p), truth


def test_two_ranks_count_per_rank(tmp_path):
    m, truth = _job(tmp_path, 2)
    assert sorted(truth.kernels) == [0, 1]
    per_rank = truth.kernels[0] / truth.steps  # each rank's kernels a step, by construction
    assert per_rank == OPS
    assert m.small_kernels.kernels_per_step == pytest.approx(per_rank)
    assert m.small_kernels.per_step == pytest.approx(per_rank)  # every kernel is 15 us: all small
    assert m.syncs.calls_per_step == pytest.approx(1.0)  # one .item() a step on each rank
    assert sum(c for _, c in m.syncs.callers) == pytest.approx(m.syncs.calls_per_step)
    d2h = next(c for c in m.memcpy if c.direction == "d2h")
    assert d2h.count_per_step == pytest.approx(1.0)  # the copies were already per rank: one value per quantity


def test_two_ranks_count_as_one_rank_of_the_same_loop(tmp_path):
    one, _ = _job(tmp_path, 1)
    two, _ = _job(tmp_path, 2)
    for a, b in ((one.small_kernels.per_step, two.small_kernels.per_step),
                 (one.syncs.calls_per_step, two.syncs.calls_per_step),
                 (one.dispatch.calls_per_step, two.dispatch.calls_per_step),
                 (one.dispatch.host_ms_per_step, two.dispatch.host_ms_per_step)):
        assert b == pytest.approx(a, rel=1e-6)


def test_control_one_rank_counts_stay(tmp_path):
    """Control, passes on main too: one rank's counts per step are what it makes a step."""
    one, _ = _job(tmp_path, 1)
    assert one.small_kernels.per_step == pytest.approx(OPS)
    assert one.syncs.calls_per_step == pytest.approx(1.0)


SYNCS = 6  # ``torchtrace._sync_item``: loss.item() after each of six layers, every step


def _kineto_host(tmp_path, ranks: int):
    """A Kineto job of ``ranks`` processes on one machine (one file each, ``node0_<pid>``), each syncing ``SYNCS``
    times a step: one host of ``ranks`` GPUs."""
    TT.write_run(str(tmp_path), TT.Scenario(ranks, TT._each(TT._sync_item), [], [], "syncs"), steps=8, run=f"r{ranks}")
    (s,) = discover(str(tmp_path))
    (h,) = session_report(s).hosts
    return h


@pytest.mark.parametrize("ranks", [2, 1])  # 1: the control, the same on main
def test_kineto_ranks_of_one_host_say_each_ranks_syncs(tmp_path, ranks):
    h = _kineto_host(tmp_path, ranks)
    assert len([g for g in h.gpus if g.kernel_count]) == ranks
    f = next(f for f in h.findings if f.id.startswith("host_sync"))
    assert f.metric.detail["syncs_per_step"] == pytest.approx(SYNCS)  # main: 12.0 on two ranks
    assert f"waits for the GPU {SYNCS:g} times per step" in " ".join(f.summary.split())
    assert per_rank_problems(h) == []


_NSYS = SHARED_PROFILES / "nsys"


def _session(path):
    (s,) = discover(str(path))
    (h,) = session_report(s).hosts
    return h


def _syncs_in_copies(sqlite: str) -> dict[int, int]:
    """Truth by SQL: per process, the ``cudaStreamSynchronize`` calls inside an ``aten::copy_`` range of its own."""
    con = sqlite3.connect(f"file:{sqlite}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT (n.globalTid >> 24) & 16777215, count(*) FROM NVTX_EVENTS n JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
            "ON r.globalTid = n.globalTid AND r.start >= n.start AND r.\"end\" <= n.\"end\" JOIN StringIds s "
            "ON s.id = r.nameId WHERE n.text LIKE 'aten::copy_%' AND s.value LIKE 'cudaStreamSynchronize%' GROUP BY 1")
        return dict(rows.fetchall())
    finally:
        con.close()


@pytest.mark.skipif(not (_NSYS / "h100_fsdp_window").is_dir(), reason="../shared/profiles absent")
def test_real_two_process_export_says_each_ranks_copy_waits():
    """nsys/h100_fsdp_window: two processes, one H100 each, one kept step; each waits in 2 copies (SQL).  Main said
    "the host waits for the GPU in 4 copies to the device per step (aten::copy_ ×4)": both ranks' sum."""
    (sqlite,) = sorted((_NSYS / "h100_fsdp_window").glob("*.sqlite"))
    truth = _syncs_in_copies(str(sqlite))
    assert len(truth) == 2 and len(set(truth.values())) == 1  # the same 2 on each rank
    m = _metrics(sqlite)
    per_rank = next(iter(truth.values())) / m.steps.count
    assert m.syncs.copy_calls_per_step == pytest.approx(per_rank)
    assert sum(c for _, c in m.syncs.copy_callers) == pytest.approx(per_rank)
    h = _session(_NSYS / "h100_fsdp_window")
    said = " ".join(next(f for f in h.findings if f.id.startswith("excessive_memcpy")).summary.split())
    # one kept step: "in the forward pass" (rules.base.Ctx.per_step, h37-left60), else "per step"
    assert re.search(rf"in {per_rank:g} copies to the device (?:per step|in the (?:step|forward pass|pass))\b", said), said
    assert per_rank_problems(h) == []


@pytest.mark.skipif(not (_NSYS / "fsdp_mfu_before").is_dir(), reason="../shared/profiles absent")
def test_real_kernels_per_step_are_the_metrics_per_rank():
    """Control (per GPU on main since h37-review8, in the rule): the count now comes from the metrics' one division."""
    h = _session(_NSYS / "fsdp_mfu_before")
    lb = next(f for f in h.findings if f.id.startswith("launch_bound"))
    steps, kernels = h.steps["count"], h.kernel_durations_us["count"]
    assert len([g for g in h.gpus if g.kernel_count]) == 2
    assert lb.metric.detail["kernels_per_step"] == pytest.approx(kernels / steps / 2)
    assert per_rank_problems(h) == []


# --------------------------------------------------------------------------- host ops, eager ops, loss scaling
# (h37-left59).  A TensorFlow process of two replicas (MirroredStrategy, one GPU each) runs each op once per replica:
# its eager ops, host-placed ops and loss-scaling ops were counted per step over both replicas, while its kernels,
# syncs and copies were one replica's -- v100_bert's two replicas read "849 TF ops per step run on the host, taking
# 2.31 ms of each 20.6 ms step", where each ran 424.5 in 1.15 ms.  Every count per step is now one rank's, and so is
# the host-placed ops' time, a sum of each op's own duration over every replica's threads (not a union: the eager
# ops' and loss-scaling ops' host time is the host's once, however many GPUs it drives, and stays so).

TF_STEPS = 8
LOSS_SCALING_OPS = 2  # per replica and step (``_replica``)


def _replica(g: int) -> list:
    """One replica's step: a batch copy, three dense layers, a host-placed ``Unique`` (its tensors round-trip), and
    dynamic loss scaling's finite check (a kernel) and conditional update (on the host)."""
    from synthetic.scenarios import K, _dense_layers, _input_copy
    from synthetic.tfcapture import Op

    return ([_input_copy()] + _dense_layers(3, K.GEMM_FP16_TC, K.EW_ADD_HALF, prefix=f"replica_{g}/model", gemm_us=200,
                                            ew_us=18)
            + [Op(f"replica_{g}/model/unique/Unique:Unique", [], host_us=300, on_host=True, d2h_bytes=4 << 20,
                  h2d_bytes=4 << 20),
               Op(f"replica_{g}/LossScaleOptimizer/IsFinite/All:All", [K.sized(K.EW_MUL_F32, 4)]),
               Op(f"replica_{g}/LossScaleOptimizer/cond:If", [], host_us=200, on_host=True, d2h_bytes=4)])


def _tf_replicas(tmp_path, gpus: int, eager: bool):
    """(HostMetrics, the capture) of ``gpus`` replicas of one process running :func:`_replica` each step."""
    from synthetic.scenarios import Capture, Scenario
    from synthetic.tfcapture import A100
    from tb_gpu_advisor.formats import read
    from tb_gpu_advisor.model.logdir import HostFile

    cap = Capture(gpus, A100, seed=0, marker="custom_loop" if eager else "keras3", thread_mode="gpu_private")
    for _ in range(TF_STEPS):
        cap.step([_replica(g) for g in range(gpus)], input_wait_us=25, eager=eager, jitter=0.0)
    sc = Scenario(f"replicas{gpus}", {"worker0": cap.finish()}, None)  # type: ignore[arg-type]
    path = sc.write(tmp_path / f"g{gpus}{'e' if eager else ''}")[0]
    return host_metrics(read(HostFile("worker0", str(path), 0, 0, "xplane"))), cap


@pytest.mark.parametrize("eager", [False, True])
def test_two_replicas_count_host_ops_per_rank(tmp_path, eager):
    m, cap = _tf_replicas(tmp_path, 2, eager)
    assert len([g for g in m.gpus if g.active]) == 2
    written = sum(s.host_ops for s in cap.steps) / len(cap.steps)  # host-placed ops a step, both replicas
    assert written == 4
    assert m.host_ops.count_per_step == pytest.approx(written / 2)  # main: 4.0
    one, _ = _tf_replicas(tmp_path, 1, eager)
    assert one.host_ops.count_per_step == pytest.approx(written / 2)  # control: one replica's, as on main
    # the time a sum of each op's own duration: each replica's, as one replica's own (main: twice it)
    assert m.host_ops.time_ms_per_step == pytest.approx(one.host_ops.time_ms_per_step, rel=0.02)
    # loss scaling: each replica's finite check and conditional update, 2 a step
    assert m.loss_scaling.op_count_per_step == pytest.approx(LOSS_SCALING_OPS)  # main: 4.0
    assert m.loss_scaling.op_count == 2 * one.loss_scaling.op_count  # the totals: every replica's


def test_two_replicas_count_eager_ops_per_rank(tmp_path):
    m, cap = _tf_replicas(tmp_path, 2, True)
    written = sum(s.eager_ops for s in cap.steps) / len(cap.steps)  # eager ops a step, both replicas
    assert written == 2 * len(_replica(0))
    assert m.eager.per_step == pytest.approx(written / 2)  # main: 98.0 (both replicas, each op twice)
    assert m.eager.per_step == pytest.approx(m.eager.count / (m.steps.count * 2))


def test_an_eager_op_is_counted_once(tmp_path):
    """TensorFlow records an eager op as its ``EagerExecute`` call around the op's own event (``is_eager``): one op.
    Main counted both, 49 eager ops a step where the loop ran 25; a call holding no op event of its own (the input
    copy's ``_Send``, an input op, not a placed one) is still that op, counted once."""
    one, cap = _tf_replicas(tmp_path, 1, True)
    written = sum(s.eager_ops for s in cap.steps) / len(cap.steps)
    assert written == len(_replica(0))
    assert one.eager.per_step == pytest.approx(written)  # main: 49.0


def test_control_one_replica_counts_per_step(tmp_path):
    """Control, the same on main: one GPU's counts per step are its own over the kept steps."""
    one, _ = _tf_replicas(tmp_path, 1, True)
    assert one.eager.per_step == pytest.approx(one.eager.count / one.steps.count)
    assert one.loss_scaling.op_count_per_step == pytest.approx(LOSS_SCALING_OPS)
    assert one.host_ops.count_per_step == pytest.approx(2)  # Unique and the conditional update


_V100 = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"


@pytest.mark.skipif(not _V100.is_file(), reason="../shared/profiles absent")
def test_real_two_replicas_say_each_replicas_host_ops():
    """v100_bert (TF 2.4, MirroredStrategy; two replicas active, one kept step): the host-op card counts 849
    host-placed ops over both; the finding says each replica's 424.5, and their time each replica's (main: "849 TF ops
    per step ... taking 2.31 ms").  827 since h37-xla64: 22 of them were tf.data's ungrouped function ops, input work
    read by hand (MultiDeviceIterator's ``_next_func``), no longer host placement."""
    from tb_gpu_advisor.discover.logdir import locate_file

    _, s, _ = locate_file(str(_V100))
    (h,) = session_report(s).hosts
    card = next(c for c in h.headline if c.id == "host_op_share")
    ranks = len([g for g in h.gpus if g.kernel_count])
    total, steps = card.detail["host_ops"], h.steps["count"]
    assert ranks == 2 and total == 827
    f = next(f for f in h.findings if f.rule == "host_op_placement")
    assert f.metric.detail["host_ops_per_step"] == pytest.approx(total / (steps * ranks))
    said = " ".join(f.summary.split())
    assert said.startswith(f"{total / (steps * ranks):g} TF ops ") and "run on the host" in said  # main: "849 TF ops"
    saving = f.saving.ms_per_step
    assert saving <= f.metric.detail["host_op_ms_per_step"] + f.metric.detail["round_trip_copy_ms_per_step"] + 1e-3
    assert per_rank_problems(h) == []
