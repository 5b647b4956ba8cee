"""Reports on ROCm rocprof traces (``rocprof --hip-trace``'s ``results.json``; issue #37 item 6): right on the two real
captures of survey h37-survey5 where a session keeps them (``.robustness/rocprof/``: no licence, never committed;
skipped in a fresh clone), and on generated ones with truth by construction.  Main refused every such file, exit 2.

Truth read off the files by hand (SURVEY.md "Survey h37-survey5"):

* MI300X batched GEMM: one 331.6 s naive fp32 kernel, the job kernel-bound by it; one pass, no loop -- no step
  structure to invent; a HIP program: HIP's words, never CUDA's or Nsight's.
* MI300A vector add: the 3.4 ms kernel is 0.2% of the 2.16 s; the job is its three 4 GB blocking ``hipMemcpy`` copies
  (the first upload staged: pageable) and its frees -- the copies' fix is pinned memory, in HIP's words.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from synthetic import rocproftrace
from tests.support.cli_report import cli_report
from tests.support.paths import REPO

REAL = REPO / ".robustness" / "rocprof"
BGEMM = REAL / "batched_gemm_mi300x" / "results.json"
VECADD = REAL / "hip_vector_add_mi300a" / "results.json"
#: NVIDIA's and Nsight's words, which a HIP program's report never says (``torch.cuda`` is PyTorch's own, not here).
CUDA_WORDS = re.compile(r"\bcuda\w*|\bCUDA\b|\bnsys\b|Nsight|NVTX|nvidia-smi|cudaMemcpy|cudaMallocHost")


def _text(report: dict) -> str:
    return json.dumps([report["findings"], report["headline"], [h["capture"] for h in report["hosts"]]])


@pytest.mark.skipif(not BGEMM.exists(), reason="the MI300X rocprof capture is kept only locally (.robustness/, no licence)")
def test_the_mi300x_gemm_is_one_pass_of_one_kernel_in_hips_words():
    report = cli_report(BGEMM)
    host = report["hosts"][0]
    assert host["error"] is None and host["capture"]["vendor"] == "AMD"
    assert host["steps"]["source"] == "whole_capture" and host["steps"]["count"] == 1  # no step invented
    assert host["capture"]["framework"] == "native"
    share = {m["id"]: m["value"] for m in report["headline"]}["device_step_share"]
    assert share > 0.99  # the one kernel is the pass
    assert not CUDA_WORDS.search(_text(report)), CUDA_WORDS.search(_text(report))
    long = [f for f in report["findings"] if f["title"] == "The capture is long"]
    assert long and "rocprof" in json.dumps(long[0]["actions"])  # rocprof's own window, not Nsight's


@pytest.mark.skipif(not VECADD.exists(), reason="the MI300A rocprof capture is kept only locally (.robustness/, no licence)")
def test_the_mi300a_vector_add_is_its_blocking_copies_with_the_pinned_memory_fix_in_hips_words():
    report = cli_report(VECADD)
    copies = [f for f in report["findings"] if f["id"].startswith("excessive_memcpy")]
    assert copies and copies[0]["severity"] == "critical"
    assert "pageable" in copies[0]["summary"]
    assert "hipHostMalloc" in json.dumps(copies[0]["actions"])
    assert not CUDA_WORDS.search(_text(report)), CUDA_WORDS.search(_text(report))


def test_a_loop_marked_by_roctx_ranges_is_stepped_by_them(tmp_path: Path):
    """Six ``iteration`` roctx ranges around six bursts of kernels: six steps, from the ranges, named as roctx's (the
    steps stage named every tracer's ranges NVTX's)."""
    path = tmp_path / "results.json"
    truth = rocproftrace.write(str(path), [[("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0)]] * 6,
                               gap_ms=1.0)
    report = cli_report(path)
    steps = report["hosts"][0]["steps"]
    assert steps["found"] == truth["steps"] and "range" in steps["source"]
    assert steps["note"].startswith("roctx ranges `iteration`")
    assert not CUDA_WORDS.search(_text(report)), CUDA_WORDS.search(_text(report))  # the host's fixes: roctx's


def test_a_window_whose_launch_has_no_gpu_record_gets_rocprofs_fix(tmp_path: Path):
    """One ``hipLaunchKernel`` and no GPU record: a report (main: refused, exit 2) whose fix is rocprof's own way to
    record the GPU's side, never Nsight's."""
    path = tmp_path / "results.json"
    rocproftrace.write(str(path), [[("k(float*)", 10.0)]], upload_bytes=0, read_bytes=0, step_range=None,
                       gpu_records=False)
    report = cli_report(path)
    (lost,) = [f for f in report["findings"] if f["title"] == "The capture lost its GPU records"]
    assert "rocprof --hip-trace" in json.dumps(lost["actions"])
    assert not CUDA_WORDS.search(_text(report)), CUDA_WORDS.search(_text(report))


ROCPD = REAL / "ck_batched_gemm_rocpd_mi300x" / "28_results.db"


@pytest.mark.skipif(not ROCPD.exists(), reason="the real rocpd database is kept only locally (.robustness/, no licence)")
def test_the_rocpd_ck_gemm_is_read_and_its_grid_judged_on_the_mi300xs_cus():
    """rocprofv3's database of a Composable Kernel batched GEMM (main: not recognised): 150 dispatches of one kernel
    of 256 workgroups on the MI300X's 304 CUs (rocpd's agent ``cu_count``) -- the one physical fact the capture shows
    against the GPU -- in HIP's words, rocprofv3's window."""
    report = cli_report(ROCPD)
    host = report["hosts"][0]
    assert host["error"] is None and host["capture"]["vendor"] == "AMD"
    small = [f for f in report["findings"] if f["id"].startswith("small_grid")]
    assert small and "256 workgroups" in small[0]["summary"] and "304 CUs" in small[0]["summary"]
    assert not CUDA_WORDS.search(_text(report)), CUDA_WORDS.search(_text(report))


def test_a_rocpd_loop_marked_by_roctx_ranges_is_stepped_by_them(tmp_path: Path):
    from synthetic import rocpdtrace

    path = tmp_path / "4242_results.db"
    truth = rocpdtrace.write(str(path), [[("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0)]] * 6, gap_ms=1.0)
    report = cli_report(path)
    steps = report["hosts"][0]["steps"]
    assert steps["found"] == truth["steps"] and steps["note"].startswith("roctx ranges `iteration`")
    assert not CUDA_WORDS.search(_text(report)), CUDA_WORDS.search(_text(report))


def test_any_file_of_a_rocprofv3_csv_run_given_alone_reports_the_whole_run(tmp_path: Path):
    """rocprofv3's CSV files (``--output-format csv``; main: "not a profile this tool reads", exit 2).
    ``report 4242_hip_api_trace.csv``: the capture it belongs to, its kernels launched by its calls, stepped by its
    roctx ranges, in rocprofv3's words."""
    from synthetic import rocprofv3trace
    from tb_gpu_advisor.discover.logdir import locate_file

    truth = rocprofv3trace.write(str(tmp_path / "job"), [[("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0)]] * 6,
                               gap_ms=1.0)
    found = locate_file(str(tmp_path / "job" / "4242_hip_api_trace.csv"))
    assert found is not None and len(found[2].ranks) == 5
    report = cli_report(tmp_path / "job" / "4242_hip_api_trace.csv")
    host = report["hosts"][0]
    assert host["error"] is None and host["capture"]["vendor"] == "AMD"
    assert [g["name"] for g in host["gpus"]] == ["AMD Instinct MI300X"]
    steps = host["steps"]
    assert steps["found"] == truth["steps"] and steps["note"].startswith("roctx ranges `iteration`")
    assert "rocprofv3 --" in json.dumps(report["findings"])  # the window's fixes: rocprofv3's own options
    assert not CUDA_WORDS.search(_text(report)), CUDA_WORDS.search(_text(report))
    # rocprofv3 traces any GPU program: none named is none at all (it was "unknown", told Keras's mixed precision)
    assert host["capture"]["framework"] == "native" and "keras" not in json.dumps(report["findings"]).lower()


def test_rocprofv3s_json_document_reports_as_its_csv_files_do(tmp_path: Path):
    """The same program written as rocprofv3's JSON (main: "not a profile this tool reads", exit 2): the same steps,
    GPU and findings as its CSV files, with its copies' sizes besides."""
    from synthetic import rocprofv3trace

    steps = [[("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0)]] * 6
    rocprofv3trace.write(str(tmp_path / "csv"), steps, gap_ms=1.0)
    rocprofv3trace.write(str(tmp_path / "json"), steps, gap_ms=1.0, fmt="json")
    a, b = cli_report(tmp_path / "csv"), cli_report(tmp_path / "json")
    assert b["hosts"][0]["error"] is None and b["hosts"][0]["capture"]["framework"] == "native"
    assert b["hosts"][0]["steps"]["found"] == a["hosts"][0]["steps"]["found"] == 6
    assert [g["name"] for g in b["hosts"][0]["gpus"]] == [g["name"] for g in a["hosts"][0]["gpus"]]
    assert {f["rule"] for f in b["findings"]} == {f["rule"] for f in a["findings"]}


AITER = REPO / "tests" / "fixtures" / "wild" / "rocprof_aiter_mi355x"


def test_the_mi355x_fp8_gemm_test_is_not_told_to_turn_on_mixed_precision():
    """aiter's fp8 block-scale GEMM test on one MI355X (kernel-only rocprof, survey h37-rocprof2): 13 kernels, the
    three CK GEMMs (``ck::f8_fnuz_t`` inputs, ``float`` accumulators) 43% of the kernel time.  Main counted them as
    fp32 and told the job to run under bf16 autocast."""
    report = cli_report(AITER)
    host = report["hosts"][0]
    assert host["error"] is None and host["capture"]["vendor"] == "AMD"
    assert [g["name"] for g in host["gpus"]] == ["AMD Instinct MI355X"]  # gpu-id 8 = rocminfo's node 8
    assert not [f for f in report["findings"] if f["rule"] == "mixed_precision_off"]
    eight = {m["id"]: m for m in report["headline"]}["sixteen_bit_share"]
    assert eight["detail"]["eight_bit_share"] > 0.4  # the GEMMs and the fp8 cast


KOKKOS = REAL / "kokkos_8361a6b" / "results.json"
KOKKOS_OTHER = REAL / "kokkos_6f0a1c4" / "results.json"


@pytest.mark.skipif(not KOKKOS.exists(), reason="the kokkos rocprof capture is kept only locally (.robustness/, no licence)")
def test_a_cold_start_per_guessed_step_of_the_kokkos_capture_is_no_critical():
    """kokkos_8361a6b: 2 steps cut from GPU bursts span 16 ms of the 562 ms window; the cold start's "3.26 ms/step (40%
    of step)" is a part of those guessed steps: a warning saying so, at the steps' confidence (h37-lowconf; main:
    CRITICAL, the capture's own rule exempt by name)."""
    report = cli_report(KOKKOS)
    assert report["hosts"][0]["steps"]["source"] == "gpu_busy_clusters"
    (cold,) = [f for f in report["findings"] if f["rule"] == "cold_start"]
    assert cold["saving"]["percent_of_step"] > 25
    assert (cold["severity"], cold["confidence"]) == ("warning", "low")
    assert "rests on steps that are a guess" in cold["summary"]
    assert not [f for f in report["findings"] if f["severity"] == "critical"]


@pytest.mark.skipif(not KOKKOS_OTHER.exists(), reason="the kokkos rocprof capture is kept only locally (.robustness/)")
def test_a_cold_start_measured_over_the_window_keeps_its_grade_on_guessed_steps():
    """Control, kokkos_6f0a1c4: the same burst steps, but its one-time costs lie outside them, graded by their share of
    the window with no saving per step -- no step cut changes that: its grade and high confidence stand."""
    report = cli_report(KOKKOS_OTHER)
    assert report["hosts"][0]["steps"]["confidence"] == "low"
    (cold,) = [f for f in report["findings"] if f["rule"] == "cold_start"]
    assert cold["saving"] is None and (cold["severity"], cold["confidence"]) == ("warning", "high")
    assert "guess" not in cold["summary"]


@pytest.mark.skipif(not VECADD.exists(), reason="the MI300A rocprof capture is kept only locally (.robustness/, no licence)")
def test_the_mi300a_copies_keep_their_grade_on_the_pass_and_say_why():
    """hip_vector_add_mi300a: no step, nothing repeats -- the window read whole as one pass; copies block 1.07 s of the
    1.10 s pass wherever a step were cut: critical, saying why beside the steps' low confidence, and the capture
    finding no longer calls the pass a guess (h37-lowconf; main: "The one pass is itself a guess" beside the critical)."""
    report = cli_report(VECADD)
    (copies,) = [f for f in report["findings"] if f["rule"] == "excessive_memcpy"]
    assert copies["severity"] == "critical" and "no cut of steps changes it" in copies["summary"]
    assert "itself a guess" not in json.dumps(report["findings"])


# -- a staged pageable copy's lead is the copy's cost (h37-copyforms) ---------------------------------------------------

#: ROCm libraries' kernels (rocBLAS/Tensile, MIOpen): a native HIP program, no framework
_NATIVE_STEP = [("Cijk_Ailk_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8_K1_WG32_4_1", 150.0),
                ("MIOpenBatchNormFwdTrainSpatial", 40.0)] * 5
_BATCH = 48 << 20  # each step's upload: ~2.52 ms at the generator's 20 GB/s


@pytest.mark.parametrize("call,sync", [("hipMemcpyAsync", "hipStreamSynchronize"), ("hipMemcpy", "hipDeviceSynchronize"),
                                       ("hipMemcpy", None)])
def test_a_staged_hip_batch_is_the_copys_cost_not_unrecorded_host_time(tmp_path: Path, call, sync):
    """Truth by construction: each of 10 steps stages its 48 MiB batch 5 ms inside ``call`` (the GPU idle, the host in
    the call), transfers it in 2.52 ms, runs 0.95 ms of kernels and waits in ``sync``.  Main: the top finding was
    "Gaps between steps" (4.28 ms a step), "time the capture did not record (5.06 ms a step: no runtime call, op, range
    or OS call covers it)" with roctx's record-the-host fix -- while the copy call covered it -- and the copies'
    finding claimed the transfer alone (2.52 ms).  The wrong assumption: a copy's cost is its transfer; on AMD's
    tracers a staged copy's transfer starts only once HIP has staged the buffer inside the call."""
    path = tmp_path / "results.json"
    rocproftrace.write(str(path), [_NATIVE_STEP] * 10, gap_ms=0.05, step_upload_bytes=_BATCH, step_staging_ms=5.0,
                       step_copy_call=call, step_sync=sync)
    report = cli_report(path)
    top = report["findings"][0]
    assert top["rule"] == "excessive_memcpy", [f["title"] for f in report["findings"]]
    transfer_ms = _BATCH // 20 / 1e6
    # the staging (5 ms) and the transfer, less at most the sync's own claim on the staging (its 0.89 ms wait)
    assert transfer_ms + 5.0 - 0.9 <= top["saving"]["ms_per_step"] <= transfer_ms + 5.0 + 0.05
    assert "before the transfers begin" in top["summary"] and "pageable" in top["summary"]
    assert "hipHostMalloc" in json.dumps(top["actions"])
    text = json.dumps(report["findings"])
    assert "no runtime call, op, range or OS call covers it" not in text
    assert not CUDA_WORDS.search(_text(report)), CUDA_WORDS.search(_text(report))


def test_an_unstaged_hip_batch_costs_its_transfer_alone(tmp_path: Path):
    """Control: the same loop with no staging (the transfer starts as the call does): the copies' saving is their
    transfer, 2.52 ms, as on main -- no lead is booked."""
    path = tmp_path / "results.json"
    rocproftrace.write(str(path), [_NATIVE_STEP] * 10, gap_ms=0.05, step_upload_bytes=_BATCH,
                       step_copy_call="hipMemcpyAsync", step_sync="hipStreamSynchronize")
    top = cli_report(path)["findings"][0]
    assert top["rule"] == "excessive_memcpy"
    assert top["saving"]["ms_per_step"] == pytest.approx(_BATCH // 20 / 1e6, abs=0.01)
    assert "before the transfers begin" not in top["summary"]


def test_pytorch_on_rocm_is_told_to_pin_its_staged_batch_in_hips_words(tmp_path: Path):
    """PyTorch's kernels on an MI300X (``at::native``), each step's 48 MiB batch staged 5 ms inside ``hipMemcpyAsync``:
    the pinning fix is PyTorch's (DataLoader ``pin_memory``), its reason HIP's.  Main: "(Nsight Systems' 'CUDA Async
    Memcpy with Pageable Memory' rule)" on a ROCm capture.  Prose only: PyTorch's own ``'cuda'`` device string stays
    in the code."""
    path = tmp_path / "results.json"
    step = [(name, us) for name, us in _NATIVE_STEP[:1]] + [
        ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl, std::array<char*, 2> >"
         "(int, at::native::GeluCUDAKernelImpl, std::array<char*, 2>)", 40.0)] * 4
    rocproftrace.write(str(path), [step] * 10, gap_ms=0.05, step_upload_bytes=_BATCH, step_staging_ms=5.0,
                       step_copy_call="hipMemcpyAsync", step_sync="hipStreamSynchronize")
    top = cli_report(path)["findings"][0]
    assert top["rule"] == "excessive_memcpy"
    prose = " ".join([top["summary"]] + [a["text"] for a in top["actions"]])
    assert "pin_memory" in json.dumps(top["actions"]) and "HIP stages" in prose
    assert not re.search(r"Nsight|\bCUDA\b", prose), re.search(r"Nsight|\bCUDA\b", prose)
