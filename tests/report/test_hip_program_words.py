"""A HIP program with no ML framework, captured by ROCm's tracers, is told ROCm's tools and calls in its fixes' code as
in their words (h37-rocsteps): the native framework's fixes are Nsight's and CUDA's, and on an AMD GPU only their
prose was translated (``devices.words``: "NVTX ranges" -> "roctx ranges") -- the code kept ``nsys profile -t
cuda,nvtx,osrt``, and a GEMM fix named ``cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH)`` "(Ampere and
newer)".  Now ``devices/amd.PROGRAM_FIXES`` (rocprofv3 and roctx, HIP's managed-memory calls, 16-bit GEMMs) stand in
for those keys (``frameworks.native.for_vendor``).  The captures are generated: truth by construction (a HIP loop,
an MI300X or a GPU rocmProfileData does not name)."""

from __future__ import annotations

import re
import types
from pathlib import Path

from synthetic import rocproftrace, rpdtrace
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.devices import amd, nvidia, vendor_code
from tb_gpu_advisor.devices.codes import replace_each
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Report
from tests.support.contradictions import _CUDA_TOOLS, vendor_words_problems
from tests.support.report_store import session_report

#: an fp32 GEMM and an element-wise kernel, as a HIP program's own loop launches them
LOOP = [("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0)]


def analyse(path: Path) -> Report:
    """The one session's report of the capture written in ``path``, analysed in this process."""
    (s,) = discover(str(path))
    return session_report(s)


def _problems(path: Path) -> list[str]:
    report = analyse(path)
    assert report.hosts and report.hosts[0].capture["vendor"] == "AMD"
    return vendor_words_problems(report)


def test_an_rpd_hip_loops_host_fix_records_roctx_with_rocprofv3(tmp_path: Path) -> None:
    """rocmProfileData, 8 bursts 3 ms apart that the host's recorded calls do not fill: the fix that records the
    host's own code ran ``nsys profile -t cuda,nvtx,osrt`` (main); now rocprofv3's marker trace."""
    rpdtrace.write(str(tmp_path / "trace.rpd"), [LOOP] * 8, gap_ms=3.0)
    report = analyse(tmp_path)
    gaps = [f for f in report.hosts[0].findings if f.rule == "step_gaps"]
    assert gaps, [f.rule for f in report.hosts[0].findings]
    code = "\n".join(a.snippet or "" for f in gaps for a in f.actions)
    assert "rocprofv3 --runtime-trace --marker-trace" in code, code
    assert not vendor_words_problems(report)


def test_a_rocprof_hip_loops_gemm_fix_names_no_cuda_switch(tmp_path: Path) -> None:
    """rocprof's trace of one pass of an fp32 GEMM on an MI300X: the Matrix-Core fix named cuBLAS' TF32 mode and
    NVIDIA's generations (main); now a 16-bit GEMM through ROCm's libraries."""
    rocproftrace.write(str(tmp_path / "results.json"), [LOOP], step_range=None, step_sync=None)
    assert not _problems(tmp_path)


def test_every_native_fix_on_an_amd_gpu_is_free_of_cudas_tools() -> None:
    """Every fix a GPU program with no ML framework can be given on an AMD GPU -- the capture advice, each rule's and
    each variant's -- holds none of CUDA's own tools or calls, its words as a finding puts them (``Ctx.words``) and its
    code as a finding puts it (``Ctx.code`` -> ``devices.vendor_code``); on an NVIDIA GPU the framework is CUDA's,
    unchanged.  Main read the code through ``amd.words`` here, which no finding does: the pinned allocator's fix
    (h37-hostalloc32) said ``cudaHostAlloc(&h_buf, max_bytes, cudaHostAllocDefault)`` below ``hipHostMalloc``
    (h37-hipcode34: main ``['cudaFreeHost', 'cudaHostAlloc', 'cudaHostAllocDefault', 'cudaMemcpyAsync']``)."""
    fw = frameworks.for_vendor("native", amd)
    said = [vendor_code(amd, fw.capture_snippet)] + [t for acts in fw.fixes.values() for a in acts
                                                    for t in (amd.words(a.text), vendor_code(amd, a.snippet or ""))]
    bad = sorted({m.group(0) for t in said for m in _CUDA_TOOLS.finditer(t)})
    assert not bad, bad
    assert frameworks.for_vendor("native", nvidia) is frameworks.get("native")


def test_a_hip_programs_pinned_fix_calls_hip_in_its_code_as_in_its_words() -> None:
    """The pinned allocator's fix on an AMD GPU: one call named in its words and its code (``amd.CALLS``, one table),
    HIP's own names -- ``hipHostMalloc`` with its flag ``hipHostMallocDefault``, ``hipHostFree`` -- and the CUDA
    fix unchanged on an NVIDIA GPU (main: the code kept ``cudaHostAlloc`` / ``cudaFreeHost``)."""
    (cuda,) = frameworks.get("native").fixes["allocator_churn:pinned"]
    (fix,) = frameworks.for_vendor("native", amd).fixes["allocator_churn:pinned"]
    text, code = amd.words(fix.text), vendor_code(amd, fix.snippet)
    assert "hipHostMalloc(&h_buf, max_bytes, hipHostMallocDefault);" in code and "hipHostFree(h_buf);" in code, code
    assert "hipHostMalloc" in text and "hipHostFree" in text and "cuda" not in text + code
    assert vendor_code(nvidia, cuda.snippet) == cuda.snippet and "cudaHostAlloc(&h_buf" in cuda.snippet


def test_a_hip_programs_copy_fixes_are_cudas_in_hips_names() -> None:
    """The chunked-copy and managed-memory fixes of a HIP program were hand copies of CUDA's with HIP's names
    (``devices/amd.PROGRAM_FIXES``): now CUDA's own fix, put in HIP's names by the one calls table, word for word what
    the copies said (``hipStream_t``, ``hipMemPrefetchAsync(..., hipCpuDeviceId, ...)``)."""
    for key, said in (("excessive_memcpy:pinned_sync", "hipStream_t s = streams[c % nstreams];"),
                      ("excessive_memcpy:managed", "hipMemPrefetchAsync(y, n * sizeof(float), hipCpuDeviceId, stream)")):
        assert key not in amd.PROGRAM_FIXES
        (fix,) = frameworks.for_vendor("native", amd).fixes[key]
        code = vendor_code(amd, fix.snippet)
        assert said in code and not _CUDA_TOOLS.search(code + amd.words(fix.text)), code


def test_the_fill_fix_is_one_text_in_each_vendors_words() -> None:
    """The memset fill fix (h37-survey58) was written twice -- CUDA's in ``frameworks/native.FIXES``, a near-copy with
    HIP's calls in ``devices/amd.PROGRAM_FIXES`` -- so a third vendor meant a third copy (h37-fill30).  Now the fix is
    one text that a vendor's words table puts in its calls: AMD's reads HIP's, and a vendor with a words row and no
    fixes of its own reads its own call names, not CUDA's."""
    assert "excessive_memcpy:memset" not in amd.PROGRAM_FIXES
    cuda = frameworks.get("native").fixes["excessive_memcpy:memset"]
    (hip,) = frameworks.for_vendor("native", amd).fixes["excessive_memcpy:memset"]
    assert "hipMemsetAsync(d_next" in hip.snippet and "hipMemset" in hip.text and "cuda" not in hip.text + hip.snippet
    third = types.SimpleNamespace(words=lambda text: replace_each(text, (("cudaMemset", "zeMemset"),)))
    (fill,) = frameworks.for_vendor("native", third).fixes["excessive_memcpy:memset"]
    assert "zeMemsetAsync(d_next" in fill.snippet and "cuda" not in fill.text + fill.snippet, fill
    assert frameworks.for_vendor("native", nvidia).fixes["excessive_memcpy:memset"] == cuda


def test_two_cuda_calls_hip_names_alike_are_said_once() -> None:
    """CUDA's two pinned allocators (``cudaHostAlloc``, ``cudaMallocHost``) are both ``hipHostMalloc``: the churn fix
    read "page-locking memory (hipHostMalloc / hipHostMalloc, hipHostRegister)" on an AMD GPU (h37-hipcode34 *Left*
    2).  No native fix in ROCm's words names one call twice as its own alternative; CUDA's text keeps both."""
    fw = frameworks.for_vendor("native", amd)
    said = [amd.words(a.text) for acts in fw.fixes.values() for a in acts]
    assert any("hipHostMalloc" in s for s in said)
    twice = [s for s in said if re.search(r"\b(\w+) / \1\b", s)]
    assert not twice, twice
    cuda = [a.text for acts in frameworks.get("native").fixes.values() for a in acts]
    assert any("cudaHostAlloc / cudaMallocHost" in s for s in cuda)
