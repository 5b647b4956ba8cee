#!/usr/bin/env python
"""Hostile and mutated memory-snapshot pickles through both readers: the compiled one (``_cpickle.c``) must give the
Python reader's value or error on every input (issue #38).

    python scripts/snapshot_fuzz_equal.py --seconds 300             # both paths, mutations of the seed pickles
    PYTHONMALLOC=malloc LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
        python scripts/snapshot_fuzz_equal.py --seconds 300         # on a build with -fsanitize=address

Each input -- the hostile pickles of ``synthetic.hostile_pickles`` and ``synthetic.memsnapshot.hostile``, then
pickle-aware mutations (``tests/support/snapshot_paths.mutate_pickle``: opcodes with good and bad arguments inserted
or written over, opcode bytes swapped, stretches repeated or cut) and byte mutations (``hostile.mutate``) of small
snapshots (every ``synthetic.memsnapshot`` scenario at protocols 0 to 5, a ``write_large`` history, the real ones of
``tests/fixtures`` cut to 40 kB) -- is read by both paths, with the reader's compactor and without; the two results
(the value with its types, dict order and shared containers, the compactor's calls, or the error, word for word)
must be equal.  Mismatches are saved under ``.robustness/``.  A crash or an AddressSanitizer report ends the process:
run it under ASan to check that no read leaves the buffer (with ``PYTHONMALLOC=malloc``, so Python's objects are
malloc'd where ASan sees their bounds too; each input is handed to the C reader as a copy of its exact size, where
a bytes object would hide a read of one byte past its end in its trailing NUL).
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

import fuzzloop  # noqa: E402

from synthetic import hostile  # noqa: E402
from tb_gpu_advisor.formats.snapshot import _cpickle  # noqa: E402
from tests.support import snapshot_paths as sp  # noqa: E402


class _ExactCopy:
    """The compiled reader, handed each input as a numpy copy of exactly its size (its own malloc'd block)."""

    def __init__(self, counts: collections.Counter) -> None:
        self.counts = counts

    def loads(self, raw, max_objects, compact, helpers):
        self.counts["compiled calls"] += 1
        return _cpickle.loads(np.frombuffer(raw, np.uint8).copy(), max_objects, compact, helpers)


def seeds() -> list[bytes]:
    gen = sp.each_generated()
    out = [v for k, v in gen.items() if "/protocol" in k or k.startswith("write_large")]
    for p in sp.snapshot_files([REPO / "tests" / "fixtures"]):
        data = sp.read(p)
        out.append(data[:40_000] + data[-4_000:] if len(data) > 44_000 else data)
    return [s if len(s) < 200_000 else s[:60_000] + s[-4_000:] for s in out]


def check(data: bytes, tally: fuzzloop.Tally) -> None:
    ref = sp.load_with(False, data, compact=False)[0]
    tally.record(data, type(ref).__name__, bool(sp.compare(data)))


def main() -> int:
    a, rng = fuzzloop.options(__doc__)
    tally = fuzzloop.Tally()
    calls: collections.Counter[str] = collections.Counter()
    sp.CPICKLE = _ExactCopy(calls)  # load_with switches unpickle._CPICKLE to this
    fixed = [v for k, v in sp.each_generated().items() if "hostile" in k]
    pool = seeds()
    n, first = fuzzloop.run(
        fixed, pool,
        lambda r, base: sp.mutate_pickle(r, base) if r.random() < 0.6 else hostile.mutate(r, base, pool),
        lambda data, i, is_fixed: check(data, tally), a.seconds, rng)
    return fuzzloop.finish(tally, ".pickle", [
        (f"inputs: {n} ({first} hostile, {n - first} mutations of {len(pool)} seeds), each read by both paths with the "
        "reader's compactor and without"),
        f"calls of the compiled reader (exact-size copies): {calls['compiled calls']}"])


if __name__ == "__main__":
    sys.exit(main())
