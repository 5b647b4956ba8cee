"""Which host calls copy memory, and whether synchronously, is the devices' knowledge, read by every reader alike.

The Kineto and Nsight readers each kept a copy of it; a copy's call decides whether the host blocked on it
(``excessive_memcpy``'s synchronous copies).  The names are CUDA's runtime and driver API
(``cudaMemcpy``/``cudaMemcpyAsync``, ``cuMemcpyHtoD_v2``/``cuMemcpyHtoDAsync_v2``, ``cudaMemset``/``cudaMemsetAsync``).
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices


@pytest.mark.parametrize("name, sync", [
    ("cudaMemcpy", 1), ("cudaMemcpyAsync", 0), ("cudaMemcpy2DAsync", 0), ("cudaMemset", 1), ("cudaMemsetAsync", 0),
    ("cuMemcpyHtoD_v2", 1), ("cuMemcpyHtoDAsync_v2", 0), ("cuMemsetD32Async", 0),
    ("cudaLaunchKernel", -1), ("cudaStreamSynchronize", -1), ("aten::copy_", -1), ("Memcpy HtoD (Pinned -> Device)", -1),
])
def test_a_copy_call_says_whether_it_blocks(name: str, sync: int):
    assert devices.copy_call_sync(name) == sync


def test_every_copy_call_blocks_the_host_unless_asynchronous():
    """The copy calls are among the blocking calls (``is_blocking_call``): one list, two questions."""
    for name in devices.nvidia.COPY_CALLS:
        assert devices.is_blocking_call(name) and devices.copy_call_sync(name) == 1
        assert devices.copy_call_sync(name + "Async") == 0


@pytest.mark.parametrize("name, sync", [
    ("hipMemcpyWithStream", 1), ("hipMemcpy", 1), ("hipMemcpyDtoH", 1), ("hipMemset", 1),
    ("hipMemcpyAsync", 0), ("hipMemcpyHtoDAsync", 0), ("hipMemsetAsync", 0), ("hipMemcpyPeerAsync", 0),
    ("hipLaunchKernel", -1), ("hipStreamSynchronize", -1), ("hipblasLtMatmul", -1),
])
def test_a_hip_copy_call_says_whether_it_blocks(name: str, sync: int):
    """HIP's copy calls, as CUDA's (h37-rpd): main answered -1 for every one ("not told apart yet"), so the ROCm
    traces' ``hipMemcpyWithStream`` reads (an ``.item()``, vLLM's sampler) and rocmProfileData's 2 GB upload were
    copies of unknown kind, never synchronous."""
    assert devices.copy_call_sync(name) == sync


def test_the_runtime_of_a_window_is_named_by_its_calls():
    """A window with no GPU record names no GPU; its calls still say whose runtime ran (``devices.vendor_of_calls``):
    HIP's calls are AMD's words, CUDA's (runtime or driver) NVIDIA's, a mixture or nothing the default."""
    from tb_gpu_advisor import devices

    assert devices.vendor_of_calls(["hipModuleLoadData", "hipDeviceSynchronize"]).TERMS["runtime"] == "HIP"
    assert devices.vendor_of_calls(["cudaFree", "cuLibraryLoadData"]).TERMS["runtime"] == "CUDA"
    assert devices.vendor_of_calls(["urEnqueueKernelLaunch"]).VENDOR == "Intel"
    assert devices.vendor_of_calls(["hipFree", "cudaFree"]).VENDOR == "NVIDIA"
    assert devices.vendor_of_calls(["cumsum", "hipster"]).VENDOR == "NVIDIA"  # not calls: no prefix + capital
