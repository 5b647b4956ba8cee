"""The language a GPU program's own kernels were written in, read off their names: the words of a launch-configuration
fix for a program with no ML framework (``small_grid``'s own kernels).

Why: ``small_grid``'s fix for a kernel the program launches itself was CUDA C++ alone (``k<<<num_sms * 4, 256>>>``),
told to a Julia CUDA.jl program whose kernel Nsight names ``performGPUMATVEC_version1(CuDeviceArray<Float32,...>)``
(GDhir/GPUMATVEC ``Reports/report1.sqlite``, SURVEY hunt69b; read, not kept: no licence).  Each compiler names the
kernels it emits its own way, and that name is the capture's only evidence of the language:

- Julia's CUDA.jl: the arguments' device type ``CuDeviceArray<...>`` (and ``CuKernelContext`` of its broadcasts, the
  ``julia_`` prefix of older GPUCompiler names) -- ``julia_broadcast(CuKernelContext, CuDeviceArray<Float32, int=3,
  Global>, ...)`` in a ``CUDA.@profile`` table, ``knl_copyto_(..., CuDeviceArray<Float32, (int)5, (int)1>>...)`` in
  ClimaCore's docs;
- Numba's ``@cuda.jit``: the ``cudapy::`` namespace (``cudapy::__main__::reduce_kernel[abi:v1,...]`` in nsys's
  kernel summaries, ``_ZN6cudapy`` mangled in Numba's own tests);
- Kokkos: every kernel is ``Kokkos::Impl::cuda_parallel_launch_{local,constant,global}_memory<...>``;
- NVIDIA HPC compilers' OpenMP offload: ``nvkernel_<function>_F<n>L<line>_<n>`` (nvc's ``-Minfo=mp``: "Generating
  "nvkernel_main_F1L88_2" GPU kernel").

A name of none of these -- CUDA C/C++'s own, an extension's -- keeps the vendor's CUDA fix.  What no name shows is
the element count: whether the grid is already one thread per element (``grid = ceil(n / threads)`` giving fewer
blocks than SMs) or the program chose a small grid, so each fix says what to do in both cases.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from tb_gpu_advisor.frameworks.base import action
from tb_gpu_advisor.model.schema import Action

#: Said by every fix below, in its language's terms: a grid that already covers the data is not made bigger.
_DATA_LIMITED = ("Where the grid already gives each element one thread and the data is what leaves it under the "
                 "SMs, a bigger grid only adds idle threads: ")


class KernelCode(NamedTuple):
    """A language (or compiler) of a program's own kernels: how its kernel names show it, and its launch fix."""

    id: str
    name: str
    pattern: re.Pattern[str]
    fix: Action


JULIA = KernelCode("julia", "Julia (CUDA.jl)", re.compile(r"CuDeviceArray<|CuKernelContext|^julia_"), action(
    "For a Julia kernel of your own (CUDA.jl's @cuda): launch at least one block per SM, asking the compiled kernel "
    "for its threads per block (launch_configuration) and the device for its SMs. " + _DATA_LIMITED +
    "launch fewer threads a block (more blocks for the same elements), give each element several threads (its inner "
    "loops split over a block's threads, reduced with shared memory), or launch independent work at once (tasks or "
    "streams, a batch in one launch).",
    "kernel = @cuda launch=false matvec!(y, A, x)\n"
    "threads = min(length(y), launch_configuration(kernel.fun).threads)\n"
    "sms = attribute(device(), CUDA.DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)\n"
    "threads = min(threads, max(32, cld(length(y), sms)))   # at least one block per SM where the data allows\n"
    "kernel(y, A, x; threads, blocks=cld(length(y), threads))", "text"))

NUMBA = KernelCode("numba", "Numba (@cuda.jit)", re.compile(r"cudapy::|_ZN6cudapy"), action(
    "For a Numba kernel of your own (@cuda.jit): launch at least one block per SM "
    "(cuda.get_current_device().MULTIPROCESSOR_COUNT) and loop with cuda.grid / cuda.gridsize so any grid covers the "
    "data. " + _DATA_LIMITED + "launch fewer threads a block, give each element several threads (its inner loop "
    "split over a block, reduced with cuda.shared.array), or launch independent work on other streams.",
    "from numba import cuda\n"
    "@cuda.jit\n"
    "def k(x, y):\n"
    "    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):   # grid-stride loop\n"
    "        y[i] = f(x[i])\n"
    "sms = cuda.get_current_device().MULTIPROCESSOR_COUNT\n"
    "k[sms * 4, 128](x, y)", "python"))

KOKKOS = KernelCode("kokkos", "Kokkos", re.compile(r"Kokkos::Impl::cuda_parallel_launch"), action(
    "For a Kokkos kernel: Kokkos sizes the grid from the policy's iteration count, so a small grid is a small range: "
    "expose more parallelism in one policy -- an MDRangePolicy over nested loops, or a TeamPolicy whose teams split "
    "each element's inner loops (TeamThreadRange, ThreadVectorRange) -- or run independent kernels at once on "
    "execution-space instances (Kokkos::Experimental::partition_space).",
    "Kokkos::parallel_for(Kokkos::TeamPolicy<>(n_elements, Kokkos::AUTO),\n"
    "  KOKKOS_LAMBDA(const Kokkos::TeamPolicy<>::member_type& t) {\n"
    "    const int e = t.league_rank();\n"
    "    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n_inner), [&](int q) { /* element e's inner work */ });\n"
    "  });", "text"))

NVHPC_OFFLOAD = KernelCode("nvhpc", "OpenMP offload (NVIDIA HPC compilers)", re.compile(r"^nvkernel_"), action(
    "For an OpenMP offload region (nvc/nvc++/nvfortran -mp=gpu): the compiler sizes the grid from the loop it "
    "distributes across teams; give it more iterations to spread -- collapse(n) over the nested loops, or "
    "num_teams / thread_limit set so the teams outnumber the SMs (a smaller thread_limit: more teams for the same "
    "iterations) -- or run independent regions at once (nowait, depend).",
    "#pragma omp target teams distribute parallel for collapse(2) thread_limit(64)\n"
    "for (int e = 0; e < n_elements; ++e)\n"
    "  for (int q = 0; q < n_points; ++q)\n"
    "    work(e, q);", "text"))

#: Every language known by its kernels' names, in the order they are tried.
CODES: tuple[KernelCode, ...] = (JULIA, NUMBA, KOKKOS, NVHPC_OFFLOAD)


def of_kernel(name: str) -> KernelCode | None:
    """The language ``name``'s kernel was written in, where its name shows one (else None: CUDA C/C++ or unknown)."""
    return next((c for c in CODES if c.pattern.search(name)), None)


def launch_fix(codes: list[str]) -> Action | None:
    """The launch-configuration fix for the program's own kernels, given the language id each name shows ("" for
    none), where every one shows the same language; None where any shows none or they differ (the vendor's fix,
    CUDA's, then stands)."""
    ids = set(codes)
    return next((c.fix for c in CODES if ids == {c.id}), None)
