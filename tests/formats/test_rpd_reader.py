"""rocmProfileData's ``.rpd`` databases read into the neutral trace model (issue #37, "captures unlike ours": AMD's
own ROCm tracer), checked against what ``sqlite3`` reads off the two real files (survey h37-rpd).

* ``foreign/rocm_rpd_matmul/matmul_result.rpd`` (MIT): one ``torch.matmul`` traced from process start on a gfx90a
  GPU (``gpuId`` 2) -- 125 HIP calls, 85 GPU operations (29 kernels, 55 copies, 1 fill), a 2,000,000,000-byte
  ``hipMemcpyWithStream`` upload that holds the host 345.7 ms, one Tensile GEMM of 26.2 ms.
* ``wild/vllm_rpd_fp8/mytrace.rpd.gz`` (MIT, ROCm/rocmProfileData ``raptor/tests``): a vLLM V0 ``generate`` --
  10,124 GPU operations (8,948 kernels, 7,720 of them ``Task`` ops 20 ``hipGraphLaunch`` calls ran), 11,884
  ``UserMarker`` ranges, 21 records of the tracer's own flushes.

Main read neither: ``not a profile this tool reads`` (the ``.rpd`` named, not read).
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.rpd.reader import GPU_NAME, RpdReadError, read_trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MATMUL = FIXTURES / "foreign" / "rocm_rpd_matmul" / "matmul_result.rpd"
VLLM = FIXTURES / "wild" / "vllm_rpd_fp8" / "mytrace.rpd.gz"


@pytest.fixture(scope="module")
def vllm_db(tmp_path_factory) -> Path:
    """The vLLM database gunzipped, for sqlite3's own reading of it."""
    out = tmp_path_factory.mktemp("rpd") / "mytrace.rpd"
    out.write_bytes(gzip.decompress(VLLM.read_bytes()))
    return out


