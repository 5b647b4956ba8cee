"""``metrics.context.by_name``: a per-name classifier's answer, each distinct name classified once per analysis (every
GPU's name table holds mostly the same kernels).  Checked against the classifiers themselves on real kernel names."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.metrics.context import by_name

NAMES = ["volta_sgemm_128x64_nn", "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
         "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", "ncclKernel_AllReduce_RING_LL",
         "Memcpy HtoD (Pageable -> Device)", "fusion_12", "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32", ""]


def test_same_answer_and_each_name_classified_once():
    memo: dict = {}
    seen: list[str] = []

    def counting(names: list[str]) -> np.ndarray:
        seen.extend(names)
        return devices.tensor_core(names)

    rng = np.random.default_rng(3)
    for _ in range(5):  # five GPUs' tables: the same kernels, in other orders, some repeated
        names = [NAMES[i] for i in rng.integers(0, len(NAMES), 12)]
        for fn in (devices.precision, frameworks.elementwise):
            got = by_name(memo, fn, names)
            assert got.dtype == fn(names).dtype and np.array_equal(got, fn(names))
        assert np.array_equal(by_name(memo, counting, names), devices.tensor_core(names))
    assert sorted(seen) == sorted(set(seen))  # never a name twice
    assert by_name(memo, devices.precision, []).size == 0
