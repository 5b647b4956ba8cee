"""Ranks of one machine read as one host (formats/kineto/layout.py by_machine, formats/kineto/ranks.py): their GPUs side by
side, on one clock, with nothing of one rank linked to another.

Why: DDP/FSDP write one trace per process; imbalance and launch skew are differences between those files.
The truth here is by construction: copies of one real trace (``torch_healthy_bf16``) whose only difference
is a known shift of ``baseTimeNanoseconds`` -- what a rank starting its steps late looks like -- or the GPU
id each copy names.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tb_gpu_advisor import formats
from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.formats.kineto import adapter as kineto_adapter
from tb_gpu_advisor.formats.kineto.parse import parse_trace
from tb_gpu_advisor.formats.kineto.ranks import ID_STRIDE, merge_ranks
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.real_checks import REAL_TORCH_SET

SRC = next(iter(sorted((REAL_TORCH_SET / "torch_healthy_bf16").glob("*.pt.trace.json"))), None) \
    if REAL_TORCH_SET.is_dir() else None
needs_real = pytest.mark.skipif(SRC is None, reason="real H100 PyTorch traces not found")
T0 = 1_795_380_384_345_498_510


def _rank_copy(doc: dict[str, Any], *, shift_ns: int = 0, gpu: int | None = None, rank: int | None = None) -> dict:
    """``doc`` as another rank wrote it: its clock base moved by ``shift_ns``, its GPU renamed to ``gpu``."""
    out = json.loads(json.dumps(doc))
    out["baseTimeNanoseconds"] += shift_ns
    if rank is not None:
        out["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 2}
    if gpu is not None:
        for e in out["traceEvents"]:
            args = e.get("args") or {}
            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation") or (
                    e.get("ph") == "M" and e.get("pid") == 0):
                e["pid"] = gpu
            if "device" in args:
                args["device"] = gpu
        for p in out["deviceProperties"]:
            p["id"] = gpu
    return out


def _write_ranks(folder: Path, docs: list[dict]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, d in enumerate(docs):
        # ranks of one job say so (issue #18: files are ranks only when the trace says), in the header as Kineto writes it
        info = d.get("distributedInfo") or {"backend": "nccl", "rank": i, "world_size": len(docs)}
        d = {"distributedInfo": info, **{k: v for k, v in d.items() if k != "distributedInfo"}}
        p = folder / f"node_{100 + i}.{T0 + i}.pt.trace.json"
        p.write_text(json.dumps(d))
        paths.append(p)
    return paths


@needs_real
@pytest.mark.parametrize("gpu_of_second", [None, 1], ids=["same-gpu-id", "own-gpu-ids"])
def test_two_ranks_become_one_host_with_two_gpus(tmp_path: Path, gpu_of_second: int | None) -> None:
    doc = json.loads(SRC.read_text())
    _write_ranks(tmp_path / "ddp", [doc, _rank_copy(doc, gpu=gpu_of_second)])
    (s,) = discovery.discover(str(tmp_path))
    (host,) = s.hosts
    assert host.host == "node" and [r.host for r in host.ranks] == ["node_100", "node_101"]
    single = kineto_adapter.read_trace(str(SRC))
    t = formats.read(host)
    assert [d.gpu for d in t.devices] == [0, 1]  # a clash renumbers in rank order; own ids are kept
    (d0,) = single.devices
    for d in t.devices:  # each GPU has exactly one rank's work, kernel for kernel
        assert len(d) == len(d0) and sorted(d.names) == sorted(d0.names)
        assert d.info.name == d0.info.name
    assert t.host_steps is not None and t.host_steps.ids.size == 2 * single.host_steps.ids.size
    assert set(t.gpu_step_lines) == {0, 1} and "2 ranks" in t.gpu_step_source[1]


@needs_real
def test_ids_of_one_rank_never_reach_another() -> None:
    """Correlation and External ids are per process: after the merge the ranks' sets are disjoint, so a
    kernel's launch and op are always its own rank's."""
    a = parse_trace(str(SRC))
    m = merge_ranks([a, parse_trace(str(SRC))], ["w_1", "w_2"])
    n = len(a)
    for col in ("correlation", "external_id"):
        first, second = getattr(m, col)[:n], getattr(m, col)[n:]
        assert not set(first[first >= 0].tolist()) & set(second[second >= 0].tolist())
        assert np.array_equal(second[second >= 0] - ID_STRIDE, getattr(a, col)[getattr(a, col) >= 0])
    assert m.pid_labels == a.pid_labels and m.names == a.names and m.workers == ["w_1", "w_2"]
    # one pid in both files (copies): the second file's pids move to their own range, one host line per rank
    pids = set(a.pid[a.pid >= 0].tolist())
    assert set(m.pid[:n][m.pid[:n] >= 0].tolist()) == pids
    assert not pids & set(m.pid[n:][m.pid[n:] >= 0].tolist())
    assert len(m.thread_names) == 2 * len(a.thread_names)
    assert sorted(m.gpu_pids) == [0, 1] and not set(m.gpu_pids[0]) & set(m.gpu_pids[1])
    assert m.ph_counts == {k: 2 * v for k, v in a.ph_counts.items()}


@needs_real
def test_a_rank_starting_late_is_measured_as_launch_skew(tmp_path: Path) -> None:
    """Rank 1's clock base is 1.5 ms later: its steps run 1.5 ms after rank 0's.  The skew measured between
    the GPUs' first kernels is that shift (to the microsecond); each GPU's own step time is the single
    trace's."""
    doc = json.loads(SRC.read_text())
    _write_ranks(tmp_path / "ddp", [doc, _rank_copy(doc, shift_ns=1_500_000)])
    (s,) = discovery.discover(str(tmp_path))
    m = host_metrics(formats.read(s.hosts[0]))
    assert m.multi_gpu.launch_skew_ms == pytest.approx(1.5, abs=1e-3)
    offsets = {g.gpu: g.first_kernel_offset_ms for g in m.gpus}
    assert offsets[0] == pytest.approx(0.0, abs=1e-3) and offsets[1] == pytest.approx(1.5, abs=1e-3)
    single = host_metrics(kineto_adapter.read_trace(str(SRC)))
    assert [g.step_ms for g in m.gpus] == pytest.approx([single.gpus[0].step_ms] * 2, rel=0.05)
    # identical ranks, identical breakdowns: each GPU's idle time is explained by its own process only (with
    # every process's host events, rank 1's dispatch would be read as launch wait on GPU0 and vice versa)
    a, b = (dataclasses.asdict(g.breakdown) for g in m.gpus)
    assert a == pytest.approx(b, abs=1e-6) and a["launch_wait"] > 0


