"""Issue #37 deliverable 5 (pytorch#176290: snapshots over 1 GB read in bounded memory), its last two whole reads:
PyTorch's memory viewer page (``torch.cuda._memory_viz``'s ``.html``: the snapshot's pickle base64 inside it) and a
remote snapshot (S3, GCS: ``fsio.open_binary`` held the object in memory).

A page whose base64 begins in its first MiB (``layout.PAGE_HEAD_BYTES``; the viewer's own page: after ~400 bytes) is
now decoded as it is read, a part at a time (``layout.PageStream``), into the pickle reader's two streamed passes; a
remote file is copied to a local temporary file in 1 MiB parts, fetched once.  What is read must be what the whole
read gave: the same trace, or the same error in the same words (a page cut, mangled, wrongly padded, empty) -- so
each page is read here both ways (the head made small, so the stream runs on small pages and every part boundary is
met) and compared.  Main read both kinds whole: one read of the page's size, one fetch of the object's body."""

from __future__ import annotations

import base64
import io
import pickle
import tempfile
from pathlib import Path
from typing import Any

import pytest

from synthetic import hostile_inputs as hi
from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot import layout, reader, unpickle
from tests.support import snapshot_paths as sp
from tests.support.paths import FIXTURES

PATHS = [False] + ([True] if sp.CPICKLE is not None else [])
REAL = FIXTURES / "wild" / "snapshot_windows_gpt" / "memory_snapshot.pickle"


def _page(pickled: bytes, b64: str | None = None) -> bytes:
    """The viewer's page of ``pickled`` (``b64``: the base64 text put in it as given)."""
    return hi.page(pickled, b64=b64)


def _summary(path: Path | str) -> Any:
    """What a read gives, to compare: the error's words, or the trace's memory events and dump state."""
    try:
        tr = reader.read_trace(str(path))
    except reader.SnapshotReadError as e:
        return "error", e.reason
    return ("trace", tr.size_bytes, tr.num_events, tr.problems,
            {g: (m.t.tolist(), m.allocated.tolist(), m.reserved.tolist(), m.op_names, m.phase.tolist())
             for g, m in tr.memory.items()},
            dict(tr.snapshot.state), [(b.size, b.frames) for bs in tr.snapshot.blocks.values() for b in bs])


def _both_ways(path: Path, monkeypatch, step: int) -> tuple[Any, Any]:
    """(read whole, read streamed with parts of ``step`` bytes): the head made larger than the page, then 256 bytes."""
    monkeypatch.setattr(layout, "PAGE_HEAD_BYTES", 1 << 30)
    whole = _summary(path)
    monkeypatch.setattr(layout, "PAGE_HEAD_BYTES", 256)
    monkeypatch.setattr(layout, "_B64_STEP", step)
    return whole, _summary(path)


@pytest.mark.parametrize("compiled", PATHS)
def test_a_viewer_page_is_decoded_as_it_is_read_never_whole(compiled: bool, tmp_path: Path, monkeypatch):
    """A 660 KB page of a real snapshot (``wild/snapshot_windows_gpt``, 495 KB), the head and parts made 64 KiB:
    no read asks the page for more than a part (the look at its start: 64 KiB too), each pass reads it once, and the
    trace is the pickle's own.  Main asked for the whole page (its size and a byte) in one read."""
    monkeypatch.setattr(unpickle, "_CPICKLE", sp.CPICKLE if compiled else None)
    monkeypatch.setattr(layout, "PAGE_HEAD_BYTES", 1 << 16)
    monkeypatch.setattr(layout, "_B64_STEP", 1 << 16)
    page = tmp_path / "snapshot.html"
    page.write_bytes(_page(REAL.read_bytes()))
    log: list[tuple[int, int]] = []
    opened = reader.fsio.open_binary
    monkeypatch.setattr(reader.fsio, "open_binary", lambda p: sp.CountingFile(opened(p), log))
    got = _summary(page)
    monkeypatch.setattr(reader.fsio, "open_binary", opened)
    assert got == _summary(REAL) and got[0] == "trace"
    asked = [n for n, _ in log]
    assert -1 not in asked and max(asked) <= 1 << 16, max(asked)
    assert sum(k for _, k in log) <= 4 * page.stat().st_size  # the look, the check of its start, two passes


@pytest.mark.parametrize("step", [5, 64, 4099])
def test_a_page_streamed_reads_as_the_whole_page_does_whatever_its_base64(step: int, tmp_path: Path, monkeypatch):
    """Pages whose base64 is right, padded or not, cut, mangled at its start, middle or end, over-padded, padded
    mid-way, empty, or cut before its quote, each read whole and streamed in parts of 5, 64 and 4,099 bytes: the
    same trace or the same words, on both pickle paths."""
    raw = pickle.dumps(ms.oom_activations().doc, protocol=4)
    good = base64.b64encode(raw).decode("ascii")
    odd = base64.b64encode(raw + b"\x00").decode("ascii")  # a pickle whose length leaves padding
    cases = {"good": good, "padded": odd, "unpadded": odd.rstrip("="), "three_pads": odd.rstrip("=") + "===",
             "pad_inside": good[:400] + "=" + good[400:], "bad_start": "!" + good, "bad_middle": good[:999] + "*" +
             good[999:], "bad_end": good + "#", "one_char_short": good[:-1], "empty": "", "cut_short": good[:4001],
             "cut_at_a_group": good[:4000]}
    for compiled in PATHS:
        monkeypatch.setattr(unpickle, "_CPICKLE", sp.CPICKLE if compiled else None)
        for name, text in cases.items():
            page = tmp_path / f"{name}.html"
            page.write_bytes(_page(raw, text))
            whole, streamed = _both_ways(page, monkeypatch, step)
            assert streamed == whole, (compiled, name)
        cut = tmp_path / "cut.html"  # the page itself cut inside its base64: no closing quote
        cut.write_bytes(_page(raw)[:3000])
        assert _both_ways(cut, monkeypatch, step) == 2 * (("error", layout._CUT_PAGE),)
        mangled = tmp_path / "cut_mangled.html"  # cut and mangled: "cut off" first, as the whole read says it
        mangled.write_bytes(_page(raw, "*" + good)[:3000])
        assert _both_ways(mangled, monkeypatch, step) == 2 * (("error", layout._CUT_PAGE),)


