#!/usr/bin/env python
"""Hostile and damaged Nsight Systems exports through both column readers in one process: the compiled one
(``_csqlite.c``) must give the Python path's columns or its error (issue #38 deliverable 6).

    python scripts/nsys_fuzz_equal.py --seconds 120 --seed 5
    PYTHONMALLOC=malloc LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
        python scripts/nsys_fuzz_equal.py --seconds 300      # on a build with -fsanitize=address

``scripts/robustness_sqlite.py`` gives each file to a fresh CLI process, whose memory guard (an address-space
limit) leaves AddressSanitizer no room for its shadow memory; this script reads in its own process instead
(``reader._read_file``, as ``tests/formats/test_nsys_compiled.py`` does), so it runs under ASan.  Inputs: every
``synthetic.hostile.SQLITE_KINDS`` file (views, triggers, virtual tables, computed columns, names that are no UTF-8,
a 64 MB row, truncation), then, for the time budget, mutations of small synthetic exports: bytes flipped, a page
overwritten or the tail cut (``robustness_sqlite.fuzzed``), or one to four values of the columns the reader reads
set to another type or size (REAL, TEXT, BLOB, NULL, int64's ends, text that is no UTF-8, 1 MB strings, NUL bytes).
Each is read in memory and from a private copy (tables in threads).  Mismatches are saved under ``.robustness/``."""

from __future__ import annotations

import random
import sqlite3
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

import fuzzloop  # noqa: E402
from robustness_sqlite import fuzzed  # noqa: E402

from synthetic import hostile  # noqa: E402
from synthetic.nsysexport import NsysJob, write  # noqa: E402
from tb_gpu_advisor.formats import sqlite
from tb_gpu_advisor.formats.nsys import reader  # noqa: E402
from tests.support.nsys_reference import trace_differences  # noqa: E402

#: Values a column the reader reads is set to: every SQLite storage class, int64's ends, text no UTF-8, long text.
VALUES = ("NULL", "0.5", "-0.0", "1e308", "'abc'", "''", "x''", "x'01'", "x'61ff62'", "x'eda080'", "9223372036854775807",
          "-9223372036854775807 - 1", "-(1 << 63)", "1 << 40", "-1", "0", "'12'", "char(0)", "'a' || char(0) || 'b'",
          "zeroblob(1 << 20)", "printf('%.*c', 1 << 20, 'x')", "'äß€😀::mm, seq = 3, op_id = 9'", "'aten::mm'")
#: The tables whose columns the reader reads (the others are never opened by the scan).
TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
          "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "StringIds",
          "TARGET_INFO_GPU", "OSRT_API", "TARGET_INFO_CUDA_STREAM", "ThreadNames")


def read(path: str, module: object, copy: bool) -> object:
    """The export's columns through ``module`` (None: the Python path), or (error type, message)."""
    saved, saved_max = sqlite._CSQLITE, sqlite.DESERIALIZE_MAX_BYTES
    sqlite._CSQLITE = module
    if copy:
        sqlite.DESERIALIZE_MAX_BYTES = 0
    try:
        return reader._read_file(path, 0)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e), str(e)
    finally:
        sqlite._CSQLITE, sqlite.DESERIALIZE_MAX_BYTES = saved, saved_max


def differs(path: str, compiled: object, tally: fuzzloop.Tally) -> None:
    for copy in (False, True):
        c, py = read(path, compiled, copy), read(path, None, copy)
        bad = (c != py) if isinstance(c, tuple) or isinstance(py, tuple) else bool(trace_differences(c, py, "raw"))
        tally.record(Path(path).read_bytes() if bad else b"", type(py).__name__ if not isinstance(py, tuple)
                     else py[0].__name__, bad)


def edited(seed_file: str, rng: random.Random, out: str) -> str:
    """A copy with one to four values of the read tables set to :data:`VALUES`' (whole columns, now and then)."""
    Path(out).write_bytes(Path(seed_file).read_bytes())
    con = sqlite3.connect(out)
    try:
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for _ in range(rng.randint(1, 4)):
            table = rng.choice([t for t in TABLES if t in names] or sorted(names))
            cols = [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]
            if not cols:
                continue
            where = "" if rng.random() < 0.15 else f" WHERE rowid = {rng.randint(1, 40)}"
            con.execute(f'UPDATE "{table}" SET "{rng.choice(cols)}" = {rng.choice(VALUES)}{where}')
        con.commit()
    except sqlite3.Error:
        pass  # a constraint refused the value: the file is read as it is
    finally:
        con.close()
    return out


def main() -> int:
    a, rng = fuzzloop.options(__doc__)
    from tb_gpu_advisor.formats import _csqlite

    tally = fuzzloop.Tally()
    with tempfile.TemporaryDirectory(prefix="nsys-fuzz-") as tmp:
        fixed = [make(f"{tmp}/{kind}.sqlite") for kind, make in hostile.SQLITE_KINDS.items()]
        pool = []
        for i, job in enumerate((NsysJob(steps=4, ops=3), NsysJob(steps=6, ops=4, ranks=2, shuffle=True),
                                 NsysJob(steps=3, ops=5, shuffle=True))):
            write(f"{tmp}/seed{i}.sqlite", job)
            pool.append(f"{tmp}/seed{i}.sqlite")
        pool.append(hostile.sqlite_export(f"{tmp}/seed_h.sqlite", steps=4))

        def mutate(r: random.Random, base: str) -> str:
            out = f"{tmp}/m.sqlite"
            return fuzzed(base, r, out) if r.random() < 0.4 else edited(base, r, out)

        def check(path: str, i: int, is_fixed: bool) -> None:
            differs(path, _csqlite, tally)

        n, first = fuzzloop.run(fixed, pool, mutate, check, a.seconds, rng)
    return fuzzloop.finish(tally, ".sqlite", [
        (f"inputs: {n} ({first} hostile kinds, {n - first} mutations of {len(pool)} seeds; seed {a.seed}), each read "
         "by both readers in memory and from a private copy")])


if __name__ == "__main__":
    sys.exit(main())
