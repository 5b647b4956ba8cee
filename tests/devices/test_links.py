"""GPU-to-GPU links by vendor (issue #19): NVLink by NVIDIA generation, Infinity Fabric (xGMI) by AMD architecture.

Why: an MI300X reports compute capability 9.4; read as an NVIDIA major it was "NVLink 4 on H100", CUDA words (and a
wrong bandwidth) on an AMD job.
"""

from __future__ import annotations

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics.job import _link


class _Gpu:
    def __init__(self, name: str, cc: str) -> None:
        self.name, self.compute_capability = name, cc


def test_amd_gpus_talk_over_xgmi_not_nvlink():
    bw, src = devices.link_bandwidth("AMD Instinct MI300X", "9.4")
    assert bw == 448e9 and "Infinity Fabric" in src and "NVLink" not in src
    assert "MI250X" in devices.link_bandwidth("AMD Instinct MI250X", "9.0")[1]
    assert devices.link_bandwidth("AMD Instinct MI100", "9.0") is None  # no entry: nothing assumed


def test_nvidia_generations_and_unknowns():
    assert devices.link_bandwidth("NVIDIA H100 80GB HBM3", "9.0") == (450e9, devices.nvidia.NVLINK_BANDWIDTH[9][1])
    assert devices.link_bandwidth("Tesla V100-SXM2-16GB", "7.0")[0] == 150e9
    assert devices.link_bandwidth("NVIDIA H100 80GB HBM3", None) is None
    assert devices.link_bandwidth("NVIDIA H100 80GB HBM3", "garbage") is None


def test_job_link_is_the_one_kind_of_gpu_it_has():
    assert _link([_Gpu("AMD Instinct MI300X", "9.4")] * 8)[1].startswith("Infinity Fabric")
    assert _link([_Gpu("NVIDIA H100 80GB HBM3", "9.0"), _Gpu("AMD Instinct MI300X", "9.4")]) == (None, "")


def test_nvlink_only_on_the_parts_that_carry_it():
    """Why: by compute-capability major alone an RTX 4090 pair (8.9, PCIe) read "NVLink 3 on A100 (~300 GB/s)",
    an interconnect the job does not have (tugot17's 2-rank DTensor forward, tests/fixtures/wild/tp_rtx4090_two_ranks)."""
    pcie = [("NVIDIA GeForce RTX 4090", "8.9"), ("NVIDIA L4", "8.9"), ("NVIDIA A10", "8.6"),
            ("NVIDIA GeForce RTX 3090", "8.6"), ("Tesla T4", "7.5"), ("NVIDIA GeForce RTX 5090", "12.0"),
            ("NVIDIA A100-PCIE-40GB", "8.0"), ("NVIDIA H100 PCIe", "9.0")]
    for name, cc in pcie:
        assert devices.link_bandwidth(name, cc) is None, name
    assert devices.link_bandwidth("NVIDIA A100-SXM4-80GB", "8.0")[0] == 300e9
    assert devices.link_bandwidth("NVIDIA B200", "10.0")[0] == 900e9
    assert devices.link_bandwidth("NVIDIA H200", "9.0")[0] == 450e9


def test_a_pcie_pair_is_assumed_pcie_and_says_so():
    src = _link([_Gpu("NVIDIA GeForce RTX 4090", "8.9")] * 2)[1]
    assert "NVLink" not in src
