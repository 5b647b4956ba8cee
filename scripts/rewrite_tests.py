"""Write pytest's rewritten test modules (``__pycache__/*-pytest-*.pyc``) once, before ``make test`` runs pytest.

Why: pytest rewrites the asserts of every test module it imports (``test_*.py``, ``conftest.py``) and keeps the result
in ``__pycache__`` -- but not where ``PYTHONDONTWRITEBYTECODE`` is set (the project's dev machines and CI), so every
process that collects the suite rewrote all ~1,000 modules again: ~26 s of CPU in each pytest-xdist worker (both
collect the whole suite) and again in the pure-Python rerun.  pytest *reads* a cached module whatever the variable
says (``AssertionRewritingHook.exec_module``: ``_read_pyc`` before rewriting), so writing the cache once here, on
every core, removes that cost from every later process.

The cache is pytest's own: the code object is ``_rewrite_test``'s and the file ``_write_pyc``'s (a checked-hash pyc
that pytest discards when the source changed), so a test runs exactly the code pytest would have made itself.  These
are pytest's private helpers: where they are missing or fail (another pytest), this writes nothing and says so, and
pytest rewrites in each process as before -- slower, never different.
"""

from __future__ import annotations

import os
import sys
import types
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

#: what pytest rewrites on import: its default ``python_files`` and the conftest files (pytest.ini sets no other)
PATTERNS = ("test_*.py", "*_test.py", "conftest.py")


def _modules(root: Path) -> list[Path]:
    """Every file under ``root`` that pytest would rewrite, sorted (a stable split over the workers)."""
    return sorted({p for pattern in PATTERNS for p in root.rglob(pattern) if "__pycache__" not in p.parts})


def _write(paths: list[Path]) -> int:
    """Rewrite and cache each of ``paths`` whose cache is missing or stale; the number written."""
    from _pytest.assertion import rewrite

    state = types.SimpleNamespace(trace=lambda message: None)
    written = 0
    for path in paths:
        pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
        if rewrite._read_pyc(path, pyc) is not None:
            continue
        try:
            source_hash, co = rewrite._rewrite_test(path, None)
        except SyntaxError:
            continue  # pytest reports it when it imports the module; nothing to cache
        if rewrite.try_makedirs(pyc.parent) and rewrite._write_pyc(state, co, source_hash, pyc):
            written += 1
    return written


def main(roots: list[str]) -> int:
    """Cache the rewritten modules under each root, split over the machine's cores; exit 0 whatever happens (the
    cache only saves time)."""
    paths = [p for r in roots for p in _modules(Path(r).resolve())]
    workers = max(1, min(os.cpu_count() or 1, 8))
    chunks = [paths[i::workers] for i in range(workers)]
    try:
        with ProcessPoolExecutor(workers) as pool:
            written = sum(pool.map(_write, chunks))
    except Exception as e:  # noqa: BLE001 - another pytest's private helpers: pytest rewrites them itself then
        print(f"rewrite_tests: pytest's assert-rewrite cache not written ({type(e).__name__}: {e})", file=sys.stderr)
        return 0
    print(f"rewrite_tests: {written} of {len(paths)} test modules rewritten into pytest's cache")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["tests"]))
