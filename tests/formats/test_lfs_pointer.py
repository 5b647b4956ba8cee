"""A Git LFS pointer where the profile should be is named as that, in every format, with how to fetch the file.

Survey h37-survey15: primatrix/profiling-data commits its JAX logdir's ``t1v-n-1ef60c9b-w-0.xplane.pb`` through Git
LFS, so a clone without LFS content holds a 134-byte pointer to an 847 MB XPlane; the Advisor said "not a readable
XSpace profile (truncated or foreign file): unsupported wire type 6" -- a damaged file, the wrong cause.  The same
pointer under a PyTorch trace's, a memory snapshot's or an Nsight export's name read "not JSON", "not a pickle", "not
an SQLite file".  Truth by construction: pointers written as the LFS specification lays them out (``version``,
``oid sha256:<64 hex>``, ``size <bytes>``), and as the control a real profile's text that holds the same words later.
"""

from __future__ import annotations

import json

import pytest

from tb_gpu_advisor.cli.main import main as cli

OID = "f84a60271689c34c16c45c517beba8de7c38c38981be8c51a1f57428bed65cd7"
POINTER = f"version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize 847257792\n"


@pytest.mark.parametrize("rel", ["run/plugins/profile/2025_12_02_07_36_40/t1v-n-1ef60c9b-w-0.xplane.pb",
                                 "run/w.1.pt.trace.json", "run/memory_snapshot.pickle", "run/report.sqlite"])
def test_a_pointer_in_any_formats_place_is_named_with_its_size_and_the_fetch(tmp_path, capsys, rel):
    path = tmp_path / rel
    path.parent.mkdir(parents=True)
    path.write_text(POINTER)
    assert cli(["report", str(tmp_path), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert "a Git LFS pointer, not the profile" in err and "808.0 MiB" in err and "sha256 f84a6027" in err
    assert "git lfs pull" in err
    assert "wire type" not in err and "not JSON" not in err and "not a pickle" not in err


@pytest.mark.parametrize("name", ["memory_snapshot.pickle", "report.sqlite", "w.1.pt.trace.json"])
def test_the_file_given_alone_says_so_too(tmp_path, capsys, name):
    path = tmp_path / name
    path.write_text(POINTER)
    assert cli(["report", str(path), "--cache-dir", "off"]) == 2
    assert "a Git LFS pointer, not the profile" in capsys.readouterr().err


def test_a_profile_that_mentions_lfs_is_no_pointer(tmp_path):
    from tb_gpu_advisor.formats import lfs_pointer

    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": [], "note": POINTER}))
    assert lfs_pointer(str(path)) is None
    assert "847257792" in path.read_text()  # the pointer's words are there, just not at the start
