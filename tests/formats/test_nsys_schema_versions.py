"""Nsight Systems exports whose schema is not the one our three real exports share (survey h37-survey24,
``tests/fixtures/wild/SURVEY.md`` "Nsight schema across versions").

Each export is ``synthetic.nsysexport.write``'s (truth by construction), then changed in one way another Nsight
version, or another way of tracing, writes it -- the rest of the file unchanged, so what the reader makes of it must
equal what it makes of the unchanged export (the control of each test):

* a kernel whose ``demangledName`` id names no string (a name the export lost), or a kernel table holding only
  ``mangledName``: the row's next name column names it -- not "kernel 7", which hides an NCCL kernel's collective;
* activity tables without ``globalPid`` (a device row whose process the export does not say): read, its launch the
  call of the one process that made CUDA calls -- main crashed reading the column's absence;
* ``NVTX_EVENTS`` without ``eventType``: the rows with an end are the ranges;
* ``ENUM_CUDA_MEM_KIND`` with its ``name`` (``CUDA_MEMOPR_MEMORY_KIND_PAGEABLE``) and no ``label``: a pageable copy is
  still named pageable -- main named it after the enum's constant, and the copy finding lost "pageable".
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from synthetic.nsysexport import NCCL_ALLREDUCE, NsysJob, write
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.nsys import reader
from tests.support.sqlite_edits import run_sql


def _export(tmp_path, name: str, job: NsysJob, *sql: str) -> str:
    path = str(tmp_path / f"{name}.sqlite")
    write(path, job)
    run_sql(path, *sql)
    return path


def _short_name_only(path: str, lose_half: bool = False) -> int:
    """Every kernel row's ``shortName`` set to a new string, ``short_name_only``, unlike any demangled name; with
    ``lose_half`` the first half of the rows' ``demangledName`` names no string (an id the export lost).  Returns
    how many rows lost their demangled name."""
    con = sqlite3.connect(path)
    other = con.execute("SELECT max(id) + 1 FROM StringIds").fetchone()[0]
    con.execute("INSERT INTO StringIds VALUES (?, 'short_name_only')", (other,))
    con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = ?", (other,))
    half = con.execute("SELECT count(*) / 2 FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0] if lose_half else 0
    con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = -5 WHERE rowid <= ?", (half,))
    con.commit()
    con.close()
    return half


def _kernels(path: str) -> dict[tuple[int, str], tuple[int, float, int]]:
    """(GPU, kernel name) -> (count, ms, how many carry the op that launched them)."""
    out = {}
    for d in reader.read_trace(path).devices:
        k = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
        for i in np.unique(d.name[k]).tolist():
            sel = k & (d.name == i)
            out[(d.gpu, d.names[i])] = (int(sel.sum()), round(float((d.end[sel] - d.start[sel]).sum()) / 1e9, 6),
                                        int((d.op_idx[sel] >= 0).sum()))
    return out


def _rows(path: str) -> list:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    finally:
        con.close()


def _collective_ms(path: str) -> float:
    return sum(float((d.end[d.kind == devices.KIND_COLLECTIVE] - d.start[d.kind == devices.KIND_COLLECTIVE]).sum())
               for d in reader.read_trace(path).devices) / 1e9


_JOB = NsysJob(steps=8, ranks=2, nccl_us=400.0)


def test_a_kernel_name_the_export_lost_is_read_from_the_short_name(tmp_path):
    base = _export(tmp_path, "base", _JOB)
    # every demangled id dangling: an id past the string table, on every row
    lost = _export(tmp_path, "lost", _JOB, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = "
                                          "demangledName + (SELECT max(id) FROM StringIds) + 1000")
    want = _kernels(base)
    assert any(NCCL_ALLREDUCE in name for _, name in want)  # the premise: the collective is named
    assert _kernels(lost) == want
    assert _collective_ms(lost) == pytest.approx(_collective_ms(base)) and _collective_ms(base) > 0


def test_a_kernel_table_with_only_mangled_names_is_named(tmp_path):
    base = _export(tmp_path, "base", _JOB)
    only = _export(tmp_path, "mangled", _JOB,
                   "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN mangledName",
                   "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN demangledName TO mangledName",
                   "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN shortName")
    assert _kernels(only) == _kernels(base)


def test_a_known_demangled_name_wins_over_the_short_one(tmp_path):
    """Control: a short name unlike the demangled one is not read where the demangled one is there."""
    base = _export(tmp_path, "base", _JOB)
    _short_name_only(base)
    names = {name for _, name in _kernels(base)}
    assert "short_name_only" not in names and any(NCCL_ALLREDUCE in n for n in names)


def test_a_short_name_names_only_the_rows_whose_demangled_name_is_lost(tmp_path):
    base = _export(tmp_path, "base", _JOB)
    half = _short_name_only(base, lose_half=True)
    got = _kernels(base)
    by_short = sum(n for (_, name), (n, _, _) in got.items() if name == "short_name_only")
    assert by_short == half and sum(v[0] for v in got.values()) - by_short == half + (len(_rows(base)) % 2)


@pytest.mark.parametrize("how", ["ALTER TABLE {t} DROP COLUMN globalPid", "UPDATE {t} SET globalPid = 0"])
def test_device_rows_without_a_process_are_read_as_the_calling_process_s(tmp_path, how):
    """The column absent, or Nsight 2020-2021's default 0 in it (no process is 0)."""
    one = NsysJob(steps=8)
    base = _export(tmp_path, "base", one)
    bare = _export(tmp_path, "bare", one, *(how.format(t=t) for t in
                                           ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY")))
    want = _kernels(base)
    assert all(n == with_op for n, _, with_op in want.values())  # the premise: every kernel's op is known
    assert _kernels(bare) == want


def test_device_rows_without_a_process_among_two_are_read_unattributed(tmp_path):
    """Control: two processes made CUDA calls, so a row without its process is launched by neither -- read, its
    time kept, no op guessed."""
    base = _export(tmp_path, "base", _JOB)
    bare = _export(tmp_path, "bare", _JOB, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = NULL")
    want, got = _kernels(base), _kernels(bare)
    assert {k: v[:2] for k, v in got.items()} == {k: v[:2] for k, v in want.items()}
    assert sum(v[2] for v in got.values()) == 0 < sum(v[2] for v in want.values())


def _range_names(path: str) -> list[str]:
    """The names of the NVTX ranges the reader keeps, sorted: what a schema variant must leave as it was."""
    t = reader.read_trace(path)
    return sorted(t.h.names[int(i)] for i in t.h.name[t.ranges.idx].tolist())


def test_nvtx_without_event_types_reads_its_ranges(tmp_path):
    one = NsysJob(steps=8)
    base = _export(tmp_path, "base", one)
    bare = _export(tmp_path, "bare", one, "ALTER TABLE NVTX_EVENTS DROP COLUMN eventType")
    want = _range_names(base)
    assert want and any(n.startswith("train_step") for n in want)
    assert _range_names(bare) == want


_MEM_KIND_NAMES = [(0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE"), (1, "CUDA_MEMOPR_MEMORY_KIND_PINNED"),
                   (2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE"), (5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC"),
                   (7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN")]


@pytest.mark.parametrize("pinned", [False, True])
def test_memory_kinds_named_by_the_enum_s_constants(tmp_path, pinned):
    job = NsysJob(steps=8, pinned=pinned)
    base = _export(tmp_path, "base", job)
    named = _export(tmp_path, "named", job, "DELETE FROM ENUM_CUDA_MEM_KIND",
                    "ALTER TABLE ENUM_CUDA_MEM_KIND DROP COLUMN label",
                    "INSERT INTO ENUM_CUDA_MEM_KIND VALUES " + ", ".join(f"({i}, '{n}')" for i, n in _MEM_KIND_NAMES))

    def copies(path):
        return sorted({d.names[int(i)] for d in reader.read_trace(path).devices
                       for i in d.name[d.kind == devices.KIND_H2D].tolist()})
    want = copies(base)
    assert want == [f"Memcpy HtoD ({'Pinned' if pinned else 'Pageable'} -> Device)"]
    assert copies(named) == want


def test_registered_nvtx_names_beside_an_empty_text_are_read(tmp_path):
    """Nsight 2020-2021 declare every column NOT NULL and write a default where a value is missing: a range named
    by a registered string holds '' in ``text`` and its name's id in ``textId``."""
    job = NsysJob(steps=8, text_ids=True)
    base = _export(tmp_path, "base", job)
    empty = _export(tmp_path, "empty", job, "UPDATE NVTX_EVENTS SET text = '' WHERE text IS NULL AND textId > 0")
    want = _range_names(base)
    assert any(n.startswith("train_step") for n in want) and "" not in want
    assert _range_names(empty) == want


@pytest.mark.parametrize("table", ["META_DATA_EXPORT", "EXPORT_META_DATA"])
def test_a_time_slice_is_read_from_either_name_of_the_export_s_metadata(tmp_path, table):
    """Nsight 2022 named the export's metadata table ``EXPORT_META_DATA`` (pipit's ``saxpy-mpi-cuda`` export,
    2022.2.1, schema 2.9.1), later ones ``META_DATA_EXPORT``: a time slice's window (``DERIVED_WINDOW_NS``) is its
    capture in either -- not the whole session around it."""
    one = NsysJob(steps=8)
    whole = _export(tmp_path, "whole", one)
    con = sqlite3.connect(whole)
    start, stop = con.execute("SELECT startTime, stopTime FROM ANALYSIS_DETAILS").fetchone()
    con.close()
    t0, t1 = start + (stop - start) // 4, start + (stop - start) // 2
    sql = [f"INSERT INTO META_DATA_EXPORT VALUES ('DERIVED_WINDOW_NS', '{t0}-{t1}')"]
    if table != "META_DATA_EXPORT":
        sql.append(f"ALTER TABLE META_DATA_EXPORT RENAME TO {table}")
    sliced = _export(tmp_path, "sliced", one, *sql)
    assert reader.read_trace(whole).capture_ms == pytest.approx((stop - start) / 1e6)  # the premise: the session
    assert reader.read_trace(sliced).capture_ms == pytest.approx((t1 - t0) / 1e6)
