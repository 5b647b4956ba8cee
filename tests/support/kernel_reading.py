"""How the report reads one kernel name -- (class, precision, matrix units) -- shared by the kernel-name tests
(``tests/devices/test_kernel_corpus.py`` and the structure tests beside it)."""

from __future__ import annotations

from tb_gpu_advisor import devices, frameworks


def reading(name: str) -> tuple[str, str, bool | str]:
    """(class, precision, matrix units) as the report reads one kernel name: ``metrics.kernels.kernel_stats``'s
    columns (a GEMM by name -- a library's or a compiler's kind -- or on the matrix units, unless positively no GEMM)
    through ``devices.kernel_class``; the matrix units "?" where ``rules._kernels.kernel_mix`` counts the kernel as
    neither using nor missing them (``frameworks.matrix_unit_unknown_one``)."""
    tc = devices.tensor_core_one(name)
    eligible = (frameworks.gemm_kernel_one(name) or tc) and not frameworks.not_gemm_kernel_one(name)
    cls = devices.kernel_class(name, tensor_core=tc, tc_eligible=eligible, elementwise=frameworks.elementwise_one(name),
                               collective=bool(devices.collective([name])[0]), kind=frameworks.kernel_kind_one(name))
    units = tc or ("?" if frameworks.matrix_unit_unknown_one(name) else False)
    return cls, devices.PRECISIONS[devices.precision_one(name)], units
