"""Another NVIDIA tool's capture is told by its bytes, whatever its name: an Nsight Systems report (``.nsys-rep``,
``.qdrep`` before 2021.4) saved as ``run.bin``, ``report1``, ``trace.json`` or ``run.sqlite`` -- or dropped in a
logdir on a machine without ``nsys`` -- says what it is, what its header says (Nsight's version, the profiled command,
the host) and the one command that exports it; an Nsight Compute report (``.ncu-rep``) under another name is named as
the counter collection it is.  Base said "not a profile this tool reads" of each by path, and of its folder "no GPU
profiles found" with the frameworks' capture help (survey h37-heads60, issue #37).

Kept: the first 16 kB of cestwc/balinski-and-gomory-cuda's 2025.5.1 ``report1.nsys-rep`` (MIT;
``tests/fixtures/foreign/PROVENANCE.md``), read by hand: ``NVIDIA Tegra Profiler Report 2025@5@1@121-255136380782v0.``
then the header's protobuf -- field 9 the host ``lava``, field 26 the launch: program ``build/test1``, argument ``4``.
Without a licence, read from local copies where present (else skipped): ayush-os/nsight-systems-deep-dive's 2023.1.2
A100 reports (format tag ``1``), gartangh/Master-s-Dissertation's 2019.6.1 ``report4.qdrep``, LakshyaSingh354/CudaCode's
and armleth/cuda-mlp-inference's ``.ncu-rep`` (``NVR\\0`` + version 2).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli
from tests.support.paths import FIXTURES

HEAD = FIXTURES / "foreign" / "nsys_report_head_cestwc" / "report1.nsys-rep.head"
#: Local copies of unlicensed public reports (survey h37-heads60), read where present.
LOCAL = Path(os.environ.get("TB_GPU_ADVISOR_WILD_HEADS", "/work/wild60/heads60"))
EXPORT = "nsys export --type sqlite -o"
#: The report's magic (``formats.heads.NSYS_REPORT_MAGIC``, new: the recognisers are imported in each test that asks
#: them, so that on base only those fail by their import, and the command-line tests by what base says).
NSYS_REPORT_MAGIC = b"NVIDIA Tegra Profiler Report "


def is_nsys_report_head(head: bytes) -> bool:
    from tb_gpu_advisor.formats.heads import is_nsys_report_head as new
    return new(head)


def is_ncu_report_head(head: bytes) -> bool:
    from tb_gpu_advisor.formats.heads import is_ncu_report_head as new
    return new(head)


def nsys_report_header(head: bytes) -> tuple[str | None, str | None, str | None]:
    from tb_gpu_advisor.formats.heads import nsys_report_header as new
    return new(head)


def _error(target: Path, capsys) -> str:
    assert cli(["report", str(target), "--cache-dir", "off"]) == 2  # nothing to analyse: the same code as before
    return capsys.readouterr().err


def _local(name: str) -> Path:
    path = LOCAL / name
    if not path.is_file():
        pytest.skip(f"local copy {path} absent (unlicensed public file, survey h37-heads60)")
    return path


def test_the_header_says_version_command_and_host():
    from tb_gpu_advisor.formats.heads import NSYS_REPORT_MAGIC as magic
    assert magic == NSYS_REPORT_MAGIC
    head = HEAD.read_bytes()
    assert head.startswith(b"NVIDIA Tegra Profiler Report 2025@5@1@")  # read by hand
    assert is_nsys_report_head(head)
    assert nsys_report_header(head) == ("2025.5.1", "build/test1 4", "lava")


@pytest.mark.parametrize("name", ["run.bin", "report1", "trace.json", "profile.sqlite"])
def test_a_report_under_another_name_is_named_by_path_and_in_its_folder(name, tmp_path, capsys):
    """Fails on base: "not a profile this tool reads" by path; of its folder "no GPU profiles found" (or, for the
    names a layout sniffs, "not JSON" / "not an SQLite database")."""
    target = tmp_path / name
    shutil.copy(HEAD, target)
    for given in (target, tmp_path):
        err = _error(given, capsys)
        assert "not a profile this tool reads" not in err and "no GPU profiles found" not in err
        assert "an Nsight Systems report" in err and "Nsight Systems 2025.5.1 of `build/test1 4` on lava" in err
        assert f"{EXPORT} " in err and f" {name}" in err
    stem = name.rsplit(".", 1)[0]
    out = f"{stem}.export.sqlite" if name.endswith(".sqlite") else f"{stem}.sqlite"  # never over the report itself
    assert f"{EXPORT} {out} {name}" in err


def test_a_nsys_rep_without_nsys_says_what_its_header_says(tmp_path, capsys):
    """Fails on base (the export command only): the report named as one, where nsys is not on PATH, also says
    which Nsight and which program."""
    if shutil.which("nsys"):
        pytest.skip("nsys is on PATH here: the report is exported, not refused")
    shutil.copy(HEAD, tmp_path / "report1.nsys-rep")
    err = _error(tmp_path / "report1.nsys-rep", capsys)
    assert "recorded by Nsight Systems 2025.5.1 of `build/test1 4` on lava" in err and "nsys export --type sqlite" in err


def test_bytes_that_are_no_report_under_its_name_are_said_so(tmp_path, capsys):
    """Fails on base (called "an Nsight Systems report" for its name alone): garbage named ``.nsys-rep``."""
    if shutil.which("nsys"):
        pytest.skip("nsys is on PATH here: its own export says why")
    (tmp_path / "x.nsys-rep").write_bytes(bytes(range(256)) * 8)
    err = _error(tmp_path / "x.nsys-rep", capsys)
    assert "its bytes are not one" in err and "recorded by" not in err


@pytest.mark.parametrize("cut", [len(NSYS_REPORT_MAGIC), len(NSYS_REPORT_MAGIC) + 10, 60, 100, 2000])
def test_a_cut_off_header_says_what_it_can(cut):
    """Hostile bytes: a report cut anywhere in its header never raises; what the cut kept stands."""
    version, command, host = nsys_report_header(HEAD.read_bytes()[:cut])
    assert version in (None, "2025.5.1") and command in (None, "build/test1 4") and host in (None, "lava")
    assert command is None  # the launch (14.6 kB) is not whole in 2 kB


@pytest.mark.parametrize("tail", [
    b"1.\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f",  # a declared length of 2^63
    b"1.\xd2\x01\xff\xff\xff\xff\x0f\x52\x03abc",  # the launch declaring 4 GiB in a 10-byte file
    b"1.\xd2\x01\x05\x52\x03\x00\x01\x02",  # a program of control bytes
    b"\x80" * 5000,  # no tag's end, no dot
    b"2025@5@1@" + b"9" * 70000,  # a tag longer than any real one
    os.urandom(4096),
])
def test_hostile_headers_never_raise_nor_read_past_the_head(tail):
    head = NSYS_REPORT_MAGIC + tail
    version, command, host = nsys_report_header(head)
    assert command is None and host is None


def test_hostile_file_in_a_folder_is_named_never_healthy(tmp_path, capsys):
    (tmp_path / "run.bin").write_bytes(NSYS_REPORT_MAGIC + b"1.\xd2\x01\xff\xff\xff\xff\x0f")
    err = _error(tmp_path, capsys)
    assert "an Nsight Systems report" in err and "recorded by" not in err and f"{EXPORT} run.sqlite run.bin" in err


def test_other_files_are_no_report():
    """Control (passes on base too, by construction of the recognisers): an SQLite export, an XPlane, a Perfetto
    trace and a JSON trace are neither report."""
    others = [next((FIXTURES / "wild").glob("*/plugins/profile/*/*.xplane.pb")),
              FIXTURES / "foreign" / "perfetto_rocprofv3_pftrace" / "output_results.pftrace",
              *sorted((FIXTURES / "foreign").glob("nsys_a100_*/*.sqlite"))[:1]]
    for path in others:
        head = path.read_bytes()[:64]
        assert not is_nsys_report_head(head) and not is_ncu_report_head(head), path


@pytest.mark.parametrize("name", ["vector_add_N10.nsys-rep", "vector_add_profile_serial.nsys-rep", "report4.qdrep",
                                  "armleth_nsys_report.nsys-rep"])
def test_local_reports_of_every_format_tag(name, tmp_path, capsys):
    """Unlicensed local copies (skipped where absent): the 2023.1.2 and 2019.6.1 reports' tag is ``1``, their version
    read from their install's path; 2025.2.1's from its tag."""
    path = _local(name)
    want = {"vector_add_N10.nsys-rep": ("2023.1.2", "./bench_a100"),
            "vector_add_profile_serial.nsys-rep": ("2023.1.2", "./bench_a100"),
            "report4.qdrep": ("2019.6.1", None), "armleth_nsys_report.nsys-rep": ("2025.2.1", "a.out")}[name]
    version, command, _ = nsys_report_header(path.read_bytes()[:64 << 10])
    assert (version, command) == want
    shutil.copy(path, tmp_path / "capture.dat")
    err = _error(tmp_path / "capture.dat", capsys)
    assert f"Nsight Systems {want[0]}" in err and f"{EXPORT} capture.sqlite capture.dat" in err


@pytest.mark.parametrize("name", ["lakshya_vec_add.ncu-rep", "armleth_report.ncu-rep"])
def test_local_ncu_report_under_another_name_is_a_counter_collection(name, tmp_path, capsys):
    """Fails on base ("not a profile this tool reads"); skipped where the unlicensed local copy is absent."""
    path = _local(name)
    assert is_ncu_report_head(path.read_bytes()[:8])
    shutil.copy(path, tmp_path / "kernels.bin")
    for given in (tmp_path / "kernels.bin", tmp_path):
        err = _error(given, capsys)
        assert "an Nsight Compute report under another name" in err and "nsys profile" in err
        assert "no GPU profiles found" not in err


#: The first line of real Nsight Systems streams as written (``tests/discover/test_nsys_stream.py``'s ``STREAMS``, read
#: from Perlmutter's 2025.3.1 and a 2019.6.1 laptop's ``.qdstrm``, survey h37-wild54n).
STREAM_HEADS = [b"U3w[END]NVIDIA Nsight Systems Stream 2025.3.1.90-253135822126v0!",
                b"\x00\xff\x00\xff\x00\xff\x00\xffNVIDIA Nsight Systems Stream 2019.6.1.85-1548171!"]


@pytest.mark.parametrize("head", STREAM_HEADS, ids=["2025.3.1", "2019.6.1"])
def test_a_stream_under_another_name_is_named_with_its_import(head, tmp_path, capsys):
    """Fails on base ("not a profile this tool reads"; its folder "no GPU profiles found"): a ``.qdstrm`` saved as
    ``capture.bin`` is the stream, copied back to its name for the importer."""
    (tmp_path / "capture.bin").write_bytes(head + b"\n" + bytes(range(256)) * 4)
    for given in (tmp_path / "capture.bin", tmp_path):
        err = _error(given, capsys)
        assert "Nsight Systems' raw capture stream (.qdstrm) under another name" in err
        assert "cp capture.bin capture.qdstrm ; <nsight-systems>/host-linux-x64/QdstrmImporter -i capture.qdstrm" in err


def test_local_stream_under_another_name(tmp_path, capsys):
    path = _local("gartangh_report1.qdstrm")  # gartangh/Master-s-Dissertation report1.qdstrm (5,366 B, 2019.6.1)
    shutil.copy(path, tmp_path / "stream")
    assert "QdstrmImporter -i stream.qdstrm" in _error(tmp_path / "stream", capsys)
