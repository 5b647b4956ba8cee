"""The Nsight Systems reader (``formats/nsys``) on the real exports of ``../shared/profiles/nsys`` -- every number
checked against the same file read with plain SQL here -- and on synthetic exports whose content is known by
construction (``synthetic/nsysexport.py``): row order, colliding correlation ids, registered strings, the GPU model,
CUDA graphs, an export without kernels, a database that is no export."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import replace

import numpy as np
import pytest

from synthetic.nsysexport import GEMM_FP32, NsysJob, write
from tb_gpu_advisor import devices, formats
from tb_gpu_advisor.formats import sqlite as shared_sqlite
from tb_gpu_advisor.formats.nsys import layout, probe, reader
from tb_gpu_advisor.formats.nsys.tables import NsysReadError
from tb_gpu_advisor.model.logdir import HostFile
from tests.support.paths import SHARED_PROFILES
from tests.support.sqlite_edits import query

NSYS = SHARED_PROFILES / "nsys"
H100 = NSYS / "h100_fsdp_window" / "h100_2gpu_1s.sqlite"
REAL = sorted(NSYS.glob("*/*.sqlite")) if NSYS.is_dir() else []
needs_real = pytest.mark.skipif(not REAL, reason=f"real Nsight exports not found in {NSYS}")


def _kernel_ms(d) -> float:
    k = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
    return float((d.end[k] - d.start[k]).sum()) / 1e9


# --------------------------------------------------------------------------- the real exports


@needs_real
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.parent.name)
def test_real_export_kernels_copies_and_calls_match_sql(path):
    t = reader.read_trace(str(path))
    assert t.format == "nsys" and t.framework_hint == "pytorch"
    per_dev = {int(d): (n, ms) for d, n, ms in query(path, "SELECT deviceId, count(*), sum(end - start) / 1e6 "
                                                        "FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId")}
    assert sorted(d.gpu for d in t.devices) == sorted(per_dev)
    for d in t.devices:
        k = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
        assert int(k.sum()) == per_dev[d.gpu][0]
        assert _kernel_ms(d) == pytest.approx(per_dev[d.gpu][1], abs=1e-6)
        assert (np.diff(d.start) >= 0).all()  # sorted, whatever the rows' order
        copies = {int(n): b for n, b in query(path, f"SELECT count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                                                   f"WHERE deviceId = {d.gpu}")}
        is_copy = np.array([n.startswith("Memcpy") for n in d.names])[d.name]
        assert {int(is_copy.sum()): int(d.mem_bytes[is_copy].sum())} == copies
    # every runtime call is a host event, its version suffix gone
    n_calls = query(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME")[0][0]
    n_ranges = query(path, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND end IS NOT NULL")[0][0]
    assert len(t.h) == n_calls + n_ranges and len(t.ranges.idx) == n_ranges
    assert not any(re.search(r"_v\d{4,}$", n) for n in t.h.names)
    assert "cudaLaunchKernel" in t.h.names and "cudaLaunchKernel_v7000" not in t.h.names
    # autograd NVTX ranges read as their ops, without `, seq = N, op_id = M`
    assert "aten::copy_" in t.h.names and not any(", op_id = " in n or ", seq = " in n for n in t.h.names)


@needs_real
def test_h100_window_copies_syncs_and_gpu_model():
    """What SOURCE.md says of the first export, read by the reader: per GPU 223 host-to-device copies from pinned
    memory (25.5 GB, 921 ms), 22.4 ms of kernels; two 428 ms cudaStreamSynchronize; no GPU model in the export."""
    t = reader.read_trace(str(H100))
    for d in t.devices:
        h2d = np.array([n == "Memcpy HtoD (Pinned -> Device)" for n in d.names])[d.name]
        assert int(h2d.sum()) == 223
        assert d.mem_bytes[h2d].sum() == pytest.approx(25.475e9, rel=1e-3)
        assert float((d.end[h2d] - d.start[h2d]).sum()) / 1e9 == pytest.approx(921, abs=1)
        assert _kernel_ms(d) == pytest.approx(22.4, abs=0.1)
        assert d.info.name is None
    sync = np.flatnonzero(t.h.name_mask(lambda n: n == "cudaStreamSynchronize"))
    long = sorted(float(t.h.end[i] - t.h.start[i]) / 1e9 for i in sync)[-2:]
    assert long == pytest.approx([428.42, 428.47], abs=0.01)
    assert any("GPU model: not in this export" in p for p in t.notes)
    # the window counts from the session's start (ANALYSIS_DETAILS.startTime), as Nsight's timeline does
    start = query(H100, "SELECT startTime FROM ANALYSIS_DETAILS")[0][0]
    first = min(query(H100, f"SELECT min(start) FROM {tb}")[0][0] for tb in
                ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "NVTX_EVENTS"))
    assert t.viewer_zero_ps == (start - first) * 1000
    assert t.capture_ms == pytest.approx(1000.0)  # the slice's window (DERIVED_WINDOW_NS), not the 296 s session


@needs_real
def test_h100_kernels_joined_to_launches_within_their_process():
    """Each launched kernel's op is the ATen range around its launch on the launching process's thread: the fp32
    GEMMs come from aten::mm; GPU 0's work from process 111, GPU 1's from 112 (their host lines)."""
    t = reader.read_trace(str(H100))
    for d in t.devices:
        gemm = np.array([n.startswith("sm80_xmma_gemm") for n in d.names])[d.name]
        ops = {d.op_text[o] for o in d.op_idx[gemm].tolist() if o >= 0}
        assert ops <= {"aten::mm:mm", "aten::bmm:bmm", "aten::addmm:addmm", "aten::baddbmm:baddbmm"} and "aten::mm:mm" in ops
    lines = {g: [t.h.line_names[i] for i in v.tolist()] for g, v in t.gpu_host_lines.items()}
    assert lines == {0: ["python3 (pid 111, tid 111)"], 1: ["python3 (pid 112, tid 112)"]}


# --------------------------------------------------------------------------- synthetic: known by construction


def test_synthetic_numbers_and_gpu_model(tmp_path):
    p = tmp_path / "job.sqlite"
    truth = write(str(p), NsysJob(ranks=2, nccl_us=500))
    t = reader.read_trace(str(p))
    assert [d.gpu for d in t.devices] == [0, 1]
    for d in t.devices:
        assert _kernel_ms(d) == pytest.approx(truth.kernel_ms[d.gpu])
        nccl = d.kind == devices.KIND_COLLECTIVE
        assert float((d.end[nccl] - d.start[nccl]).sum()) / 1e9 == pytest.approx(truth.nccl_ms[d.gpu])
        assert int(d.mem_bytes[d.mem_bytes > 0].sum()) == truth.h2d_bytes[d.gpu]
        assert d.info.name == "NVIDIA H100 80GB HBM3" and d.info.compute_capability == (9, 0)
        assert d.info.sm_count == 132 and d.info.clock_hz == pytest.approx(1.98e9)
    sync = t.h.name_mask(devices.is_sync_call)
    assert float((t.h.end[sync] - t.h.start[sync]).sum()) / 1e9 == pytest.approx(truth.sync_ms)
    assert not t.notes and not t.problems  # the model is in the export: nothing to say


def test_row_order_does_not_matter(tmp_path):
    """Newer exports shuffle their rows: the same job written in order and shuffled reads to the same trace."""
    a, b = tmp_path / "ordered.sqlite", tmp_path / "shuffled.sqlite"
    write(str(a), NsysJob(ranks=2, shuffle=False))
    write(str(b), NsysJob(ranks=2, shuffle=True, seed=7))
    ta, tb_ = reader.read_trace(str(a)), reader.read_trace(str(b))
    for x, y in zip(ta.devices, tb_.devices):
        assert np.array_equal(x.start, y.start) and np.array_equal(x.end, y.end)
        assert [x.names[i] for i in x.name] == [y.names[i] for i in y.name]
        assert [x.op_text[i] if i >= 0 else None for i in x.op_idx] == [y.op_text[i] if i >= 0 else None for i in y.op_idx]
    assert np.array_equal(ta.h.start, tb_.h.start) and np.array_equal(ta.h.end, tb_.h.end)
    assert [ta.h.names[i] for i in ta.h.name] == [tb_.h.names[i] for i in tb_.h.name]


def test_chunked_reads_give_the_same_columns(tmp_path, monkeypatch):
    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(ranks=2))
    whole = reader.read_trace(str(p))
    monkeypatch.setattr(shared_sqlite, "CHUNK_ROWS", 7)
    monkeypatch.setattr(shared_sqlite.int_columns, "__defaults__", ("", 7))
    monkeypatch.setattr(shared_sqlite.mixed_columns, "__defaults__", ("", 7))
    chunked = reader.read_trace(str(p))
    for x, y in zip(whole.devices, chunked.devices):
        assert np.array_equal(x.start, y.start) and np.array_equal(x.corr, y.corr)
    assert [whole.h.names[i] for i in whole.h.name] == [chunked.h.names[i] for i in chunked.h.name]


def test_correlation_ids_are_joined_within_their_process(tmp_path):
    """Both ranks number their launches from the same ids: rank 1's kernel with id N must not be taken for rank 0's
    launch N.  The fp32 kernels of rank 1 are launched under its own `aten::mm` ranges, so every kernel's op and
    launch thread is its own process's."""
    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(ranks=2))
    ids = query(p, "SELECT DISTINCT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0")
    ids1 = query(p, "SELECT DISTINCT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 1")
    assert set(ids) == set(ids1)  # they do collide
    t = reader.read_trace(str(p))
    rec = {}
    for d in t.devices:
        first = {int(c): i for i, c in reversed(list(enumerate(t.h.corr.tolist()))) if c >= 0}
        launch = np.array([first.get(int(c), -1) for c in d.corr])
        assert (launch >= 0).all()
        rec[d.gpu] = {t.h.line_names[t.h.line[i]] for i in launch}
        assert (t.h.start[launch] < d.start).all()
    assert rec == {0: {"python3 (pid 1000, tid 1000)"}, 1: {"python3 (pid 1001, tid 1001)"}}


