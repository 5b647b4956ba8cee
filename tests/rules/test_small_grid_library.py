"""``small_grid``'s vendor fix fits whose kernels they are (issue #37, h37-words32).

Wrong assumption: *a kernel launched with too few blocks is one the program launches itself*.  The vendor's fix
("For a kernel of your own (CUDA C++, an extension): launch at least one thread block per SM ...") was the one fix
told beside every small-grid table, cuBLAS's and rocBLAS's kernels among them -- kernels whose grid the library picks
from the shapes of the call, which no user relaunches.  Now a library's kernels (``devices.library_kernel_one``, from
the vendors' kernel families) get the library's fix (what reaches the library: bigger calls, batched calls, fusion),
a kernel of the program's own (Triton, its CUDA/HIP/SYCL) the grid's; a table of both gets both.

Truth by construction: ``synthetic.torchtrace``'s ``small_grid`` (a CUDA extension's 4-block scan) and
``small_grid_library`` (the same 4-block kernel, cuBLAS's gemv) on an H100; real: the kept
``wild/xdit_flux_mi300x_denoise`` (rocBLAS/hipBLASLt's Tensile ``Cijk_`` GEMMs beside a Triton kernel, read off the
table; the SD3.5 denoise held this case until h37-idle64 capped its small grids' saving by its host-bound pass), ``wild/hf_qwen_h100`` (cuBLAS's ``sm90_xmma_gemm`` beside ATen's own kernels) and
``wild/mpi_saxpy_a100_rank0`` (the program's own ``saxpy`` alone).
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import devices
from tb_gpu_advisor.devices import amd, nvidia
from tb_gpu_advisor.model.schema import Finding, Report
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

_OWN = "For a kernel of your own"
_LIBRARY = "For a library's kernels"


def _small_grid(r: Report) -> Finding:
    (f,) = [f for h in r.hosts for f in h.findings if f.rule == "small_grid"]
    return f


def _texts(f: Finding) -> str:
    return " ".join(a.text for a in f.actions)


@pytest.mark.parametrize("name", ["ampere_sgemm_32x32_sliced1x4_nn", "gemv2T_kernel_val<…>",
                                  "Cijk_Ailk_Bljk_HHS_BH_MT64x64x32_MI16x16x16", "cudnn_infer_volta_scudnn_128x128",
                                  "void cub::DeviceReduceSingleTileKernel<float>", "gemm_fusion_dot_1"])
def test_library_kernels_by_their_families(name):
    assert devices.library_kernel_one(name)


@pytest.mark.parametrize("name", ["scan_kernel(float const*, float*, int)", "saxpy", "triton_poi_fused_add_0",
                                  "_attn_fwd", "matmul_kernel"])
def test_the_programs_own_kernels_are_no_librarys(name):
    """A CUDA extension's, an MPI program's, Inductor's and a user's Triton kernels: their grid is the caller's."""
    assert not devices.library_kernel_one(name)


def test_a_librarys_small_grid_is_told_through_its_calls(tmp_path):
    """Generated: cuBLAS's 4-block gemv on 132 SMs.  The finding keeps its bound; its vendor fix is the library's, not
    "launch at least one thread block per SM" (main: the own-kernel fix alone)."""
    tt.write_run(str(tmp_path), "small_grid_library")
    f = _small_grid(run_report(tmp_path, "small_grid_library"))
    said = _texts(f)
    assert _LIBRARY in said, said  # main: absent
    assert _OWN not in said, said  # main: "For a kernel of your own (CUDA C++, an extension): ..."
    assert nvidia.FIXES["library_blocks"] in f.actions


def test_a_kernel_of_the_programs_own_keeps_the_grid_fix(tmp_path):
    """Control: the CUDA extension's own 4-block scan keeps the grid fix, and no library's."""
    tt.write_run(str(tmp_path), "small_grid")
    f = _small_grid(run_report(tmp_path, "small_grid"))
    said = _texts(f)
    assert _OWN in said and _LIBRARY not in said, said


@pytest.mark.parametrize("run, vendor, library, own", [("xdit_flux_mi300x_denoise", amd, True, True),
                                                       ("hf_qwen_h100", nvidia, True, True),
                                                       ("mpi_saxpy_a100_rank0", nvidia, False, True)])
def test_real_tables_get_the_fixes_of_whose_kernels_they_hold(run, vendor, library, own):
    """Real: xdit_flux_mi300x_denoise's table is Tensile GEMMs (rocBLAS/hipBLASLt, ``Cijk_``) beside a Triton
    ``attn_fwd`` and ATen's reduce: ROCm's library fix and the grid fix (main: the grid fix alone); hf_qwen_h100's
    (cuBLAS's ``sm90_xmma_gemm`` beside ATen's and CUTLASS's kernels) likewise on NVIDIA; an MPI program's own
    ``saxpy`` keeps the grid fix alone (control)."""
    f = _small_grid(run_report(FIXTURES / "wild", run))
    names = [str(row[0]) for row in f.evidence[0].rows]
    assert any(map(devices.library_kernel_one, names)) == library, names
    assert (vendor.FIXES["library_blocks"] in f.actions) == library  # main: never
    assert (vendor.FIXES["more_blocks"] in f.actions) == own
