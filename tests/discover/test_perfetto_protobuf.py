"""A Perfetto protobuf trace is named for what it is, with what to record instead -- alone, in a logdir, or gzipped
under a JSON name (``perfetto_trace.json.gz``) -- never "not a profile this tool reads", "JSON without traceEvents"
or, in a folder, nothing at all (survey h37-wild59, issue #37).

Real files (pelagos-consulting/HIP_Course, CC BY 3.0; ``tests/fixtures/foreign/PROVENANCE.md``), read by hand first:
``perfetto_rocprofsys_mi250x/perfetto-trace-3538390.proto`` is rocprof-sys 1.0.1's trace of the course's matrix
multiply on an MI250X (gfx90a; HIP calls, a kernel dispatch track, copies, four counters), with two of rocprof-sys's
data files beside it (``functions-<pid>.json``, a counter's ``rocprof-device-0-GPUBusy-<pid>.json``,
``instrumentation/overlapping.json``: no events);
``perfetto_rocprofv3_pftrace/output_results.pftrace`` is rocprofv3's ``--output-format pftrace`` of the same program
on a Radeon laptop.  Both are ``Trace`` protobufs: packets framed as field 1, each with its sequence id (field 10).
Base said "not a profile this tool reads" of each alone, "JSON without traceEvents: not a trace" of the data files
and of the pftrace gzipped as ``perfetto_trace.json.gz``, and of the pftrace's folder "no GPU profiles found" with
TensorFlow/JAX/PyTorch capture help.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli
from tests.support.paths import FIXTURES

SYS = FIXTURES / "foreign" / "perfetto_rocprofsys_mi250x"
SYS_TRACE = SYS / "perfetto-trace-3538390.proto"
V3_TRACE = FIXTURES / "foreign" / "perfetto_rocprofv3_pftrace" / "output_results.pftrace"
V3_EMPTY = FIXTURES / "foreign" / "perfetto_rocprofv3_empty" / "3634736_results.pftrace"
#: Words of another vendor's tools, or of the frameworks' capture help, that no ROCm profiler's user should be told.
CUDA_WORDS = re.compile(r"\bnsys\b|Nsight|CUDA", re.I)
ROCM_FIX = "rocprofv3 --kernel-trace --hip-trace --memory-copy-trace --output-format csv"


def _error(target: Path, capsys) -> str:
    assert cli(["report", str(target), "--cache-dir", "off"]) == 2  # nothing to analyse: the same code as before
    return capsys.readouterr().err


@pytest.mark.parametrize("trace", [SYS_TRACE, V3_TRACE], ids=["rocprof-sys", "rocprofv3"])
def test_a_rocm_perfetto_trace_alone_is_named_with_rocprofv3s_formats(trace, capsys):
    head = trace.read_bytes()[:64 << 10]
    assert head[:1] == b"\x0a" and not head.lstrip().startswith((b"{", b"["))  # a protobuf, no JSON
    err = _error(trace, capsys)
    assert "not a profile this tool reads" not in err
    assert "a Perfetto protobuf trace (a ROCm profiler's" in err and ROCM_FIX in err
    assert not CUDA_WORDS.search(err)  # an AMD tool's trace gets AMD's words only


def test_one_without_an_event_says_so(capsys):
    """D-W-Chiang/JACC.jl's 645-byte ``3634736_results.pftrace`` (MIT): Perfetto's clock snapshots, its SDK's version and
    the machine's kernel, no track event -- one of rocprofv3's per-process files beside the Julia process's (2 kB of HIP
    calls).  It names no ROCm call: its name (``<pid>_results.pftrace``) says rocprofv3's."""
    head = V3_EMPTY.read_bytes()
    assert len(head) == 645 and b"hip" not in head
    err = _error(V3_EMPTY, capsys)
    assert "a Perfetto protobuf trace (a ROCm profiler's" in err and "this one holds no event" in err
    assert ROCM_FIX in err and not CUDA_WORDS.search(err)
    err = _error(V3_TRACE, capsys)
    assert "holds no event" not in err  # 1,525 of its 1,617 packets are events


def test_gzipped_under_a_json_name_it_is_no_json(tmp_path, capsys):
    """``perfetto_trace.json.gz`` is JAX's name for its Chrome JSON; a protobuf saved under it is told by its bytes."""
    target = tmp_path / "perfetto_trace.json.gz"
    target.write_bytes(gzip.compress(V3_TRACE.read_bytes(), mtime=0))
    err = _error(target, capsys)
    assert "JSON without traceEvents" not in err and "a Perfetto protobuf trace" in err


def test_a_folder_of_one_names_it_instead_of_capture_help(tmp_path, capsys):
    shutil.copy(V3_TRACE, tmp_path / V3_TRACE.name)
    err = _error(tmp_path, capsys)
    assert "no GPU profiles found" not in err and "TensorFlow" not in err
    assert "output_results.pftrace (a Perfetto protobuf trace" in err


def test_rocprof_sys_output_folder_names_its_data_and_its_trace(tmp_path, capsys):
    run = tmp_path / "rocprofsys-mat_mult_profiling.inst-output" / "2026-05-01_13.52"
    shutil.copytree(SYS, run)
    err = _error(tmp_path, capsys)
    assert "JSON without traceEvents" not in err
    assert "rocprof-sys's run data" in err and "perfetto-trace-3538390.proto (a Perfetto protobuf trace" in err
    assert "instrumentation/overlapping.json (rocprof-sys's run data" in err  # its binary instrumentation's lists
    assert not CUDA_WORDS.search(err)


def test_a_proto_schema_is_anyones_file_left_out_unsaid(tmp_path, capsys):
    """Control (passes on base too): a ``.proto`` that is protobuf's schema text, not a trace, is not called one."""
    (tmp_path / "trace.proto").write_text('syntax = "proto2";\nmessage Trace { repeated bytes packet = 1; }\n')
    err = _error(tmp_path, capsys)
    assert "Perfetto" not in err and "no GPU profiles found" in err


def test_an_xplane_is_no_perfetto_trace():
    """An XSpace also frames its planes as field 1, but no plane carries a sequence id (the recogniser is new: fails
    on base by its import only)."""
    from tb_gpu_advisor.formats.heads import is_perfetto_head
    xplanes = sorted((FIXTURES / "wild").glob("jax_*/plugins/profile/*/*.xplane.pb"))
    assert xplanes
    for path in xplanes:
        assert not is_perfetto_head(path.read_bytes()[:64 << 10]), path
    assert is_perfetto_head(SYS_TRACE.read_bytes()[:64 << 10]) and is_perfetto_head(V3_TRACE.read_bytes()[:64 << 10])
