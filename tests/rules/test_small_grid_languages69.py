"""``small_grid``'s fix for a program's own kernel speaks the language the kernel was written in (issue #37, h37-native69).

Wrong assumption: *a kernel a program launches itself is CUDA C++*.  GDhir/GPUMATVEC's Julia CUDA.jl capture
(``Reports/report1.sqlite``, SURVEY hunt69b; no licence, so read, not kept) runs one kernel of its own,
``performGPUMATVEC_version1(CuDeviceArray<Float32,...>)``, 4 blocks x 256 threads on a 20-SM RTX 3050 Ti Laptop: the
finding was right, its fix was ``k<<<num_sms * 4, 256>>>`` and "grid = ceil(n / threads per block)" -- the very
sizing that gave 4 blocks, one thread per element.  Now the kernel's full name shows its language
(``frameworks.kernel_code``: Julia, Numba, Kokkos, OpenMP offload) and the fix is told in it, saying what to do where
the grid is data-limited (smaller blocks, more threads per element, more work at once); a C/C++ kernel keeps the
vendor's CUDA fix, which now says the same.

Truth by construction: ``synthetic.nsysexport.write_one_kernel_program`` (that capture's layout: driver-API calls,
``cuProfilerStart``/``Stop``, one launch, its GPU's 20 SMs).
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.devices import nvidia
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Finding
from tests.support.report_store import session_report

_CPP = "k<<<num_sms * 4, 256>>>"


def _small_grid(tmp_path, name: str) -> Finding:
    truth = nx.write_one_kernel_program(str(tmp_path / "run.sqlite"), name=name)
    (s,) = discover(str(tmp_path))
    (f,) = [f for h in session_report(s).hosts for f in h.findings if f.rule == "small_grid"]
    assert [r[1] for r in f.evidence[0].rows] == [truth["blocks"]]  # the finding itself was right on base
    return f


@pytest.mark.parametrize("name, code", [
    (nx.JULIA_MATVEC, "julia"),
    ("julia_broadcast(CuKernelContext, CuDeviceArray<Float32, int=3, Global>, Broadcasted<void>)", "julia"),
    ("cudapy::__main__::reduce_kernel[abi:v1,cw51cXTLSUwv1sCUt9Uw11Ew0NRRQPKzLTg4gaGKFsG2oMQGEYakJSQB1PQB]", "numba"),
    ("void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<Functor, Kokkos::RangePolicy<>>>",
     "kokkos"),
    ("nvkernel_main_F1L88_2", "nvhpc"),
    ("add(int, float *, float *)", ""), ("linear_layer_kernel(float const*, float const*, float*, int, int, int)", ""),
    ("ampere_sgemm_32x32_sliced1x4_nn", "")])
def test_a_kernels_language_by_its_name(name, code):
    """Names as upstream shows them (SURVEY hunt69b's export; a ``CUDA.@profile`` table; nsys summaries of Numba
    programs; Kokkos's launch template; nvc's ``-Minfo=mp``); C/C++ kernels and libraries' show none."""
    assert frameworks.kernel_code_id(name) == code


def test_a_julia_kernel_is_told_in_julia(tmp_path):
    """The GPUMATVEC layout: the fix is CUDA.jl's launch configuration, with the data-limited case (base: CUDA C++)."""
    f = _small_grid(tmp_path, nx.JULIA_MATVEC)
    said = " ".join(a.text + (a.snippet or "") for a in f.actions)
    assert "CUDA.jl" in said and "launch_configuration" in said, said  # base: absent
    assert _CPP not in said and nvidia.FIXES["more_blocks"] not in f.actions, said  # base: the C++ launch
    assert "a bigger grid only adds idle threads" in said, said


def test_a_c_kernel_keeps_cudas_fix_and_its_data_limited_case(tmp_path):
    """Control: the same launch of a CUDA C kernel keeps the vendor's fix, which now says what to do where one thread
    per element is what leaves the grid under the SMs (base: only "grid = ceil(n / threads per block)")."""
    f = _small_grid(tmp_path, "matvec(float const*, float const*, float*, int)")
    assert nvidia.FIXES["more_blocks"] in f.actions
    assert "a bigger grid only adds idle threads" in nvidia.FIXES["more_blocks"].text  # base: absent
