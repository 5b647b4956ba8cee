"""Which SQLite column reader runs for every SQLite format (Nsight Systems exports, rocmProfileData and rocpd
databases): the compiled one (``formats/_csqlite.c``, SQLite's C API straight into native columns) or the Python
reference (``formats/sqlite.py`` through Python's ``sqlite3``); the choice itself is made in ``formats/compiled.py``,
for every format alike.

Why here, beside ``formats/sqlite.py``: the reader is the shared SQLite machinery's twin, read by every SQLite format;
built inside one format's package, the shared module imported that package to find it (h37-debt47).

The compiled reader needs no SQLite header or development library at build time: it finds SQLite's functions when
imported, in the library Python's own ``_sqlite3`` uses.  Where none can be found its import fails and the Python
path runs; :func:`why_python` then says so rather than blame the compiler.  Cheap to import (no numpy).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from tb_gpu_advisor.formats.compiled import NOT_BUILT, PURE_PYTHON_ENV, forced_pure_python
from tb_gpu_advisor.formats.compiled import load as _load

MODULE = "tb_gpu_advisor.formats._csqlite"


def load() -> ModuleType | None:
    """The compiled reader module, or None: not built (no compiler at install), no SQLite library, or forced off."""
    return _load(MODULE)


def why_python() -> str | None:
    """Why the Python reader runs, or None when the compiled one does: forced, not built, or built but without an
    SQLite library to bind to."""
    if forced_pure_python():
        return f"{PURE_PYTHON_ENV} is set"
    try:
        importlib.import_module(MODULE)
    except ModuleNotFoundError:
        return NOT_BUILT
    except ImportError as e:
        return f"the compiled extension is built but cannot run: {e}"
    return None
