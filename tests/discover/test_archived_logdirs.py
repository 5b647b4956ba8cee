"""A logdir or session folder packed whole into an archive -- how people hand in, attach and commit captures (a UIUC
CS521 student's ``trace1/trace_jax.zip`` of a JAX A10G logdir, x2w-soda/cs521-fa26-mp2; iree-org/aster's
``traces.zip``; facebookresearch/param's ``dlrm_kineto.tar.gz``) -- is named for the profiles it holds with the
command that unpacks it, never "not a profile this tool reads" nor, in a logdir, the silent "no GPU profiles found"
with the frameworks' capture help (survey h37-huntxla63: main said exactly those).

The archives are built here from kept real captures (``wild/jax_mi300x``: JAX 0.8's XPlane, MIT;
``wild/ddp_a100_nccl``: a Kineto trace, see PROVENANCE.md), packed as the profilers wrote them."""

from __future__ import annotations

import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import archive_file
from tests.support.paths import FIXTURES

JAX = FIXTURES / "wild" / "jax_mi300x"
KINETO = FIXTURES / "wild" / "ddp_a100_nccl" / "rank0.2910249.pt.trace.json.gz"
XPLANE = "plugins/profile/2025_10_01_00_00_00/tw003.xplane.pb"


def _error(target: Path, capsys) -> str:
    assert cli(["report", str(target), "--cache-dir", "off"]) == 2  # nothing to analyse: the same exit code as before
    return capsys.readouterr().err


def _zip_logdir(dest: Path) -> Path:
    with zipfile.ZipFile(dest, "w") as z:  # ``zip -r trace_jax.zip trace_jax``: the run folder inside
        z.write(JAX / XPLANE, "trace_jax/" + XPLANE)
    return dest


pytestmark = pytest.mark.skipif(not (JAX / XPLANE).is_file(), reason="fixture not here")


def test_a_zipped_jax_logdir_given_by_path_is_named(tmp_path: Path, capsys):
    err = _error(_zip_logdir(tmp_path / "trace_jax.zip"), capsys)
    assert "zip archive of 1 profile file the Advisor reads" in err and "trace_jax/" + XPLANE in err
    assert "unzip trace_jax.zip -d" in err and "not a profile this tool reads" not in err


def test_a_zipped_logdir_inside_a_logdir_is_named(tmp_path: Path, capsys):
    (tmp_path / "trace1").mkdir()
    _zip_logdir(tmp_path / "trace1" / "trace_jax.zip")
    err = _error(tmp_path, capsys)
    assert "trace1/trace_jax.zip" in err and "zip archive of 1 profile file the Advisor reads" in err
    assert "no GPU profiles found" not in err


@pytest.mark.skipif(not KINETO.is_file(), reason="fixture not here")
def test_a_tarball_of_kineto_traces_is_named(tmp_path: Path, capsys):
    path = tmp_path / "dlrm_kineto.tar.gz"
    with tarfile.open(path, "w:gz") as t:
        t.add(KINETO, "dlrm_kineto/" + KINETO.name)
    err = _error(path, capsys)
    assert "tar.gz archive of 1 profile file the Advisor reads" in err and "tar -xzf dlrm_kineto.tar.gz" in err


def test_control_an_archive_of_other_files_is_no_profile(tmp_path: Path, capsys):
    """A zip of a script and a README holds no profile: the message is the one before."""
    path = tmp_path / "code.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mp2/myconv_jax.py", "import jax\n")
        z.writestr("mp2/README.md", "# MP2\n")
    err = _error(path, capsys)
    assert "not a profile this tool reads" in err and "archive of" not in err


def test_control_a_damaged_zip_is_no_profile(tmp_path: Path, capsys):
    path = tmp_path / "trace_jax.zip"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    err = _error(path, capsys)
    assert "not a profile this tool reads" in err and "archive of" not in err


def test_control_the_unpacked_logdir_is_read(tmp_path: Path):
    """The command the message gives works: the unpacked folder is a logdir the Advisor reads."""
    with zipfile.ZipFile(_zip_logdir(tmp_path / "trace_jax.zip")) as z:
        z.extractall(tmp_path / "out")
    assert cli(["report", str(tmp_path / "out"), "--cache-dir", "off"]) == 0


ZIP = os.environ.get("TB_GPU_ADVISOR_WILD63_ZIP", "/work/wild63/huntxla63/realzip/tensorboard_logs.zip")


@pytest.mark.skipif(not os.path.isfile(ZIP), reason="the unlicensed archive is not here")
def test_the_committed_archive_is_named_for_its_sessions():
    """Pol-Zeimet/Gestenerkennung_Projektarbeit_2 (no licence: kept in a session's scratch folder only, skipped where
    absent) commits nine TF 2.3 Colab sessions as one ``tensorboard_logs.zip`` (2,648,461 bytes): each session's
    ``<host>.xplane.pb`` and the ``<host>.trace.json.gz`` TensorFlow 2.3 converted beside it, 18 files a layout reads."""
    words = archive_file(ZIP)
    assert words is not None and "zip archive of 18 profile files" in words and "unzip tensorboard_logs.zip" in words
