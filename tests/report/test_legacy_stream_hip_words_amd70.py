"""The legacy default stream's fix (h37-stream70) to a HIP program is HIP's: its calls, its flag, its compiler's
option (h37-amd70, issue #37: no CUDA words on AMD).

HIP's null stream orders itself with the blocking streams as CUDA's legacy default stream does, and a stream made
with ``hipStreamNonBlocking`` is free of it (the HIP API reference, ``hipStreamCreateWithFlags``); clang's HIP driver
takes the per-thread default stream as ``-fgpu-default-stream=per-thread``.  Main aa007027 (stream70's merge) gave a
native program on an AMD GPU ``cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)`` and "build with nvcc
--default-stream per-thread" (tests/report/test_hip_program_words.py's law failed there: ['cudaStreamCreate',
'cudaStreamCreateWithFlags', 'cudaStreamNonBlocking']); dbf6cf15 had no such fix."""

from __future__ import annotations

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.devices import amd, nvidia, vendor_code


def _fix(vendor) -> tuple[str, str]:  # noqa: ANN001 - a vendor module
    (fix,) = frameworks.for_vendor("native", vendor).fixes["excessive_memcpy:legacy_stream"]
    return (amd.words(fix.text), vendor_code(amd, fix.snippet)) if vendor is amd else (fix.text, fix.snippet)


def test_a_hip_program_s_legacy_stream_fix_is_hip_s() -> None:
    text, code = _fix(amd)
    assert "hipStreamCreateWithFlags(&s, hipStreamNonBlocking)" in text, text
    assert "hipcc -fgpu-default-stream=per-thread" in text, text
    assert "hipStreamCreateWithFlags(&copy_stream, hipStreamNonBlocking);" in code, code
    assert "cuda" not in (text + code).lower() and "nvcc" not in text, (text, code)


def test_control_a_cuda_program_keeps_cuda_s() -> None:
    text, code = _fix(nvidia)
    assert "cudaStreamNonBlocking" in text and "nvcc --default-stream per-thread" in text
    assert "cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking);" in code


def test_the_null_stream_s_words_are_hip_s_on_an_amd_gpu() -> None:
    """The finding's words name the stream the runtime has, as the vendor names it (``TERMS["legacy_stream"]``, asked
    by ``rules.excessive_memcpy._legacy_words``): "HIP's null stream" on AMD, "CUDA's NULL stream" on NVIDIA."""
    said = amd.words(f"the legacy default stream ({amd.TERMS['legacy_stream']}) waits for the work")
    assert "HIP's null stream" in said and "CUDA" not in said, said
    assert nvidia.TERMS["legacy_stream"] == "CUDA's NULL stream"
