"""``.nsys-rep`` reports: without ``nsys`` a clear error with the one command to run; with it (a stand-in ``nsys``
script on PATH here) exported once into the report cache -- never beside the user's file -- and read from there."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import stat
import tempfile

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.formats.nsys import export, reader
from tb_gpu_advisor.formats.nsys.tables import NsysReadError

#: ``nsys export --type sqlite --force-overwrite true -o OUT IN``: copies $STANDIN_SQLITE to OUT, counts its calls.
STANDIN = """#!/bin/sh
echo "$@" >> "$STANDIN_LOG"
[ "$1" = "export" ] || exit 3
out=""
while [ $# -gt 1 ]; do
  case "$1" in -o|--output) out="$2"; shift;; esac
  shift
done
[ -f "$1" ] || { echo "no such report $1"; exit 4; }
[ -n "$STANDIN_FAIL" ] && { echo "Fatal error: cannot export"; exit 1; }
cp "$1" "$STANDIN_LOG.input"
cp "$STANDIN_SQLITE" "$out"
"""


#: A stand-in report's first bytes: a real report's magic and format tag (``formats.heads.NSYS_REPORT_MAGIC``; 2019.6
#: to 2023's tag ``1``, survey h37-heads60), whose bytes the reader checks where nsys is absent.
REPORT_HEAD = b"NVIDIA Tegra Profiler Report 1."


def _report_in_run(tmp_path, name: str, data: bytes):
    """A report not yet exported, ``name``, in a run folder of a logdir under ``tmp_path``."""
    run = tmp_path / "logdir" / "run"
    run.mkdir(parents=True)
    rep = run / name
    rep.write_bytes(data)
    return rep


@pytest.fixture
def report(tmp_path):
    return _report_in_run(tmp_path, "report7.nsys-rep", REPORT_HEAD + b"\x00NSYS report, binary")


@pytest.fixture
def standin(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "nsys"
    script.write_text(STANDIN)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    src = tmp_path / "exported.sqlite"
    truth = write(str(src), NsysJob(steps=4))
    log = tmp_path / "nsys.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_SQLITE", str(src))
    monkeypatch.setenv("STANDIN_LOG", str(log))
    return truth, log


def test_without_nsys_the_error_names_the_command(report, tmp_path, monkeypatch):
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(NsysReadError) as e:
        reader.read_trace(str(report))
    want = f"nsys export --type sqlite -o {report.with_suffix('.sqlite')} {report}"
    assert "nsys is not on PATH" in str(e.value) and want in str(e.value)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["report", str(report)])
    assert code == 2 and want in err.getvalue()


def test_exported_once_into_the_cache_never_beside_the_report(report, standin):
    truth, log = standin
    before = sorted(os.listdir(report.parent))
    t = reader.read_trace(str(report))
    assert sorted(os.listdir(report.parent)) == before  # nothing written beside the user's file
    assert len(t.devices[0]) == truth.kernels[0] + truth.h2d_copies[0]
    cached = export.cached_path(str(report))
    assert cached.startswith(os.environ["TB_GPU_ADVISOR_CACHE_DIR"]) and os.path.isfile(cached)
    calls = log.read_text().splitlines()
    assert len(calls) == 1 and calls[0].startswith("export --type sqlite")
    # nsys was given a private copy of the report's bytes (made through the checked descriptor), never the logdir's
    # path, and the copy is gone after
    given = calls[0].split()[-1]
    assert not given.startswith(str(report.parent.parent)) and not os.path.exists(os.path.dirname(given))
    assert (log.parent / (log.name + ".input")).read_bytes() == report.read_bytes()
    reader.read_trace(str(report))
    assert len(log.read_text().splitlines()) == 1  # read from the cache, not exported again
    os.utime(report, ns=(1, 1))  # a new report under the same name: exported again
    reader.read_trace(str(report))
    assert len(log.read_text().splitlines()) == 2


def test_report_command_on_a_logdir_with_a_report(report, standin):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["report", str(report.parent.parent), "--format", "json"])
    assert code in (0, 1)
    assert '"report7"' in out.getvalue() and '"error": null' in out.getvalue()


def test_a_failing_export_says_so(report, standin, monkeypatch):
    monkeypatch.setenv("STANDIN_FAIL", "1")
    with pytest.raises(NsysReadError, match="nsys export failed .*exit 1.*cannot export.*nsys export --type sqlite"):
        reader.read_trace(str(report))
    assert not os.path.exists(export.cached_path(str(report)))
    assert not [n for n in os.listdir(os.path.dirname(export.cached_path(str(report)))) if ".tmp-" in n]


def test_a_report_nsys_cannot_export_carries_a_record(report, standin, monkeypatch):
    """nsys ran, read the report and could not export it: the host says its records could not be read (a record,
    ``nsys_export_failed``), not only an error (h37-damage67b; it carried none on base 776bb150)."""
    from tb_gpu_advisor.model.damage import UNREADABLE, of_error

    monkeypatch.setenv("STANDIN_FAIL", "1")
    with pytest.raises(NsysReadError) as e:
        reader.read_trace(str(report))
    d = of_error(e.value)
    assert d is not None and (d.kind, d.what) == (UNREADABLE, "nsys_export_failed") and "exit 1" in d.detail, d


def test_cache_off_exports_to_the_temp_folder(report, standin, monkeypatch, tmp_path):
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_DIR", "off")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", None)
    reader.read_trace(str(report))
    assert export.cached_path(str(report)).startswith(str(tmp_path / "tmp"))


def test_a_report_over_the_profile_limit_is_refused_before_it_is_copied(report, standin, monkeypatch):
    """nsys exports a private copy of the report: one over the profile limit is refused first (no copy, no export)."""
    truth, log = standin
    monkeypatch.setenv("TB_GPU_ADVISOR_MAX_PROFILE_BYTES", "5")
    with pytest.raises(NsysReadError, match="over the .* limit"):
        reader.read_trace(str(report))
    assert not log.exists()


# --- ``.qdrep``: the same report under its name before Nsight Systems 2021.4 (h37-survey67: quasiben/nvtx-examples
# commits eight ``.qdrep`` beside their exports; the NVIDIA DLI CUDA course's labs write ``*-report.qdrep``)


@pytest.fixture
def old_report(tmp_path):
    return _report_in_run(tmp_path, "vector-add-no-prefetch-report.qdrep", REPORT_HEAD + b"\x00QDREP report, binary")


def test_a_logdir_holding_only_a_qdrep_is_told_the_export_command(old_report, tmp_path, monkeypatch):
    """The wrong assumption: only an ``.nsys-rep`` is a report nsys can export.  A logdir holding only an old
    ``.qdrep`` read "no GPU profiles found" (exit 2 with the capture how-to), as if it held nothing of Nsight's."""
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["report", str(old_report.parent.parent)])
    want = f"nsys export --type sqlite -o {old_report.with_suffix('.sqlite')} {old_report}"
    assert code == 2
    assert "no GPU profiles found" not in err.getvalue()
    assert want in err.getvalue() and ".qdrep" in err.getvalue()


def test_a_qdrep_is_exported_like_an_nsys_rep(old_report, standin):
    truth, _ = standin
    t = reader.read_trace(str(old_report))
    assert len(t.devices[0]) == truth.kernels[0] + truth.h2d_copies[0]
    assert os.path.basename(export.cached_path(str(old_report))).startswith("vector-add-no-prefetch-report-")


def test_a_qdrep_beside_its_export_is_left_out(old_report, standin, monkeypatch):
    """Beside an export of the same name the report is not read (the export is): one host, not two."""
    shutil.copyfile(os.environ["STANDIN_SQLITE"], old_report.with_suffix(".sqlite"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["report", str(old_report.parent.parent), "--format", "json"])
    assert code in (0, 1)
    assert out.getvalue().count('"vector-add-no-prefetch-report"') >= 1
    assert '"error": null' in out.getvalue()
    assert not os.path.exists(os.environ["STANDIN_LOG"])  # nsys never ran: the export beside it was read
