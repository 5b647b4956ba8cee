#!/usr/bin/env python
"""``scripts/xplane_fuzz_equal.py`` with every call of the compiled XPlane decoder given its buffer cut to the
limit it is told, in an allocation of exactly that size (issue #38 deliverable 6).

    PYTHONMALLOC=malloc LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
        python scripts/xplane_exact_fuzz.py --seconds 300 --seed 7   # on a build with -fsanitize=address

Why: the reader hands ``_cwire.c`` the plane's buffer with ``wire.PAD`` (16) bytes of padding after the plane and
the plane's size as ``limit``; the C promises never to read at or past ``limit``.  A read into the padding is
inside the allocation, so AddressSanitizer does not see it; here the padding is gone, and such a read is a
heap-buffer-overflow report.  The results must stay equal to the Python path's (same options and output as
``xplane_fuzz_equal.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

import xplane_fuzz_equal  # noqa: E402

from tb_gpu_advisor.formats.xplane import _cwire  # noqa: E402

#: The decoder's functions called as ``f(buf, limit, ...)``.
CUT = frozenset({"split_repeated", "split_line", "decode_span", "content_groups", "empty_event_pairs",
                 "decode_events"})


class ExactCwire:
    """``_cwire`` with each buffer of :data:`CUT`'s functions copied to exactly ``buf[:limit]``."""

    def __init__(self, module) -> None:
        self._module = module
        self.calls = 0

    def __getattr__(self, name: str):
        f = getattr(self._module, name)
        if name not in CUT:
            return f

        def call(buf, limit, *rest):
            self.calls += 1
            exact = np.frombuffer(buf, np.uint8, count=int(limit)).copy() if 0 <= limit <= len(buf) else buf
            return f(exact, limit, *rest)

        return call


def main() -> int:
    proxy = ExactCwire(_cwire)
    sys.modules["tb_gpu_advisor.formats.xplane"]._cwire = proxy  # xplane_paths.read_with imports it from here
    status = xplane_fuzz_equal.main()
    print(f"compiled calls on exact-size buffers: {proxy.calls}")
    return status


if __name__ == "__main__":
    sys.exit(main())
