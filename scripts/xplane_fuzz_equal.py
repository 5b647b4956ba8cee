#!/usr/bin/env python
"""The robustness corpus through both XPlane decoders: the compiled one must give the reference's result (issue #38).

    python scripts/xplane_fuzz_equal.py --seconds 300             # mutations of the robustness seeds, both paths
    LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
        python scripts/xplane_fuzz_equal.py --seconds 300         # on a build with -fsanitize=address

Each input -- the hand-made bad files of ``synthetic.hostile.KINDS``, then byte and structured mutations of
``scripts/robustness.py``'s seed captures -- is read by the compiled decoder and by the pure-Python reference
(``tests/support/xplane_paths.py``), with the analysis's stat pruning and without; the two results (a Timeline,
column by column, or the error, word for word) must be equal.  Counts: inputs, outcomes, inputs where the C walk
declined a line (the reference then decoded it), mismatches (saved under ``.robustness/``).  A crash or an
AddressSanitizer report ends the process: run it under ASan to check that no read leaves a buffer.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

import fuzzloop  # noqa: E402
from robustness import seeds  # noqa: E402

from synthetic import hostile  # noqa: E402
from tb_gpu_advisor.formats.xplane import reader  # noqa: E402
from tb_gpu_advisor.formats.xplane.adapter import USED_STATS  # noqa: E402
from tests.support.xplane_paths import differences, read_both  # noqa: E402


class _DeclineCounter:
    """Counts lines the C walk handed back to the Python path (its ``_line_events_python`` calls from C's)."""

    def __init__(self) -> None:
        self.count = 0
        self._python = reader._line_events_python
        self._compiled = reader._line_events_compiled  # reader._line_events while the compiled path reads

    def __enter__(self) -> "_DeclineCounter":
        counter = self

        def python(*a, **k):
            if reader._line_events is counter._compiled:
                counter.count += 1
            return counter._python(*a, **k)

        reader._line_events_python = python
        return self

    def __exit__(self, *exc) -> None:
        reader._line_events_python = self._python


def check(data: bytes, tally: fuzzloop.Tally) -> None:
    for keep in (USED_STATS, None):
        fast, ref = read_both(data, keep)
        tally.record(data, fuzzloop.outcome(ref, "Timeline"), bool(differences(fast, ref)))


def main() -> int:
    a, rng = fuzzloop.options(__doc__)
    tally = fuzzloop.Tally()
    with _DeclineCounter() as declined:
        pool = seeds()
        n, first = fuzzloop.run(
            (make() for make in hostile.KINDS.values()), pool,
            lambda r, base: hostile.mutate_structured(r, base) if r.random() < 0.5 else hostile.mutate(r, base, pool),
            lambda data, i, fixed: check(data, tally), a.seconds, rng)
    return fuzzloop.finish(tally, ".xplane.pb", [
        (f"inputs: {n} ({first} hand-made, {n - first} mutations of {len(pool)} seeds), each read twice (stats pruned "
        f"and all) by both decoders"),
        f"lines the C walk declined (decoded by the reference): {declined.count}"])


if __name__ == "__main__":
    sys.exit(main())
