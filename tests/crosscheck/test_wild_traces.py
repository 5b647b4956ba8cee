"""Real traces from other people's jobs and other GPUs (issue #18): AMD (ROCm, PyTorch and JAX), a production
recommender's 8 ranks, and file names that carry no time.  Provenance: ``tests/fixtures/wild/PROVENANCE.md``."""

from __future__ import annotations

import json
import re

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.kineto import adapter as kineto_adapter
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"
#: NVIDIA's words that must not reach a user of an AMD GPU (prose of findings and fixes).
NVIDIA_WORDS = re.compile(r"Tensor Core|cuDNN|cuBLAS|\bCUDA\b|NVIDIA|\bsm\d|\bNCCL\b|nvidia-smi")


def _report(run: str):
    (s,) = [s for s in discover(str(WILD)) if s.run == run]
    return s, session_report(s).to_dict()


def _prose(rep: dict) -> str:
    return json.dumps([[f["title"], f["summary"], [a["text"] for a in f["actions"]]] for f in rep["findings"]])


def _kernels(rep: dict) -> list[dict]:
    k = rep["hosts"][0]["kernels"]
    return [dict(zip(k["columns"], r)) for r in k["rows"]]


@pytest.mark.parametrize("run,arch", [("amd_mi250", "gfx90a"), ("amd_mi300x", "gfx942"), ("jax_mi300x", "gfx942")])
def test_amd_gpus_are_named_by_their_architecture_and_spoken_of_in_rocm_words(run, arch):
    """ROCm's 9.4 is gfx942, not a CUDA generation; no finding says Tensor Cores, cuDNN or CUDA on an AMD GPU."""
    _, rep = _report(run)
    gpus = [g for h in rep["hosts"] for g in h["gpus"] if g["kernel_count"]]
    assert gpus and all(g["compute_capability"] == arch for g in gpus), gpus
    assert not NVIDIA_WORDS.findall(_prose(rep)), NVIDIA_WORDS.findall(_prose(rep))


@pytest.mark.parametrize("run", ["amd_mi250", "amd_mi300x"])
def test_tensile_gemms_are_matrix_core_gemms_with_their_input_type(run):
    """hipBLASLt/rocBLAS ``Cijk_*_MI<m>x<n>x<k>`` kernels are MFMA GEMMs; their type letter gives the precision."""
    _, rep = _report(run)
    cijk = [k for k in _kernels(rep) if k["kernel"].startswith("Cijk_")]
    assert cijk and all(k["matrix core eligible"] and k["matrix core"] for k in cijk)  # ROCm's words (issue #36)
    assert all(k["precision"] in ("fp32", "bf16", "fp16") for k in cijk), [k["precision"] for k in cijk]
    assert not [f for f in rep["findings"] if f["rule"] in ("misaligned_dims", "tensor_core_unused")
                and f["severity"] in ("warning", "critical")]


def test_amd_vocabulary_units():
    assert devices.arch_label("AMD Instinct MI300X", "9.4") == "gfx942"
    assert devices.arch_label("AMD Instinct MI355X", "9.5") == "gfx950"
    assert devices.arch_label("AMD Radeon Graphics", "9.0") == "gfx90a"
    assert devices.arch_label("NVIDIA H100 80GB HBM3", "9.0") == "9.0"
    assert devices.words(["AMD Instinct MI300X"], "Tensor Cores via cuDNN") == "Matrix Cores (MFMA) via MIOpen"
    assert devices.words(["NVIDIA A100"], "Tensor Cores") == "Tensor Cores"


@pytest.mark.parametrize("gfx,units", [("gfx900", False), ("gfx906", False), ("gfx90c", False), ("gfx1010", False),
                                       ("gfx1030", False), ("gfx1035", False), ("gfx908", True), ("gfx90a", True),
                                       ("gfx942", True), ("gfx950", True), ("gfx1100", True), ("gfx1151", True),
                                       ("gfx1201", True)])
def test_amd_matrix_units_are_the_architectures_not_every_amd_gpus(gfx, units):
    """MFMA came with CDNA (gfx908), WMMA with RDNA 3 (gfx11): GCN Vega (gfx900-gfx906, the gfx90c APU) and RDNA 1/2
    (gfx10) have no matrix units, whatever ROCm names the board."""
    assert devices.has_matrix_units(f"AMD Radeon Graphics ({gfx})", None) is units


