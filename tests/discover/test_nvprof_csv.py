"""nvprof's ``--csv`` output, saved as a ``.csv``, is named for what it is -- totals or counters of one run, not read
-- with what to give instead (the run's database, ``--export-profile``), never "no GPU profiles found" nor "not a
profile this tool reads"; its printed GPU trace is read (h37-wild57n: ``tests/formats/test_nvprof_csv_reader.py``).

Survey h37-wild56x (session 55's Left 1): jakemdaly/PyTorch-GPU-Profiling @c31c20ac (no licence: read in scratch, not
kept; the texts below are the files' own first lines, their rows cut) commits 9,828 ``nvprof --csv --print-gpu-trace``
files of TensorFlow and PyTorch layers on a Jetson Nano (``NVIDIA Tegra X1 (0)``), e.g. ``tensorflow/l1/
trace_l1_20200329_1.csv``, and 169 ``--metrics`` ones (``torch/backup/1000batch/l1_batch1000.csv``).  Main passed
every ``.csv`` over: a logdir of them read "no GPU profiles found" with the frameworks' capture how-to.  The CSV has
the console output's ``==<pid>==`` lines, then nvprof's quoted header row and a row of units."""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli

GPU_TRACE = (
    "==25441== NVPROF is profiling process 25441, command: python main.py\n"
    "==25441== Warning: Unified Memory Profiling is not supported on the underlying platform. System requirements for "
    "unified memory can be found at: http://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#um-requirements\n"
    "==25441== Profiling application: python main.py\n"
    "==25441== Profiling result:\n"
    '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z","Registers Per Thread","Static SMem",'
    '"Dynamic SMem","Size","Throughput","SrcMemType","DstMemType","Device","Context","Stream","Name","Correlation_ID"\n'
    "s,ms,,,,,,,,KB,KB,MB,GB/s,,,,,,,\n"
    '10.466675,0.010677,,,,,,,,,,0.000980,0.089669,"Device",,"NVIDIA Tegra X1 (0)","1","7","[CUDA memset]",304\n'
    '22.827147,22.058934,8192,1,1,1024,1,1,8,0.000000,0.000000,,,,,"NVIDIA Tegra X1 (0)","1","20","redzone_checker",566\n')
METRICS = (
    "==5654== NVPROF is profiling process 5654, command: python example.py\n"
    "==5654== Some kernel(s) will be replayed on device 0 in order to collect all events/metrics.\n"
    "==5654== Profiling application: python example.py\n==5654== Profiling result:\n==5654== Metric result:\n"
    '"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"\n'
    '"NVIDIA Tegra X1 (0)","_ZN2at6native18elementwise_kernelILi128ELi4E",1,"achieved_occupancy","Achieved '
    'Occupancy",0.912109,0.912109,0.912109\n')
#: the same file saved again by a spreadsheet (``torch/backup/1000batch/l1/trace_l1_20200407_1.csv``): LibreOffice read
#: the ``==<pid>==`` lines as formulas (``Err:510``) and wrote the header unquoted
RESAVED = ("Err:510, command: python example.py,,,,,,,,,,,,,,,,,,\nErr:510,,,,,,,,,,,,,,,,,,,\n"
           "Start,Duration,Grid X,Grid Y,Grid Z,Block X,Block Y,Block Z,Registers Per Thread,Static SMem,Dynamic SMem,"
           "Size,Throughput,SrcMemType,DstMemType,Device,Context,Stream,Name,Correlation_ID\n"
           "s,us,,,,,,,,KB,B,KB,MB/s,,,,,,,\n"
           "198.302935,35.886000,,,,,,,,,,20.000000,544.258206,Pageable,Device,NVIDIA Tegra X1 (0),1,7,"
           "[CUDA memcpy HtoD],132\n")
#: a run killed before any result (``torch/backup/mnist/l2/GPUTrace_l2_bs10000_11.csv``, 31 of the sampled files)
KILLED = "======== Error: Application received signal 9\n"
#: ``nvprof --csv --log-file nvprof.csv`` of the totals (the console output's ``========`` lines, nvprof's summary header)
SUMMARY_LOGFILE = (
    "======== Profiling result:\n"
    '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n'
    ',%,ms,,us,us,us,\n'
    '"GPU activities",61.98,8.0251,60,133.75,73.312,195.87,"[CUDA memcpy HtoD]"\n')


def _error(target: Path, capsys) -> str:
    assert cli(["report", str(target), "--cache-dir", "off"]) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("name,text", [("nvprof.csv", SUMMARY_LOGFILE)])
def test_nvprof_csv_in_a_logdir_is_named_with_its_database(tmp_path: Path, capsys, name, text):
    (tmp_path / "l1").mkdir()
    (tmp_path / "l1" / name).write_text(text)
    err = _error(tmp_path, capsys)
    assert f"l1/{name}" in err and "nvprof's CSV output" in err and "not read" in err
    assert "--export-profile <name>.nvvp" in err and "no GPU profiles found" not in err


@pytest.mark.parametrize("name,text", [("trace_l1_20200329_1.csv", GPU_TRACE), ("trace_l1_20200407_1.csv", RESAVED)])
def test_a_printed_gpu_trace_is_read_as_a_session(tmp_path: Path, capsys, name, text):
    """Since h37-wild57n the printed GPU trace is read (``formats.nvprof.csv_reader``), a spreadsheet's re-save too:
    a session of its own, its report the GPU's rows."""
    (tmp_path / "l1").mkdir()
    (tmp_path / "l1" / name).write_text(text)
    assert cli(["report", str(tmp_path), "--cache-dir", "off"]) in (0, 1)
    out = capsys.readouterr().out
    assert "nvprof's CSV output" in out and "no GPU profiles found" not in out


def test_nvprof_s_error_alone_says_the_run_was_killed(tmp_path: Path, capsys):
    (tmp_path / "l2").mkdir()
    (tmp_path / "l2" / "GPUTrace_l2_bs10000_11.csv").write_text(KILLED)
    err = _error(tmp_path, capsys)
    assert "nvprof's error output" in err and "signal 9" in err and "out-of-memory killer" in err
    assert "no GPU profiles found" not in err


def test_nvprof_metrics_csv_is_named_as_counters(tmp_path: Path, capsys):
    (tmp_path / "l1").mkdir()
    (tmp_path / "l1" / "l1_batch1000.csv").write_text(METRICS)
    err = _error(tmp_path, capsys)
    assert "nvprof's CSV output" in err and "counter" in err and "--export-profile" in err
    assert "no GPU profiles found" not in err


def test_given_by_path_it_is_read_never_not_a_profile(tmp_path: Path, capsys):
    path = tmp_path / "trace_l1_20200329_1.csv"
    path.write_text(GPU_TRACE)
    assert cli(["report", str(path), "--cache-dir", "off"]) in (0, 1)
    captured = capsys.readouterr()
    assert "nvprof's CSV output" in captured.out and "not a profile this tool reads" not in captured.err


def test_control_a_csv_of_other_numbers_is_passed_over(tmp_path: Path, capsys):
    """Named control (passes on base too): a CSV of the user's own numbers -- even one with timing columns -- is no
    profiler's: the logdir holds no profile, as before, and no CSV is named."""
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / "timings.csv").write_text('"Start","Duration","Name"\n0.1,2.5,"step"\n2.6,2.4,"step"\n')
    (tmp_path / "run1" / "loss.csv").write_text("step,loss\n0,2.31\n1,2.12\n")
    err = _error(tmp_path, capsys)
    assert "no GPU profiles found" in err and ".csv" not in err
