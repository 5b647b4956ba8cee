"""A rocpd database that holds a run's set-up and no timeline (survey h37-survey47, issue #37 item 6).

``foreign/rocpd_att_mi300x/3466414_results.db`` (iree-org/aster ``traces.zip``, Apache-2.0) is rocprofv3's database of a
**thread-trace run** on an MI300X: the program (``nanobench_global_load.py``) loaded 12 kernels and ran them for 7.25
s, rocprofv3 wrote its agents, code objects, kernel symbols and the 4 L2 counters the thread trace sampled -- and no
region, dispatch or copy, since it traced no API or kernel (the thread trace's own output is the ``.att`` files and
``ui_output_*`` folders beside it).  Main said only "no events: ... holds no HIP call, marker or GPU operation": true,
and silent on why and on what to run instead.  The numbers the message is held to are SQL on the file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synthetic import rocpdtrace
from tb_gpu_advisor.formats.rocprof.rocpd_reader import RocpdReadError, read_trace
from tests.support.paths import FIXTURES

ATT = FIXTURES / "foreign" / "rocpd_att_mi300x" / "3466414_results.db"
GUID = "00014fb2_c28f_728f_b7c2_24c1118f7375"


def _sql(query: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{ATT}?mode=ro", uri=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def _error(path: Path) -> str:
    with pytest.raises(RocpdReadError) as e:
        read_trace(str(path))
    return str(e.value)


def test_a_thread_trace_runs_database_says_it_traced_nothing_and_what_to_run():
    events = sum(_sql(f"SELECT count(*) FROM rocpd_{t}_{GUID}")[0][0]
                 for t in ("region", "kernel_dispatch", "memory_copy", "sample"))
    kernels = [r[0] for r in _sql(f"SELECT display_name FROM rocpd_info_kernel_symbol_{GUID} ORDER BY id")]
    counters = [r[0] for r in _sql(f"SELECT name FROM rocpd_info_pmc_{GUID} ORDER BY id")]
    assert events == 0 and len(kernels) == 12 and counters == ["TCC_HIT", "TCC_MISS", "TCC_READ", "TCC_WRITE"]
    said = _error(ATT)
    assert "no events" in said  # the reading is unchanged: an error, the file holds no timeline
    assert "12 kernels the program loaded (nanobench_global_load, " in said and "and no launch of any" in said
    assert "4 counters (TCC_HIT, TCC_MISS, TCC_READ, TCC_WRITE)" in said and "thread trace (--att)" in said
    assert "--runtime-trace" in said


def test_loaded_kernels_without_counters_are_a_run_that_traced_nothing(tmp_path: Path):
    path = tmp_path / "7_results.db"
    con = sqlite3.connect(path)
    con.executescript(rocpdtrace._schema(rocpdtrace.GUID))
    con.execute(f"INSERT INTO rocpd_info_kernel_symbol_{rocpdtrace.GUID} (nid, pid, code_object_id, kernel_name, "
                "display_name) VALUES (1, 7, 1, 'gemm.kd', 'gemm')")
    con.commit()
    con.close()
    said = _error(path)
    assert "1 kernel the program loaded (gemm)" in said and "traced no API call or kernel" in said
    assert "--att" not in said and "--runtime-trace" in said  # no counter set up: no thread trace claimed


def test_an_empty_database_asks_whether_it_was_traced_at_all(tmp_path: Path):
    path = tmp_path / "e.db"
    con = sqlite3.connect(path)
    con.executescript(rocpdtrace._schema(rocpdtrace.GUID))
    con.close()
    said = _error(path)
    assert said.endswith("no events: the rocpd database holds no HIP call, marker or GPU operation (was rocprofv3 "
                         "run without --runtime-trace or --kernel-trace, or did the program stop before its first "
                         "call?)")
    assert "loaded" not in said and "counters" not in said
