"""Issue #37's classes 1-3 on AMD captures (h37-probe44m): rocprof windows read as right as CUDA ones, in ROCm's words.

Truth by construction (``synthetic.rocproftrace.write``, ``synthetic.rocprofv3trace.write``; the public traces of these
classes are used up in the search store):

* class 1, a window with no kernel: rocprofv3's CSV copy trace holds no size column (rocprofiler-sdk
  ``source/lib/output/generateCSV.cpp``: ``Kind``, ``Direction``, ``Stream_Id``, ``Source_Agent_Id``,
  ``Destination_Agent_Id``, ``Correlation_Id``, ``Start_Timestamp``, ``End_Timestamp``), so two 64 MiB copies were
  "2 copy or memset events (0 bytes)" on main: now their sizes are said unrecorded; its JSON (which holds ``bytes``)
  keeps the bytes.  A window of HIP runtime calls only is start-up, with rocprof's window fix (right on main);
* class 2, roctx ranges as the job's structure: ``forward``/``backward``/``optimizer_step`` ranges make the job
  training and, without a step range, the repeated top-level range times the iterations (right on main);
* class 3, a pageable ``hipMemcpyAsync`` that holds the host: the copy's cost with HIP's pinned-memory fix
  (``hipHostMalloc``/``hipHostRegister``), the step's ``hipStreamSynchronize`` claiming only its own wait (right on
  main).

No report here may speak NVIDIA's tools or calls (``tests/devices/test_amd_fix_words.py`` is the law for the tables).
"""

from __future__ import annotations

import re

from synthetic import rocprofv3trace as v3
from synthetic import rocproftrace as rp
from tests.support.cli_report import report_of

_GEMM = "Cijk_Ailk_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8_K1_WG32_4_1"
#: NVIDIA's tools and calls, never in an AMD capture's report
_NVIDIA = re.compile(r"\bcuda[A-Z]\w*|\bnsys\b|Nsight|CUPTI|NVTX", re.I)


def _nvidia_words(logdir: str) -> list[str]:
    """NVIDIA's tools and calls in the report's words (markdown: every finding, fix and note a user reads)."""
    return _NVIDIA.findall(report_of(logdir, "markdown"))


def _fix_texts(host: dict) -> str:
    return " ".join(f"{a.get('text') or ''} {a.get('snippet') or ''}" for f in host["findings"] for a in f["actions"])


def test_a_rocprofv3_csv_copy_has_no_size_not_zero_bytes(tmp_path):
    v3.write(str(tmp_path), [[]], upload_bytes=64 << 20, read_bytes=64 << 20)
    (host,) = report_of(str(tmp_path))["hosts"]
    evidence = host["job"]["kind_evidence"]
    assert "(0 bytes)" not in evidence, evidence  # main: "2 copy or memset events (0 bytes)"
    assert "2 copy or memset events (their sizes not recorded)" in evidence, evidence


def test_a_rocprofv3_json_copy_keeps_its_bytes_control(tmp_path):
    # the control: the JSON records each copy's bytes -- said as on main
    v3.write(str(tmp_path), [[]], upload_bytes=64 << 20, read_bytes=64 << 20, fmt="json")
    (host,) = report_of(str(tmp_path))["hosts"]
    assert f"2 copy or memset events ({2 * (64 << 20):,} bytes)" in host["job"]["kind_evidence"]


def test_a_window_of_hip_calls_only_is_start_up_in_rocprofs_words(tmp_path):
    rp.write(str(tmp_path / "results.json"), [[]], upload_bytes=0, read_bytes=0, step_range=None)
    (host,) = report_of(str(tmp_path))["hosts"]
    assert "start-up only: 3 HIP calls" in host["job"]["kind_evidence"]
    assert "rocprof --hip-trace" in _fix_texts(host)
    assert not _nvidia_words(str(tmp_path))


def test_roctx_phase_ranges_make_a_training_job_and_its_steps(tmp_path):
    truth = rp.write(str(tmp_path / "results.json"), [[(_GEMM, 300.0)] * 6] * 8, upload_bytes=0, read_bytes=0,
                     gap_ms=0.05, step_range=None, phase_ranges=("forward", "backward", "optimizer_step"))
    (host,) = report_of(str(tmp_path))["hosts"]
    assert host["job"]["kind"] == "training", host["job"]["kind_evidence"]
    assert "roctx ranges" in host["job"]["kind_evidence"]
    assert host["steps"]["found"] == truth["steps"] == 8, host["steps"]["note"]
    assert host["steps"]["source_label"] == "a repeated roctx range"  # main: "a repeated NVTX range" (the tab's line)
    assert not _nvidia_words(str(tmp_path))


def test_a_pageable_hip_copy_is_the_copys_cost_with_hips_fix(tmp_path):
    rp.write(str(tmp_path / "results.json"), [[(_GEMM, 300.0)] * 4] * 8, upload_bytes=0, read_bytes=0, gap_ms=0.05,
             step_range=None, step_upload_bytes=64 << 20, step_staging_ms=8.0, step_copy_call="hipMemcpyAsync",
             step_sync="hipStreamSynchronize")
    (host,) = report_of(str(tmp_path))["hosts"]
    top = host["findings"][0]
    assert top["rule"] == "excessive_memcpy", [f["rule"] for f in host["findings"]]
    assert "hipHostMalloc" in _fix_texts({"findings": [top]}) and "pageable" in top["summary"]
    sync = [f for f in host["findings"] if f["rule"] == "host_sync"]
    assert all(f["saving"]["ms_per_step"] < 2.0 for f in sync)  # the sync's own wait (1.2 ms of kernels), not the copy's
    assert not _nvidia_words(str(tmp_path))
