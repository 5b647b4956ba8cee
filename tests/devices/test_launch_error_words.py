"""A refused launch's cause composed from what the export records (h37-ptxarch): ``devices.nvidia.launch_error`` fills
each cause's placeholders with the GPU's architecture and the driver's CUDA version where known, and keeps the
generic words where not."""

from __future__ import annotations

from tb_gpu_advisor.devices import nvidia


def test_every_launch_error_composes_with_and_without_what_the_export_knows():
    for code in nvidia.LAUNCH_ERRORS:
        for args in ((), ((9, 0), "550.54.15", 12040)):
            name, cause = nvidia.launch_error(code, *args)
            assert name == nvidia.LAUNCH_ERRORS[code][0]
            assert "{" not in cause and "}" not in cause and "()" not in cause, (code, cause)


def test_the_architecture_and_cuda_version_named():
    _, cause = nvidia.launch_error(222, (12, 0), None, 12080)
    assert "for this GPU (sm_120)" in cause and "-arch=sm_120" in cause
    assert "than the driver (CUDA 12.8) supports" in cause and "build with CUDA 12.8 or older" in cause
    _, generic = nvidia.launch_error(222)
    assert "-arch=sm_XX" in generic and "than the driver supports" in generic
    assert nvidia.launch_error(700) is None  # a fault, not a refusal


def test_cuda_version_words_read_the_driver_apis_encoding():
    assert nvidia.cuda_version_words(12020) == "12.2"
    assert nvidia.cuda_version_words(11080) == "11.8"
    assert nvidia.cuda_version_words(12090) == "12.9"
    assert nvidia.cuda_version_words(None) == "" and nvidia.cuda_version_words(0) == ""
