"""An Nsight Systems 2020-2021 export names its GPU in tables keyed by ``deviceId`` (h37-survey71).

Those releases write ``TARGET_INFO_GPU`` with ``deviceId`` and the name alone, and CUDA's properties of each
process's devices in ``TARGET_INFO_CUDA_GPU`` (``numMultiprocessors``, ``computeCapabilityMajor`` / ``Minor``,
``globalMemorySize`` -- in MiB in 2020, in bytes in 2021).  The reader looked for ``id`` / ``cuDevice`` /
``cudaId`` keys only, so every export of that era read as one without a GPU model: extra-p/extrap's A100 test capture
(kept as ``wild/extrap_ex_gpu_a100``, BSD-3-Clause) said "GPU model: not in this export" and judged its one-block
kernels against an unknown SM count (a saving of half the pass where filling 108 SMs takes nearly all of it).

Truth by construction (``synthetic.nsysexport.write_legacy_gpu_tables``) and, for the real capture, read by hand
with ``sqlite3`` (``TARGET_INFO_CUDA_GPU``: A100-PCIE-40GB, 108 SMs, cc 8.0, 42,505,273,344 bytes; six
``<<<1, 10>>>`` kernels, 14.4 ms of the 17.6 ms from the first launch to the last call).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.nsysexport import write_legacy_gpu_tables
from tb_gpu_advisor.formats.nsys import reader
from tests.support.cli_report import first_report

EXTRAP = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "extrap_ex_gpu_a100"


def _gpu(path: Path):
    t = reader.read_trace(str(path))
    (d,) = t.devices
    return d.info, t.notes


@pytest.mark.parametrize("layout", ["2021", "2020"])
def test_an_older_exports_gpu_is_read_from_its_cuda_gpu_table(tmp_path, layout):
    """Name, SM count, compute capability and memory come from ``TARGET_INFO_CUDA_GPU`` (memory in MiB in 2020);
    no "GPU model: not in this export" note."""
    truth = write_legacy_gpu_tables(str(tmp_path / "ex.sqlite"), layout=layout)
    info, notes = _gpu(tmp_path / "ex.sqlite")
    assert info.name == truth["name"]
    assert info.sm_count == truth["sm_count"]
    assert info.compute_capability == truth["compute_capability"]
    assert info.memory_bytes == truth["memory_bytes"]
    assert not any("GPU model: not in this export" in n for n in notes)


def test_without_the_cuda_gpu_table_the_older_gpu_tables_name_is_read(tmp_path):
    """Only ``TARGET_INFO_GPU`` (``deviceId``, name): the name is read, nothing the table does not hold."""
    truth = write_legacy_gpu_tables(str(tmp_path / "ex.sqlite"), properties=False)
    info, notes = _gpu(tmp_path / "ex.sqlite")
    assert info.name == truth["name"] and info.sm_count is None and info.compute_capability is None
    assert not any("GPU model: not in this export" in n for n in notes)


def test_control_todays_gpu_table_reads_the_same(tmp_path):
    """Control: the same program with today's ``TARGET_INFO_GPU`` gives the same GPU (passes before and after)."""
    truth = write_legacy_gpu_tables(str(tmp_path / "ex.sqlite"), layout="current")
    info, _ = _gpu(tmp_path / "ex.sqlite")
    assert (info.name, info.sm_count, info.compute_capability, info.memory_bytes) == (
        truth["name"], truth["sm_count"], truth["compute_capability"], truth["memory_bytes"])


def test_extrap_a100_capture_names_its_gpu_and_judges_its_grids_by_its_sms():
    """The real capture: the GPU is the A100 its tables name (108 SMs, from the trace), and the one-block kernels'
    saving is measured against 108 SMs -- nearly all of their 14.4 ms (main: "the GPU's number of SMs is unknown",
    7.21 ms, half of it)."""
    export = next(EXTRAP.glob("*.sqlite"))
    info, notes = _gpu(export)
    assert (info.name, info.sm_count, info.compute_capability) == ("A100-PCIE-40GB", 108, (8, 0))
    assert not any("GPU model: not in this export" in n for n in notes)
    grid = next(f for f in first_report(EXTRAP)["findings"] if f["rule"] == "small_grid")
    detail = grid["metric"]["detail"]
    assert detail["sm_count"] == {"0": 108} and detail["sm_source"] == {"0": "the trace"}
    kernel_ms = 14.4  # by hand: six <<<1, 10>>> kernels, 0.65 + 0.65 + 3.39 + 3.38 + 3.20 + 3.19 ms
    assert grid["saving"]["ms_per_step"] == pytest.approx(kernel_ms * (1 - 1 / 108), rel=0.05)


def test_a_refused_launchs_cause_knows_an_older_exports_compute_capability(tmp_path):
    """The compute capability a refused launch's cause names (``reader._launch_target``) is read from
    ``TARGET_INFO_CUDA_GPU`` too (main: None, so a refusal for the GPU's architecture kept the generic words)."""
    import sqlite3

    from tb_gpu_advisor.formats.nsys import tables

    truth = write_legacy_gpu_tables(str(tmp_path / "ex.sqlite"))
    con = sqlite3.connect(tmp_path / "ex.sqlite")
    try:
        assert reader._launch_target(tables.Schema(con))[0] == truth["compute_capability"]
    finally:
        con.close()
