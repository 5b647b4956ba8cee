"""A GPU whose name alone says its compute capability (``devices.nvidia.named_cc``) is judged by it where the capture
records the name and no properties (nvprof's printed trace: ``NVIDIA Tegra X1``, a Jetson Nano's Maxwell GPU; survey
h37-wild57n) -- never "the capture does not say whether it has Tensor Cores"."""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices import nvidia


@pytest.mark.parametrize("name,cc,tensor_cores", [
    ("NVIDIA Tegra X1", (5, 3), False), ("NVIDIA Jetson Nano", (5, 3), False), ("NVIDIA Tegra X2", (6, 2), False),
    ("Tesla K80", (3, 7), False), ("Tesla P100-PCIE-16GB", (6, 0), False), ("GeForce GTX 1080 Ti", (6, 1), False),
    ("Jetson AGX Xavier", (7, 2), True), ("NVIDIA Orin", (8, 7), True)])
def test_a_name_says_its_compute_capability(name, cc, tensor_cores):
    assert nvidia.named_cc(name) == cc
    assert devices.has_matrix_units(name, None) is tensor_cores


def test_a_name_sold_under_several_compute_capabilities_says_none():
    """A laptop's ``GTX 980M`` is not the desktop's 980: no compute capability is read off it."""
    assert nvidia.named_cc("NVIDIA GeForce GTX 980M") is None
    assert nvidia.named_cc("NVIDIA GeForce GTX 980") == (5, 2)


def test_control_the_capture_s_compute_capability_wins_and_other_names_stay_unknown():
    """Named control (passes on base too): a recorded compute capability is the capture's word; a name that says
    nothing stays unknown."""
    assert devices.has_matrix_units("NVIDIA Tegra X1", (7, 0)) is True
    assert devices.has_matrix_units("Some GPU", None) is None
