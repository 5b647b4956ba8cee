"""A memory snapshot whose allocations ran on CUDA's default stream named by its handle -- ``cudaStreamPerThread``
(0x2: a build or program on the per-thread default stream) or ``cudaStreamLegacy`` (0x1) -- is a CUDA (or HIP)
build's, as one on the NULL stream 0 is (issue #37 class 3; h37-stream70's Left 1 on the per-thread default stream).

``formats.snapshot.reader._vendor`` reads a snapshot whose frames name no build and none of whose segments lies on a
CUDA device's default stream as an unnamed build's (h37-wild56m: torch_npu's default stream is a pointer of its own);
it took stream 0 as the only default stream, so a CUDA job on ``cudaStreamPerThread`` (PyTorch's allocator records
the ``cudaStream_t`` handle, 2) read as no CUDA build's, its words made placeholders.  CUDA's ``driver_types.h``:
``#define cudaStreamLegacy ((cudaStream_t)0x1)``, ``#define cudaStreamPerThread ((cudaStream_t)0x2)``; HIP's
``hip_runtime_api.h`` the same for ``hipStreamLegacy`` / ``hipStreamPerThread``.

Truth by construction: ``synthetic.memsnapshot``'s training history recorded Python-only (no frame naming a build),
its stream 0 recorded as the handle.  Control: torch_npu's stream handle stays unnamed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace


def _vendor(tmp_path: Path, stream: int) -> str | None:
    doc = ms.as_recorded(ms.on_stream(ms.training_iterations().doc, stream), stacks="python")
    return read_trace(ms.write(str(tmp_path / "v.pickle"), doc)).snapshot.vendor


@pytest.mark.parametrize("stream", [1, 2], ids=["cudaStreamLegacy", "cudaStreamPerThread"])
def test_a_default_stream_named_by_its_handle_is_cudas(tmp_path: Path, stream: int) -> None:
    """Fails on base: "unnamed"."""
    assert _vendor(tmp_path, stream) != "unnamed"


def test_control_the_null_stream_and_an_npu_handle(tmp_path: Path) -> None:
    """Controls (pass on base): stream 0 is CUDA's; torch_npu's stream handle names no build."""
    assert _vendor(tmp_path, 0) != "unnamed"
    (tmp_path / "npu").mkdir()
    assert _vendor(tmp_path / "npu", ms.NPU_STREAM) == "unnamed"
