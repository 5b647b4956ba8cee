"""A gzip trace's first :data:`kineto.parse.SAMPLE_BYTES`, decompressed to judge its trailer (``_declared_size``), are
handed on to the read (:meth:`formats.gz.Gunzip.resumed`), not decompressed a second time.  The resumed stream must
be the fresh one: the same text, cut or corrupt files stopping at the same byte with the same error, for the odd
files a profiler leaves -- several members (a member ending inside the sample or at its very end), a file cut off
mid-write inside or after the sample, a corrupt byte, NUL padding and garbage after the last member, a file under the
sample, a sample that inflates past the sample's 64x (a bomb) -- and plain text or a stream that cannot seek are read
as before (nothing handed on).  Truth by construction: the text each file was made from, and a fresh
:class:`formats.gz.Gunzip` over the same bytes (what the reader read before).  Fails on base (no resumed stream)."""

from __future__ import annotations

import gzip
import io
import json
import random
import zlib

import pytest

from tb_gpu_advisor.formats.gz import Gunzip, Prefixed
from tb_gpu_advisor.formats.kineto import parse
from tb_gpu_advisor.formats.kineto.parse import KinetoReadError, parse_trace


def _text(n: int, seed: int = 0) -> bytes:
    """``n`` bytes of JSON-like text that compresses about 3x (hex ids), so a file's compressed bytes span samples."""
    rng = random.Random(seed)
    out, size = [], 0
    while size < n:
        line = b'{"name": "op%d", "id": "%032x"},\n' % (rng.randrange(50), rng.getrandbits(128))
        out.append(line)
        size += len(line)
    return b"".join(out)[:n]


def _member(text: bytes) -> bytes:
    return gzip.compress(text, compresslevel=6, mtime=0)


def _read_all(read, n: int) -> tuple[bytes, str | None]:
    """Everything ``read(n)`` hands out up to its end, and the error that stopped it (its type), None at a clean end."""
    out = io.BytesIO()
    try:
        for _ in range(100_000):  # bounded: a reader that never ends fails here, not hangs the suite
            part = read(n)
            if not part:
                return out.getvalue(), None
            assert len(part) <= n  # a bomb is never inflated past what was asked for
            out.write(part)
    except (EOFError, zlib.error) as e:
        return out.getvalue(), type(e).__name__
    raise AssertionError("the reader never ended")


def _fresh(data: bytes, n: int) -> tuple[bytes, str | None]:
    return _read_all(Gunzip(Prefixed(b"", io.BytesIO(data))).read, n)


def _resumed(data: bytes, n: int) -> tuple[bytes, str | None, bool]:
    """What ``parse_trace`` reads: the stream the sample handed on, else (a sample that does not decompress: a
    corrupt byte in it) a fresh one from where the file was; and whether the sample was handed on."""
    raw = io.BytesIO(data)
    _, resumed = parse._declared_size(raw)
    stream = resumed if resumed is not None else parse._maybe_gunzip(raw)[0]
    return *_read_all(stream.read, n), resumed is not None


T1, T2 = _text(300_000, 1), _text(200_000, 2)
M1, M2 = _member(T1), _member(T2)

