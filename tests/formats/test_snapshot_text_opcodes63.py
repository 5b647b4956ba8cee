"""The compiled snapshot pickle reader and the Python reference agree on text opcodes cut, bent and stretched, read
whole and read as a stream in small windows (h37-review63, reviewing snapfast62's ``_cpickle.c`` change).

snapfast62 changed ``find_fetched`` (the first pass that finds the memo keys a pickle fetches again): a text opcode's
line (``GET``, ``PUT``, ``INT``, ``STRING``...) is looked for in the window first, and the window is read on only where
it ends before the line does.  That branch runs where a line crosses a window's end -- a stream read in chunks (
``unpickle.load``), a line cut by the file's end, a line longer than ``MAX_LINE`` -- which the equality tests of
``test_snapshot_compiled.py`` (whole bytes, ``loads``) never reach.  Here, seeded and bounded: the text opcodes of
protocol 0, 1 and 2 pickles (and text ``GET``/``PUT`` inserted into the binary ones) are cut mid-line, lose or gain a
newline, get another body (a bad key, a huge one, a line past ``MAX_LINE``) or another text opcode; each input is read
by both paths whole (value and compactor calls, or the same error), streamed in windows of 1, 7 and 64 bytes (the
same value or error as whole), and the first pass's fetched keys and length are compared with the Python pass's.

A control of the change (passes on base and here: the change kept the pass's results); run once under
AddressSanitizer (h37-review63's SURVEY section says how)."""

from __future__ import annotations

import io
import pickletools
import random

import pytest

from tb_gpu_advisor.formats.snapshot import unpickle
from tests.support import snapshot_paths as sp
from tests.support.compiled import built, needs

_cpickle = built("tb_gpu_advisor.formats.snapshot._cpickle")
needs_compiled = needs(_cpickle, "snapshot pickle reader")

#: the opcodes whose argument is a text line (two for GLOBAL and INST), by their byte
TEXT_OPS = b"ILFSVpgPci"
#: bodies a text line is given instead of its own
BODIES = [b"", b"0", b"-1", b"00", b"01", b"1_0", b" 12 ", b"+3", b"99999999999999999999999", b"x", b"\x00", b"0x10",
          b"'abc", b"'a'", b"\"a\\x41\"", b"1.5", b"nan", b"\\u12", b"\xff\xfe", b"7L", b"3" * 40]
CHUNKS = (1, 7, 64)


def _seeds() -> dict[str, bytes]:
    gen = sp.each_generated()
    return {k: gen[k] for k in ("state_rollout/protocol0", "state_rollout/protocol1", "state_rollout/protocol2",
                                "memory_cap/protocol2", "hostile_pickles/code_inst_protocol0",
                                "memsnapshot.hostile/reduce_in_frames_protocol0")}


SEEDS = _seeds() if _cpickle else {}


def _text_ops(data: bytes) -> list[int]:
    """Where the text opcodes of a well-formed pickle start."""
    try:
        return [pos for op, _, pos in pickletools.genops(data) if pos is not None and data[pos] in TEXT_OPS]
    except Exception:  # noqa: BLE001 - a seed the standard library refuses has no text opcode read here
        return []


def mutate_text(rng: random.Random, data: bytes, at: list[int], max_line: int) -> bytes:
    """One or two mutations at a text opcode (or a text GET/PUT put in where a binary pickle has none)."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 2)):
        if not at or rng.random() < 0.15:  # a text GET or PUT inserted anywhere: the pass's keys and the memo
            i = rng.randrange(len(buf) + 1)
            buf[i:i] = bytes([rng.choice(b"gp")]) + str(rng.choice([0, 1, 2, 5, 40, 1 << 33])).encode() + b"\n"
            continue
        pos = min(rng.choice(at), len(buf) - 1)
        nl = buf.find(b"\n", pos + 1)
        nl = len(buf) if nl < 0 else nl
        kind = rng.randrange(6)
        if kind == 0:  # cut inside the line, or just after it: the end of the file in the line
            return bytes(buf[:rng.randint(pos + 1, min(nl + 1, len(buf)))])
        if kind == 1 and nl < len(buf):  # the newline lost: the line runs into the next opcodes
            del buf[nl]
        elif kind == 2:  # another body
            buf[pos + 1:nl] = rng.choice(BODIES)
        elif kind == 3:  # another text opcode
            buf[pos] = rng.choice(TEXT_OPS)
        elif kind == 4 and max_line <= 4096:  # a line just within, at, or past the longest one read
            n = max(0, max_line + rng.choice([-2, -1, 0, 1, 5]))
            buf[pos + 1:nl] = (rng.choice([b"1", b" ", b"x"]) * n)[:n]
        elif kind == 5:  # an extra newline inside the line
            buf.insert(rng.randint(pos + 1, nl), 0x0A)
    return bytes(buf)


class _Passes:
    """``unpickle.load``'s ``open_pass``: a fresh stream over the bytes each time."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __call__(self) -> io.BytesIO:
        return io.BytesIO(self.data)


