"""HIP's launches and copies are PyTorch's dispatch, as CUDA's are (h37-vendor64; session 63's *Left*: "``_DISPATCH``
names no HIP call").

``frameworks.pytorch._DISPATCH`` listed CUDA's launch and copy calls by name (``cudaLaunch``, ``cuLaunch``,
``cudaMemcpy`` ...), so on ROCm a launch the capture records outside every ATen op -- a CUDA-only capture
(``activities=[ProfilerActivity.CUDA]``: no op at all), Triton's own launcher -- was host work, on CUDA the framework's
dispatch.  Truth by construction: the same CUDA-only loop (``write_cuda_only_warming_loop``, ``write_cuda_only_first_call``)
as CUDA's PyTorch and as ROCm's (``as_rocm``) writes it is the same job: its reading must not depend on the runtime's
names.  On base (53f2cbc8) the ROCm form's step-gap saving was 12.209 ms (8 iterations after the first call: 21.003)
where CUDA's is 12.201 (20.998).  The kept ROCm Kineto traces (wild ``amd_mi250``, ``amd_mi300x``,
``cold_mi300x_norm``, ``compiled_mi300x_attn``) launch inside ATen's ops and read the same on both (controls run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.frameworks import pytorch
from tests.support.run_report import one_file_host


@pytest.mark.parametrize("call", ["hipLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel",
                                  "hipGraphLaunch", "hipMemcpyAsync", "hipMemcpy", "hipMemcpyWithStream",
                                  "hipMemsetAsync", "cudaLaunchKernel", "cuLaunchKernel", "cudaMemcpyAsync"])
def test_every_runtimes_launch_and_copy_is_dispatch(call: str) -> None:
    """Each runtime's launch, graph launch, copy and fill (``devices.is_work_call``); base: HIP's none."""
    assert pytorch.is_dispatch(call)


@pytest.mark.parametrize("call", ["hipStreamSynchronize", "hipDeviceSynchronize", "hipMalloc", "hipGetDevicePropertiesR0600",
                                  "cudaStreamSynchronize", "cudaGetDeviceCount"])
def test_control_a_sync_or_query_is_no_dispatch(call: str) -> None:
    """A sync waits and a query asks: neither hands the GPU work (control: base alike)."""
    assert not pytorch.is_dispatch(call)


def _forms(tmp_path: Path, writer: str, **kw: object) -> dict[str, dict]:
    src = tmp_path / "src.json"
    getattr(tt, writer)(str(src), **kw)
    doc = json.loads(src.read_text())
    out = {}
    for form in ("cuda", "rocm"):
        path = tmp_path / form / "node0_4500.1.pt.trace.json"
        path.parent.mkdir()
        path.write_text(json.dumps(tt.as_vendor(json.loads(json.dumps(doc)), form)))
        out[form] = one_file_host(str(path), "kineto")
    return out


def _gap_saving(host: dict) -> float:
    (f,) = [f for f in host["findings"] if f["id"].startswith("step_gaps")]
    return f["saving"]["ms_per_step"]


@pytest.mark.parametrize(("writer", "kw"), [("write_cuda_only_warming_loop", {}),
                                            ("write_cuda_only_first_call", {"calls_after": 8, "pause_ms": 0.05})])
def test_a_cuda_only_capture_reads_alike_on_rocm(tmp_path: Path, writer: str, kw: dict) -> None:
    """The step gaps' saving and the step's ledger of the same CUDA-only loop are the same on either runtime (base:
    ROCm's saving 12.209 / 21.003 ms vs CUDA's 12.201 / 20.998 -- its launches counted as host work)."""
    hosts = _forms(tmp_path, writer, **kw)
    assert _gap_saving(hosts["rocm"]) == pytest.approx(_gap_saving(hosts["cuda"]), abs=1e-4)
    assert hosts["rocm"]["breakdown_ms"] == pytest.approx(hosts["cuda"]["breakdown_ms"], abs=1e-4)
