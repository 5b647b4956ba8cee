"""Steps of a native CUDA loop from the period of its launches (``job/period.py``), on generated Nsight exports whose
loop is known by construction (``synthetic/nsysexport.py``: no NVTX, one copy and two kernels a step, a stream sync
at its end), shaped like a real benchmark read in the h37-survey-nsys survey (a CUDA line-fitting benchmark: a
warm-up pass whose first launches wait for their modules, 10 timed iterations of two kernels with an event sync, then
its results copied back):

* the results copied back after the loop end its periodic region a few launches after the middle of the sequence:
  the pre-check compared 64 launches past the middle and so never reached the full check;
* two launches a step make half the gaps between launches boundaries; one slow launch inside the first step then
  made the median "gap between launches" a boundary pause, and the pause no longer stood out.

Both fell back to GPU-burst "steps" (2 of 86 ms on the real trace, where each iteration takes 14.8 ms)."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.runtime.pipeline import analyze_session

STEPS = 10
LOOP = NsysJob(steps=STEPS, ops=2, kernel_us=2000.0, step_range=None, autograd_nvtx=False, sync=True, shuffle=False)


def _report(path) -> dict:
    host = SimpleNamespace(host="bench", path=str(path), format="nsys", size=0)
    return analyze_session("bench", "s", [host]).to_dict()["hosts"][0]


def _sql(path, *statements) -> None:
    con = sqlite3.connect(path)
    for q, args in statements:
        con.execute(q, args)
    con.commit()
    con.close()


def test_results_copied_back_after_the_loop_leave_its_steps(tmp_path):
    p = tmp_path / "tail.sqlite"
    truth = write(str(p), LOOP)
    con = sqlite3.connect(p)
    end, gtid, gpid = con.execute("SELECT max(r.end), max(r.globalTid), max(m.globalPid) FROM CUPTI_ACTIVITY_KIND_RUNTIME r, "
                                  "CUPTI_ACTIVITY_KIND_MEMCPY m").fetchone()
    name = con.execute("SELECT max(id) + 1 FROM StringIds").fetchone()[0]
    con.execute("INSERT INTO StringIds VALUES (?, 'cudaMemcpy_v3020')", (name,))
    for i in range(4):  # four results to the host, each a blocking copy
        t = end + 50_000 + i * 30_000
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)",
                    (t, t + 20_000, gtid, 900_000 + i, name))
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?, ?, 0, 1, 7, ?, ?, 8000, 2, 2, 0)",
                    (t + 5_000, t + 15_000, 900_000 + i, gpid))
    con.commit()
    con.close()
    host = _report(p)
    steps = host["steps"]
    assert host["job"]["step_source"] == "repeated_launches", steps
    assert steps["found"] == STEPS
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth.step_ms, rel=0.02)


def test_a_slow_launch_in_a_two_kernel_step_does_not_hide_the_boundary(tmp_path):
    p = tmp_path / "cold.sqlite"
    truth = write(str(p), LOOP)
    con = sqlite3.connect(p)
    first_launch, = con.execute("SELECT min(r.correlationId) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                                "ON s.id = r.nameId WHERE s.value LIKE 'cudaLaunchKernel%'").fetchone()
    con.close()
    early = 12_000_000  # the first launch ran 12 ms before the second: its module loaded, the host synced
    _sql(p, ("INSERT INTO StringIds SELECT max(id) + 1, 'fit_lines' FROM StringIds", ()),
         # two kernels a step, the second another kernel, and nothing else
         ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = (SELECT max(id) FROM StringIds), shortName = "
          "(SELECT max(id) FROM StringIds) WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL "
          "k WHERE (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL j WHERE j.start < k.start) % 2 = 1)", ()),
         ("DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY", ()),
         ("DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN (SELECT id FROM StringIds WHERE value LIKE "
          "'cudaMemcpy%')", ()),
         ("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = start - ?, end = end - ? WHERE correlationId = ?",
          (early, early, first_launch)),
         ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start - ?, end = end - ? WHERE correlationId = ?",
          (early, early, first_launch)))
    host = _report(p)
    assert host["job"]["step_source"] == "repeated_launches", host["steps"]
    assert host["steps"]["found"] == STEPS
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth.step_ms, rel=0.02)


def test_a_loop_whose_every_gap_is_a_blocking_copy_still_has_its_iterations_as_steps(tmp_path):
    """A native loop whose launches all block the host (SC23's OpenMP ``heat``, read in the h37-survey-nsys survey:
    each iteration copies 512 MB in from pageable memory, runs a 21 ms kernel, copies 512 MB back, then syncs): the
    gaps between launches are the copies' transfers, so the boundary's pause cannot stand out against them, and main
    fell back to the whole capture.  By construction: 20 iterations of a blocking 110 ms copy in, a 21 ms kernel, a
    blocking 120 ms copy back and a stream sync -- the steps are the 20 iterations, at the generated step time."""
    p = tmp_path / "heat.sqlite"
    job = NsysJob(steps=20, ops=1, kernel_us=21_000.0, h2d_us=110_000.0, pinned=False, copies_block=True,
                  d2h_us=120_000.0, step_range=None, autograd_nvtx=False, sync=True, shuffle=False)
    truth = write(str(p), job)
    host = _report(p)
    assert host["job"]["step_source"] == "repeated_launches", host["steps"]
    assert host["steps"]["found"] == 20
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth.step_ms, rel=0.01)
    assert "blocked in copies" in host["steps"]["note"]


def test_blocking_copies_without_a_sync_at_one_boundary_give_no_steps(tmp_path):
    """The same loop with no sync: the host's only waits are the copies, at every gap, and nothing marks one of them as
    the boundary -- no steps from the period (a model's layers, each with its offloaded weights copied in, look so)."""
    p = tmp_path / "layers.sqlite"
    job = NsysJob(steps=20, ops=1, kernel_us=21_000.0, h2d_us=110_000.0, pinned=False, copies_block=True,
                  d2h_us=120_000.0, step_range=None, autograd_nvtx=False, sync=False, shuffle=False)
    write(str(p), job)
    assert _report(p)["job"]["step_source"] != "repeated_launches"
