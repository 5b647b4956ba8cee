"""A binary profile that went through a UTF-8 text decoder is named as that, in every format, with how to fetch it again.

Survey h37-survey51: openxla/xprof's commit bfd424c8 ("Standardize import guards, visibility, imports", 2025-12-15)
rewrote its test XPlane ``xprof/convert/test_xplanes/tpu_inference_2.xplane.pb`` as text: each byte a UTF-8 decoder
could not read became U+FFFD (``EF BF BD``), 862,707 bytes grew to 1,365,940, and the file decodes as valid UTF-8
while keeping the protobuf's control bytes.  The Advisor said "not a readable XSpace profile (truncated or foreign
file): field runs past the end of the file" -- neither is the cause.  The same conversion of a memory snapshot or an
Nsight export read "not a pickle" and "an SQLite file that cannot be read (database disk image is malformed)".

Real: the committed text copy (kept gzipped, ``tests/fixtures/foreign/tpu_v6e_inference_as_text``).  By construction:
the intact XPlane of the same capture (``tpu_v6e_inference``, xprof's earlier commit), a real snapshot and a real
export, each decoded as UTF-8 with replacement and written back.  Controls: the intact files, a truncated XPlane, and
a cut trace whose names hold U+FFFD (text: no control bytes) keep their own readings.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AS_TEXT = FIXTURES / "foreign" / "tpu_v6e_inference_as_text" / "tpu_inference_2.xplane.pb.gz"
XPLANE = next((FIXTURES / "foreign" / "tpu_v6e_inference").rglob("*.xplane.pb"))
SNAPSHOT = FIXTURES / "wild" / "snapshot_windows_gpt" / "memory_snapshot.pickle"
EXPORT = FIXTURES / "foreign" / "nsys_a100_saxpy_mpi" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
SAID = "a binary profile converted to text, not the profile"
SESSION = "run/plugins/profile/2025_12_15_00_00_00"


def _as_text(data: bytes) -> bytes:
    """What an editor or a text API writes back from a binary file: UTF-8 decoded with replacement, then encoded."""
    return data.decode("utf-8", "replace").encode("utf-8")


def _report_err(capsys, target: Path) -> tuple[int, str]:
    rc = cli(["report", str(target), "--cache-dir", "off"])
    return rc, capsys.readouterr().err


def test_the_xplane_xprof_committed_as_text_is_named_as_a_text_copy(tmp_path, capsys):
    path = tmp_path / SESSION / "tpu_inference_2.xplane.pb"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.decompress(AS_TEXT.read_bytes()))
    assert path.stat().st_size == 1_365_940
    rc, err = _report_err(capsys, tmp_path)
    assert rc == 2
    assert SAID in err and "12,704 of the first 37,694 characters are U+FFFD" in err
    assert "Fetch the file again as binary" in err
    assert "truncated or foreign file" not in err and "runs past the end" not in err


@pytest.mark.parametrize("src,rel", [(XPLANE, f"{SESSION}/w.xplane.pb"), (SNAPSHOT, "run/memory_snapshot.pickle"),
                                     (EXPORT, "run/report.sqlite")])
@pytest.mark.parametrize("alone", [False, True])
def test_each_formats_binary_converted_to_text_says_so(tmp_path, capsys, src, rel, alone):
    path = tmp_path / rel
    path.parent.mkdir(parents=True)
    path.write_bytes(_as_text(src.read_bytes()))
    rc, err = _report_err(capsys, path if alone else tmp_path)
    assert rc == 2 and SAID in err
    assert "not a pickle" not in err and "malformed" not in err and "truncated or foreign" not in err


@pytest.mark.parametrize("src", [XPLANE, SNAPSHOT, EXPORT])
def test_control_the_intact_binaries_are_no_text_copies(src):
    from tb_gpu_advisor.formats import text_decoded

    assert text_decoded(str(src)) is None


def test_control_a_truncated_xplane_keeps_its_own_words(tmp_path, capsys):
    path = tmp_path / SESSION / "w.xplane.pb"
    path.parent.mkdir(parents=True)
    data = XPLANE.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    rc, err = _report_err(capsys, tmp_path)
    assert rc == 2 and "truncated or foreign file" in err and SAID not in err


def test_control_a_cut_trace_whose_names_hold_replacements_is_text_not_a_text_copy(tmp_path, capsys):
    """A trace is text: names mis-decoded upstream carry U+FFFD, but no control byte, so its own reading stands."""
    names = ",".join(f'{{"ph": "X", "name": "op\ufffd\ufffd{i}", "ts": {i}, "dur": 1, "pid": 1, "tid": 1}}'
                     for i in range(200))
    path = tmp_path / "run" / "w.1.pt.trace.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"traceEvents": [' + names[: len(names) // 2], encoding="utf-8")
    rc, err = _report_err(capsys, tmp_path)
    assert rc == 2 and SAID not in err


def test_the_fixture_is_the_committed_blob():
    """The kept copy is the blob at xprof bfd424c8 (git object 60203f9c...), gzipped, not a copy we made."""
    import hashlib

    raw = gzip.decompress(AS_TEXT.read_bytes())
    assert hashlib.sha1(b"blob %d\x00" % len(raw) + raw).hexdigest().startswith("60203f9c6319489f")
