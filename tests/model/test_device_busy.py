"""A GPU's busy union -- the merged stretches of all its kernels, copies, memsets and collectives -- has one home,
``DeviceEvents.busy``, made once per GPU and analysis (h37-tidy).

The job stage (is the GPU idle through a host span), the steps (are the bursts iterations) and the metrics (each
step's busy time and gaps, the idle the host's ranges and OS waits fill, the loss scaling's idle, the trips, the
capture's sampling) each merged the GPU's events again.  Properties on real captures of every reader's layout: the
kept union is what merging the columns directly gives, it covers every event and nothing between them, and a whole
analysis merges each GPU's columns once."""

from __future__ import annotations

import numpy as np
import pytest

import tb_gpu_advisor.model.trace as trace_module
from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.intervals import union
from tests.support.paths import FIXTURES

#: one capture per reader and vendor: XPlane on ROCm, Kineto (one rank, DDP), Nsight, RPD, two ranks in one folder
CAPTURES = ["jax_mi355x", "timesformer_h100_video", "ddp_a100_nccl", "cloverleaf_a100_cuda", "vllm_rpd_fp8",
            "tp_rtx4090_two_ranks"]


def _read(name: str):  # noqa: ANN202 - a Trace
    (session,) = discover(str(FIXTURES / "wild" / name))
    return formats.read(session.hosts[0])


@pytest.fixture(scope="module", params=CAPTURES)
def analysed(request):  # noqa: ANN001, ANN201
    """(trace, how many times each GPU's columns were merged) after a whole analysis of one real capture."""
    merged: dict[int, int] = {}
    real = trace_module.union_intervals

    def counting(start: np.ndarray, end: np.ndarray, **kw):  # noqa: ANN202
        merged[id(start)] = merged.get(id(start), 0) + 1
        return real(start, end, **kw)

    trace = _read(request.param)
    mp = pytest.MonkeyPatch()
    mp.setattr(trace_module, "union_intervals", counting)
    try:
        host_metrics(trace)
    finally:
        mp.undo()
    return trace, merged


def test_each_gpus_union_is_merged_once_per_analysis(analysed):
    trace, merged = analysed
    gpus = [d for d in trace.devices if len(d)]
    assert gpus, "the capture holds GPU work"
    assert all(n == 1 for n in merged.values()), merged
    assert len(merged) <= len(trace.devices), "one union per GPU (an idle one's is empty)"
    for d in gpus:
        a, b = d.busy(), d.busy()
        assert a[0] is b[0] and a[1] is b[1], "asked again, the kept union is handed out"


def test_the_kept_union_is_the_columns_merged(analysed):
    trace, _ = analysed
    for d in (d for d in trace.devices if len(d)):
        us, ue = d.busy()
        ds, de = union_intervals(d.start.astype(np.int64), d.end.astype(np.int64))
        np.testing.assert_array_equal(us, ds)
        np.testing.assert_array_equal(ue, de)
        assert us.dtype == ue.dtype == np.int64
        assert not us.flags.writeable and not ue.flags.writeable, "shared by every stage: nobody may write it"


def test_the_union_covers_every_event_and_nothing_between(analysed):
    trace, _ = analysed
    for d in (d for d in trace.devices if len(d)):
        us, ue = d.busy()
        assert (ue >= us).all() and (us[1:] > ue[:-1]).all(), "sorted, disjoint and apart"
        k = np.searchsorted(us, d.start, side="right") - 1
        assert (k >= 0).all() and (d.end <= ue[k]).all(), "each event lies inside one stretch"
        # no part exceeds its whole: the busy time is at most the events' summed time and at most their span
        busy = int((ue - us).sum())
        assert busy <= int((d.end - d.start).sum()) and busy <= int(d.end.max() - d.start.min())
        if len(d) <= 50_000:  # the plain reference, on the captures small enough for Python
            ref = union(list(zip(d.start.tolist(), d.end.tolist())))
            assert list(zip(us.tolist(), ue.tolist())) == ref


def test_replaced_times_get_a_new_union():
    """The kept answer is tied to the columns it was made from: a table whose times were replaced never reads a
    stale union (the way :meth:`GpuCtx.kernels_in_steps` keeps its own)."""
    trace = _read("jax_mi355x")
    d = next(d for d in trace.devices if len(d))
    before = d.busy()
    d.start, d.end = d.start[1:], d.end[1:]
    after = d.busy()
    assert after[0] is not before[0]
    np.testing.assert_array_equal(after[0], union_intervals(d.start.astype(np.int64), d.end.astype(np.int64))[0])


@pytest.mark.parametrize("name", ["cloverleaf_a100_cuda", "jax_mi355x"])
def test_the_syncs_idle_reads_the_kept_union(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The program syncs' drained stretches lose the GPU's busy time through ``DeviceEvents.busy`` (h37-review21:
    ``metrics.syncs._idle_in`` merged the GPU's events near the stretches again).  Real captures whose syncs are
    measured over their drained stretch (a CUDA loop's, JAX's on ROCm): no union the syncs' stage makes is of device
    events; what it merges is host time (calls, input spans, copy leads)."""
    import tb_gpu_advisor.metrics.syncs as syncs

    trace = _read(name)
    starts = [d.start for d in trace.devices if len(d)]
    merged_devices: list[int] = []
    real = syncs.union_intervals

    def watching(start: np.ndarray, end: np.ndarray, **kw):  # noqa: ANN202
        s = np.asarray(start)
        if s.size >= 2 and any(np.isin(s, col).all() for col in starts):
            merged_devices.append(int(s.size))
        return real(start, end, **kw)

    reached = []
    idle_in = syncs._idle_in
    monkeypatch.setattr(syncs, "union_intervals", watching)
    monkeypatch.setattr(syncs, "_idle_in", lambda d, s, e: reached.append(1) or idle_in(d, s, e))
    host_metrics(trace)
    assert reached, "premise: the syncs' drained stretches are measured"
    assert not merged_devices, f"the syncs merged {merged_devices} device events again"


def test_the_syncs_idle_is_the_stretches_less_the_busy_union() -> None:
    """What ``_idle_in`` returns is unchanged by reading the kept union: each stretch less every event's time, as the
    plain reference computes it (the stretches straddle busy and idle time of a real GPU)."""
    from tb_gpu_advisor.metrics.syncs import _idle_in

    d = next(d for d in _read("cloverleaf_a100_cuda").devices if len(d))
    ref_busy = union(list(zip(d.start.tolist(), d.end.tolist())))
    lo, hi = int(d.start.min()), int(d.end.max())
    edges = np.linspace(lo, hi, 41).astype(np.int64)
    s, e = edges[:-1:2], edges[1::2]  # 20 disjoint stretches over the GPU's whole span
    got_s, got_e = _idle_in(d, s, e)
    ref: list[tuple[int, int]] = []
    for a, b in zip(s.tolist(), e.tolist()):
        t = a
        for bs, be in ref_busy:
            if be <= t or bs >= b:
                continue
            if bs > t:
                ref.append((t, bs))
            t = max(t, be)
        if t < b:
            ref.append((t, b))
    assert [(a, b) for a, b in zip(got_s.tolist(), got_e.tolist()) if b > a] == ref