def test_pages_the_stream_cannot_tell_are_read_whole_as_before(tmp_path: Path, monkeypatch):
    """Controls: a page that ends within its head, another tool's page, and a page whose base64 begins past the
    head are read whole (one read of the file), with the answers they had."""
    raw = REAL.read_bytes()
    small = tmp_path / "small.html"
    small.write_bytes(_page(raw))
    late = tmp_path / "late.html"  # 2 MiB of the page's own script before its files
    late.write_bytes(_page(raw).replace(b"const local_files", b"/*" + b" " * (2 << 20) + b"*/\nconst local_files"))
    other = tmp_path / "other.html"
    other.write_bytes(b"<html><body>" + b"x" * (2 << 20) + b"</body></html>")
    log: list[tuple[int, int]] = []
    opened = reader.fsio.open_binary
    monkeypatch.setattr(reader.fsio, "open_binary", lambda p: sp.CountingFile(opened(p), log))
    monkeypatch.setattr(layout, "PAGE_HEAD_BYTES", 4 << 20)
    assert _summary(small) == _summary(REAL)
    monkeypatch.setattr(layout, "PAGE_HEAD_BYTES", 1 << 20)
    log.clear()
    assert _summary(late) == _summary(REAL)
    assert max(n for n, _ in log) > late.stat().st_size  # one read of its size and a byte: whole
    assert _summary(other) == ("error", layout.NOT_VIZ_PAGE)


class _FakeGFile:
    """gfile's ``GFile`` over local files named by their remote paths, each open and read logged."""

    files: dict[str, Path] = {}
    log: list[tuple[str, int]] = []

    def __init__(self, path: str, mode: str = "rb"):
        self._f = io.BytesIO(self.files[path].read_bytes())
        self.log.append(("open", 0))

    def read(self, n: int = -1) -> bytes:
        self.log.append(("read", n))
        return self._f.read(n)

    def close(self) -> None:
        pass

    def __enter__(self) -> "_FakeGFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


@pytest.mark.parametrize("gz", [False, True])
def test_a_remote_snapshot_is_fetched_once_in_parts_never_held_whole(gz: bool, tmp_path: Path, monkeypatch):
    """A snapshot at ``gs://`` (gfile): fetched once, in parts of 1 MiB at most, into a temporary file removed after;
    the trace is the local file's.  Main fetched the body whole (``read()``) into memory."""
    path = tmp_path / "long.pickle"
    ms.write_large(str(path), 20_000)
    if gz:
        import gzip

        (tmp_path / "long.pickle.gz").write_bytes(gzip.compress(path.read_bytes(), 1))
        path = tmp_path / "long.pickle.gz"
    remote = f"gs://bucket/run/{path.name}"
    _FakeGFile.files, _FakeGFile.log = {remote: path}, []
    monkeypatch.setattr(reader.fsio, "gfile", lambda: type("gfile", (), {"GFile": _FakeGFile}))
    spool = tmp_path / "tmp"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    want = _summary(path)
    got = _summary(remote)
    assert got[0] == "trace" and got[1:] == want[1:]
    assert [k for k, _ in _FakeGFile.log].count("open") == 1
    asked = [n for k, n in _FakeGFile.log if k == "read"]
    assert -1 not in asked and max(asked) <= 1 << 20, asked[:5]
    assert list(spool.iterdir()) == []


@pytest.fixture(scope="module")
def s3_endpoint():
    from tests.support.s3_server import moto_endpoint

    yield from moto_endpoint()


def test_a_snapshot_on_s3_is_read_from_its_body_in_parts(s3_endpoint, tmp_path: Path, monkeypatch):
    """The same on S3 (boto3 against moto's server): the object's body read in parts of 1 MiB at most, never
    ``read()`` whole, and the trace the local file's.  Main read the body whole (``read()``, ``amt=None``)."""
    boto3 = pytest.importorskip("boto3")
    from botocore.response import StreamingBody

    for k, v in (("S3_ENDPOINT", s3_endpoint), ("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                 ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    path = tmp_path / "long.pickle"
    ms.write_large(str(path), 20_000)
    client = boto3.client("s3", endpoint_url=s3_endpoint)
    client.create_bucket(Bucket="snapshots")
    client.put_object(Bucket="snapshots", Key="run/long.pickle", Body=path.read_bytes())
    asked: list[Any] = []
    read = StreamingBody.read
    monkeypatch.setattr(StreamingBody, "read", lambda self, amt=None: (asked.append(amt), read(self, amt))[1])
    spool = tmp_path / "tmp"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    got = _summary("s3://snapshots/run/long.pickle")
    assert got[0] == "trace" and got[1:] == _summary(path)[1:]
    assert asked and None not in asked and max(asked) <= 1 << 20, asked[:5]
    assert list(spool.iterdir()) == []