@needs_real
def test_distributed_rank_orders_the_gpus(tmp_path: Path) -> None:
    """Worker names list rank 1 first (its pid is lower); ``distributedInfo.rank`` puts it second."""
    doc = json.loads(SRC.read_text())
    late = _rank_copy(doc, shift_ns=2_000_000, rank=1)
    _write_ranks(tmp_path / "ddp", [late, _rank_copy(doc, rank=0)])
    (s,) = discovery.discover(str(tmp_path))
    m = host_metrics(formats.read(s.hosts[0]))
    assert {g.gpu: round(g.first_kernel_offset_ms, 3) for g in m.gpus} == {0: 0.0, 1: 2.0}


def test_string_pids_and_memory_merge(tmp_path: Path) -> None:
    """Small hand-written ranks: string pids share one label table, memory peaks follow their GPU's new id."""
    def doc(rank: int) -> dict:
        return {"baseTimeNanoseconds": 1000, "traceEvents": [
            {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
             "ts": 1.0, "dur": 10.0},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2.0, "dur": 1.0,
             "args": {"device": 0, "stream": 7, "correlation": 5}},
            {"ph": "i", "name": "[memory]", "pid": 9, "tid": 9, "ts": 2.0,
             "args": {"Device Type": 1, "Device Id": 0, "Total Allocated": 100 * (rank + 1), "Total Reserved": 1}},
            {"ph": "M", "name": "thread_name", "pid": 9 + rank, "tid": 1, "args": {"name": f"main {rank}"}}]}
    paths = _write_ranks(tmp_path, [doc(0), doc(1)])
    m = merge_ranks([parse_trace(str(p)) for p in paths], ["a_1", "a_2"])
    assert m.pid_labels == {-2: "Spans"} and m.pid.tolist() == [-2, 0, -2, 0]
    assert m.device.tolist() == [-1, 0, -1, 1] and m.memory == {0: 100, 1: 200}
    assert m.thread_names == {(9, 1): "a_1: main 0", (10, 1): "a_2: main 1"}
    assert m.correlation.tolist() == [-1, 5, -1, 5 + ID_STRIDE]


def test_a_step_number_marked_twice_opens_at_its_first_mark():
    """debt45: ``adapter._first_mark_ps`` -- the marks' step numbers (a restarted count marks #3 twice) with the
    earliest start of each, sorted by number, as the per-step mask took its least (``_opened_on_host``)."""
    from tb_gpu_advisor.formats.kineto.adapter import _first_mark_ps
    marked, first = _first_mark_ps(np.array([3, 1, 3, 2], np.int64), np.array([50, 10, 30, 20], np.int64))
    assert marked.tolist() == [1, 2, 3] and first.tolist() == [10, 20, 30]