#: name -> (file bytes, the text it holds in full, or None where it is cut or corrupt)
CASES: dict[str, tuple[bytes, bytes | None]] = {
    "one member": (M1, T1),
    "two members": (M1 + M2, T1 + T2),
    "empty member between": (M1 + _member(b"") + M2, T1 + T2),
    "NUL padding after": (M1 + b"\0" * 700, T1),
    "NUL padding between": (M1 + b"\0" * 700 + M2, T1 + T2),
    "garbage after": (M1 + b"not gzip at all", None),
    "cut in its first quarter": (M1[: len(M1) // 4], None),
    "cut near its end": (M1[:-9], None),
    "cut in the second member": (M1 + M2[: len(M2) // 2], None),
    "corrupt byte": (M1[:5000] + bytes([M1[5000] ^ 0xFF]) + M1[5001:], None),
    "tiny": (_member(b"{}"), b"{}"),
}

#: sample sizes: a few bytes, mid-member, exactly the first member (it ends at the sample's end), one past it, a file
#: under the sample (the reader's 1 MB)
SAMPLES = [40, 12_345, len(M1), len(M1) + 1, 1 << 20]


@pytest.mark.parametrize("sample", SAMPLES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_resumed_stream_is_the_fresh_one(monkeypatch: pytest.MonkeyPatch, case: str, sample: int) -> None:
    data, text = CASES[case]
    monkeypatch.setattr(parse, "SAMPLE_BYTES", sample)
    for n in (4093, 1 << 20):
        *got, handed_on = _resumed(data, n)
        got, want = tuple(got), _fresh(data, n)
        assert got == want, (case, sample, n, len(got[0]), len(want[0]), got[1], want[1])
        assert handed_on or (case == "corrupt byte" and sample > 5000)
        if text is not None:
            assert got == (text, None)
        else:
            assert got[1] is not None  # cut or corrupt: said so, as before


def test_a_file_cut_anywhere_hands_out_all_its_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Truth: zlib's one-shot decompression of the cut bytes.  Before, a read that took the last compressed byte
    while zlib held text back at ``n`` said the file ended (a few of these cuts lost 1-28 bytes)."""
    rng = random.Random(5)
    data = _member(_text(60_000, 3) + b"A" * 5000 + _text(20_000, 4))
    for cut in rng.sample(range(20, len(data)), 300):
        text = zlib.decompressobj(wbits=31).decompress(data[:cut])
        monkeypatch.setattr(parse, "SAMPLE_BYTES", rng.choice([30, cut // 2, cut]))
        for n in (257, 1000):
            assert _fresh(data[:cut], n) == (text, "EOFError"), (cut, n)
            assert _resumed(data[:cut], n)[:2] == (text, "EOFError"), (cut, n)


@pytest.mark.parametrize("pad", [1, 700, 3 << 20])
def test_nul_padding_after_a_member_ends_the_read(pad: int) -> None:
    """gzip(1) and Python's gzip read NULs after a member as padding.  Before, zlib's leftover input was fed back
    from ``unconsumed_tail`` after the member's end and the read never ended (a padded trace hung the reader)."""
    for data, text in ((M1 + b"\0" * pad, T1), (M1 + b"\0" * pad + M2, T1 + T2)):
        assert gzip.decompress(data) == text
        assert _fresh(data, 1 << 20) == (text, None)


def test_a_sample_past_its_64x_reads_on_from_what_it_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bomb's sample inflates past 64 samples' worth: the sample's compressed bytes left over are read on."""
    text = b"\0" * (8 << 20)
    data = _member(text)
    monkeypatch.setattr(parse, "SAMPLE_BYTES", 2000)
    raw = io.BytesIO(data)
    _, resumed = parse._declared_size(raw)
    assert resumed is not None and resumed._d.unconsumed_tail  # what the sample left, truly left
    assert _read_all(resumed.read, 1 << 16) == (text, None)


def test_plain_text_and_a_stream_that_cannot_seek_hand_nothing_on() -> None:
    raw = io.BytesIO(b'{"traceEvents": []}')
    assert parse._declared_size(raw) == ((19, False), None) and raw.tell() == 0

    class Pipe(io.RawIOBase):
        def __init__(self, data: bytes):
            self._b = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:  # noqa: ANN001
            return self._b.readinto(b)

    assert parse._declared_size(Pipe(M1)) == (None, None)


def _trace_gz(n: int, cut: int = 0) -> bytes:
    events = [{"ph": "X", "cat": "cpu_op", "name": f"op{i % 7}", "pid": 1, "tid": 2, "ts": 10.0 + i, "dur": 1.0,
               "args": {"id": "%032x" % random.Random(i).getrandbits(128)}} for i in range(n)]
    data = _member(json.dumps({"schemaVersion": 1, "traceEvents": events}).encode())
    return data[: len(data) - cut] if cut else data


@pytest.mark.parametrize("cut", [0, 1000])
def test_a_trace_reads_the_same_with_or_without_the_sample(tmp_path, cut: int) -> None:
    """The reader with a size limit (it samples) and without (``workers=1``, no limit: it never samples): the same
    rows, the same note of a file cut off."""
    path = tmp_path / "t.pt.trace.json.gz"
    path.write_bytes(_trace_gz(60_000, cut))
    assert len(path.read_bytes()) > parse.SAMPLE_BYTES  # the read goes on past the sample
    sampled = parse_trace(str(path), max_bytes=1 << 30, workers=1)
    fresh = parse_trace(str(path), workers=1)
    assert sampled.ts_ns.tolist() == fresh.ts_ns.tolist() and sampled.names == fresh.names
    assert sampled.problems == fresh.problems and (len(sampled.problems) > 0) == bool(cut)


def test_the_size_limit_still_refuses_before_reading(tmp_path) -> None:
    path = tmp_path / "t.pt.trace.json.gz"
    path.write_bytes(_trace_gz(60_000))
    with pytest.raises(KinetoReadError, match="once decompressed, over the"):
        parse_trace(str(path), max_bytes=1 << 20, workers=1)
