"""rocprofv3's CSV output (``rocprofv3 --output-format csv``: ``<pid>_kernel_trace.csv``, ``_hip_api_trace.csv``,
``_memory_copy_trace.csv``, ``_marker_api_trace.csv``, ``_agent_info.csv``; issue #37) read as one capture, by
construction (``synthetic/rocprofv3trace.py``: the writer's headers, both the ROCm 6.4+ layout and the older one).  No
real capture of these files is public (survey h37-rocprof3): the headers are rocprofiler-sdk's ``generateCSV.cpp`` and
the real files its users posted.  Main did not read any of them (no format claimed a CSV)."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import numpy as np
import pytest

from synthetic import rocprofv3trace
from tb_gpu_advisor.formats.hip_ops import GPU_NAME
from tb_gpu_advisor.formats.rocprof.csv_reader import RocprofCsvReadError, read_trace
from tests.support.device_reads import kernel_ns

STEPS = [[("gemm_kernel(float*)", 400.0), ("relu(float*)", 50.0)]] * 6


def _read(folder: Path):
    files = sorted(glob.glob(str(folder / "*.csv")))
    main = next(f for f in files if f.endswith("kernel_trace.csv"))
    return read_trace(main, ranks=files)


@pytest.mark.parametrize("layout", ["new", "old"])
def test_a_generated_capture_reads_kernels_copies_launches_grid_ranges_and_gpu(tmp_path: Path, layout: str):
    truth = rocprofv3trace.write(str(tmp_path), STEPS, layout=layout, hsa_calls=3)
    t = _read(tmp_path)
    (d,) = t.devices
    assert t.format == "rocprofv3-csv" and t.host == "4242"
    assert d.info.name == "AMD Instinct MI300X" and d.info.sm_count == 304  # agent_info's node 2, by its id's form
    assert kernel_ns(d) == truth["gpu_ns"]
    names = [d.names[int(x)] for x in d.name]
    copies = [n for n in names if n.startswith("Copy")]
    assert copies == ["CopyHostToDevice", "CopyDeviceToHost"]
    at = [i for i, n in enumerate(names) if n.startswith("Copy")]
    assert (np.asarray(d.mem_bytes)[at] < 0).all() and np.asarray(d.mem_sync)[at].tolist() == [1, 1]  # no size
    corr = np.asarray(d.corr)
    assert (corr >= 0).all() and len(set(corr.tolist())) == len(d)  # each operation its own call
    calls = {int(c): t.h.names[int(t.h.name[i])] for i, c in enumerate(np.asarray(t.h.corr).tolist()) if c >= 0}
    assert all(calls[int(c)] == ("hipMemcpy" if n.startswith("Copy") else "hipLaunchKernel")
               for c, n in zip(corr.tolist(), names))
    assert len(calls) == truth["calls"]  # HIP's calls only: the HSA calls and roctxGetThreadId left out
    idx, blocks, threads = d.launches()
    assert {d.names[int(d.name[i])]: (int(b), int(th)) for i, b, th in zip(idx, blocks, threads)} == truth["grids"]
    assert t.ranges is not None and t.ranges.idx.size == truth["steps"]
    assert {t.h.names[int(t.h.name[i])] for i in t.ranges.idx} == {"iteration"}
    assert any("HSA_CORE_API" in n for n in t.notes) and not any(n.startswith("hsa_") for n in t.h.names)
    kernel_lanes = {d.stream_names[int(d.stream[i])] for i, n in enumerate(names) if not n.startswith("Copy")}
    assert kernel_lanes == ({"stream 0"} if layout == "new" else {"queue 1"})  # older files: no streams, HSA's queues


def test_without_agent_info_the_gpu_is_an_amd_gpu_of_unknown_model(tmp_path: Path):
    rocprofv3trace.write(str(tmp_path), STEPS, layout="old", agent_info=False)
    t = _read(tmp_path)
    (d,) = t.devices
    assert d.info.name == GPU_NAME and d.info.sm_count is None
    assert any("agent_info.csv" in n for n in t.notes)
    assert len(d) == sum(len(s) for s in STEPS) + 2  # the copies on the kernels' GPU, not dropped


def test_a_staged_upload_is_read_as_pageable(tmp_path: Path):
    truth = rocprofv3trace.write(str(tmp_path), STEPS, upload_staging_ms=5.0)
    (d,) = _read(tmp_path).devices
    copies = [i for i in range(len(d)) if d.names[int(d.name[i])].startswith("Copy")]
    assert np.asarray(d.mem_host)[copies].tolist() == [1 if c["pageable"] else -1 for c in truth["copies"]]


def test_one_file_given_alone_is_read_alone(tmp_path: Path):
    """The kernel trace without its siblings: kernels with no launch, no host side (a ``--kernel-trace`` run)."""
    truth = rocprofv3trace.write(str(tmp_path), STEPS)
    t = read_trace(str(tmp_path / "4242_kernel_trace.csv"))
    (d,) = t.devices
    assert kernel_ns(d) == truth["gpu_ns"] and len(t.h) == 0
    assert (np.asarray(d.corr) < 0).all()


def _damaged(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_hostile_files_are_clear_errors(tmp_path: Path):
    rocprofv3trace.write(str(tmp_path / "ok"), STEPS)
    whole = (tmp_path / "ok" / "4242_kernel_trace.csv").read_text()
    cut = _damaged(tmp_path, "1_kernel_trace.csv", whole[: len(whole) - 25])
    with pytest.raises(RocprofCsvReadError, match="cut short"):
        read_trace(cut)
    with pytest.raises(RocprofCsvReadError, match="empty file"):
        read_trace(_damaged(tmp_path, "2_kernel_trace.csv", ""))
    with pytest.raises(RocprofCsvReadError, match="not a rocprofv3 CSV"):
        read_trace(_damaged(tmp_path, "3_kernel_trace.csv", "name,calls,total\nk,1,2\n"))
    head = ",".join(f'"{c}"' for c in rocprofv3trace.API)
    with pytest.raises(RocprofCsvReadError, match="not a number"):
        read_trace(_damaged(tmp_path, "4_hip_api_trace.csv", head + '\n"HIP_RUNTIME_API","hipMalloc",1,1,1,abc,9\n'))
    with pytest.raises(RocprofCsvReadError, match="row 1 has 3 cells"):
        read_trace(_damaged(tmp_path, "5_hip_api_trace.csv", head + '\n"HIP_RUNTIME_API","hipMalloc",1\n'))
    with pytest.raises(RocprofCsvReadError, match="no events"):
        read_trace(_damaged(tmp_path, "6_hip_api_trace.csv", head + "\n"))
    with pytest.raises(RocprofCsvReadError, match="field larger"):  # a cell no writer's: an error, not a traceback
        read_trace(_damaged(tmp_path, "7_hip_api_trace.csv", head + '\n"HIP_RUNTIME_API","' + "x" * 200_000 + '",1,1,1,2,3\n'))


def test_the_v3_database_reader_still_names_its_copies_and_gpus_from_the_shared_home(tmp_path: Path):
    """Control: rocpd's reader now asks hip_ops for a copy's name and a GPU's (one home) and reads as before."""
    from synthetic import rocpdtrace
    from tb_gpu_advisor.formats.rocprof import rocpd_reader

    path = tmp_path / "4242_results.db"
    rocpdtrace.write(str(path), STEPS)
    (d,) = rocpd_reader.read_trace(str(path)).devices
    assert d.info.name == "AMD Instinct MI300X"
    assert [n for n in (d.names[int(x)] for x in d.name) if n.startswith("Copy")] == ["CopyHostToDevice",
                                                                                      "CopyDeviceToHost"]
    assert os.path.exists(path)


def test_a_damaged_capture_is_exit_2_with_its_words_as_every_formats_is(tmp_path: Path):
    """``report`` of a run whose kernel trace is cut short, and of a JSON that is no JSON: the host's error, exit 2
    (main: "not a profile this tool reads", exit 2 -- the same code, now for the file's own damage)."""
    from tests.support.cli_report import in_process

    rocprofv3trace.write(str(tmp_path / "run"), STEPS)
    k = tmp_path / "run" / "4242_kernel_trace.csv"
    k.write_text(k.read_text()[:-25])
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc" / "9_results.json").write_text('{"rocprofiler-sdk-tool": [ nonsense ] }')
    for path, words in ((k, "cut short"), (tmp_path / "doc" / "9_results.json", "not JSON")):
        out = in_process("report", path)  # the command's main, in this process
        assert out.returncode == 2 and words in out.stdout + out.stderr, (out.returncode, out.stderr[-300:])
