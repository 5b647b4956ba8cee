"""A second process that launches nothing is no part of the GPU's idle (issue #37 class 2; h37-probe42n).

Wrong assumption on main ed6824fb: *where one process drives the GPUs, every host line of the capture is that
process's* (``formats.nsys.reader._gpu_host_lines`` named no lines per GPU unless two processes launched work, and
the ledger's allocator time, ``Context.alloc_spans``, was read from every line).  An Nsight export also records a
process that only made a CUDA context -- a helper or worker that touched CUDA, three runtime calls, no kernel.  Its
``cudaFree`` (the context's creation, ~100 ms) ran across the loop's steps and main booked it as the loop's own
allocator churn: a critical "The device allocator runs inside every step" (3.35 ms of a 13.3 ms step), and the
loop's real input wait (3.00 ms, critical) fell to 0.6 ms below the warning level.  The other process's calls run in
a context of their own and hold none of this GPU's work: now the GPU is read from its driving process's lines alone,
the allocator's time per GPU from them too, and the job's one-time costs from the driving processes' lines
(``job.phase._driving_lines``: the idle process's 500 ms context creation read as the loop's critical cold start).

By construction (``synthetic.nsysexport.write_marked_input_loop(idle_process_ms=...)``): the same loop with and
without the idle process must read the same.
"""

from __future__ import annotations

import os
from pathlib import Path
import sqlite3
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.generated_host import nsys_host
from tests.support.paths import FIXTURES


def _rules(host: dict) -> list[tuple[str, str]]:
    return [(f["rule"], f["severity"]) for f in host["findings"]]


@pytest.mark.parametrize(("idle_ms", "at_ms"), [(100.0, 40.0), (20.0, 40.0), (500.0, 0.0), (30.0, 150.0)])
def test_an_idle_process_changes_no_reading_of_the_loop(tmp_path, idle_ms: float, at_ms: float) -> None:  # noqa: ANN001
    """Across the steps (100 / 20 ms), across the whole window (500 ms: main read a critical cold start, phase
    warm-up) and after the loop (main: an info on one-time costs outside the steps, phase mixed)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    alone = nsys_host(tmp_path / "a", nx.write_marked_input_loop, "loop.sqlite")
    beside = nsys_host(tmp_path / "b", nx.write_marked_input_loop, "loop.sqlite", idle_process_ms=idle_ms,
                       idle_at_ms=at_ms)
    assert (beside["job"]["phase"], beside["job"]["one_time_ms"]) == (alone["job"]["phase"], alone["job"]["one_time_ms"])
    # main: allocator 3.35 ms a step (critical allocator_churn), input 0.6 ms
    assert beside["breakdown_ms"].get("allocator", 0.0) == 0.0
    assert beside["breakdown_ms"]["input_wait"] == pytest.approx(alone["truth"]["input_ms"], abs=0.05)
    assert beside["breakdown_ms"] == alone["breakdown_ms"]
    assert _rules(beside) == _rules(alone)
    assert not [f for f in beside["findings"] if f["rule"] == "allocator_churn"]


def test_control_the_loops_own_cudafree_is_still_its_allocator(tmp_path) -> None:  # noqa: ANN001
    """Control: the lines kept are the driving process's, so its own allocator calls still count -- the idle
    process's ``cudaFree`` moved onto the loop's thread is booked as allocator time."""
    host = nsys_host(tmp_path, nx.write_marked_input_loop, "loop.sqlite", idle_process_ms=100.0)
    assert host["breakdown_ms"].get("allocator", 0.0) == 0.0
    src = tmp_path / "loop.sqlite"
    con = sqlite3.connect(src)
    (loop,) = con.execute("SELECT DISTINCT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId < 1000000"
                          ).fetchone()
    con.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = ? WHERE correlationId >= 1000000", (loop,))
    con.commit()
    con.close()
    moved = analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(src), format="nsys",
                                                       size=os.path.getsize(src))]).to_dict()["hosts"][0]
    assert moved["breakdown_ms"].get("allocator", 0.0) > 1.0


def _job(path: Path) -> dict:
    return analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(path), format="nsys",
                                                      size=os.path.getsize(path))]).to_dict()["hosts"][0]["job"]


def test_real_an_idle_python_processs_device_query_is_no_cost_of_the_job(tmp_path) -> None:  # noqa: ANN001
    """Real: nvFuser's first call under pytest (``wild/nvfuser_h200_first_call``, NVIDIA/Fuser, BSD-3-Clause) holds
    a second ``python3`` process that made two runtime calls (``cuModuleGetLoadingMode``, a 1.84 ms
    ``cudaGetDeviceProperties_v2``) and launched nothing.  Main counted its device query among the job's "4
    first-time runtime calls (5.6 ms)"; the job's one-time costs must read the same with that process's rows
    deleted from the export (3 calls, 3.8 ms; one-time 878.7 -> 876.8 ms)."""
    src = FIXTURES / "wild" / "nvfuser_h200_first_call" / "report1.sqlite"
    whole = tmp_path / "whole.sqlite"
    whole.write_bytes(src.read_bytes())
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(src.read_bytes())
    with sqlite3.connect(cut) as con:
        n = con.execute("DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE (globalTid >> 24) NOT IN "
                        "(SELECT DISTINCT globalPid >> 24 FROM CUPTI_ACTIVITY_KIND_KERNEL)").rowcount
    assert n == 2  # the idle process's two calls
    a, b = _job(whole), _job(cut)
    # main: 878.7 ms with the idle process's call, 876.8 ms without
    assert a["one_time_ms"] == pytest.approx(b["one_time_ms"], abs=1e-6), (a["one_time_ms"], b["one_time_ms"])
    assert a["phase_evidence"] == b["phase_evidence"]
