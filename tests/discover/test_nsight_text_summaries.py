"""Nsight Systems' and nvprof's console output, saved as text, is named for what it is -- totals printed from a
capture, not a trace -- with what to give the Advisor instead, never "no GPU profiles found" nor "not a profile this
tool reads".

Survey h37-wild54n found such files committed as the run's only profile (no licence: read in scratch, not kept; the
texts below are written as the tools print them, with each file's own first lines):

* iidyc/gpu-mvr ``nsys_output.txt`` @4a8cf0ef (2026-02-11): ``nsys profile --stats=true`` of a cuVS CAGRA retrieval
  job cut to its tables, opening at ``[3/8] Executing 'nvtx_sum' stats report``;
* lukas-ruettgers/dphpc-gemm ``nsys.log`` @8d66bfef (2025-11-16): a CUTLASS GEMM's stdout, then ``Generating
  '/tmp/nsys-report-933f.qdstrm'`` and ~6 kB of progress bars before the first ``Executing`` line;
* Jellyfish227/abc ``nsys_report.txt`` @153918cb (2025-11-05): ``nsys analyze`` (Nsight Systems 2023.1.2's
  ``rules/cuda_memcpy_async.py``, ``cuda_memcpy_sync.py``: 65 MB pageable ``cudaMemcpy`` of 8-22 ms);
* samhachem99/CS533_Final_Project ``nsys_output.txt`` @6d9cb77b (2022-05-05): the program's own lines, then 2021-era
  ``Operating System Runtime API Statistics:``; beside it ``nvprof_output.txt`` (``======== Profiling result:`` with
  ``GPU activities`` / ``API calls``) and ``nvprof_gpu_output.txt`` (``--print-gpu-trace``, one line per copy and
  kernel, a Tesla V100-SXM2).

Main said "no GPU profiles found" with the frameworks' capture how-to for a logdir holding any of them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli
from tests.support.paths import FIXTURES

KERN_TABLE = (" Time (%)  Total Time (ns)  Instances  Avg (ns)   Med (ns)   Min (ns)  Max (ns)   StdDev (ns)   Name\n"
              " --------  ---------------  ---------  ---------  ---------  --------  ---------  -----------  ----\n"
              "     24.7    2,535,593,066      2,931  865,094.9  853,849.0   796,921  1,076,567     45,956.3  "
              "sum_doc_scores_kernel(const float *, float *, unsigned long)\n")
STATS_CUT = "[3/8] Executing 'nvtx_sum' stats report\n\n" + KERN_TABLE
PROFILE_LOG = ("WARNING: CPU IP/backtrace sampling not supported, disabling.\n"
               "Kernel: TB=128x256x32 WP=64x64x32 INST=8x8x4 CUTLASS: M=4096 N=4096 K=32  Time=0.459878 ms\n"
               "Collecting data...\nGenerating '/tmp/nsys-report-933f.qdstrm'\n"
               + "".join(f"[1/7] [{'=' * (p // 4)}{p}%{' ' * (26 - p // 4)}] nsys.log.nsys-rep" for p in range(0, 101, 4))
               + "\n" + "".join(f"[2/7] [{p}%] nsys.log.sqlite" for p in range(101)) * 3
               + "\n[4/7] Executing 'cuda_api_sum' stats report\n")
ANALYZE = ("Processing [report1.sqlite] with [/opt1/cuda/cuda-12.1/nsight-systems-2023.1.2/host-linux-x64/rules/"
           "cuda_memcpy_async.py]... \n\n ** CUDA Async Memcpy with Pageable Memory (cuda_memcpy_async):\n\n"
           "There were no problems detected related to memcpy operations using pageable\nmemory.\n")
STATS_2021 = ("PROCESS 1 started\nPROCESS 1 Finished\nMAIN started\nMAIN Finished\n\n\n"
              "Operating System Runtime API Statistics:\n\n"
              " Time(%)  Total Time (ns)  Num Calls    Average      Minimum      Maximum              Name\n"
              "    47.9    5,511,756,619        461  11,956,088.1      1,000  1,447,697,653  epoll_wait\n")
NVPROF = ("======== Profiling result:\n"
          "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
          " GPU activities:   61.98%  8.0251ms        60  133.75us  73.312us  195.87us  [CUDA memcpy HtoD]\n"
          "      API calls:   78.80%  624.30ms         1  624.30ms  624.30ms  624.30ms  cudaMallocHost\n")
NVPROF_GPU_TRACE = ("======== Profiling result:\n"
                    "   Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*      Size  "
                    "Throughput  SrcMemType  DstMemType           Device   Context    Stream  Name\n"
                    "     0ns  128.83us                    -               -         -         -         -  8.0000MB  "
                    "60.641GB/s      Pinned      Device  Tesla V100-SXM2         1        14  [CUDA memcpy HtoD]\n")
NVPROF_STDERR = "==31337== NVPROF is profiling process 31337, command: ./vector_add\n==31337== Profiling application: ./vector_add\n"

NSIGHT = [("nsys_output.txt", STATS_CUT), ("nsys.log", PROFILE_LOG), ("nsys_report.txt", ANALYZE),
          ("nsys_output.txt", STATS_2021)]
NVPROF_FILES = [("nvprof_output.txt", NVPROF), ("nvprof_gpu_output.txt", NVPROF_GPU_TRACE),
                ("nvprof.log", NVPROF_STDERR)]


def _error(target: Path, capsys) -> str:
    assert cli(["report", str(target), "--cache-dir", "off"]) == 2
    return capsys.readouterr().err


def test_control_the_profile_log_reaches_its_tables_only_past_the_head_read():
    """What the log tells itself by: nsys's own lines within the first 4 kB, its stats tables after them."""
    assert PROFILE_LOG.index("Generating '/tmp/nsys-report") < 4096 < PROFILE_LOG.index("Executing")