def test_control_an_amd_gpu_of_unrecorded_architecture_keeps_its_instinct_reading():
    assert devices.has_matrix_units("AMD Radeon Graphics", None) is True
    assert devices.has_matrix_units("AMD Instinct MI250X", None) is True


def test_an_rdna2_laptop_gpu_named_only_radeon_graphics_is_read_by_its_gfx_id():
    """rocprofv3's ``agent_info.csv`` names a Ryzen 6800H's Radeon 680M ``AMD Radeon Graphics`` (as ROCm names some
    Instinct boards); its ``Name`` gfx1035 (RDNA 2) says it has no matrix units.  The 16-bit check is quiet for that
    reason, in ROCm's words -- not because the program's fp32 ``mat_mult`` is no library GEMM -- and the report is a
    cold start and one pass, nothing more (survey h37-survey43)."""
    _, rep = _report("hip_matmul_rdna2_igpu")
    (g,) = [g for h in rep["hosts"] for g in h["gpus"] if g["kernel_count"]]
    assert (g["name"], g["compute_capability"]) == ("AMD Radeon Graphics (gfx1035)", "gfx1035")
    (sixteen,) = [x for x in rep["hosts"][0]["headline"] if x["id"] == "sixteen_bit_share"]
    assert sixteen["detail"]["not_flagged"].startswith("no GPU with Matrix Cores"), sixteen["detail"]
    assert not NVIDIA_WORDS.findall(json.dumps(sixteen) + _prose(rep))
    assert [(f["rule"], f["severity"]) for f in rep["findings"]] == [("cold_start", "warning"),
                                                                      ("capture_quality", "warning")]
    assert abs(g["step_ms"] - 5.43) < 0.01  # first H2D copy to the D2H copy's end, read by hand


def _memcpy_finding(run: str) -> dict:
    _, rep = _report(run)
    (f,) = [f for f in rep["findings"] if f["rule"] == "excessive_memcpy"]
    return f


def test_pinned_synchronous_copies_get_the_streams_fix_not_the_pinning_they_do():
    """The course's matmul built for CUDA copies from ``cudaHostAlloc`` buffers with synchronous ``cudaMemcpy``
    (Nsight's ``srcKind`` Pinned): the copies, 282 us of a 0.87 ms pass, are in series with the kernel because the
    calls are synchronous.  Their fix is asynchronous copies on streams, in chunks -- not "copy from pinned host
    memory", which the program does (survey h37-survey43)."""
    f = _memcpy_finding("matmul_rtx3060_laptop_pinned_sync")
    texts = [a["text"] for a in f["actions"]]
    assert "comes from pinned memory already" in f["summary"], f["summary"]
    assert texts[0].startswith("The host buffers are pinned already") and "cudaMemcpyAsync" in texts[0], texts
    assert not any("Copy from pinned host memory" in t for t in texts), texts
    assert "pinned memory and non_blocking" not in json.dumps(f)  # nor does the saving assume the pinning


def test_control_pageable_copies_keep_the_pinning_fix():
    """CloverLeaf's copies are pageable: pinning them is still the fix, and no word says they are pinned."""
    f = _memcpy_finding("cloverleaf_a100_cuda")
    assert f["actions"][0]["text"].startswith("Copy from pinned host memory"), f["actions"][0]["text"]
    assert "pinned memory already" not in f["summary"]


def test_control_one_hugging_face_forward_on_two_vendors_reads_as_one_host_bound_job():
    """TraceLens' BERT-small fill-mask forward (bf16, ``inference_mode``, batch 1) on an MI300X and an H100: 60 kernels
    of a few microseconds in a ~4 ms step, the host's Python and dispatch the critical path on both.  Each is read as
    one inference pass held by the host, its graph fix in its own vendor's words, no kernel-speed warning."""
    for run, graphs in (("amd_mi300x", "HIP graphs"), ("bert_small_h100", "CUDA graphs")):
        _, rep = _report(run)
        job = rep["hosts"][0]["job"]
        assert (job["kind"], job["step_source"]) == ("inference", "profiler_step"), (run, job["kind"])
        top = [f for f in rep["findings"] if f["severity"] == "critical"]
        assert top and {f["rule"] for f in top} <= {"launch_bound", "unexplained_idle"}, (run, top)
        assert any(graphs in a["text"] for f in top for a in f["actions"]), run
        assert not [f for f in rep["findings"] if f["rule"] in ("tensor_core_unused", "mixed_precision_off")
                    and f["severity"] != "info"], run


