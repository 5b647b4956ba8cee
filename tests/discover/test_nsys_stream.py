"""Nsight Systems' raw capture stream (``.qdstrm``) is named by what it is, given alone or found in a logdir.

``nsys profile`` writes the stream while it captures and, when the capture ends, imports it with its host tool
``QdstrmImporter`` into the report (``.nsys-rep``; ``.qdrep`` before 2021.4), deleting the stream.  A stream left
behind is a capture whose import did not run -- no host importer beside a target-only install, or the job stopped
first.  Survey h37-wild54n found such streams committed without their report (read in scratch, not kept: the streams
hold the machines' environments; the tests write each file's real name and its real first line, the writer's magic
and version, which is all discovery looks at):

* nidhi-mylavarapu/gpu-attention-kernels ``report1.qdstrm`` @5f76ad29 (no licence; 3,264,961 bytes): Nsight Systems
  2025.3.1 from the NVIDIA HPC SDK 25.5 on Perlmutter (``nid001049``, SLES 15 SP6), an attention-kernel benchmark;
* j-hayes/JuliaChem.jl ``tinker.qdstrm`` (2023.3.1, 2,660,562 bytes) and ``report1.qdstrm`` (2024.1.1, 2,144,636
  bytes) @3d64b4d8 (MIT): Perlmutter nodes ``nid008457`` and ``nid002136``, a Julia quantum-chemistry code on CUDA;
* gartangh/Master-s-Dissertation ``report1..3.qdstrm`` (5,366 bytes each) and ``report5.qdstrm`` (58,665) @900429d
  (no licence): Nsight Systems 2019.6.1 on an Ubuntu 19.04 laptop, Flux.jl benchmarks, beside a ``report4.qdrep``
  whose import did run.

Main said "no GPU profiles found" (the frameworks' capture how-to) for a logdir holding only a stream, and "not a
profile this tool reads" for one given by path: neither says the file is Nsight's capture nor how to read it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tests.support.paths import FIXTURES

#: (file name as committed, the stream's first line as written: magic and the writer's version)
STREAMS = [
    ("report1.qdstrm", b"U3w[END]NVIDIA Nsight Systems Stream 2025.3.1.90-253135822126v0!"),
    ("tinker.qdstrm", b"U3w[END]NVIDIA Nsight Systems Stream 2023.3.1.92-233133147223v0!"),
    ("report1.qdstrm", b"U3w[END]NVIDIA Nsight Systems Stream 2024.1.1.59-241133802077v0!"),
    ("report5.qdstrm", b"\x00\xff\x00\xff\x00\xff\x00\xffNVIDIA Nsight Systems Stream 2019.6.1.85-1548171!"),
]
IMPORT = "host-linux-x64/QdstrmImporter -i"


def _stream(folder: Path, name: str, head: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(head + b"\n\x0a\xf8\xbd\x02HasNvtxEvents\x12\x011")
    return path


@pytest.mark.parametrize("name,head", STREAMS)
def test_a_logdir_holding_only_a_stream_is_told_to_import_and_export_it(tmp_path: Path, capsys, name, head):
    _stream(tmp_path / "run1", name, head)
    skips = dict(skipped(str(tmp_path)))
    assert list(skips) == [f"run1/{name}"], skips
    why = skips[f"run1/{name}"]
    stem = name[: -len(".qdstrm")]
    assert "raw capture stream" in why and f"{IMPORT} {name}" in why
    assert f"nsys export --type sqlite {stem}.nsys-rep" in why
    assert discover(str(tmp_path)) == []
    assert cli(["report", str(tmp_path), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert "raw capture stream" in err and "no GPU profiles found" not in err


@pytest.mark.parametrize("name,head", STREAMS[:2])
def test_a_stream_given_by_path_is_named_never_not_a_profile(tmp_path: Path, capsys, name, head):
    path = _stream(tmp_path, name, head)
    assert cli(["report", str(path), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert "raw capture stream" in err and f"{IMPORT} {name}" in err
    assert "not a profile this tool reads" not in err


def test_a_stream_shared_gzipped_is_told_to_decompress_it_first(tmp_path: Path):
    run = tmp_path / "run1"
    run.mkdir()
    (run / "tinker.qdstrm.gz").write_bytes(b"\x1f\x8b\x08\x00")
    (why,) = dict(skipped(str(tmp_path))).values()
    assert "raw capture stream" in why
    assert why.index("gunzip -k tinker.qdstrm.gz") < why.index(f"{IMPORT} tinker.qdstrm")


def test_control_a_stream_beside_its_own_export_is_read_as_the_export(tmp_path: Path):
    """Where the import and the export ran, the stream is the same capture: the export is the run's one session and
    nothing is listed as left out."""
    run = tmp_path / "run1"
    shutil.copy(FIXTURES / "wild" / "mpi_saxpy_a100_rank0" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
                _stream(run, "saxpy-mpi-cuda_nsys_perlmutter0.qdstrm", STREAMS[0][1]).with_suffix(".sqlite"))
    (s,) = discover(str(tmp_path))
    assert [h.host for h in s.hosts] == ["saxpy-mpi-cuda_nsys_perlmutter0"]
    assert skipped(str(tmp_path)) == []


def test_streams_of_other_captures_beside_a_report_are_still_left_out(tmp_path: Path):
    """gartangh/Master-s-Dissertation @900429d: ``report4.qdrep`` (the one capture whose import ran) among
    ``report1..3.qdstrm`` and ``report5.qdstrm`` -- four captures of their own, not the report's companions.  The
    report is the folder's session; the streams are still named as left out (main dropped every note of a folder where
    a profile is read, as it does TensorFlow's tool data beside an XPlane)."""
    run = tmp_path / "Code"
    run.mkdir()
    (run / "report4.qdrep").write_bytes(b"\x00QDREP report, binary")
    for n in (1, 2, 3, 5):
        _stream(run, f"report{n}.qdstrm", STREAMS[3][1])
    (s,) = discover(str(tmp_path))
    assert [h.host for h in s.hosts] == ["report4"]
    assert sorted(rel for rel, _ in skipped(str(tmp_path))) == [f"Code/report{n}.qdstrm" for n in (1, 2, 3, 5)]


def test_a_stream_beside_its_own_report_is_its_companion_the_others_named(tmp_path: Path):
    """The same folder with ``report4.qdstrm`` too: that stream is the report's own (an import that ran and kept it),
    so only the other captures' streams are named."""
    run = tmp_path / "Code"
    run.mkdir()
    (run / "report4.qdrep").write_bytes(b"\x00QDREP report, binary")
    for n in (4, 5):
        _stream(run, f"report{n}.qdstrm", STREAMS[3][1])
    assert [rel for rel, _ in skipped(str(tmp_path))] == ["Code/report5.qdstrm"]
