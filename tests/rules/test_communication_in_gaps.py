"""A communication library's ranges in the GPU's idle between steps are the host waiting on its peers, not its code.

hpcgroup/pipit's ``saxpy-mpi-cuda_nsys_perlmutter0.sqlite`` (kept: ``tests/fixtures/wild/mpi_saxpy_a100_rank0``,
survey h37-survey14) spends 44.7 ms of each 182 ms gap in ``MPI_Send`` / ``MPI_Recv``, ranges Nsight's MPI trace writes
in the ``MPI`` NVTX domain.  Main named them only in the evidence, under "the program's own ranges", and its sentence
spoke of the unrecorded part alone.  A range in a communication library's domain (``frameworks.nvtx``) is the library
waiting for the other ranks: the gap finding says so, with its time, and lists it apart from the program's ranges.

Truth by construction (``synthetic.nsysexport.write_mpi_saxpy``: ``mpi_ms_per_gap``); the control writes the same ranges
in the default domain, as a program marking its own code would -- the domain decides, not the names.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic.nsysexport import write_mpi_saxpy
from tb_gpu_advisor.runtime.pipeline import analyze_session

KEPT = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "mpi_saxpy_a100_rank0" / \
    "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"


def _gaps(path) -> dict:
    host = SimpleNamespace(host="rank0", path=str(path), format="nsys", size=0)
    found = analyze_session("rank0", "s", [host]).to_dict()["hosts"][0]["findings"]
    (gap,) = [f for f in found if f["rule"] == "step_gaps"]
    return gap


def _tables(f: dict) -> dict:
    return {e["title"].split(" (")[0]: e["rows"] for e in f["evidence"] if e.get("rows") is not None}


def _sentence_ms(text: str, lead: str) -> float:
    """The ms the sentence gives before ``lead`` ("43.4 ms a step of it is communication")."""
    head = text.split(lead)[0].rsplit(" ", 3)
    return float(head[-2]) if head[-1] == "ms" else float(head[-1].removesuffix("ms"))


def test_mpi_ranges_in_the_gaps_are_named_communication(tmp_path):
    p = tmp_path / "saxpy.sqlite"
    truth = write_mpi_saxpy(str(p))
    f = _gaps(p)
    assert "a step of it is communication (`MPI_Recv`" in f["summary"], f["summary"]
    assert "not the program's code" in f["summary"]
    assert _sentence_ms(f["summary"], " a step of it is communication") == pytest.approx(truth["mpi_ms_per_gap"],
                                                                                          rel=0.01)
    tables = _tables(f)
    assert "The program's own ranges in the gaps" not in tables, tables
    comm = tables["Communication libraries' ranges in the gaps"]
    assert sum(v for _, v in comm) == pytest.approx(truth["mpi_ms_per_gap"], rel=0.01)
    assert any("MPI_Isend" in a["text"] for a in f["actions"])


def test_gaps_mostly_in_mpi_are_the_host_waiting_for_the_other_processes(tmp_path):
    p = tmp_path / "exchange.sqlite"
    truth = write_mpi_saxpy(str(p), mpi_ms=100.0, host_ms=2.0)
    f = _gaps(p)
    assert "most of it is the host waiting for the other processes" in f["summary"], f["summary"]
    assert "Record what the host does" not in f["actions"][0]["text"]
    assert "MPI_Isend" in f["actions"][0]["text"]
    comm = _tables(f)["Communication libraries' ranges in the gaps"]
    assert sum(v for _, v in comm) == pytest.approx(truth["mpi_ms_per_gap"], rel=0.01)


def test_the_same_ranges_in_the_default_domain_stay_the_programs_own(tmp_path):
    p = tmp_path / "own.sqlite"
    write_mpi_saxpy(str(p), mpi_domain="")
    host = SimpleNamespace(host="rank0", path=str(p), format="nsys", size=0)
    h = analyze_session("rank0", "s", [host]).to_dict()["hosts"][0]
    # the program's own ranges: the most repeated one marks the steps, and none is read as a library's wait
    assert h["steps"]["source"] == "nvtx_top_range" and "`MPI_Send`" in h["steps"]["note"], h["steps"]
    assert not any("communication" in f["summary"] for f in h["findings"])
    assert not any(e["title"].startswith("Communication") for f in h["findings"] for e in f["evidence"])


def test_the_kept_mpi_rank_names_its_communication():
    f = _gaps(KEPT)
    # 44.7 ms over the three gaps between the four kept steps; since h37-left46 each kept step's gap counts, the last
    # one's up to the dropped partial step after it: 43.4 ms over four (its gap holds 39.5 ms of MPI) -- a step's, as
    # the sentence says since h37-review8 (it said "of each gap")
    assert _sentence_ms(f["summary"], " a step of it is communication") == pytest.approx(43.4, abs=0.1)
    comm = dict(_tables(f)["Communication libraries' ranges in the gaps"])
    assert set(comm) == {"MPI_Send", "MPI_Recv"}
    assert "The program's own ranges in the gaps" not in _tables(f)


# --------------------------------------------------------------------------- h37-survey54: MPI calls in their own tables
# Nsight Systems 2023 and later writes the MPI trace's calls into ``MPI_*_EVENTS`` tables, not as ranges in the NVTX
# domain ``MPI`` (which it still registers, empty): a CME 213 4-rank training export (Nsight 2023.4.1) holds 40
# ``MPI_Wait`` (2.3 ms of each 4.0 ms step) and 47 collectives there and none in ``NVTX_EVENTS``.  Main read no MPI
# table, so the host's wait for its peers read as its own code.

_MPI_TABLES = {"MPI_Send": "MPI_P2P_EVENTS", "MPI_Recv": "MPI_P2P_EVENTS"}


def _as_mpi_tables(src: Path, dst: Path) -> int:
    """Copy the export ``src`` to ``dst`` with its ``MPI``-domain NVTX ranges moved into the tables Nsight 2023+
    writes them in (point-to-point calls in ``MPI_P2P_EVENTS``, the rest in ``MPI_OTHER_EVENTS``), the domain's
    registration left in place.  Returns how many rows moved."""
    import shutil
    import sqlite3

    from synthetic.nsysexport import MPI_OTHER_DDL, MPI_P2P_DDL
    shutil.copyfile(src, dst)
    con = sqlite3.connect(dst)
    con.executescript(MPI_P2P_DDL + ";" + MPI_OTHER_DDL + ";")
    (dom,) = con.execute("SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'MPI'").fetchone()
    rows = con.execute("SELECT n.rowid, n.start, n.end, n.globalTid, COALESCE(n.text, s.value) FROM NVTX_EVENTS n "
                       "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.domainId = ? AND n.eventType = 59",
                       (dom,)).fetchall()
    (top,) = con.execute("SELECT MAX(id) FROM StringIds").fetchone()
    for i, (rowid, start, end, tid, text) in enumerate(rows):
        con.execute("INSERT INTO StringIds (id, value) VALUES (?, ?)", (top + 1 + i, text))
        table = _MPI_TABLES.get(text, "MPI_OTHER_EVENTS")
        con.execute(f"INSERT INTO {table} (start, end, globalTid, textId) VALUES (?,?,?,?)", (start, end, tid, top + 1 + i))
        con.execute("DELETE FROM NVTX_EVENTS WHERE rowid = ?", (rowid,))
    con.commit()
    con.close()
    return len(rows)


def test_mpi_calls_in_their_own_tables_are_communication_too(tmp_path):
    p = tmp_path / "saxpy.sqlite"
    truth = write_mpi_saxpy(str(p), mpi_tables=True)
    f = _gaps(p)
    assert "a step of it is communication (`MPI_Recv`" in f["summary"], f["summary"]
    comm = _tables(f)["Communication libraries' ranges in the gaps"]
    assert sum(v for _, v in comm) == pytest.approx(truth["mpi_ms_per_gap"], rel=0.01)
    assert "The program's own ranges in the gaps" not in _tables(f)


def test_the_kept_mpi_export_reads_alike_in_either_layout(tmp_path):
    """The kept pipit export (Nsight 2022.2: MPI calls as ``MPI``-domain NVTX ranges) and the same calls moved into
    the newer layout's tables give one communication reading: the layout is the exporter's, not the program's."""
    moved = tmp_path / "saxpy-mpi-tables.sqlite"
    assert _as_mpi_tables(KEPT, moved) == 17  # MPI_Init, 10 MPI_Send, 5 MPI_Recv, MPI_Finalize
    before, after = _gaps(KEPT), _gaps(moved)
    comm = _tables(before)["Communication libraries' ranges in the gaps"]
    assert comm and {n for n, _ in comm} >= {"MPI_Send", "MPI_Recv"}, comm
    assert _tables(after)["Communication libraries' ranges in the gaps"] == comm
    assert after["summary"] == before["summary"]
