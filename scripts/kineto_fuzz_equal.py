#!/usr/bin/env python
"""Hostile and mutated PyTorch traces through both JSON decoders: the compiled scanner must give the typed decode's
result (issue #38).

    python scripts/kineto_fuzz_equal.py --seconds 300             # both paths, mutations of the seed traces
    PYTHONMALLOC=malloc LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
        python scripts/kineto_fuzz_equal.py --seconds 300         # on a build with -fsanitize=address

Each input -- the hostile traces of ``synthetic.hostile_kineto.KINDS``, then byte mutations (``scripts/robustness.py``'s
``hostile.mutate``) and JSON-aware ones (``tests/support/kineto_paths.mutate_json``: every type and spelling of a
field's value, keys twice or escaped, deep nesting, bytes that are no UTF-8) of the PyTorch traces in
``tests/fixtures`` and ``demo_logs`` under 2 MB -- is read with the scanner and without it, in chunks of a few kB
(many chunks, cuts inside strings) and of the default size; the two results (a KinetoTrace, field by field, or the
error, word for word) must be equal.  Counts: inputs, outcomes, chunks the scanner handed back (decoded by the typed
decode) or found cut inside an event, mismatches (saved under ``.robustness/``).  A crash or an AddressSanitizer
report ends the process: run it under ASan to check that no read leaves a buffer (with ``PYTHONMALLOC=malloc``, so
Python's objects are malloc'd where ASan sees their bounds too; each chunk is given to the scanner as a copy of its
exact size, and to ``op_keys`` with the spans the reader asks for and again with those spans moved at random).
"""

from __future__ import annotations

import collections
import gzip
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

import fuzzloop  # noqa: E402

from synthetic import hostile, hostile_kineto  # noqa: E402
from tb_gpu_advisor.formats.kineto import _cscan  # noqa: E402
from tests.support.kineto_paths import differences, mutate_json, read_both  # noqa: E402


class _Outcomes:
    """Counts what the scanner answered (columns, handed back, cut inside an event), through the one switch."""

    def __init__(self, counts: collections.Counter, seed: int) -> None:
        self.counts = counts
        self.rng = np.random.default_rng(seed)

    def scan(self, data):
        # a copy of exactly the chunk's size in its own allocation (numpy's, malloc'd): a read past the chunk is a
        # read past the allocation, which AddressSanitizer reports (in the reader's buffer it would be unseen)
        out = _cscan.scan(np.frombuffer(data, np.uint8).copy())
        self.counts["scanned" if out else "handed back" if out is None else "cut inside an event"] += 1
        return out

    def op_keys(self, data, spans):
        """The kept rows' shape keys, from an exact-size copy too; then the same chunk with the spans moved and
        resized at random (past its end, into a string, inside an object), where only crashes and ASan reports
        count: the reader never passes such spans, the guards must hold anyway."""
        chunk = np.frombuffer(data, np.uint8).copy()
        out = _cscan.op_keys(chunk, spans)
        self.counts["op keys" if out is not None else "op keys refused"] += 1
        if len(spans):
            wild = spans.copy()
            wild[:, 0] += self.rng.integers(-8, 9, len(spans))
            wild[:, 1] += self.rng.integers(-8, 9, len(spans))
            _cscan.op_keys(chunk, wild)
            self.counts["op keys, spans moved"] += 1
        return out


def seeds() -> list[bytes]:
    out = []
    for root in (REPO / "tests" / "fixtures", REPO / "demo_logs"):
        for p in sorted(root.rglob("*.pt.trace.json*")):
            data = p.read_bytes()
            data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
            if len(data) < 2 << 20:
                out.append(data)
    return out


def check(data: bytes, tally: fuzzloop.Tally, small: bool) -> None:
    fast, ref = read_both(data, chunk_bytes=4096 if small else None)
    tally.record(data, fuzzloop.outcome(ref, "KinetoTrace"), bool(differences(fast, ref)))


def main() -> int:
    a, rng = fuzzloop.options(__doc__)
    tally = fuzzloop.Tally()
    scans: collections.Counter[str] = collections.Counter()
    sys.modules["tb_gpu_advisor.formats.kineto"]._cscan = _Outcomes(scans, a.seed)  # read_both imports the scanner from here
    pool = seeds()
    n, first = fuzzloop.run(
        (make() for make in hostile_kineto.KINDS.values()), pool,
        lambda r, base: mutate_json(r, base) if r.random() < 0.5 else hostile.mutate(r, base, pool),
        lambda data, i, fixed: check(data, tally, small=not fixed and i % 2 == 0), a.seconds, rng)
    return fuzzloop.finish(tally, ".pt.trace.json", [
        f"inputs: {n} ({first} hostile, {n - first} mutations of {len(pool)} seeds), each read by both paths",
        f"chunks through the scanner: {dict(scans)}"])


if __name__ == "__main__":
    sys.exit(main())