def _sql(db: Path, query: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def _op_types(db: Path) -> dict[str, int]:
    return dict(_sql(db, "SELECT t.string, count(*) FROM rocpd_op o JOIN rocpd_string t ON t.id = o.opType_id "
                         "GROUP BY 1"))


def test_the_matmul_reads_as_sqlite3_reads_it():
    t = read_trace(str(MATMUL))
    assert t.format == "rpd" and [d.gpu for d in t.devices] == [2]
    d = t.devices[0]
    types = _op_types(MATMUL)
    kinds = devices.device_kind(d.names)[d.name]
    assert int((kinds == devices.KIND_KERNEL).sum()) == types["KernelExecution"]
    copies = np.array([devices.copy_direction(n) for n in d.names], dtype=object)[d.name]
    assert int((copies == "h2d").sum()) == types["CopyHostToDevice"]
    assert int((copies == "d2h").sum()) == types["CopyDeviceToHost"]
    assert int((copies == "memset").sum()) == types["FillBuffer"]
    # the upload: its bytes and its call's hold of the host, as sqlite3 reads them
    (size, held_ns, gpu_ns), = _sql(MATMUL, "SELECT c.size, a.end - a.start, o.end - o.start FROM rocpd_copyapi c "
                                           "JOIN rocpd_api a ON a.id = c.api_ptr_id JOIN rocpd_api_ops x ON "
                                           "x.api_id = a.id JOIN rocpd_op o ON o.id = x.op_id ORDER BY c.size DESC "
                                           "LIMIT 1")
    big = int(np.argmax(d.mem_bytes))
    assert int(d.mem_bytes[big]) == size == 2_000_000_000
    assert int(d.end[big] - d.start[big]) == gpu_ns * 1000
    assert d.mem_sync[big] == 1  # hipMemcpyWithStream blocks the host whatever the table's `sync` column says
    launch = int(np.flatnonzero(t.h.corr == d.corr[big])[0])
    assert t.h.names[t.h.name[launch]] == "hipMemcpyWithStream"
    assert int(t.h.end[launch] - t.h.start[launch]) == held_ns * 1000
    # the GEMM: its name, its length, its grid from rocpd_kernelapi (a hipExtModuleLaunchKernel: work-items / group)
    gemm = [i for i, n in enumerate(d.names) if n.startswith("Cijk_")]
    (ns,), = _sql(MATMUL, "SELECT o.end - o.start FROM rocpd_op o JOIN rocpd_string s ON s.id = o.description_id "
                         "WHERE s.string LIKE 'Cijk%'")
    k = int(np.flatnonzero(np.isin(d.name, gemm))[0])
    assert int(d.end[k] - d.start[k]) == ns * 1000
    idx, blocks, threads = d.launches()
    assert idx.size == types["KernelExecution"]
    # AMD, of no model: nothing claimed of its peak
    assert d.info.name == GPU_NAME and devices.vendor(d.info.name) is devices.amd
    assert any("no GPU model" in n for n in t.notes)
    # the tracer's own records are no host events of the program's
    assert not any(n.endswith("::writeRows") for n in (t.h.names[i] for i in np.unique(t.h.name).tolist()))


def test_the_vllm_trace_reads_its_ranges_graph_kernels_and_launches(vllm_db: Path):
    t = read_trace(str(VLLM))
    types = _op_types(vllm_db)
    d = t.devices[0]
    assert len(d) == sum(types.values())
    kinds = devices.device_kind(d.names)[d.name]
    assert int((kinds == devices.KIND_KERNEL).sum()) == types["KernelExecution"] + types["Task"]
    # every op's launch is a host call: the graph's kernels share their hipGraphLaunch's correlation and graph id
    assert (d.corr >= 0).all()
    graph = np.asarray(d.graph_id) >= 0
    in_graphs = dict(_sql(vllm_db, "SELECT t.string, count(*) FROM rocpd_api_ops x JOIN rocpd_api a ON a.id = x.api_id "
                                   "JOIN rocpd_string s ON s.id = a.apiName_id JOIN rocpd_op o ON o.id = x.op_id "
                                   "JOIN rocpd_string t ON t.id = o.opType_id WHERE s.string = 'hipGraphLaunch' "
                                   "GROUP BY 1"))
    assert in_graphs["Task"] == types["Task"] and int(graph.sum()) == sum(in_graphs.values())  # its copies too
    assert np.unique(np.asarray(d.graph_id)[graph]).size == _sql(
        vllm_db, "SELECT count(*) FROM rocpd_api a JOIN rocpd_string s ON s.id = a.apiName_id "
                 "WHERE s.string = 'hipGraphLaunch'")[0][0]
    # the UserMarker ranges, by their text; PyTorch's ops among them flagged as ops
    (markers,), = _sql(vllm_db, "SELECT count(*) FROM rocpd_api a JOIN rocpd_string s ON s.id = a.apiName_id "
                               "WHERE s.string = 'UserMarker'")
    names = np.array(t.h.names, dtype=object)[t.h.name[t.ranges.idx]]
    assert int(np.count_nonzero(names != "run_to_completion")) == markers
    assert int((names == "execute_model").sum()) == 22
    assert t.ranges.op[names == "aten::to"].all() and not t.ranges.op[names == "execute_model"].any()
    # the sampler's two reads: synchronous D2H copies whose launch lies inside `aten::to`
    text = np.array(d.op_text + [""], dtype=object)[d.op_idx]
    reads = (np.array([devices.copy_direction(n) for n in d.names], dtype=object)[d.name] == "d2h") & (d.mem_sync == 1)
    assert int(reads.sum()) == types["CopyDeviceToHost"]
    assert all(str(x).startswith("aten::copy_") for x in text[reads])  # the innermost op around each read's call
    assert t.framework_hint == "pytorch"


@pytest.mark.parametrize("name", ["trace.rpd", "report1.sqlite"])
def test_a_database_is_known_by_its_tables_whatever_its_name(tmp_path: Path, name: str):
    path = tmp_path / name
    shutil.copyfile(MATMUL, path)
    assert read_trace(str(path)).host == name.rsplit(".", 1)[0]


# --------------------------------------------------------------------------- hostile inputs: a clear error, never a report


def _copy(tmp_path: Path, name: str = "x.rpd") -> Path:
    path = tmp_path / name
    shutil.copyfile(MATMUL, path)
    return path


def test_a_truncated_database_is_damage(tmp_path: Path):
    path = _copy(tmp_path)
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 2)
    with pytest.raises(RpdReadError, match="cut short"):
        read_trace(str(path))


def test_a_foreign_sqlite_and_a_text_file_named_rpd_are_refused(tmp_path: Path):
    db = tmp_path / "other.rpd"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'a');")
    con.commit()
    con.close()
    with pytest.raises(RpdReadError, match="no rocmProfileData database"):
        read_trace(str(db))
    text = tmp_path / "notes.rpd"
    text.write_text("rocm profile notes\n")
    with pytest.raises(RpdReadError, match="not an SQLite file"):
        read_trace(str(text))