def test_registered_names_domains_and_start_end_ranges(tmp_path):
    """NVTX names from StringIds (textId), a named domain, start/end ranges (type 60) read; marks (type 34) not."""
    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(text_ids=True, autograd_nvtx=False, step_range="iteration {k}"))
    con = sqlite3.connect(p)
    con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES "
                "(40000000000, NULL, 75, 'MyLib', ?, 5)", (1 << 48 | 1000 << 24 | 1000,))
    con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES "
                "(40005000000, 40006000000, 60, 'load shard', ?, 5)", (1 << 48 | 1000 << 24 | 1000,))
    con.commit()
    con.close()
    t = reader.read_trace(str(p))
    names = [t.h.names[t.h.name[i]] for i in t.ranges.idx]
    assert names.count("iteration 3") == 1 and "load shard" in names and "a mark" not in names
    k = names.index("load shard")
    assert t.ranges.domains[t.ranges.domain[k]] == "MyLib"
    assert not t.ranges.op.any()  # plain NVTX: no autograd ops


def test_cuda_graph_executions(tmp_path):
    """--cuda-graph-trace=graph: one execution row per graph launch, joined to its cudaGraphLaunch, with its graph
    id; node mode: the graph's kernels carry graphId."""
    p = tmp_path / "graph.sqlite"
    truth = write(str(p), NsysJob(graph_mode="graph"))
    t = reader.read_trace(str(p))
    d = t.devices[0]
    graphs = np.array([n.startswith("CUDA graph") for n in d.names])[d.name]
    assert int(graphs.sum()) == truth.kernels[0] == 12
    assert (d.graph_id[graphs] == 7).all()
    assert _kernel_ms(d) == pytest.approx(truth.kernel_ms[0])
    assert "cudaGraphLaunch" in t.h.names
    q = tmp_path / "node.sqlite"
    write(str(q), NsysJob(graph_mode="node"))
    dn = reader.read_trace(str(q)).devices[0]
    k = dn.kind == devices.KIND_KERNEL
    assert (dn.graph_id[k] == 7).all()


