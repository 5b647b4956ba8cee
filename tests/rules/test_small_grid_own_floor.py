"""A finding's claim on kernel time is capped by ITS OWN kernels' floor, not the step's (issue #37, h37-pool36).

Why: h37-floor35 capped each claim at the step's kernel time above the step's floor (``Flops.floor_ms_per_step``), so
small_grid could still claim time of kernels already at their own floor whenever other kernels (an eager chain) left
the step headroom: decode_near_peak_and_chain's GEMVs at 97% of the memory bandwidth were "filled" for 1.18 ms, a
critical finding.  Each kernel's share of time above its shape's floor (``GpuCtx.above_floor``, set by the rooflines)
now bounds underfill's idle-SM bound (``Underfill.above_floor_ms_per_step``, small_grid's
``detail.above_floor_ms_per_step``), and the ``own-floor`` property holds every report to it.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.properties import own_floor_problems
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"


@pytest.fixture(scope="module")
def dlrm():
    (s,) = [s for s in discover(str(WILD / "dlrm_a100_alltoall"))]
    return session_report(s)


def test_dlrm_small_grid_claims_no_more_than_its_kernels_hold_above_their_floor(dlrm):
    """DLRM on an A100 (record_shapes): its underfilled GEMMs' shapes are known, so part of their time is their
    floor.  main had no own floor (``above_floor_ms_per_step`` absent: KeyError) and claimed 1.316 ms; now 1.31 ms,
    the cap binding on the groups of kernels near their floor."""
    (h,) = [h for h in dlrm.hosts if h.error is None]
    (f,) = [f for f in h.findings if f.rule == "small_grid"]
    d = f.metric.detail
    above = d["above_floor_ms_per_step"]
    assert above < d["underfilled_ms_per_step"]  # some underfilled kernels' floor is known
    assert d["idle_sm_bound_ms_per_step"] <= above + 1e-9
    assert not own_floor_problems(h.host, f)
