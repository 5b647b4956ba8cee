"""A GPU program's fp32 GEMMs on a GPU without TF32 are told to run in 16 bit, not to switch cuBLAS to TF32
(hunt70b, issue #37 deliverable 6).

Found on esarmstrong/ece408's nvprof ``timeline.nvprof`` (no licence: read in /tmp, not kept): MXNet's forward pass of
a small CNN (``python m3.1.py 100``) on a TITAN V (Volta, sm 7.0), read as a native program (MXNet names no op);
its two ``volta_sgemm`` kernels fired ``tensor_core_unused`` (info) whose only code fix was
``cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH)`` "(Ampere and newer)" -- a switch Volta lacks.  Cause: the
native framework's main fix for the rule was the TF32 switch, where the rule asks ``devices.has_tf32`` only for the
optional ``tensor_core_unused:tf32`` fix (TensorFlow's and PyTorch's keep that split).  Now the native main fix is the
16-bit GEMM (``cublasGemmEx`` with fp16 inputs, fp32 accumulation) and the TF32 switch its ``:tf32`` extra, offered
only where the GPU has TF32; a HIP program keeps its own Matrix-Core fix and no TF32 switch.

Truth by construction: ``synthetic.nsysexport.write``'s fp32 ``volta_sgemm`` loop, its ``TARGET_INFO_GPU`` row set to
the GPU under test.  The V100 test fails on dbf6cf15; the A100 one is a control (passes on both).
"""

from __future__ import annotations

import json
import sqlite3

from synthetic import nsysexport as nx
from tests.support.cli_report import in_process


def _tc_fixes(tmp_path, name: str, sms: int, chip: str, cc: tuple[int, int]) -> str:
    """The fix text of ``tensor_core_unused`` on a generated fp32 GEMM loop whose one GPU is ``name``."""
    p = tmp_path / f"{chip}.sqlite"
    # a native program: no ATen op range, the user's ``iteration`` range around each step
    nx.write(str(p), nx.NsysJob(steps=10, ops=12, kernel_us=400.0, kernel="volta_sgemm_32x128_nn", h2d_us=200.0,
                                autograd_nvtx=False, step_range="iteration {k}", sync_call="cudaDeviceSynchronize_v3020"))
    con = sqlite3.connect(p)
    con.execute("UPDATE TARGET_INFO_GPU SET name = ?, smCount = ?, chipName = ?, computeMajor = ?, computeMinor = ?",
                (name, sms, chip, *cc))
    con.commit()
    con.close()
    out = in_process("report", str(p), "--format", "json", "--cache-dir", "off")
    (f,) = [f for f in json.loads(out.stdout)["reports"][0]["findings"] if f["rule"] == "tensor_core_unused"]
    return " | ".join(f"{a['text']} {a.get('snippet') or ''}" for a in f["actions"])


def test_fp32_gemms_on_a_volta_gpu_are_told_to_run_in_16_bit_not_tf32(tmp_path):
    """A Tesla V100 (sm 7.0): the fix runs the GEMMs in fp16 with fp32 accumulation; no TF32 switch (base: the TF32
    switch was the only code fix)."""
    fixes = _tc_fixes(tmp_path, "Tesla V100-SXM2-16GB", 80, "GV100", (7, 0))
    assert "TF32" not in fixes and "cublasSetMathMode" not in fixes, fixes
    assert "cublasGemmEx" in fixes and "CUDA_R_16F" in fixes, fixes


def test_control_fp32_gemms_on_an_ampere_gpu_keep_the_tf32_switch_first(tmp_path):
    """Control: an A100 (sm 8.0) has TF32 -- the one-line switch first, the 16-bit GEMM after it."""
    fixes = _tc_fixes(tmp_path, "NVIDIA A100-SXM4-40GB", 108, "GA100", (8, 0))
    assert fixes.index("CUBLAS_TF32_TENSOR_OP_MATH") < fixes.index("cublasGemmEx"), fixes