def test_launches_without_a_kernel_table_are_lost_records_never_healthy(tmp_path):
    """The host launched kernels the export holds no record of: the GPU's side was lost -- read as Kineto reads the
    same case (``job.kind``: a report whose first finding says so, the file itself undamaged), never healthy and never
    "no GPU work"."""
    from tb_gpu_advisor.runtime.pipeline import analyze_host

    p = tmp_path / "cpu_only.sqlite"
    truth = write(str(p), NsysJob(kernels_table=False))
    t = reader.read_trace(str(p))
    assert not any(len(d) and (d.kind == devices.KIND_KERNEL).any() for d in t.devices)
    assert t.problems == []
    assert probe.has_gpu_activity(str(p)) is False
    rep = analyze_host(HostFile("cpu_only", str(p), p.stat().st_size, 0, "nsys"))
    assert rep.error is None and not rep.damage
    assert f"launched {truth.steps * 20:,} kernels" in rep.job["kind_evidence"]
    assert "the GPU's side of the capture was lost" in rep.job["kind_evidence"]
    assert rep.job["kind"] == "unknown"


def test_a_database_that_is_no_export(tmp_path):
    p = tmp_path / "results.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE metrics (step INTEGER, loss REAL)")
    con.commit()
    con.close()
    assert "not an Nsight Systems export" in layout.sniff(str(p))
    with pytest.raises(NsysReadError, match="no Nsight Systems export"):
        reader.read_trace(str(p))
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    with pytest.raises(NsysReadError):
        reader.read_trace(str(junk))
    text = tmp_path / "notes.db"
    text.write_text("not a database")
    assert layout.sniff(str(text)) == "not an SQLite file"
    assert probe.has_gpu_activity(str(text)) is None


