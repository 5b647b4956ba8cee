"""A PyTorch trace re-saved as UTF-16 (or with UTF-8's BOM) is the same trace, read as such.

Survey h37-survey13: incredere/ml-accelerator-profiling-labs commits ``gpt2.pt.trace.json`` written on Windows by
PowerShell 5 (``FF FE 7B 00 22 00 ...``: UTF-16 LE with its BOM); main called it "not JSON ... not a PyTorch
profiler trace", though it is JSON and a trace's shape.  Notepad's "Unicode" and PowerShell's ``>`` / ``Out-File``
write UTF-16, ``Set-Content -Encoding UTF8`` adds UTF-8's BOM.  The file has no licence, so the test builds the cases:
the synthetic ``input_bound`` run (truth by construction) encoded each way must give the UTF-8 file's report, and
the real file's content (an empty ``traceEvents``) its own error, not "not JSON".
"""

from __future__ import annotations

import codecs
import gzip
import os
from pathlib import Path

import pytest

from synthetic import torchtrace
from tb_gpu_advisor.formats.kineto.layout import sniff, text_encoding
from tests.support.cli_report import first_report


def _reencode(text: str, how: str) -> bytes:
    """The trace's text as a Windows tool would save it."""
    return {"utf-16-le-bom": codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
            "utf-16-be": text.encode("utf-16-be"),
            "utf-8-bom": codecs.BOM_UTF8 + text.encode("utf-8"),
            "utf-32-le-bom": codecs.BOM_UTF32_LE + text.encode("utf-32-le")}[how]


def _summary(rep: dict) -> tuple:
    """What the user reads first: steps, the job, the findings with their savings."""
    host = rep["hosts"][0]
    return (host.get("error"), host["job"]["kind"], len(host.get("steps", [])) or rep.get("steps"),
            [(f["rule"], f["severity"], round(f.get("savings_ms") or 0.0, 3)) for f in rep["findings"]])


@pytest.fixture(scope="module")
def utf8_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    """The input-bound run as PyTorch writes it (UTF-8) and its report."""
    (path,) = torchtrace.write_run(str(tmp_path_factory.mktemp("utf8")), "input_bound", steps=6, run="run")
    return path, first_report(path)


@pytest.mark.parametrize("how", ["utf-16-le-bom", "utf-16-be", "utf-8-bom", "utf-32-le-bom"])
def test_a_reencoded_trace_reads_as_the_trace_it_is(utf8_run: tuple[str, dict], tmp_path: Path, how: str) -> None:
    path, want = utf8_run
    assert want["findings"][0]["rule"] == "input_bound" and not want["hosts"][0].get("error")
    copy = tmp_path / "run" / os.path.basename(path)
    copy.parent.mkdir()
    copy.write_bytes(_reencode(Path(path).read_text(encoding="utf-8"), how))
    assert _summary(first_report(str(copy))) == _summary(want)


def test_a_gzipped_utf16_trace_reads_too(utf8_run: tuple[str, dict], tmp_path: Path) -> None:
    path, want = utf8_run
    copy = tmp_path / "run" / (os.path.basename(path) + ".gz")
    copy.parent.mkdir()
    copy.write_bytes(gzip.compress(_reencode(Path(path).read_text(encoding="utf-8"), "utf-16-le-bom")))
    assert _summary(first_report(str(copy))) == _summary(want)


def test_an_exported_trace_in_utf16_is_sniffed_as_a_trace(utf8_run: tuple[str, dict], tmp_path: Path) -> None:
    """``export_chrome_trace("trace.json")`` re-saved: a JSON file not named by the handler is a trace by content."""
    path, _ = utf8_run
    other = tmp_path / "trace.json"
    other.write_bytes(_reencode(Path(path).read_text(encoding="utf-8"), "utf-16-le-bom"))
    assert sniff(str(other)) is None


def test_the_real_files_empty_trace_says_it_holds_no_event_not_that_it_is_no_json(tmp_path: Path) -> None:
    """incredere's 44 bytes, byte for byte in shape: `{"traceEvents": []}` + CRLF in UTF-16 LE with its BOM."""
    p = tmp_path / "gpt2.pt.trace.json"
    p.write_bytes(codecs.BOM_UTF16_LE + '{"traceEvents": []}\r\n'.encode("utf-16-le"))
    assert p.stat().st_size == 44
    error = first_report(str(p))["hosts"][0]["error"]
    assert "no readable event" in error and "not JSON" not in error


def test_plain_and_binary_starts_are_left_as_they_are() -> None:
    """The encoding is told only by a BOM or by NULs beside ASCII; plain UTF-8 and gzip's magic are no UTF-16."""
    assert text_encoding(b'{"tr') == ("utf-8", 0)
    assert text_encoding(b"\x1f\x8b\x08\x00") == ("utf-8", 0)
    assert text_encoding(b"\xef\xbb\xbf{") == ("utf-8", 3)
    assert text_encoding(b"\xff\xfe{\x00") == ("utf-16-le", 2)
    assert text_encoding(b"\xff\xfe\x00\x00") == ("utf-32-le", 4)
    assert text_encoding(b"{\x00\"\x00") == ("utf-16-le", 0)


def test_an_exported_trace_holding_only_a_newline_is_empty_not_json_without_events(tmp_path: Path) -> None:
    """ASB1127/HPMLProj committed ``Lora/profile_trace.json`` once as a single newline (1 byte): main called it "JSON
    without traceEvents: not a trace"; it holds no JSON at all.  A UTF-16 newline is as empty."""
    p = tmp_path / "profile_trace.json"
    for content in (b"\n", b" \r\n\t", codecs.BOM_UTF16_LE + "\r\n".encode("utf-16-le")):
        p.write_bytes(content)
        why = sniff(str(p))
        assert why is not None and why.startswith("empty") and "traceEvents" not in why
    p.write_bytes(b'\n{"schemaVersion": 1}\n')  # control: JSON after the whitespace is still judged as JSON
    assert "without traceEvents" in (sniff(str(p)) or "")
