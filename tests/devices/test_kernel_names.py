"""Short kernel names (``devices.short_kernel_name``) name the kernel, on names copied from real traces."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.devices import short_kernel_name
from tb_gpu_advisor.formats.kineto import adapter as kineto_adapter
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

#: (name in the trace, its short name): ATen kernels in C++ anonymous namespaces (tests/fixtures/waits/event_sync_a100,
#: tests/fixtures/wild/nsfw_vit_h100), and names without one, unchanged in kind.
NAMES = [
    ("at::cuda::(anonymous namespace)::spin_kernel(long)", "at::cuda::spin_kernel"),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
     "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
     "at::native::vectorized_layer_norm_kernel<…>"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::Half>, "
     "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<c10::Half>, at::detail::Array<char*, 1>)",
     "at::native::vectorized_elementwise_kernel<…>"),
    ("triton_poi_fused_add_cos_sin_0", "triton_poi_fused_add_cos_sin_0"),
]


@pytest.mark.parametrize("name, short", NAMES)
def test_a_short_name_keeps_the_kernels_own_name(name, short):
    assert short_kernel_name(name) == short


def test_the_launch_offenders_of_a_real_trace_are_named_by_their_kernel():
    """HTA's event-sync trace: its one small kernel without an op was the offender "at::cuda::" (issue #36 polish)."""
    path = next((FIXTURES / "waits" / "event_sync_a100").glob("*.pt.trace.json.gz"))
    names = [o.name for o in host_metrics(kineto_adapter.read_trace(str(path))).small_kernels.top]
    assert names and not any(n.endswith("::") for n in names), names
    assert any("spin_kernel" in n for n in names), names
