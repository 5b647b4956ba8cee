"""rocprofv3's JSON document (``rocprofv3 --output-format json``: ``<pid>_results.json``, top key
``rocprofiler-sdk-tool``; issue #37) read into the trace model by construction (``synthetic/rocprofv3trace.py``,
``fmt="json"``: the writer's keys, ``generateJSON.cpp`` and ``cxx/serialization.hpp``; no real file is public, survey
h37-rocprof3).  Main did not read it: "not a profile this tool reads"."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from synthetic import rocproftrace, rocprofv3trace
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.rocprof.json_reader import RocprofJsonReadError, read_trace

STEPS = [[("gemm_kernel(float*)", 400.0), ("relu(float*)", 50.0)]] * 6


def test_a_generated_document_reads_kernels_sized_copies_launches_grid_ranges_and_gpu(tmp_path: Path):
    truth = rocprofv3trace.write(str(tmp_path), STEPS, fmt="json", hsa_calls=3)
    t = read_trace(str(tmp_path / "4242_results.json"))
    (d,) = t.devices
    assert t.format == "rocprofv3-json" and t.host == "4242_results"
    assert d.info.name == "AMD Instinct MI300X" and d.info.sm_count == 304  # the GPU agent's handle -> its node
    names = [d.names[int(x)] for x in d.name]
    kernel_ns: dict[str, int] = {}
    for i, n in enumerate(names):
        if not n.startswith("Copy"):
            kernel_ns[n] = kernel_ns.get(n, 0) + int(d.end[i] - d.start[i]) // 1000
    assert kernel_ns == truth["gpu_ns"]  # kernels named through kernel_symbols
    at = [i for i, n in enumerate(names) if n.startswith("Copy")]
    assert [names[i] for i in at] == ["CopyHostToDevice", "CopyDeviceToHost"]
    assert np.asarray(d.mem_bytes)[at].tolist() == [c["bytes"] for c in truth["copies"]]  # the JSON records sizes
    corr = np.asarray(d.corr)
    calls = {int(c): t.h.names[int(t.h.name[i])] for i, c in enumerate(np.asarray(t.h.corr).tolist()) if c >= 0}
    assert len(calls) == truth["calls"] and (corr >= 0).all()
    assert all(calls[int(c)] == ("hipMemcpy" if n.startswith("Copy") else "hipLaunchKernel")
               for c, n in zip(corr.tolist(), names))  # calls named through strings.buffer_records' operations
    idx, blocks, threads = d.launches()
    assert {d.names[int(d.name[i])]: (int(b), int(th)) for i, b, th in zip(idx, blocks, threads)} == truth["grids"]
    assert t.ranges is not None and t.ranges.idx.size == truth["steps"]
    assert {t.h.names[int(t.h.name[i])] for i in t.ranges.idx} == {"iteration"}  # the roctx message, not the op


def test_hostile_documents_are_clear_errors(tmp_path: Path):
    rocprofv3trace.write(str(tmp_path / "ok"), STEPS, fmt="json")
    whole = (tmp_path / "ok" / "4242_results.json").read_text()
    cut = tmp_path / "1_results.json"
    cut.write_text(whole[: len(whole) // 2])
    with pytest.raises(RocprofJsonReadError, match="cut short"):
        read_trace(str(cut))
    other = tmp_path / "2_results.json"
    other.write_text(json.dumps({"traceEvents": []}))
    with pytest.raises(RocprofJsonReadError, match="not a rocprofv3 JSON"):
        read_trace(str(other))
    empty = tmp_path / "3_results.json"
    empty.write_text(json.dumps({"rocprofiler-sdk-tool": [{"metadata": {"pid": 1}, "buffer_records": {}}]}))
    with pytest.raises(RocprofJsonReadError, match="no events"):
        read_trace(str(empty))
    garbage = tmp_path / "4_results.json"
    garbage.write_text('{"rocprofiler-sdk-tool": [ nonsense ] }')
    with pytest.raises(RocprofJsonReadError, match="not JSON"):
        read_trace(str(garbage))


def test_in_a_logdir_it_is_told_by_its_key_and_rocprofs_results_json_stays_rocprofs(tmp_path: Path):
    """Control: rocprof v1/v2's ``results.json`` (a chrome trace) beside it is still read as rocprof's."""
    rocprofv3trace.write(str(tmp_path / "logdir" / "v3"), STEPS, fmt="json")
    (tmp_path / "logdir" / "v1").mkdir()
    rocproftrace.write(str(tmp_path / "logdir" / "v1" / "results.json"), STEPS)
    formats = {s.run: [h.format for h in s.hosts] for s in discover(str(tmp_path / "logdir"))}
    assert formats == {"v3": ["rocprofv3-json"], "v1": ["rocprof"]}
