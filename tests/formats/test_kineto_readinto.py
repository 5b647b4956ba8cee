"""The PyTorch reader fills its buffer with ``readinto`` where the stream has one (``_Parser._fill_into``: each byte
of the file copied once in memory, not read as a block and then joined to the text kept): it is used for a plain
file, and short reads, a read that fails midway and the size limit give what ``read()`` gives."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tb_gpu_advisor.formats.kineto import parse
from tb_gpu_advisor.formats.kineto.parse import KinetoReadError, parse_trace

DECODERS = ["json"] + (["msgspec"] if parse._decoder(None) == "msgspec" else [])
COLUMNS = ("cat", "name", "ts_ns", "dur_ns", "pid", "tid", "correlation", "external_id")


def event(name: str, ts: float, **args: object) -> dict:
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 2, "ts": ts, "dur": 1.0, "args": args}


def trace_doc(events: list[dict]) -> dict:
    return {"schemaVersion": 1, "traceEvents": events, "traceName": "t.pt.trace.json"}


def as_reference(kt: parse.KinetoTrace) -> dict[str, list]:
    """The columns, names and categories as strings."""
    out = {col: getattr(kt, col).tolist() for col in COLUMNS}
    out["cat"] = [kt.cats[i] for i in out["cat"]]
    out["name"] = [kt.names[i] for i in out["name"]]
    return out


def _doc_bytes(n: int = 400) -> bytes:
    events = [event(f"op{i % 7}", 10.0 + i, correlation=i, **({"External id": i} if i % 3 else {}))
              for i in range(n)]
    return json.dumps(trace_doc(events), indent=1).encode()


class Counted(io.RawIOBase):
    """A file's bytes, handed out at most ``most`` at a time, counting what ``read`` and ``readinto`` gave; it fails
    with OSError once ``fail_at`` bytes are out.  ``into``: whether it offers ``readinto`` at all."""

    def __init__(self, data: bytes, most: int = 1 << 30, fail_at: int | None = None, into: bool = True):
        self._b, self.most, self.fail_at = io.BytesIO(data), most, fail_at
        self.by_read = self.by_readinto = 0
        if not into:
            self.readinto = None  # type: ignore[assignment]

    def readable(self) -> bool:
        return True

    def _take(self, n: int) -> bytes:
        n = min(n if n >= 0 else 1 << 40, self.most)
        at = self._b.tell()
        if self.fail_at is not None and at >= self.fail_at:
            raise OSError("device gone")
        if self.fail_at is not None:
            n = min(n, self.fail_at - at)
        return self._b.read(n)

    def read(self, n: int = -1) -> bytes:
        out = self._take(n)
        self.by_read += len(out)
        return out

    def readinto(self, buf) -> int:  # noqa: ANN001 - any writable buffer
        out = self._take(len(buf))
        buf[:len(out)] = out
        self.by_readinto += len(out)
        return len(out)


def test_a_plain_file_is_read_into_the_buffer(tmp_path: Path) -> None:
    data = _doc_bytes()
    stream = Counted(data)
    kt = parse_trace(stream, name="w.pt.trace.json")
    assert stream.by_read == 2  # the gzip sniff only
    assert stream.by_readinto == len(data) - 2
    assert as_reference(kt) == as_reference(parse_trace(Counted(data, into=False), name="w.pt.trace.json"))
    path = tmp_path / "w.pt.trace.json"
    path.write_bytes(data)
    assert as_reference(parse_trace(str(path))) == as_reference(kt)


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("most", [1, 7, 1000])
def test_short_reads_read_the_same(monkeypatch: pytest.MonkeyPatch, decoder: str, most: int) -> None:
    monkeypatch.setattr(parse, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(parse, "_READ_BLOCK", 1000)
    data = _doc_bytes()
    whole = as_reference(parse_trace(Counted(data, into=False), decoder=decoder))
    stream = Counted(data, most=most)
    assert as_reference(parse_trace(stream, decoder=decoder)) == whole
    assert stream.by_read <= 2 and stream.by_read + stream.by_readinto == len(data)  # the sniff may be short too


@pytest.mark.parametrize("decoder", DECODERS)
def test_a_read_that_fails_midway_keeps_what_was_read(monkeypatch: pytest.MonkeyPatch, decoder: str) -> None:
    monkeypatch.setattr(parse, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(parse, "_READ_BLOCK", 1000)
    data = _doc_bytes()
    at = len(data) * 2 // 3
    by_read = parse_trace(Counted(data, most=999, fail_at=at, into=False), decoder=decoder)
    stream = Counted(data, most=999, fail_at=at)
    into = parse_trace(stream, decoder=decoder)
    assert stream.by_readinto > 0
    assert 0 < len(into.ts_ns) < 400
    assert as_reference(into) == as_reference(by_read)
    assert into.problems == by_read.problems and into.truncated == by_read.truncated


def test_the_size_limit_holds_for_reads_into_the_buffer() -> None:
    data = _doc_bytes()
    with pytest.raises(KinetoReadError, match="limit"):
        parse_trace(Counted(data, most=333), max_bytes=len(data) // 2, name="w.pt.trace.json")


def test_text_that_is_no_json_is_quoted_as_bytes(tmp_path: Path) -> None:
    path = tmp_path / "w.pt.trace.json"
    path.write_bytes(b"  hello, this is no trace at all")
    with pytest.raises(KinetoReadError) as e:
        parse_trace(str(path))
    assert "(starts with b'hello, this is n'): not a PyTorch profiler trace" in str(e.value)


class Growing(io.BytesIO):
    """A seekable file that declares ``short`` bytes fewer than it holds (written to while it is read)."""

    def __init__(self, data: bytes, short: int):
        super().__init__(data)
        self.short = short

    def seek(self, off: int, whence: int = 0) -> int:
        at = super().seek(off, whence)
        return at - self.short if whence == 2 else at


@pytest.mark.parametrize("short", [1, 999, 50_000])
def test_a_file_that_goes_on_past_its_declared_size_is_read_to_its_end(monkeypatch: pytest.MonkeyPatch,
                                                                      short: int) -> None:
    monkeypatch.setattr(parse, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(parse, "_READ_BLOCK", 1000)
    data = _doc_bytes()
    whole = as_reference(parse_trace(Counted(data, into=False)))
    assert as_reference(parse_trace(Growing(data, short))) == whole
