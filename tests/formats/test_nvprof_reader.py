"""nvprof's database (``nvprof -o <file>.nvvp``) is read into the neutral trace as an Nsight export of the same CUPTI
records is (h37-wild55n).

Main named the file ("nvprof's database ..., a format the Advisor does not read") and stopped: every nvprof capture
committed by another person's job -- PyProf's documented ``nvprof -f -o net.sql``, a course's MXNet inference
``timeline.nvvp`` on a TITAN V -- read as nothing.  Its tables are CUPTI's activity records, the same records an
Nsight Systems export holds: calls by callback id, kernels by mangled symbol, NVTX as start/end marker rows.

Real: josiahdavis/profiling-lm ``net.sql`` (Apache-2.0, kept in ``tests/fixtures/wild/pyprof_lm_v100_nvprof``): one
training iteration of a PyTorch word-level language model on a Tesla V100-SXM2-16GB under PyProf's NVTX, between
``profiler.start()`` and ``stop()`` (``nvprof --profile-from-start off``): 160 kernels (7.3 ms), 21 read-backs of 4-8
bytes, 8 memsets, 683 NVTX ranges, and a first ``cudaLaunchKernel`` of 2.31 s (99% of the 2.37 s window).
Generated: :mod:`synthetic.nvproftrace`, a loop of NVTX-marked steps whose numbers are known by construction.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from synthetic import nvproftrace
from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tb_gpu_advisor.formats.nvprof.reader import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

REAL = FIXTURES / "wild" / "pyprof_lm_v100_nvprof" / "net.sql"


def _host(logdir: Path) -> dict:
    (s,) = discover(str(logdir))
    return analyze_session(s.run, s.session, s.hosts).to_dict()["hosts"][0]


def test_a_generated_loop_reads_as_written(tmp_path: Path):
    path = tmp_path / "loop.nvvp"
    truth = nvproftrace.write(str(path), steps=8, kernels=12)
    trace = read_trace(str(path))
    (dev,) = trace.devices
    assert dev.info.name == truth["gpu"][0] and dev.info.sm_count == 80 and dev.info.compute_capability == (7, 0)
    names = [dev.names[int(i)] for i in dev.name]
    kernels = [n for n in names if not n.startswith("Memcpy")]
    assert len(kernels) == truth["kernels"] and all(n.startswith(nvproftrace.KERNEL_DEMANGLED) for n in kernels)
    copies = [n for n in names if n.startswith("Memcpy")]
    assert copies == ["Memcpy HtoD (Pageable -> Device)"] * truth["copies"]
    assert int(dev.mem_bytes[dev.mem_bytes > 0].sum()) == truth["copy_bytes"]
    # every kernel and copy is tied to its launching call, on the one thread the calls and the NVTX ranges share
    assert (np.asarray(dev.corr) >= 0).all()
    assert trace.h.line_names == [f"thread {truth['thread']} (pid {truth['pid']})"]
    assert len(trace.ranges.idx) == len(truth["steps"])
    assert {trace.h.names[int(i)] for i in trace.h.name[trace.ranges.idx]} == {truth["step_name"]}
    assert trace.framework_hint == "pytorch"  # ATen's kernels, once demangled


def test_a_generated_loop_is_stepped_by_its_nvtx_ranges(tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir()
    truth = nvproftrace.write(str(run / "loop.nvvp"), steps=8, kernels=12)
    host = _host(tmp_path)
    steps = host["steps"]
    assert steps["source"] == "nvtx_range" and steps["found"] == len(truth["steps"])
    assert abs(host["capture"]["length_ms"] - (truth["steps"][-1][1] - truth["first_ns"]) / 1e6) < 0.01
    # the batch's blocking upload from pageable memory is named so, as an Nsight export's copy of the same kind
    copies = [f for f in host["findings"] if f["rule"] == "excessive_memcpy"]
    assert copies and "pageable" in copies[0]["summary"]


def test_the_real_pyprof_database_reads_its_iteration(tmp_path: Path):
    trace = read_trace(str(REAL))
    (dev,) = trace.devices
    assert dev.info.name == "Tesla V100-SXM2-16GB" and dev.info.sm_count == 80
    names = [dev.names[int(i)] for i in dev.name]
    assert sum(not n.startswith(("Memcpy", "Memset")) for n in names) == 160
    assert sum(n == "Memcpy DtoH (Device -> Pageable)" for n in names) == 21
    assert sum(n.startswith("Memset") for n in names) == 8
    assert len(trace.ranges.idx) == 683
    assert trace.framework_hint == "pytorch"
    # the 2.31 s first launch is a call of the one launching thread, named as the runtime names it
    calls = np.flatnonzero(np.asarray(trace.h.corr) >= 0)
    longest = int(calls[np.argmax((trace.h.end - trace.h.start)[calls])])
    assert (trace.h.end - trace.h.start)[longest] > 2.3e12  # ps
    assert trace.h.names[int(trace.h.name[longest])] == "cudaLaunchKernel"
    run = tmp_path / "lm"
    run.mkdir()
    shutil.copy(REAL, run / "net.sql")
    host = _host(tmp_path)
    assert host["job"]["kind"] == "training"
    assert host["findings"][0]["rule"] == "cold_start"
    assert host["capture"]["framework"] == "pytorch"


def test_in_a_logdir_an_nvvp_is_a_session_never_a_skip(tmp_path: Path):
    run = tmp_path / "deepspeech"
    run.mkdir()
    nvproftrace.write(str(run / "timeline.nvvp"), steps=3)
    (s,) = discover(str(tmp_path))
    assert [h.format for h in s.hosts] == ["nvprof"] and [h.host for h in s.hosts] == ["timeline"]
    assert skipped(str(tmp_path)) == []


def test_renamed_sqlite_or_pyprofs_net_sql_is_read_as_nvprofs(tmp_path: Path, capsys):
    for name in ("report1.sqlite", "net.sql"):
        path = tmp_path / name
        nvproftrace.write(str(path), steps=3)
        assert cli(["report", str(path), "--cache-dir", "off"]) == 0
        out = capsys.readouterr().out
        assert "Tesla V100-SXM2-16GB" in out or "nvprof" in out


def test_a_plain_cuda_program_is_spoken_to_in_cuda_words(tmp_path: Path):
    """nvprof profiles any CUDA program: where no framework shows, the program is CUDA's (``frameworks._ANY_PROGRAM``),
    never TensorFlow's by default -- kSched's RTX 2080 Ti benchmark (``cudaDeviceSynchronize`` after each round of
    35 launches) was told to keep ``.numpy()`` and ``tf.print`` out of its training step."""
    run = tmp_path / "run"
    run.mkdir()
    nvproftrace.write(str(run / "timeline.prof"), steps=40, kernels=30, kernel_us=60.0, upload_bytes=4096,
                      upload_us=2.0, host_ms=0.4, kernel_symbol="_Z10matrix_mulPfS_S_i", step_name="round")
    host = _host(tmp_path)
    assert host["capture"]["framework"] != "tensorflow"
    prose = " ".join(a["text"] for f in host["findings"] for a in f["actions"]) + " ".join(
        f["summary"] for f in host["findings"])
    assert "tf." not in prose and "keras" not in prose.lower(), prose


def test_the_visual_profilers_session_file_is_named_with_its_command(tmp_path: Path, capsys):
    """An ``.nvvp`` may be the Visual Profiler's session file (an XML ``<session>``: its settings and the profiled
    command, no event), as xstupi00/N-Body-OpenACC's and AtilaSaraiva/GPU-Born-Modeling's are: named so, with the
    command to record instead; main called it "nvprof's database, a format the Advisor does not read"."""
    path = tmp_path / "profile.nvvp"
    path.write_text('<?xml version="1.0"?>\n<session version="2" name="profile.nvvp" hscale="1.0E-6">\n'
                    '<executable file="/home/u/nbody" cwd="/home/u" args="19456 0.01f ../inputs/19456.h5" '
                    'profileonstart="true" concurrentkernels="true"><envs></envs></executable>\n</session>\n')
    assert cli(["report", str(path), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert "Visual Profiler's session file" in err and "nvprof -o profile_db.nvvp /home/u/nbody 19456" in err


def test_demangled_as_an_nsight_export_names_them():
    from tb_gpu_advisor.common.demangle import demangle_all

    names = demangle_all([nvproftrace.KERNEL_SYMBOL, "volta_sgemm_128x128_tn", "_Z" + "N" * 9000])
    name = names[nvproftrace.KERNEL_SYMBOL]
    assert name.startswith(nvproftrace.KERNEL_DEMANGLED) or name == nvproftrace.KERNEL_SYMBOL  # no C++ runtime
    assert names["volta_sgemm_128x128_tn"] == "volta_sgemm_128x128_tn"
    assert names["_Z" + "N" * 9000] == "_Z" + "N" * 9000


def test_a_gzipped_nvvp_reads_as_the_database_itself(tmp_path: Path):
    import gzip

    plain = tmp_path / "loop.nvvp"
    truth = nvproftrace.write(str(plain), steps=4, kernels=5)
    packed = tmp_path / "run" / "loop.nvvp.gz"
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    (s,) = discover(str(tmp_path / "run"))
    assert [h.host for h in s.hosts] == ["loop"]
    trace = read_trace(str(packed))
    assert sum(len(d) for d in trace.devices) == truth["kernels"] + truth["copies"]