def test_an_endless_view_in_place_of_a_table_is_never_run(tmp_path: Path):
    """A view named ``rocpd_op`` is a query the file wrote: it reads as a missing table, not as the GPU's work."""
    path = _copy(tmp_path)
    con = sqlite3.connect(path)
    con.executescript("DROP VIEW IF EXISTS op; DROP VIEW IF EXISTS busy; DROP VIEW IF EXISTS top; "
                      "DROP VIEW IF EXISTS kernel; DROP VIEW IF EXISTS copyop; DROP TABLE rocpd_op; "
                      "CREATE VIEW rocpd_op AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                      "SELECT i AS id FROM n;")
    con.commit()
    con.close()
    with pytest.raises(RpdReadError, match="no rocmProfileData database"):
        read_trace(str(path))


def test_a_table_without_its_columns_and_a_damaged_page_are_damage(tmp_path: Path):
    path = _copy(tmp_path)
    con = sqlite3.connect(path)
    con.executescript("ALTER TABLE rocpd_api RENAME COLUMN tid TO thread;")
    con.commit()
    con.close()
    with pytest.raises(RpdReadError, match="rocpd_api has no column tid"):
        read_trace(str(path))
    bad = _copy(tmp_path, "bad.rpd")
    raw = bytearray(bad.read_bytes())
    raw[4096:] = b"\xff" * (len(raw) - 4096)  # every page after the first: b-tree pages no SQLite wrote
    bad.write_bytes(bytes(raw))
    with pytest.raises(RpdReadError, match="damaged"):
        read_trace(str(bad))


def test_a_gzipped_database_cut_off_is_damage_and_a_whole_one_reads(tmp_path: Path):
    packed = gzip.compress(MATMUL.read_bytes())
    whole = tmp_path / "whole.rpd.gz"
    whole.write_bytes(packed)
    assert len(read_trace(str(whole)).devices[0]) == sum(_op_types(MATMUL).values())
    cut = tmp_path / "cut.rpd.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(RpdReadError, match="damaged gzip"):
        read_trace(str(cut))


def test_control_an_nsight_export_is_still_nsights(tmp_path: Path):
    """The SQLite files Nsight writes stay Nsight's: the rpd reader refuses one, discovery never hands it one."""
    from synthetic import hostile

    path = hostile.sqlite_export(str(tmp_path / "train.sqlite"), steps=3)
    with pytest.raises(RpdReadError, match="no rocmProfileData database"):
        read_trace(path)
    from tb_gpu_advisor.discover.logdir import discover

    hosts = [h for s in discover(str(tmp_path)) for h in s.hosts]
    assert [h.format for h in hosts] == ["nsys"]


def test_a_window_of_start_up_calls_is_a_report_and_an_empty_database_an_error(tmp_path: Path):
    """Issue #37 class 1 for rpd: HIP calls and no GPU operation is a window that holds no GPU work (a report saying
    so, with rpd_tracer's way to record the steps); a database with no record at all is an error."""
    from synthetic.rpdtrace import SCHEMA, write
    from tests.support.cli_report import ran_report

    path = tmp_path / "startup.rpd"
    write(str(path), [[]])
    code, report = ran_report(path)  # in this process: a fresh interpreter cost ~2 s of imports for the same report
    assert code in (0, 1), code
    assert report["hosts"][0]["error"] is None
    (top,) = [f for f in report["findings"] if f["severity"] in ("warning", "critical")]
    assert "start-up" in top["title"] and "rpdTracerControl" in json.dumps(top)
    # the window names no GPU, yet its calls are HIP's: ROCm's words, never CUDA's (no CUDA words on AMD); its 30 ms
    # code-object load is not named the runtime's start-up: the window records no runtime initialisation
    # (``job.phase.context_start``, h37-inputonly2), so the call may be a running process's own load
    assert "2 HIP calls" in top["summary"] and "`hipModuleLoadData` ×1 (30.0 ms)" in top["summary"]
    assert "start-up, paid by" not in top["summary"]
    assert "CUDA" not in json.dumps(report)
    empty = tmp_path / "empty.rpd"
    con = sqlite3.connect(empty)
    con.executescript(SCHEMA)
    con.commit()
    con.close()
    with pytest.raises(RpdReadError, match="no events"):
        read_trace(str(empty))


def test_the_rpd_reader_reads_through_the_shared_sqlite_home_not_the_nsight_reader():
    """h37-rpd2 item 1: the SQLite machinery both readers use (checked descriptor, private copy, size check, chunked
    columns) lives in ``formats/sqlite.py``; reading an ``.rpd`` imports neither the Nsight tables nor its reader (on
    main the rpd reader imported both), and gives what it gave before (the other tests of this file)."""
    import subprocess
    import sys

    code = ("import json, sys\nfrom tb_gpu_advisor.formats.rpd.reader import read_trace\n"
            f"t = read_trace({str(MATMUL)!r})\n"
            "print(json.dumps([len(t.h), sorted(m for m in sys.modules if m.startswith('tb_gpu_advisor.formats'))]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    events, mods = json.loads(out.stdout.strip().splitlines()[-1])
    assert events > 0 and "tb_gpu_advisor.formats.sqlite" in mods
    assert not {"tb_gpu_advisor.formats.nsys.tables", "tb_gpu_advisor.formats.nsys.reader"} & set(mods)
    from tb_gpu_advisor.formats import sqlite
    from tb_gpu_advisor.formats.nsys import tables as nsys_tables

    # one home: the Nsight tables hold neither copies of the shared functions nor names for them; callers import
    # formats.sqlite itself
    for name in ("open_db", "sized_local", "int_columns", "mixed_columns", "cut_short", "is_sqlite", "Beside"):
        assert hasattr(sqlite, name) and not hasattr(nsys_tables, name)
    assert issubclass(nsys_tables.Schema, sqlite.Schema)


def _copy_leads(db: Path) -> list[tuple[str, str, int, int]]:
    """Per host<->device copy op, as sqlite3 reads it: (call, op type, ns from its call's start to the transfer's
    start during which the GPU ran nothing, the transfer's ns)."""
    ops = _sql(db, "SELECT gpuId, start, end FROM rocpd_op")
    rows = _sql(db, "SELECT s.string, t.string, a.start, o.gpuId, o.start, o.end FROM rocpd_api a "
                    "JOIN rocpd_string s ON s.id = a.apiName_id JOIN rocpd_api_ops x ON x.api_id = a.id "
                    "JOIN rocpd_op o ON o.id = x.op_id JOIN rocpd_string t ON t.id = o.opType_id "
                    "WHERE t.string IN ('CopyHostToDevice', 'CopyDeviceToHost') ORDER BY o.start")
    out = []
    for call, typ, c0, gpu, o0, o1 in rows:
        busy = max([e for g, s, e in ops if g == gpu and s < o0] or [c0])
        out.append((call, typ, o0 - max(c0, min(busy, o0)), o1 - o0))
    return out


def test_a_copy_staged_longer_than_it_transferred_is_pageable_by_its_timing():
    """h37-rpd2 item 3: rpd_tracer writes no memory kind (``rocpd_copyapi.pinned`` is 0 on every row, its default),
    and no call's args name the host buffer's allocation (``hipMemcpyWithStream``'s args are empty; no
    ``hipHostMalloc``/``hipHostRegister`` in a capture that may have started after them).  The timing does: the 2 GB
    upload's call held the host 190.7 ms before its transfer began, the GPU idle (nothing queued to wait for), then
    the transfer took 154.9 ms -- host work for the copy, the runtime staging pageable memory (a pinned copy's transfer
    starts within microseconds).  The 32 MB upload's lead (0.27 ms, under its 2.29 ms transfer) and the print's reads
    say nothing: unknown, not pinned.  On main every copy's kind was unknown (-1)."""
    t = read_trace(str(MATMUL))
    d = t.devices[0]
    leads = _copy_leads(MATMUL)
    staged = [lead >= 1_000_000 and lead > dur for _, _, lead, dur in leads]
    assert sum(staged) == 1 and staged[0] and leads[0][1] == "CopyHostToDevice"
    copies = np.flatnonzero(d.mem_bytes >= 0)
    copies = copies[np.argsort(d.start[copies], kind="stable")]
    assert copies.size == len(leads)
    kind = d.mem_host[copies]
    assert kind.tolist() == [1 if s else -1 for s in staged]
    assert any("host staging" in n for n in t.notes)


def test_a_read_waiting_for_queued_work_is_no_staging(vllm_db: Path):
    """Control: the vLLM sampler's reads hold the host 132-135 ms before their transfer, but the GPU is busy with
    the prefill throughout: a wait for queued work (a sync's, ``metrics.syncs``), no host staging."""
    leads = _copy_leads(vllm_db)
    assert max(lead for _, _, lead, _ in leads) < 1_000_000
    t = read_trace(str(VLLM))
    assert not (t.devices[0].mem_host == 1).any()


def test_the_staged_upload_gets_the_pinned_memory_fix():
    """The matmul's report: excessive_memcpy says the upload is from pageable memory and leads with pinning (main:
    the DataLoader-worker fix first, no memory kind said)."""
    from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report

    report = host_report(host_metrics(read_trace(str(MATMUL))), MATMUL.stat().st_size)
    f = next(f for f in report.findings if f.rule == "excessive_memcpy")
    assert "from pageable host memory" in f.summary and "whose host memory the capture shows" in f.summary
    assert "pinned" in f.actions[0].text
