"""A folder of a counter tool's output is named as a counter collection, with the vendor's tracing command -- never "no
GPU profiles found" with TensorFlow/JAX/PyTorch capture help (survey h37-countercoll, issue #37 class 1).

Real files (iree-org/aster ``workloads.zip`` and ``.rocprofv3.zip``, Apache-2.0; ``tests/fixtures/foreign/PROVENANCE.md``):
``rocprof_compute_mi300x/MI300X_A1`` is rocprof-compute's profile mode of one MI300X benchmark (``pmc_perf.csv``: 5
dispatches of ``nanobench_global_load``, counters as columns; ``profiling_config.yaml``; ``sysinfo.csv``), and
``rocprofv3_counters_mi300x/.rocprofv3`` holds one of rocprofv3's counter buffers of the same runs.  Main said "no GPU
profiles found" of both folders, then how to capture in TensorFlow, JAX and PyTorch; given ``pmc_perf.csv`` alone, "not
a profile this tool reads".  Nsight Compute's ``.ncu-rep`` is built by its documented name (no public one kept).
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import counter_collections, discover
from tb_gpu_advisor.formats.counters import collection
from tests.support.paths import FIXTURES

COMPUTE = FIXTURES / "foreign" / "rocprof_compute_mi300x"
BUFFERS = FIXTURES / "foreign" / "rocprofv3_counters_mi300x"
#: Words of another vendor's tools, or of the frameworks' capture help, that no AMD counter user should be told.
CUDA_WORDS = re.compile(r"\bnsys\b|Nsight|CUDA|ncu\b", re.I)
FRAMEWORK_HELP = re.compile(r"TensorFlow|JAX|torch\.profiler|xplane", re.I)


def _error(target: Path, capsys) -> str:
    assert cli(["report", str(target), "--cache-dir", "off"]) == 2  # nothing to analyse: the same code as before
    return capsys.readouterr().err


def test_a_rocprof_compute_workload_is_named_with_rocprofv3s_timeline_command(capsys):
    rows = list(csv.DictReader((COMPUTE / "MI300X_A1" / "pmc_perf.csv").open()))
    assert len(rows) == 5 and {r["Kernel_Name"] for r in rows} == {"nanobench_global_load"}  # counters per dispatch
    assert discover(str(COMPUTE)) == []
    err = _error(COMPUTE, capsys)
    assert "no GPU profiles found" not in err and not FRAMEWORK_HELP.search(err)
    assert "'MI300X_A1' holds a counter collection of rocprof-compute" in err and "pmc_perf.csv" in err
    assert "rocprofv3 --runtime-trace --output-format rocpd" in err and "reads timelines" in err
    assert not CUDA_WORDS.search(err)  # an AMD tool's folder gets AMD's words only


def test_pmc_perf_given_alone_names_its_collection(capsys):
    err = _error(COMPUTE / "MI300X_A1" / "pmc_perf.csv", capsys)
    assert "not a profile this tool reads" not in err
    assert "rocprof-compute" in err and "rocprofv3 --runtime-trace" in err and not CUDA_WORDS.search(err)


def test_rocprofv3_counter_buffers_are_a_counter_collection(capsys):
    err = _error(BUFFERS, capsys)
    assert "no GPU profiles found" not in err and not FRAMEWORK_HELP.search(err)
    assert "'.rocprofv3' holds a counter collection of rocprofv3 --pmc" in err
    assert "3549552-3552447-counter_values.dat" in err and "rocprofv3 --runtime-trace" in err
    assert not CUDA_WORDS.search(err)


def test_an_nsight_compute_report_points_to_nsight_systems(tmp_path: Path, capsys):
    (tmp_path / "gemm.ncu-rep").write_bytes(b"\x00" * 64)  # ``ncu -o gemm``'s name; its content is never opened
    err = _error(tmp_path, capsys)
    assert "the logdir holds a counter collection of Nsight Compute" in err and "gemm.ncu-rep" in err
    assert "nsys profile -t cuda,nvtx" in err and "rocprofv3" not in err and not FRAMEWORK_HELP.search(err)


def test_rocprofv3_counter_collection_csv_is_named(tmp_path: Path, capsys):
    """``rocprofv3 --pmc ... --output-format csv`` writes ``<pid>_counter_collection.csv`` beside
    ``<pid>_agent_info.csv``; the agent info is rocprofv3's but no capture alone, so main listed nothing."""
    (tmp_path / "4242_counter_collection.csv").write_text("Correlation_Id,Dispatch_Id,Counter_Name,Counter_Value\n")
    (tmp_path / "4242_agent_info.csv").write_text("Node_Id,Logical_Node_Id,Agent_Type\n0,0,CPU\n")
    err = _error(tmp_path, capsys)
    assert "4242_counter_collection.csv" in err and "rocprofv3 --pmc" in err and "no GPU profiles found" not in err


@pytest.mark.parametrize("names", [["pmc_perf.csv"],  # rocprof-compute's name alone, without its config or sysinfo
                                   ["profiling_config.yaml", "sysinfo.csv"], ["metrics.csv", "counters.yaml"],
                                   ["results.ncu-rep.txt"], ["counter_values.dat"]])
def test_control_other_folders_are_no_counter_collection(names: list[str]):
    assert collection(names) is None


def test_control_a_timeline_beside_counters_is_read_and_nothing_is_said(tmp_path: Path):
    """A folder that holds a timeline is analysed as before: the counter folder beside it changes nothing listed."""
    shutil.copytree(COMPUTE, tmp_path / "counters")
    run = tmp_path / "trace"
    shutil.copytree(FIXTURES / "foreign" / "nsys_a100_saxpy_mpi", run)
    assert [s.run for s in discover(str(tmp_path))] == ["trace"]
    assert [rel for rel, _ in counter_collections(str(tmp_path))] == ["counters/MI300X_A1"]


def test_control_an_empty_logdir_still_gets_the_capture_help(tmp_path: Path, capsys):
    (tmp_path / "notes.txt").write_text("nothing here\n")
    err = _error(tmp_path, capsys)
    assert "no GPU profiles found" in err and "counter collection" not in err
