"""A CUDA call with a backtrace is one call (``formats/nsys/reader.py``).

``nsys profile --cudabacktrace`` writes, beside each call it unwinds, a second runtime row with the same times and
correlation id under ``eventClass`` 67, "CUDA backtrace" (``ENUM_NSYS_EVENT_CLASS``), pointing at the stack in
``CUDA_CALLCHAINS``.  hpcgroup/pipit's Perlmutter ``saxpy-mpi-cuda_nsys_perlmutter0.sqlite`` (read in the
h37-survey14 survey; kept as ``tests/fixtures/wild/mpi_saxpy_a100_rank0``) holds 38 such rows beside its 56 calls:
main read 10 launches and 30 ``cudaMemcpy`` for its 5 and 15.  By construction: a generated export, its calls'
backtrace rows added, reads as many calls as the generator made."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor import devices, formats
from tests.support.paths import FIXTURES


def _calls(path) -> int:
    t = formats.read(SimpleNamespace(host="h", path=str(path), format="nsys"))
    return int(np.count_nonzero(t.h.name_mask(devices.is_runtime_call)))


@pytest.mark.parametrize("enum", [False, True])
def test_backtrace_records_are_not_calls(tmp_path, enum):
    p = tmp_path / "bt.sqlite"
    truth = write(str(p), NsysJob(steps=4, shuffle=False))
    con = sqlite3.connect(p)
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT start, end, 67, globalTid, correlationId, nameId, "
                "returnValue, 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME")
    if enum:  # newer exports name the classes; the backtrace's id is read from its label there
        con.execute("DROP TABLE IF EXISTS ENUM_NSYS_EVENT_CLASS")
        con.execute("CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER PRIMARY KEY, name TEXT, label TEXT)")
        con.executemany("INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES (?, ?, ?)",
                        [(0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"),
                         (1, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"),
                         (67, "TRACE_PROCESS_EVENT_CUDABACKTRACE", "CUDA backtrace")])
    con.commit()
    con.close()
    assert _calls(p) == truth.runtime_calls


def test_the_mpi_saxpy_rank_makes_five_launches():
    path = FIXTURES / "wild" / "mpi_saxpy_a100_rank0" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
    t = formats.read(SimpleNamespace(host="h", path=str(path), format="nsys"))
    names = np.asarray(t.h.names, dtype=object)[t.h.name]
    assert int(np.count_nonzero(names == "cudaLaunchKernel")) == 5
    assert int(np.count_nonzero(names == "cudaMemcpy")) == 15
