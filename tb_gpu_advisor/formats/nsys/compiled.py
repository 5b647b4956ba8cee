"""Which Nsight Systems column reader runs, in ``--version``'s words: the shared SQLite reader's choice
(``formats/sqlite_compiled.py``: the compiled ``formats/_csqlite.c`` or the Python reference), which every SQLite
format reads its tables through.
"""

from __future__ import annotations

from tb_gpu_advisor.formats.compiled import PURE_PYTHON_ENV, forced_pure_python
from tb_gpu_advisor.formats.sqlite_compiled import MODULE, load, why_python

__all__ = ["MODULE", "PURE_PYTHON_ENV", "describe", "forced_pure_python", "load", "why_python"]


def describe() -> str:
    """One line naming the Nsight Systems reader this process runs, and why when it is the Python one."""
    why = why_python()
    return f"Nsight Systems reader: pure Python ({why})" if why else "Nsight Systems reader: compiled (C)"