def test_missing_gpu_model_is_said_with_the_kernels_hint(tmp_path):
    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(gpu_info=False, kernel=GEMM_FP32))
    t = reader.read_trace(str(p))
    assert t.devices[0].info.name is None
    assert any("GPU model: not in this export" in m and "Ampere or newer" in m for m in t.notes)


def test_size_limit(tmp_path, monkeypatch):
    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(steps=3))
    monkeypatch.setenv(formats.ENV_MAX_BYTES, "1000")
    with pytest.raises(NsysReadError, match="over the"):
        reader.read_trace(str(p))


def test_ranks_of_one_machine_read_as_one_trace(tmp_path):
    """Two exports (one per rank, each seeing its GPU as device 0) read together: two GPUs, each with its own
    rank's kernels and host lines, on the clock they share."""
    a, b = tmp_path / "report_rank0.sqlite", tmp_path / "report_rank1.sqlite"
    ta = write(str(a), NsysJob(steps=6))
    tb_ = write(str(b), replace(NsysJob(steps=6), kernel_us=150.0))
    t = reader.read_trace(str(a), host="node", ranks=[str(a), str(b)])
    assert [d.gpu for d in t.devices] == [0, 1]
    assert t.gpu_ranks == {0: 0, 1: 1}  # the ranks the files' names give
    assert _kernel_ms(t.devices[0]) == pytest.approx(ta.kernel_ms[0])
    assert _kernel_ms(t.devices[1]) == pytest.approx(tb_.kernel_ms[0])
    assert len(t.gpu_host_lines[0]) == 1 and len(t.gpu_host_lines[1]) == 1
    assert t.gpu_host_lines[0][0] != t.gpu_host_lines[1][0]
    for d in t.devices:  # each kernel joined to its own file's launch
        k = d.kind == devices.KIND_KERNEL
        assert {d.op_text[o] for o in d.op_idx[k].tolist()} == {"aten::mm:mm"}


def test_a_name_that_is_no_utf8_is_read_with_replacement(tmp_path):
    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(steps=3, autograd_nvtx=False))
    con = sqlite3.connect(p)
    con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES "
                "(40000000000, 40000001000, 59, CAST(x'6461746140ff' AS TEXT), ?)", (1 << 48 | 1000 << 24 | 1000,))
    con.commit()
    con.close()
    t = reader.read_trace(str(p))
    assert "data@\ufffd" in t.h.names


def _session_started_later(path, ns: int) -> None:
    """Rewrite the export at ``path`` as a session that started ``ns`` later on the wall clock: every time it records
    counts from its own session's start, so each is ``ns`` smaller, and ``utcEpochNs`` is ``ns`` larger -- the same
    events at the same moments, written by an ``nsys`` launched later (one per rank under ``mpirun``)."""
    con = sqlite3.connect(path)
    tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for t in tables:
        cols = {c[1] for c in con.execute(f'PRAGMA table_info("{t}")')}
        if t != "TARGET_INFO_SESSION_START_TIME" and {"start", "end"} <= cols:
            con.execute(f'UPDATE "{t}" SET start = start - ?, end = end - ?', (ns, ns))
    con.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + ?", (ns,))
    con.commit()
    con.close()


def test_ranks_of_one_machine_are_put_on_one_clock_by_their_sessions_starts(tmp_path):
    """Each rank's ``nsys profile`` is a session of its own whose times count from its own start (a CME 213 4-rank
    MPI export, Nsight 2023.4.1: sessions started up to 111 ms apart, one ``MPI_Barrier`` ending 111 ms apart as
    written and within 43 us once each export is moved by its session's start).  Truth by construction: rank 1's
    export rewritten as a session started 37 ms later holds the same moments, so the merged trace must not move."""
    a, b = tmp_path / "report_rank0.sqlite", tmp_path / "report_rank1.sqlite"
    write(str(a), NsysJob(steps=6))
    write(str(b), replace(NsysJob(steps=6), kernel_us=150.0))
    same = reader.read_trace(str(a), host="node", ranks=[str(a), str(b)])
    _session_started_later(b, 37_000_000)
    moved = reader.read_trace(str(a), host="node", ranks=[str(a), str(b)])
    for d0, d1 in zip(same.devices, moved.devices):
        assert np.array_equal(d0.start, d1.start) and np.array_equal(d0.end, d1.end)  # main: rank 1's 37 ms early
    assert np.array_equal(np.sort(same.h.start), np.sort(moved.h.start))
