"""A fusion compiler's first call is a cold start (issue #37 survey h37-survey-nsys), on a real Nsight export of
someone else's job: ``wild/nvfuser_h200_first_call`` (NVIDIA/Fuser, BSD-3-Clause; ``PROVENANCE.md``).

The truth is read off the file here with plain SQL, independently of the Advisor: every kernel of the window runs
once, and nvFuser's own NVTX ranges say it spent hundreds of ms building kernels (NVRTC's ``CompileProgram`` inside
``KernelExecutor::compile``) with the GPU idle between them.  Main read the 0.8 s of compiling as nothing
("negligible one-time costs") and led with "too few steps" over GPU-burst steps of 388 ms."""

from __future__ import annotations

import functools
import sqlite3

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

RUN = "nvfuser_h200_first_call"
EXPORT = FIXTURES / "wild" / RUN / "report1.sqlite"


@functools.cache
def _report() -> dict:
    (s,) = [s for s in discover(str(FIXTURES / "wild")) if s.run == RUN]
    return session_report(s).to_dict()


def _sql(q: str) -> list:
    con = sqlite3.connect(f"file:{EXPORT}?mode=ro", uri=True)
    try:
        return con.execute(q).fetchall()
    finally:
        con.close()


def _ranges(names: str) -> list[tuple[int, int]]:
    """(start, end) of the NVTX ranges with one of ``names`` (SQL literals), their text inline or registered."""
    return _sql("SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                f"WHERE coalesce(n.text, s.value) IN ({names})")


def _covered_ms(spans: list[tuple[int, int]]) -> float:
    total, end = 0, None
    for s, e in sorted(spans):
        if end is None or s > end:
            total, end = total + e - s, e
        elif e > end:
            total, end = total + e - end, e
    return total / 1e6


def test_the_export_is_a_first_call_by_its_own_records():
    # each kernel name runs once: nothing repeats, so nothing here is a steady step
    assert max(n for (n,) in _sql("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY demangledName")) <= 4
    nvrtc = _ranges("'executor_utils::Nvrtc::CompileProgram'")
    assert len(nvrtc) == 6 and _covered_ms(nvrtc) > 400


def test_a_fusion_compiler_s_first_call_leads_with_its_cold_start():
    rep = _report()
    host = rep["hosts"][0]
    job = host["job"]
    compiling = _covered_ms(_ranges("'FusionExecutorCache::getKernelRuntimeFor::compileNewKRT', "
                                    "'FusionKernelRuntime::compileFusionParallel', 'KernelExecutor::compile'"))
    (part,) = [p for p in job["phase_evidence"].split("; ") if "compilation" in p]
    assert "KernelExecutor::compile" in part and f"{compiling:.1f} ms)" in part, (part, compiling)
    assert job["phase"] != "steady" and job["one_time_ms"] >= compiling
    assert rep["findings"][0]["rule"] == "cold_start"
    assert not [f for f in rep["findings"] if f["rule"] in ("launch_bound", "host_sync", "input_bound")]