def test_dlrm_ranks_are_one_job_and_embedding_kernels_are_no_gemms():
    """8 ranks that say so (``distributedInfo`` world 8) are one session; FBGEMM's embedding kernels (templated on
    ``fbgemm_gpu::``) are not 16-bit MatMul/Conv that missed the Tensor Cores (was: critical misaligned_dims)."""
    s, rep = _report("dlrm_v100")
    assert len(s.hosts) == 8 and s.session == "2023_09_07_23_10_01"
    m = host_metrics(kineto_adapter.read_trace(s.hosts[0].path))
    emb = [k for k in m.kernels if "fbgemm" in k.name or "embedding" in k.name]
    assert len(emb) >= 3 and not [k.name for k in emb if k.tc_eligible]
    assert [k for k in m.kernels if k.name.startswith("volta_sgemm") and k.tc_eligible]  # the real GEMMs still are
    assert not [f for f in rep["findings"] if f["rule"] == "misaligned_dims"]


def test_dlrm_value_reads_are_host_syncs_not_a_round_trip_of_the_data():
    """Issue #18 class 5 on the real DLRM ranks: the host reads 24 bytes back (lengths for the next launch) and,
    seconds of launches and syncs later, builds 64-byte tensors on the host.  That is a host waiting for values
    (host_sync), not the step's data computed on the host: no 'computation leaves the GPU' round trip (was: a
    critical one, 3.4 ms of 'host work' per step on worker7, with .item() advice), and the sync check counts the
    reads (issue #37: only the reads -- the pageable copies' own waits are the copies', tests/crosscheck/test_waits_real.py)."""
    _, rep = _report("dlrm_v100")
    rules = {f["rule"] for f in rep["findings"]}
    assert "host_op_placement" not in rules
    for h in rep["hosts"]:
        m = host_metrics(kineto_adapter.read_trace(h["path"]))
        assert m.round_trip.steps_with == 0 and m.round_trip.idle_ms_per_step == 0.0
        # the reads named by the op the program called (``aten::to`` around the ``aten::copy_``, h37-probe44s)
        assert m.syncs.calls_per_step >= 1 and "aten::to" in dict(m.syncs.callers)


def test_a_pid_in_the_file_name_is_no_time():
    """``rank-0.Apr_03_18_51_38.1102``: 1102 is a pid; the trace's own clock names the session, never 1970."""
    (s,) = [s for s in discover(str(WILD)) if s.run == "hta_v100"]
    assert s.session.startswith("2024_04_0"), s.session


def test_two_runs_of_one_real_script_are_two_captures(tmp_path):
    """The held-back case, rebuilt from a real single-GPU trace: the same script run twice into one run folder
    (two ``<host>_<pid>`` files a minute apart, each on GPU 0, no ``distributedInfo``).  Two sessions of one GPU
    each, newest first -- never one host with two GPUs whose steps run one after another."""
    import shutil

    real = sorted((WILD / "hta_v100").glob("*.pt.trace.json.gz"))[0]
    run = tmp_path / "run"
    run.mkdir()
    t0 = 1_712_195_495_000_000_000  # ns, the capture's own day
    shutil.copyfile(real, run / f"node7_1102.{t0}.pt.trace.json.gz")
    shutil.copyfile(real, run / f"node7_1893.{t0 + 60_000_000_000}.pt.trace.json.gz")
    sessions = discover(str(tmp_path))
    assert len(sessions) == 2 and [len(s.hosts) for s in sessions] == [1, 1]
    assert sessions[0].hosts[0].host == "node7_1893" and not sessions[0].hosts[0].ranks
    rep = analyze_session(sessions[0].run, sessions[0].session, sessions[0].hosts).to_dict()
    assert len([g for g in rep["hosts"][0]["gpus"] if g["kernel_count"]]) == 1
    assert not [f for f in rep["findings"] if f["rule"] in ("sequential_gpus", "gpu_imbalance", "launch_skew")]
