"""A native program that counts its iterations, and reads its stop flag between them without a sync call -- with a
blocking copy to the host, or a plain load of managed memory -- reads as its counted iterations, not as one pass
(issue #37: "Right on captures unlike ours ... copies that block, tiny steps").

Real exports, cestwc/balinski-and-gomory-cuda (MIT), read by hand (``sqlite3``):

* ``report7.sqlite`` (kept, trimmed: ``wild/managed_flag_rtx3090_solver``, PROVENANCE.md): ``build/test1 4`` on an
  RTX 3090.  Its stdout prints "Step 0" .. "Step 6", "Solver has converged after 7 steps.", "solve() time: 7.45728 ms";
  ``update_Q`` and ``check_Rk`` .. ``check_bkl`` launch exactly 7 times, one each a turn.  Its 24
  ``cudaDeviceSynchronize`` all lie inside the turns; between a turn's ``check_bkl`` and the next ``update_Q`` there
  is no runtime call at all, only a Unified Memory page migration to the host (``copyKind`` 12, correlation id 0):
  the host loads its flag from managed memory.
* ``report16.sqlite`` (1.8 MB, local only): ``build/test1 100``, "Solver has converged after 258 steps.",
  "solve() time: 67.5779 ms"; ``update_Q`` and ``check_Rk`` launch 258 times, no sync call at all, 2,453
  ``cudaMemcpyFromSymbol`` (blocking copies to the host, 4-24 bytes) read its flags.

A model whose layers each wait for the GPU, printed once a call, reads as its calls (by construction).

On main both real exports were one pass ("no step markers found, nor repeating GPU activity"): the turns' boundary was proven only
by a sync call between them (h37-nsys59's *Left* 1).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys import reader as nsys_reader
from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

RUN = "managed_flag_rtx3090_solver"
#: cestwc's ``report16.sqlite`` (``build/test1 100``; 1.8 MB: local only) and ``report17.sqlite`` (local only).
N100 = Path(os.environ.get("TB_GPU_ADVISOR_CESTWC_R16") or "/work/wild58/nsys58/cestwc/report16.sqlite")
R17 = N100.with_name("report17.sqlite")


def test_a_solver_reading_its_flag_from_managed_memory_reads_its_seven_steps():
    """7 turns found (5 analysed: the first and last dropped by the stock tool's rule), each within 15% of the
    program's own 7.45728 ms / 7; the cold start stays first.  On main: one pass of 7.76 ms."""
    (s,) = [s for s in wild_sessions() if s.run == RUN]
    rep = session_report(s).to_dict()
    host = rep["hosts"][0]
    assert host["steps"]["found"] == 7 and host["steps"]["count"] == 5
    assert "its output counts 7 iterations" in host["steps"]["note"]
    truth = 7.45728 / 7
    assert abs(host["gpus"][0]["step_ms"] - truth) <= 0.15 * truth
    assert rep["findings"][0]["rule"] == "cold_start"
    assert not [f for f in rep["findings"] if "no step repeats" in f["title"]]


def test_the_managed_reads_are_the_exports_migrations_to_the_host():
    """The reads of managed memory are the export's 19 page migrations to the host (``copyKind`` 12, counted by hand),
    none of its 20 to the device (a page the GPU faulted in is the GPU's wait, not the host's read)."""
    from tb_gpu_advisor.job.waits import managed_reads  # new here: imported inside, so the controls run on main

    trace = nsys_reader.read_trace(str(FIXTURES / "wild" / RUN / "report7.sqlite"))
    (d,) = [d for d in trace.devices if len(d)]
    reads = managed_reads(trace, d.gpu)
    assert reads.size == 19
    names = np.array(d.names, dtype=object)[d.name]
    to_device = np.array(["HtoD" in n and "page migration" in n for n in names])
    assert int(to_device.sum()) == 20
    assert not np.isin(d.start[to_device], reads).any()


@pytest.mark.skipif(not N100.exists(), reason="cestwc report16.sqlite is local only")
def test_a_solver_reading_its_flag_with_blocking_copies_reads_its_counted_steps():
    """``report16``: 258 steps found, each within 10% of 67.5779 ms / 258.  On main: one pass of 67.9 ms."""
    rep = first_report(str(N100))
    steps = rep["hosts"][0]["steps"]
    assert steps["found"] == 258 and "its output counts 258 iterations" in steps["note"]
    truth = 67.5779 / 258
    assert abs(rep["hosts"][0]["gpus"][0]["step_ms"] - truth) <= 0.1 * truth


@pytest.mark.skipif(not R17.exists(), reason="cestwc report17.sqlite is local only")
def test_a_debug_solve_read_back_by_copies_is_seven_turns_not_start_up():
    """``report17`` (``build/test1 4``, a later build): 7 printed steps, "solve() time: 3.6623 ms" (1.46 ms of it set-up
    before the first ``update_Q``); ``update_Q`` and ``check_Rk`` launch 7 times, 30 ``cudaMemcpyFromSymbol`` read its
    flags, no sync.  By hand the turns (``update_Q`` to ``update_Q``) are 358, 388, 261, 277, 250, 292 us: the middle
    five average 294 us.  On main: "start-up only: one pass of 4.44 ms, no steady step"."""
    rep = first_report(str(R17))
    steps = rep["hosts"][0]["steps"]
    assert steps["found"] == 7 and steps["count"] == 5
    assert abs(rep["hosts"][0]["gpus"][0]["step_ms"] - 0.294) <= 0.03


def _steps(path: str) -> tuple[dict, float]:
    rep = first_report(path)
    return rep["hosts"][0]["steps"], rep["hosts"][0]["gpus"][0]["step_ms"]


@pytest.mark.parametrize("read", ["copy", "managed"])
def test_a_generated_solver_reading_its_flag_without_a_sync_reads_its_turns(tmp_path, read):
    """By construction (``write_counted_solver(read=)``): the real solver's 7 turns, each ending with a blocking
    ``cudaMemcpyFromSymbol`` or a load of managed memory instead of a sync: 7 steps, each as long as a turn.  On main:
    the 34-launch period's 2 steps (its repeats hold a sync from the search; the turns held none)."""
    path = str(tmp_path / f"{read}.sqlite")
    truth = nx.write_counted_solver(path, read=read)
    steps, step_ms = _steps(path)
    assert steps["found"] == truth["turns"] == 7
    assert abs(step_ms - truth["turn_ms"]) <= 0.1 * truth["turn_ms"]
    if read == "managed":
        from tb_gpu_advisor.job.waits import managed_reads

        trace = nsys_reader.read_trace(path)
        (d,) = [d for d in trace.devices if len(d)]
        assert managed_reads(trace, d.gpu).size == truth["turns"]


@pytest.mark.parametrize("read", ["sync", "copy", "managed"])
def test_control_unprinted_or_synced_solvers_read_as_before(tmp_path, read):
    """Control (passes on main too): without the printed count, each way of reading keeps the launch period's reading
    (3 repeats); the synced solver printed reads its 7 turns as before."""
    path = str(tmp_path / f"{read}.sqlite")
    nx.write_counted_solver(path, read=read, printed=False)
    steps, _ = _steps(path)
    assert steps["found"] == 3 and "its output counts" not in steps["note"]
    if read == "sync":
        path = str(tmp_path / "printed.sqlite")
        truth = nx.write_counted_solver(path)
        assert _steps(path)[0]["found"] == truth["turns"]



def test_a_models_synced_layers_printed_once_a_call_read_as_its_calls(tmp_path):
    """By construction (h37-nsys59's *Left* 2): 7 calls of 3 layers of the same 4 kernels, a sync after each layer,
    "Step i" printed once a call: the launches repeat 21 times, each after a wait, and the program counts 7 -- 7 steps,
    each a call of 3 layers.  On main: 21 steps, one per layer, printed or not."""
    path = str(tmp_path / "layers.sqlite")
    truth = nx.write_counted_solver(path, body=12, layer=4, syncs=3, branch_every=99)
    steps, step_ms = _steps(path)
    assert steps["found"] == truth["turns"] == 7
    assert "run 3 to an iteration" in steps["note"]
    assert abs(step_ms - truth["turn_ms"]) <= 0.1 * truth["turn_ms"]