@pytest.mark.parametrize("name,text", NSIGHT)
def test_nsight_systems_console_output_in_a_logdir_is_named_with_the_report_to_read(tmp_path: Path, capsys, name,
                                                                                       text):
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / name).write_text(text)
    err = _error(tmp_path, capsys)
    assert f"run1/{name}" in err and "Nsight Systems' text summary" in err and "not a trace" in err
    assert "nsys export --type sqlite <report>.nsys-rep" in err
    assert "no GPU profiles found" not in err and "tensorboard_trace_handler" not in err


@pytest.mark.parametrize("name,text", NVPROF_FILES)
def test_nvprof_console_output_in_a_logdir_is_named_with_its_successor(tmp_path: Path, capsys, name, text):
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / name).write_text(text)
    err = _error(tmp_path, capsys)
    assert f"run1/{name}" in err and "nvprof's text summary" in err and "nsys profile -o <name>" in err
    assert "no GPU profiles found" not in err


@pytest.mark.parametrize("name,text", [NSIGHT[1], NVPROF_FILES[0]])
def test_given_by_path_it_is_named_never_not_a_profile(tmp_path: Path, capsys, name, text):
    path = tmp_path / name
    path.write_text(text)
    err = _error(path, capsys)
    assert "text summary" in err and "not a profile this tool reads" not in err


def test_control_a_build_log_named_nsys_is_no_summary(tmp_path: Path, capsys):
    """wilfonba/MFC-Wilfong's ``nsys.txt``: an MFC build and run log that ends in exit code 143 before nsys printed
    anything -- its name says nothing: the logdir holds no profile, as before."""
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / "nsys.txt").write_text(
        "mfc: OK > (venv) Entered the Python 3.8.10 virtual environment (>= 3.8).\n"
        " $ cmake --build build/staging/9759ddfda7 --target syscheck --parallel 1 --config Release\n"
        "[100%] Built target syscheck\nmfc: ERROR > mfc.py finished with a 143 exit code.\n")
    err = _error(tmp_path, capsys)
    assert "no GPU profiles found" in err and "text summary" not in err


def test_control_the_export_beside_its_printed_tables_is_read(tmp_path: Path):
    """``nsys profile --stats=true ... > nsys.log`` leaves the log beside the report's export: the export is read."""
    run = tmp_path / "run1"
    run.mkdir()
    shutil.copy(FIXTURES / "wild" / "mpi_saxpy_a100_rank0" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite", run)
    (run / "nsys.log").write_text(PROFILE_LOG)
    assert cli(["report", str(tmp_path), "--cache-dir", "off", "--format", "json"]) == 0
