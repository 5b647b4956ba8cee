"""A compressed Nsight Systems export is named, with the command that restores it -- never "no GPU profiles found".

The real CS336 DDP export kept in ``tests/fixtures/nsys_ranks`` (SOURCE.md there) is shared as ``.sqlite.gz``, as
exports often are: main listed nothing in that folder and said only "no GPU profiles found", given the folder, and
"not a profile this tool reads" given the file.  SQLite reads a database in place, so the Advisor reads the export once
it is decompressed; the decompressed copy of the same file is the control.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tb_gpu_advisor.formats.nsys.layout import compressed
from tests.support.paths import DDP_EXPORT, gunzipped

FIXTURE = DDP_EXPORT


def test_a_logdir_holding_only_a_gzipped_export_names_it_and_its_command(capsys):
    assert cli(["report", str(FIXTURE.parent), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert "ddp_overlap_rtx3090.sqlite.gz" in err and "gunzip -k ddp_overlap_rtx3090.sqlite.gz" in err
    assert "no GPU profiles found" not in err
    assert dict(skipped(str(FIXTURE.parent))) == {FIXTURE.name: compressed(FIXTURE.name)}


def test_the_file_given_alone_is_named_as_a_compressed_export(capsys):
    assert cli(["report", str(FIXTURE), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert "compressed Nsight Systems export" in err and "not a profile this tool reads" not in err


def test_control_the_decompressed_export_is_read(tmp_path: Path):
    run = gunzipped(FIXTURE, tmp_path / "ddp").parent
    shutil.copy(FIXTURE, run / FIXTURE.name)  # its compressed twin beside it is the read file's companion
    assert [Path(h.path).name for s in discover(str(tmp_path)) for h in s.hosts] == ["ddp_overlap_rtx3090.sqlite"]
    assert skipped(str(tmp_path)) == []


@pytest.mark.parametrize("name, restored", [("a.sqlite.xz", "xz -dk a.sqlite.xz"), ("r.nsys-rep.zst", "zstd -d"),
                                            ("t.db.bz2", "bunzip2 -k t.db.bz2")])
def test_every_usual_compression_names_its_command(name: str, restored: str):
    assert restored in compressed(name)


@pytest.mark.parametrize("name", ["trace.json.gz", "x.gz", ".sqlite.gz", "notes.txt"])
def test_control_other_files_are_not_called_exports(name: str):
    assert compressed(name) is None