def _streamed(compiled: bool, data: bytes, chunk: int) -> object:
    saved = unpickle._CPICKLE
    unpickle._CPICKLE = sp.CPICKLE if compiled else None
    try:
        return unpickle.load(_Passes(data), chunk=chunk)[0]
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return e
    finally:
        unpickle._CPICKLE = saved


def _keys(bitmap: bytes) -> set[int]:
    return {k for k in range(8 * len(bitmap)) if bitmap[k >> 3] >> (k & 7) & 1}


def _check(data: bytes) -> list[str]:
    """Every disagreement of the two paths on ``data``: whole, streamed per chunk size, and the first pass -- the
    compiled pass's keys among the Python pass's (it leaves out a key fetched before as many opcodes were read, which
    no earlier PUT can have made: ``mark_fetched``; a key past 64 bits; the values read say whether that mattered)
    and the length read."""
    out = sp.compare(data)
    whole = sp.load_with(False, data, compact=False)[0]
    for chunk in CHUNKS:
        fast, ref = _streamed(True, data, chunk), _streamed(False, data, chunk)
        out += [f"chunk {chunk}: {d}" for d in sp.differences(fast, ref)]
        out += [f"chunk {chunk} vs whole: {d}" for d in sp.differences(ref, whole)]
        bitmap, total = sp.CPICKLE.scan(io.BytesIO(data).read, chunk, unpickle.MAX_LINE)
        keys, total_py = unpickle._scan_stream(io.BytesIO(data).read, chunk)
        if not (_keys(bitmap) <= keys and total == total_py == len(data)):
            out.append(f"chunk {chunk}: first pass {sorted(_keys(bitmap) - keys)[:8]} {total} vs {total_py}")
        if keys != unpickle.fetched_keys(data):  # the Python pass streamed as whole
            out.append(f"chunk {chunk}: the Python pass streamed {sorted(keys ^ unpickle.fetched_keys(data))[:8]}")
    return out


@needs_compiled
@pytest.mark.parametrize("max_line", [unpickle.MAX_LINE, 9, 40], ids=["MAX_LINE", "9", "40"])
def test_text_opcodes_mutated_read_alike_whole_and_streamed(monkeypatch, max_line):
    """Mutations per limit (seeded): no disagreement.  With ``MAX_LINE`` at 9 or 40 the seeds' own lines and the
    mutated ones cross it (a line past the default 1 MiB would make each input a megabyte: too slow here)."""
    monkeypatch.setattr(unpickle, "MAX_LINE", max_line)
    rng = random.Random(6300 + max_line)
    seeds = [(data, _text_ops(data)) for data in SEEDS.values()]
    assert sum(bool(at) for _, at in seeds) >= 4  # the protocol 0 seeds hold text opcodes to bend
    bad = []
    for _ in range(50):
        data, at = rng.choice(seeds)
        mutated = mutate_text(rng, data, at, max_line)
        if diff := _check(mutated):
            bad.append((mutated[:200], diff[:3]))
    assert not bad, bad[:3]


@needs_compiled
@pytest.mark.parametrize("name", sorted(SEEDS))
def test_each_seed_reads_alike_streamed(name):
    """The seeds themselves, streamed in every window size: the value read whole."""
    assert _check(SEEDS[name]) == []
