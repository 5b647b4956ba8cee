"""mfu_low's claim on GEMM time is held to its own shapes' time above their floor (issue #37, h37-pool37).

Why: h37-pool36's ``own-floor`` law read only small_grid; mfu_low speeds GEMMs up keeping their work and precision, so
no shape beats its roofline and its claim is at most its slow shapes' time above it
(``GemmRoofline.above_floor_ms_per_step``, the detail ``above_floor_ms_per_step`` the law reads).
"""

from __future__ import annotations

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.properties import own_floor_problems
from tests.support.report_store import session_report


def test_jax_mi355x_mfu_low_claims_within_its_shapes_above_their_floor():
    """A JAX job on an MI355X whose GEMMs run at under 40% of their roofline (mfu_low 0.233 ms/step).  main said no own
    floor (``above_floor_ms_per_step`` absent: KeyError)."""
    (s,) = [s for s in discover(str(FIXTURES / "wild" / "jax_mi355x"))]
    found = [(h, f) for h in session_report(s).hosts if h.error is None
             for f in h.findings if f.rule == "mfu_low"]
    assert found
    for h, f in found:
        above = f.metric.detail["above_floor_ms_per_step"]
        assert 0 < f.saving.ms_per_step <= above + 1e-3
        assert not own_floor_problems(h.host, f)
