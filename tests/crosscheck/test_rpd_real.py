"""The two real rocmProfileData databases read as an expert reads them (survey h37-rpd; issue #37: ROCm captures from
process start, other capture tools).  Main named both files and read neither ("a format the Advisor does not read").

* ``foreign/rocm_rpd_matmul/matmul_result.rpd``: a 2 GB upload in ``hipMemcpyWithStream`` holds the host 345.7 ms
  (its copy 154.9 ms on the GPU), one Tensile GEMM of 26.2 ms, the start-up's module loading and first launches, and
  2.70 s in which nothing was recorded (the BLAS libraries loading).  The top problem is the blocking upload, the
  start-up said as one-time costs.
* ``wild/vllm_rpd_fp8/mytrace.rpd.gz``: vLLM's 22 ``execute_model`` steps; the sampler's two reads hold the host
  ~134 ms each while the GPU runs the prefill's queued work -- waits for queued GPU work, no idle, no copy cost."""

from __future__ import annotations

from tests.support.cli_report import cli_report
from tests.support.paths import FIXTURES

MATMUL = FIXTURES / "foreign" / "rocm_rpd_matmul" / "matmul_result.rpd"
VLLM = FIXTURES / "wild" / "vllm_rpd_fp8" / "mytrace.rpd.gz"
BAD = ("warning", "critical")


def test_the_matmul_s_top_problem_is_its_blocking_upload_and_its_start_up_is_named():
    report = cli_report(MATMUL)
    host = report["hosts"][0]
    assert host["error"] is None and host["capture"]["vendor"] == "AMD"
    bad = [f for f in report["findings"] if f["severity"] in BAD]
    assert bad and bad[0]["rule"] == "excessive_memcpy", [(f["rule"], f["severity"]) for f in report["findings"]]
    (h2d,) = [r for r in host["memcpy"]["rows"] if r[0] == "h2d"]
    assert h2d[2] == 2_032_000_000 and h2d[5] == 1.0  # its bytes, all of them in blocking calls
    (cold,) = [f for f in report["findings"] if f["rule"] == "cold_start"]
    assert "hipModuleLoadData" in cold["summary"] and "first launches" in cold["summary"]
    assert host["gpus"][0]["name"] == "AMD GPU (model not recorded)"


def test_the_vllm_steps_are_its_engine_steps_and_its_blocking_reads_no_problem():
    report = cli_report(VLLM)
    host = report["hosts"][0]
    steps = host["steps"]
    assert steps["source"] == "engine_steps" and steps["found"] == 22, steps
    assert host["job"]["kind"] == "serving"
    (d2h,) = [r for r in host["memcpy"]["rows"] if r[0] == "d2h"]
    assert d2h[5] == 1.0  # the sampler's reads block the host (hipMemcpyWithStream) ...
    fired = {f["rule"] for f in report["findings"] if f["severity"] in BAD}
    assert not fired & {"host_sync", "excessive_memcpy"}, fired  # ... on queued GPU work: no idle, no copy cost
