"""Two ranks in one Nsight export, each given one GPU by ``CUDA_VISIBLE_DEVICES`` (both CUDA ordinal 0), keep their
own GPUs: each its model, peak and MFU (issue #37, h37-left49; survey h37-survey24's left).

A device row's ``deviceId`` is its process's CUDA ordinal, which ``TARGET_INFO_CUDA_DEVICE`` (``pid``, ``cudaId`` ->
``gpuId``) maps to Nsight's GPU (``TARGET_INFO_GPU.id``).  Read off ``tests/fixtures/nsys_ranks`` (CS336 DDP,
Nsight 2026.3.1, MIT): GPU id 0 is ``cuDevice`` 1; ``mp.spawn``'s first process (rank 0, ``cuda:0``) runs on
``deviceId`` 0 and the second (``cuda:1``) on 1, whose stray context sits on ``deviceId`` 0 -- the ordinal reading;
with ids read as Nsight's, rank 0 would run on ``cuda:1``.  CloverLeaf's export (``wild/cloverleaf_a100_cuda``, one
process, Nsight 2024.5) agrees: its kernels on ``deviceId`` 0, the application's default device 0.

Truth by construction: ``NsysJob(ranks=2)`` (rank r: pid 1000 + r), every device row's ``deviceId`` set to 0, Nsight's
GPU 0 an H100 and GPU 1 an A100, ``TARGET_INFO_CUDA_DEVICE`` mapping each process's ordinal 0 to its GPU.  Controls:
the unchanged export (ordinals 0 and 1, no renumbering), and the same two processes without the table.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.nsys import reader

A100 = ("NVIDIA A100-SXM4-80GB", 8, 0, 108)
CUDA_DEVICE_DDL = ("CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER NOT NULL, pid INTEGER NOT NULL, "
                   "uuid TEXT, numMultiprocessors INTEGER)")


def _export(tmp_path, visible: bool, table: bool = True) -> str:
    path = str(tmp_path / f"cvd_{visible}_{table}.sqlite")
    write(path, NsysJob(steps=8, ranks=2))
    con = sqlite3.connect(path)
    con.execute("UPDATE TARGET_INFO_GPU SET name = ?, computeMajor = ?, computeMinor = ?, smCount = ? WHERE id = 1", A100)
    if visible:  # each process sees its one GPU as ordinal 0
        for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'CUPTI_%'").fetchall():
            if "deviceId" in [r[1] for r in con.execute(f"PRAGMA table_info({t})")]:
                con.execute(f"UPDATE {t} SET deviceId = 0")
    if table:
        con.execute(CUDA_DEVICE_DDL)
        rows = [(r, 0 if visible else r, 1000 + r, f"GPU-{r:08d}", 132 if r == 0 else 108) for r in range(2)]
        con.executemany("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (?,?,?,?,?)", rows)
    con.commit()
    con.close()
    return path


def _gpus(path: str) -> dict[int, tuple[str | None, int, float]]:
    """GPU id -> (model, kernels, kernel ms) of each GPU the reader makes."""
    out = {}
    for d in reader.read_trace(path).devices:
        k = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
        out[d.gpu] = (d.info.name, int(k.sum()), float((d.end[k] - d.start[k]).sum()) / 1e9)
    return out


def test_two_ranks_on_ordinal_zero_keep_their_own_gpus(tmp_path):
    """Fails on main: one GPU 0 (the H100) holding both ranks' kernels; the A100 rank's peak and MFU the H100's."""
    truth = _gpus(_export(tmp_path, visible=False))  # the unchanged export: ordinals 0 and 1
    got = _gpus(_export(tmp_path, visible=True))
    assert len(got) == 2, got
    assert sorted(got.values()) == sorted(truth.values())
    assert {v[0] for v in got.values()} == {"NVIDIA H100 80GB HBM3", A100[0]}


def test_each_rank_gets_its_own_gpus_peak(tmp_path):
    """The model each GPU is read as gives it its own peak: the A100's dense bf16 peak is not the H100's."""
    t = reader.read_trace(_export(tmp_path, visible=True))
    peaks = {d.info.name: devices.peak_flops(d.info.name, d.info.compute_capability, devices.P_BF16).value
             for d in t.devices}
    assert len(peaks) == 2 and peaks[A100[0]] < peaks["NVIDIA H100 80GB HBM3"]


@pytest.mark.parametrize("visible, table", [(False, True), (False, False)])
def test_distinct_ordinals_keep_their_ids(tmp_path, visible, table):
    """Controls (main too): ordinals 0 and 1 -- with or without the process table -- are GPUs 0 and 1, each read as
    the ``TARGET_INFO_GPU`` row of that ``cuDevice``."""
    got = _gpus(_export(tmp_path, visible=visible, table=table))
    assert sorted(got) == [0, 1]
    assert got[0][0] == "NVIDIA H100 80GB HBM3" and got[1][0] == A100[0]
    assert np.isclose(got[0][2], got[1][2])


# ---- one process given a later GPU (h37-probe43v): ``NsysJob(display_card=True)``, truth by construction -- the
# machine's GPU 0 a display card (T400, 6 SMs) the job never touches, rank r on H100 id r + 1 under
# ``CUDA_VISIBLE_DEVICES=<r + 1>``, its device rows on its own ordinal 0.

def _models(path: str) -> dict[int, tuple[str | None, int | None]]:
    """GPU id -> (model, SM count) as the reader makes them."""
    return {d.gpu: (d.info.name, d.info.sm_count) for d in reader.read_trace(path).devices}


def _behind_card(tmp_path, ranks: int = 1, **edit: str) -> str:
    path = str(tmp_path / f"card_{ranks}_{len(edit)}.sqlite")
    write(path, NsysJob(steps=8, ranks=ranks, display_card=True))
    if edit:
        con = sqlite3.connect(path)
        for sql in edit.values():
            con.execute(sql)
        con.commit()
        con.close()
    return path


def test_one_process_behind_a_display_card_is_read_on_the_gpu_it_ran_on(tmp_path):
    """Fails on 0cc8f245: ordinal 0 read as ``cuDevice`` 0, the display card -- 6 SMs, so the H100's 1-block GEMMs
    were no small grid and its peak a T400's.  The process's table names GPU 1, the H100."""
    plain = str(tmp_path / "plain.sqlite")
    write(plain, NsysJob(steps=8))  # the same job alone on its H100
    truth = _models(plain)
    got = _models(_behind_card(tmp_path))
    assert got == truth == {0: ("NVIDIA H100 80GB HBM3", 132)}


def test_ranks_behind_a_display_card_each_keep_their_gpu(tmp_path):
    """Control (0cc8f245 too, h37-left49's renumbering): two processes on ordinal 0, GPUs 1 and 2, both H100s."""
    got = _models(_behind_card(tmp_path, ranks=2))
    assert got == {1: ("NVIDIA H100 80GB HBM3", 132), 2: ("NVIDIA H100 80GB HBM3", 132)}


def test_a_process_the_table_does_not_list_keeps_the_ordinal_reading(tmp_path):
    """Control: where the table does not name the process's GPU, nothing says which it was -- ordinal 0 is read as
    ``cuDevice`` 0, as before (the table is never half-trusted)."""
    got = _models(_behind_card(tmp_path, drop="DELETE FROM TARGET_INFO_CUDA_DEVICE"))
    assert got == {0: ("NVIDIA T400 4GB", 6)}
