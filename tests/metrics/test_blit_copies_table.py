"""A copy the HIP runtime ran as a kernel is a row of the copies table, in the direction the ledger books it
(h37-rocmcopy30; issue #37, "one quantity, one value").

ROCm runs a copy or fill the DMA engines do not take as a blit kernel of its own (``__amd_rocclr_copyBuffer.kd``,
``__amd_rocclr_fillBufferAligned.kd``) under the copy call's correlation id.  The formats give such an event the kind
of the call that made it (``devices.blit_copy_kind``: ``hipMemcpyHtoDAsync`` -> H2D) and the ledger books it so; the
copies table read each copy's direction from its name alone, found none in a kernel's name, and left the copy out.
The wrong assumption: *a copy's name says its direction* -- on ROCm the call does, and the event's kind already holds
it.  Now the table reads the kind the ledger reads (``devices.event_copy_directions``), the name refining it only
where both agree (``p2p`` within ``d2d``).

Truth read by hand off the kept XPlanes (raw events of the GPU plane and the host's calls by correlation id, before
the Advisor ran):

* ``wild/jax_mi300x``: 12 ``__amd_rocclr_copyBuffer.kd`` under ``hipMemcpyHtoDAsync`` (stream 17) and 12 under
  ``hipMemcpyDtoDAsync`` (stream 16).  The 16 kept steps (``jit_dot`` executions 2-17 of 18, 2,010,163,000 -
  10,447,955,000 ps) hold 10 of each: H2D 50.04 us (3.68 + 3.64 + 8.68 + 5.08 + 4.04 + 4.24 + 5.36 + 4.96 + 4.60 +
  5.76), D2D 21.16 us (2.08 + 2.12 + 1.96 + 1.92 + 2.00 + 2.12 + 2.16 + 2.16 + 2.40 + 2.24).  Main: the ledger booked
  3.13 us H2D and 1.32 us D2D a step, the copies table was empty.
* ``wild/jax_mi355x``: 20 ``__amd_rocclr_fillBufferAligned.kd`` under ``hipMemsetAsync``, 166.482 us, all inside
  its 5 steps (4 fills a step).  Main: ``memset`` 0.0333 ms a step in the ledger, no row.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import scenarios
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import HostReport, Report
from tests.support.properties import copy_own_problems
from tests.support.rocm_copies import blit_copies, roctracer_copies
from tests.support.report_store import session_report

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _host(folder: str | Path) -> HostReport:
    (s,) = discover(str(folder))
    report: Report = session_report(s)
    (h,) = [h for h in report.hosts if h.error is None]
    return h


def _rows(h: HostReport) -> dict[str, tuple[float, float]]:
    """direction -> (copies per step, ms per step) of the host's copies table ({}: no table)."""
    t = h.memcpy
    if t is None:
        return {}
    c = t.columns
    return {str(r[c.index("direction")]): (float(r[c.index("count/step")]), float(r[c.index("ms/step")])) for r in t.rows}


#: (run, direction -> (blits in the kept steps, their GPU time in ms), read by hand: see the module doc)
REAL = [("jax_mi300x", {"h2d": (10, 50.04e-3), "d2d": (10, 21.16e-3)}),
        ("jax_mi355x", {"memset": (20, 166.482e-3)})]


@pytest.mark.parametrize("run,want", REAL, ids=[r for r, _ in REAL])
def test_a_real_rocm_capture_s_blit_copies_are_rows_of_its_copies_table(run, want):
    h = _host(WILD / run)
    kept = h.capture["steps_kept"]
    rows = _rows(h)
    assert set(rows) == set(want), rows  # main: {} -- the blits booked by the ledger, no row
    for direction, (n, ms) in want.items():
        per_step, ms_per_step = rows[direction]
        assert per_step * kept == pytest.approx(n, abs=kept * 0.0051)  # 2 decimals
        assert ms_per_step * kept == pytest.approx(ms, abs=kept * 1e-4)  # the table prints 4 decimals
    assert not copy_own_problems(h)  # the ledger books no more than the rows run


@pytest.mark.parametrize("change", [blit_copies, roctracer_copies], ids=["blit_kernels", "roctracer_records"])
def test_a_rocm_copy_is_the_same_row_as_the_cuda_copy(tmp_path, change):
    """The generator's ideal step (8 input copies, one a step) written as CUDA writes it and as ROCm's tracers do:
    the same copies table, row for row (main: the blit kernels' capture had no ``h2d`` row)."""
    want = _rows(_host(scenarios.ideal().write(tmp_path / "cuda", run="cuda")[0].parents[3]))
    assert "h2d" in want  # the premise: the capture's input copies
    sc = scenarios.ideal()
    change(next(iter(sc.spaces.values())))
    h = _host(sc.write(tmp_path / "rocm", run="rocm")[0].parents[3])
    assert _rows(h) == want
    assert not copy_own_problems(h)


def test_the_law_catches_a_copy_the_ledger_books_and_the_table_leaves_out():
    """The law compares every copy category, a missing table counting none: main's ``jax_mi300x`` (an empty table
    beside 3.13 us of H2D a step) breaks it."""
    h = _host(WILD / "jax_mi300x")
    h.memcpy = None
    lines = copy_own_problems(h)
    assert any("memcpy_h2d" in x for x in lines) and any("memcpy_d2d" in x for x in lines), lines
