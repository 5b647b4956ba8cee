""""If every fix lands" never takes the kernels below what their work needs at the GPU's peaks (issue #37, h37-floor35).

Why: h37-floor34 capped each finding's claims on kernel time at the kernel time above the floor of the work of known
FLOPs and bytes (``Flops.floor_ms_per_step``), but ``rules.savings.achievable`` added the largest claim of each pool:
two fixes on two pools (filling the SMs of a decode's GEMVs, ``gemm_kernels``; fusing an element-wise chain,
``non_matmul_kernels``), each within that headroom alone, together went below it.  The union is now capped by the
same floor (``achievable(..., peak_floor_ms)``), kept in the account as ``peak_floor_ms`` so the session's account and
a diff's calibration cap by it too.  Truth by construction: ``synthetic/torchtrace.py``'s ``decode_near_peak_and_chain``
writes each GEMV at 97% of the H100's memory bandwidth beside 40 element-wise kernels of 50 us.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Finding, Saving
from tb_gpu_advisor.rules.savings import achievable
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.properties import every_fix_above_floor, report_violations
from tests.support.report_store import session_report

NAME = "decode_near_peak_and_chain"


@pytest.fixture(scope="module")
def decode_and_chain(tmp_path_factory):
    d = tmp_path_factory.mktemp(NAME)
    (path,) = tt.write_run(str(d), NAME)
    m = host_metrics(formats.read(SimpleNamespace(path=path, host=Path(path).stem, format="kineto")))
    (s,) = discover(str(d))
    return m, session_report(s)


def test_two_fixes_on_two_floored_pools_leave_the_kernels_above_their_floor(decode_and_chain):
    """small_grid claims ~1.18 ms of the GEMVs and xla_not_used 1.95 ms of the chain, each under the 2.07 ms of kernel
    time above the GEMVs' 2.40 ms floor; on main the account added both, "compute" 3.127 ms, and promised a step
    whose kernels (4.48 - 3.13 = 1.35 ms) run faster than the GEMVs' weight reads alone allow.  The floor is read from
    the metrics, not the report, so on main (no ``peak_floor_ms`` key) the law still fails."""
    m, report = decode_and_chain
    sc = tt.SCENARIOS[NAME]
    assert m.flops.floor_ms_per_step == pytest.approx(sc.extra["floor_ms"], rel=1e-3)
    (h,) = report.hosts
    rules = {f.rule: f for f in h.findings if f.saving and f.saving.ms_per_step > 0}
    assert "xla_not_used" in rules  # the chain's fusion claims
    # the GEMVs' grid claims at most their 3% above their own floor, an info (h37-pool36; main: 1.18 ms, critical)
    sg = rules.get("small_grid")
    assert sg is None or (sg.severity == "info" and sg.saving.ms_per_step <= sc.extra["floor_ms"] * (1 / 0.97 - 1) + 0.01)
    assert not every_fix_above_floor(h.host, h.achievable, h.breakdown_ms, h.findings, m.flops.floor_ms_per_step)
    assert not every_fix_above_floor("session", report.achievable, h.breakdown_ms, report.findings,
                                     m.flops.floor_ms_per_step)
    above = sc.extra["compute_ms"] - sc.extra["floor_ms"]
    assert h.achievable["by_group"]["compute"] <= above + 0.01
    assert h.achievable["peak_floor_ms"] == pytest.approx(sc.extra["floor_ms"], abs=1e-3)
    assert not [v for v in report_violations(report) if v.startswith("peak-floor")]


def _f(fid: str, pool: str, v: float) -> Finding:
    f = Finding(id=fid, rule=fid, severity="warning", title=fid, summary=fid, guide_section="")
    f.saving = Saving(ms_per_step=v, percent_of_step=v, assumption="",
                      recovers=[{"group": "compute", "pool": pool, "ms": v}])
    return f


def test_the_union_cap_cuts_floored_pools_only_and_nothing_without_a_floor():
    """The 32-bit GEMMs' pool is not floored (moving them to 16 bit lifts their peak, h37-floor34); without a floor the
    union is as before; a union within the headroom is not cut."""
    led = {"device_compute": 10.0}
    fs = [_f("a", "gemm_kernels", 2.0), _f("b", "non_matmul_kernels", 2.0), _f("c", "tc_eligible_kernels", 3.0)]
    assert achievable(20.0, led, fs)["by_group"]["compute"] == pytest.approx(7.0)
    a = achievable(20.0, led, fs, peak_floor_ms=7.0)  # 3 ms above the floor: the two floored claims share it
    assert a["by_group"]["compute"] == pytest.approx(6.0) and a["peak_floor_ms"] == 7.0
    assert achievable(20.0, led, fs, peak_floor_ms=5.0)["by_group"]["compute"] == pytest.approx(7.0)
    assert "peak_floor_ms" not in achievable(20.0, led, fs)
