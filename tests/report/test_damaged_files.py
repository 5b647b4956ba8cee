"""A damaged or partial file is never healthy, and every surface says what was lost (issue 27 item 11).

Before: a PyTorch trace cut at 62% (inside an event) was reported "Healthy" (or with findings whose numbers covered
only part of the capture), the reader's "cut off at byte N" only in the JSON's ``capture.notes``; the CLI exited 0.
Now the host carries ``damage``, the verdict starts with "partial: the file is damaged (...)", the text and
markdown open with what was lost, ``healthy`` is false and the CLI exits 2 naming the file.

Fuzz cases: truncations at several offsets of a real fixture (the wild AMD MI300X trace, cut in its JSON and in its
gzip bytes) and of a real H100 capture, each analysed end to end.  A cut either leaves whole events to analyse (a
partial report that says so) or none (a read error): never a report that looks whole.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from tb_gpu_advisor.model.schema import HostReport, Report
from tb_gpu_advisor.report import merge, render
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.run_report import cli_report, fresh_report

AMD = FIXTURES / "wild" / "amd_mi300x" / "bert_small.pt.trace.json.gz"
H100 = SHARED_PROFILES / "real-h100-torch" / "torch_healthy_bf16"
#: Where the fixtures are cut, as fractions of their bytes: the issue's 61-64% and both ends.
CUTS = (0.05, 0.3, 0.5, 0.61, 0.62, 0.63, 0.64, 0.8, 0.95, 0.999)


def _write(logdir: Path, data: bytes, gz: bool = False) -> Path:
    run = logdir / "run"
    run.mkdir(parents=True, exist_ok=True)
    path = run / ("vm.1700000000000.pt.trace.json" + (".gz" if gz else ""))
    path.write_bytes(data)
    return path


_report, _cli = fresh_report, cli_report


def _assert_never_whole(report: Report, where: str) -> None:
    """A cut file: no healthy verdict, and every surface says the host is damaged (or could not be read at all)."""
    (h,) = report.hosts
    assert not report.healthy, where
    assert not report.verdict.startswith("Healthy"), (where, report.verdict)
    assert h.error or h.damage, (where, report.verdict)
    if h.error:
        return
    assert report.verdict.startswith("partial: the file is damaged ("), (where, report.verdict)
    assert any("the file is damaged and was only partly read" in n for n in report.notes)
    text, md = render.to_text(report), render.to_markdown(report)
    assert "DAMAGED FILE: vm: the file is damaged" in text and h.damage[0].split(",")[0] in " ".join(text.split()), where
    assert text.count(h.damage[0].split(",")[0][:24]) <= 1, where  # stated once: the verdict points to the paragraph
    assert "> **Damaged file:**" in md, where
    assert text.count("the file is damaged and was only partly read") == 1  # at the top, not again as a note
    doc = json.loads(report.to_json())
    assert doc["hosts"][0]["damage"] == h.damage and doc["healthy"] is False


@pytest.mark.parametrize("frac", CUTS)
def test_the_amd_trace_cut_in_its_json_is_never_whole(tmp_path, frac):
    raw = gzip.decompress(AMD.read_bytes())
    _write(tmp_path, raw[: int(len(raw) * frac)])
    _assert_never_whole(_report(tmp_path), f"json cut at {frac}")


@pytest.mark.parametrize("frac", (0.2, 0.62, 0.9, 0.999))
def test_the_amd_trace_cut_in_its_gzip_bytes_is_never_whole(tmp_path, frac):
    raw = AMD.read_bytes()
    _write(tmp_path, raw[: int(len(raw) * frac)], gz=True)
    _assert_never_whole(_report(tmp_path), f"gzip cut at {frac}")


@pytest.mark.skipif(not H100.is_dir(), reason="shared real H100 captures missing")
@pytest.mark.parametrize("frac", (0.3, 0.62, 0.64, 0.95))
def test_a_real_h100_capture_cut_is_never_whole(tmp_path, frac):
    (src,) = H100.glob("*.pt.trace.json")
    raw = src.read_bytes()
    _write(tmp_path, raw[: int(len(raw) * frac)])
    _assert_never_whole(_report(tmp_path), f"H100 cut at {frac}")


def test_the_whole_files_are_not_damaged(tmp_path):
    """The control: the same fixtures uncut have no damage, and their verdict is what it was."""
    _write(tmp_path / "amd", AMD.read_bytes(), gz=True)
    report = _report(tmp_path / "amd")
    assert report.hosts[0].damage == [] and not report.verdict.startswith("partial")
    assert "DAMAGED" not in render.to_text(report)


def test_the_cli_exits_2_and_names_the_damaged_file(tmp_path):
    raw = gzip.decompress(AMD.read_bytes())
    _write(tmp_path, raw[: int(len(raw) * 0.62)])
    code, out, err = _cli(tmp_path)
    assert code == 2
    assert "FINDINGS: partial: the file is damaged (see DAMAGED FILE below)" in out and "the trace is cut off at byte" in out
    assert "host 'vm': the file is damaged, the report is partial: the trace is cut off at byte" in err
    code, out, _ = _cli(tmp_path, "--format", "json")
    assert code == 2 and json.loads(out)["healthy"] is False


def test_one_damaged_host_of_two_makes_the_session_partial():
    whole = HostReport(host="a", path="a", size_bytes=1, capture={"num_events": 10})
    cut = HostReport(host="b", path="b", size_bytes=1, capture={"num_events": 4},
                     damage=["the trace is cut off at byte 99, inside an event: was it still being written?"])
    report = merge.merge_hosts("r", "s", [whole, cut])
    assert not report.healthy
    assert report.verdict == "partial: 1 of 2 host files are damaged (b) — no check fired on what was read"
    assert any(n.startswith("b: the file is damaged and was only partly read: the trace is cut off at byte 99")
               and "(4 events)" in n for n in report.notes)
    whole_only = merge.merge_hosts("r", "s", [whole])
    assert whole_only.verdict.startswith("Healthy") and whole_only.healthy


def test_the_fuzz_fixtures_are_here():
    """The fuzz cases must not silently shrink to nothing."""
    assert AMD.is_file() and os.path.getsize(AMD) > 10_000


def test_a_diff_with_a_damaged_side_says_so(tmp_path):
    from tb_gpu_advisor.report import diff, diff_render

    _write(tmp_path / "whole", AMD.read_bytes(), gz=True)
    raw = gzip.decompress(AMD.read_bytes())
    _write(tmp_path / "cut", raw[: int(len(raw) * 0.95)])
    d = diff.diff_reports(_report(tmp_path / "whole"), _report(tmp_path / "cut"))
    assert any(n.startswith("new: vm: the file is damaged and was only partly read") for n in d.notes)
    assert "the file is damaged" in diff_render.to_text(d)
