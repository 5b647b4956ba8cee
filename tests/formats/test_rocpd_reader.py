"""rocprofv3's ``rocpd`` SQLite database (ROCm 7's default output, ``<pid>_results.db``) read into the neutral trace
model (issue #37 item 6), by construction (``synthetic/rocpdtrace.py``, the real file's tables and columns) and on the
one real database found (survey h37-rocprof): HGLiu1998/batched_gemm ``ck_bmm/37ca13315e70/28_results.db`` -- a
Composable Kernel ``tile_example_batched_gemm`` (m=128, k=128, n=512, 128 batches) profiled by rocprofv3 on an MI300X:
151 kernel dispatches (150 ``ck_tile::kentry<...BatchedGemmKernel...>`` of 2,580,371 ns together, one ROCclr fill of
24,175 ns), 629 HIP calls, no copy records.  No licence: kept only locally (``.robustness/rocprof/``), its tests skip
in a fresh clone.  Main did not recognise such a file ("an SQLite database, but not a rocmProfileData trace").
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from synthetic import rocpdtrace
from tb_gpu_advisor.formats.rocprof.rocpd_reader import RocpdReadError, read_trace
from tests.support.device_reads import kernel_ns
from tests.support.paths import REPO

REAL = REPO / ".robustness" / "rocprof" / "ck_batched_gemm_rocpd_mi300x" / "28_results.db"
STEPS = [[("gemm_kernel(float*)", 400.0), ("relu(float*)", 50.0)]] * 6


def test_a_generated_database_reads_its_kernels_copies_launches_grid_and_gpu(tmp_path: Path):
    path = tmp_path / "4242_results.db"
    truth = rocpdtrace.write(str(path), STEPS, upload_staging_ms=5.0, hsa_calls=3)
    t = read_trace(str(path))
    (d,) = t.devices
    assert t.format == "rocpd" and t.host == "4242_results"
    assert d.info.name == "AMD Instinct MI300X" and d.info.sm_count == 304
    assert kernel_ns(d) == truth["gpu_ns"]
    assert [int(b) for b in d.copy_bytes] == [c["bytes"] for c in truth["copies"]]
    assert d.copy_host.tolist() == [1 if c["pageable"] else -1 for c in truth["copies"]]
    corr = np.asarray(d.corr)
    assert (corr >= 0).all() and len(set(corr.tolist())) == len(d)  # each operation its own call
    calls = {int(c): t.h.names[int(t.h.name[i])] for i, c in enumerate(np.asarray(t.h.corr).tolist()) if c >= 0}
    names = [d.names[int(x)] for x in d.name]
    assert all(calls[int(c)] == ("hipMemcpy" if n.startswith("Copy") else "hipLaunchKernel")
               for c, n in zip(corr.tolist(), names))
    idx, blocks, threads = d.launches()
    assert {d.names[int(d.name[i])]: (int(b), int(th)) for i, b, th in zip(idx, blocks, threads)} == truth["grids"]
    assert t.ranges is not None and t.ranges.idx.size == truth["steps"]
    assert any("HSA_CORE_API" in n for n in t.notes) and not any(n.startswith("hsa_") for n in t.h.names)


def test_a_truncated_database_and_a_foreign_sqlite_are_clear_errors(tmp_path: Path):
    path = tmp_path / "r.db"
    rocpdtrace.write(str(path), STEPS)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(RocpdReadError, match="cut short"):
        read_trace(str(path))
    other = tmp_path / "o.db"
    con = sqlite3.connect(other)
    con.executescript("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);")
    con.close()
    with pytest.raises(RocpdReadError, match="no rocpd database"):
        read_trace(str(other))
    text = tmp_path / "t.db"
    text.write_text("not a database\n")
    with pytest.raises(RocpdReadError, match="not an SQLite file"):
        read_trace(str(text))


def test_a_table_without_its_columns_and_an_empty_database_are_errors(tmp_path: Path):
    path = tmp_path / "r.db"
    rocpdtrace.write(str(path), STEPS)
    con = sqlite3.connect(path)
    con.execute(f"ALTER TABLE rocpd_kernel_dispatch_{rocpdtrace.GUID} RENAME COLUMN start TO begin")
    con.commit()
    con.close()
    with pytest.raises(RocpdReadError, match="has no column start"):
        read_trace(str(path))
    empty = tmp_path / "e.db"
    con = sqlite3.connect(empty)
    con.executescript(rocpdtrace._schema(rocpdtrace.GUID))
    con.close()
    with pytest.raises(RocpdReadError, match="no events"):
        read_trace(str(empty))


def test_discovery_tells_a_rocpd_database_by_its_tables_and_controls_stay_theirs(tmp_path: Path):
    from synthetic import hostile
    from synthetic.rpdtrace import write as write_rpd
    from tb_gpu_advisor.discover.logdir import discover

    run = tmp_path / "logdir" / "run"
    run.mkdir(parents=True)
    rocpdtrace.write(str(run / "4242_results.db"), STEPS)
    write_rpd(str(run / "other.db"), [[("k", 10.0)]])
    hostile.sqlite_export(str(run / "train.sqlite"), steps=3)
    hosts = {h.host: h.format for s in discover(str(tmp_path / "logdir")) for h in s.hosts}
    assert hosts == {"4242_results": "rocpd", "other": "rpd", "train": "nsys"}


@pytest.mark.skipif(not REAL.exists(), reason="the real rocpd database is kept only locally (.robustness/, no licence)")
def test_the_real_ck_batched_gemm_database_reads_as_sqlite3_reads_it():
    t = read_trace(str(REAL))
    (d,) = t.devices
    assert d.info.name == "AMD Instinct MI300X" and d.info.sm_count == 304  # the agent's product_name, cu_count
    con = sqlite3.connect(f"file:{REAL}?mode=ro", uri=True)
    (n, total), = con.execute("SELECT count(*), sum(\"end\" - start) FROM rocpd_kernel_dispatch_"
                              "00003fdc_92cb_72cb_9169_c7e541b1fcdf").fetchall()
    con.close()
    assert len(d) == n == 151 and sum(kernel_ns(d).values()) == total == 2_604_546
    corr = np.asarray(d.corr)
    assert (corr >= 0).all() and len(set(corr.tolist())) == 151  # every dispatch tied to its own call
    idx, blocks, threads = d.launches()
    gemm = [int(b) for i, b in zip(idx, blocks) if "BatchedGemmKernel" in d.names[int(d.name[i])]]
    assert set(gemm) == {256}  # 512 x 128 work-items in workgroups of 256: 128 batches x 2 tiles
