"""Hostile launch configurations, for the fuzzing of the code that reads them (issue #38 deliverable 6): a
Kineto kernel's ``grid``/``block`` values (read by ``_cscan.c`` ``scan_dims`` and by ``parse.launch_count``) and
XPlane ``kernel_details`` strings (read by ``adapter._parse_launch``).

The values are drawn from a seeded generator, so a run is repeated by its seed: lists of 0-5 elements of every JSON
type and number spelling (past int32, int64 and a float's range, exponents, ``-0``, leading zeros, 5,000 digits),
nested and deeply nested arrays, separators missing or doubled, and values cut short."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

#: Numbers and other scalars an element of ``grid`` / ``block`` may be: what CUPTI writes, then every edge of the
#: int32 saturation, of int64 and of the number grammar.
ATOMS = (
    b"0", b"1", b"2", b"32", b"108", b"1024", b"65535", b"2147483647", b"2147483648", b"4294967296",
    b"9223372036854775807", b"9223372036854775808", b"18446744073709551616", b"99999999999999999999",
    b"1" * 400, b"9" * 4300, b"9" * 4301, b"-0", b"-1", b"-2147483648", b"-9223372036854775809", b"00", b"01",
    b"1.0", b"-0.0", b"1.5", b"1e2", b"1E+2", b"1e-2", b"0e0", b"1e400", b"-1e400", b"1e-400", b"2.", b".5", b"+1",
    b"1e", b"1.e3", b"-", b"NaN", b"Infinity", b"-Infinity", b"true", b"false", b"null", b'"1"', b'"\\u0031"',
    b'"\xff"', b'""', b"{}", b'{"x": 1}', b"[]", b"[1]", b"[[1, 2]]", b"[1, [2, [3]]]",
)
#: What goes between two elements: JSON's comma with or without spaces, and the separators that break the grammar.
SEPARATORS = (b",", b", ", b" , ", b",\n\t", b",,", b"", b" ", b";", b":")


def launch_value(rng: random.Random) -> bytes:
    """One hostile ``grid`` / ``block`` value (valid JSON or not)."""
    r = rng.random()
    if r < 0.4:  # what CUPTI writes: most kernels of a trace are whole, so most chunks are scanned to their end
        return b"[%d, %d, %d]" % (rng.choice((1, 2, 108, 65535)), rng.choice((1, 4)), rng.choice((0, 1)))
    if r < 0.48:
        return rng.choice(ATOMS)  # not a list at all
    if r < 0.54:
        k = rng.choice((2, 3, 8, 40, 200, 3000))
        return b"[" * k + rng.choice((b"1", b"", b"[]")) + b"]" * rng.choice((k, k - 1, k + 1))  # deep nesting
    n = rng.choice((0, 1, 1, 2, 3, 3, 3, 3, 4, 5))
    sep = b", " if rng.random() < 0.7 else rng.choice(SEPARATORS)
    elems = [str(rng.choice((1, 2, 4, 32, 108, 256, 1024, 65535))).encode() if rng.random() < 0.55
             else rng.choice(ATOMS) for _ in range(n)]
    text = rng.choice((b"[", b"[ ", b"[\n")) + sep.join(elems) + rng.choice((b"]", b" ]", b"\n]"))
    if rng.random() < 0.1:
        text = text[: rng.randrange(len(text))]  # cut short: the next bytes are the event's rest
    return text


def kineto_trace(rng: random.Random) -> bytes:
    """A small PyTorch trace of kernels (and the runtime calls that launched them) whose ``grid`` and ``block``
    are :func:`launch_value`'s, some fields absent or twice; a few traces cut short inside a value."""
    events = [b'{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "python"}}']
    for i in range(rng.randint(1, 8)):
        ts = 1000 + 10 * i
        events.append(b'{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": %d, '
                      b'"dur": 2, "args": {"correlation": %d, "External id": %d}}' % (ts, i, i))
        args = [b'"device": 0', b'"stream": 7', b'"correlation": %d' % i]
        for key in (b"grid", b"block"):
            for _ in range(rng.choice((0, 1, 1, 1, 1, 1, 1, 2))):  # absent, once, or twice (the decoders refuse twice)
                args.insert(rng.randrange(len(args) + 1), b'"%s": %s' % (key, launch_value(rng)))
        events.append(b'{"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d.5, "dur": 3.25, '
                      b'"args": {%s}}' % (i % 3, ts + 1, b", ".join(args)))
    text = b'{"schemaVersion": 1, "traceEvents": [' + b",\n".join(events) + b"]}"
    if rng.random() < 0.03:
        text = text[: rng.randrange(len(text))]
    return text


#: Pieces of a ``kernel_details`` string (``regs:32 static_shared:0 ... grid:108,1,1 block:256,1,1 occ_pct:50``).
_DIMS = ("1", "0", "108", "256,1,1", "108,1,1", "2147483647,2", "2147483648", "65535,65535,65535", "1,1,1,1", "",
         ",", "1,,1", "-1,1,1", "1.5", "1e3", "0x10", "٣", "１２", "1 ,2", "9" * 4301, "0" * 5000 + "7", "+1", " 1")


def kernel_details(rng: random.Random) -> str:
    """One hostile XPlane ``kernel_details`` string: the keys TF writes, each value from :data:`_DIMS` or random
    text, keys repeated or run together, whitespace of every kind, non-ASCII digits."""
    toks = []
    for _ in range(rng.randint(0, 8)):
        key = rng.choice(("grid", "block", "regs", "static_shared", "dynamic_shared", "occ_pct", "grid", "block",
                          "GRID", "grid:", ":", ""))
        val = rng.choice(_DIMS) if rng.random() < 0.8 else "".join(
            rng.choice("0123456789,:-. x\t\u00a0") for _ in range(rng.randint(0, 12)))
        toks.append(f"{key}:{val}")
    return rng.choice((" ", "  ", "\t", "\n", "\u2003")).join(toks)


#: Where a launch count saturates (int32): every count read must be -1 or in [0, TOP].
TOP = (1 << 31) - 1


def counts_in_range(*columns: Any) -> bool:
    """Every launch count is -1 (not recorded) or in [0, :data:`TOP`]: no count beats int32, none is negative."""
    return all(((c == -1) | ((c >= 0) & (c <= TOP))).all() for c in map(np.asarray, columns) if c.size)


def xplane_file(details: list[str]) -> bytes:
    """An XSpace of one GPU plane whose kernels carry ``details`` as their ``kernel_details``."""
    from synthetic.builder import SpaceBuilder

    space = SpaceBuilder()
    line = space.plane("/device:GPU:0").line("Stream #7(Compute)", 7)
    for i, d in enumerate(details):
        line.add(f"k{i % 3}", 1_000_000 * (i + 1), 500_000, correlation_id=i, kernel_details=d)
    return space.encode()


def xplane_launch_columns(use_compiled: bool, data: bytes) -> object:
    """The GPU planes' launch columns (index, blocks, threads) as one XPlane decoder and the adapter read them, or
    the error either raised."""
    from tb_gpu_advisor.formats.xplane.adapter import USED_STATS, device_events
    from tests.support.xplane_paths import read_with

    try:
        tl = read_with(use_compiled, data, USED_STATS)
        if isinstance(tl, Exception):
            return tl
        devs = [device_events(p) for p in tl.gpu_planes()]
        return [tuple(c.tolist() for c in d.launches()) for d in devs]
    except Exception as e:  # noqa: BLE001 - an escaped error is the result checked
        return e
