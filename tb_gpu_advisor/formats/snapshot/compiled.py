"""Which memory-snapshot pickle reader runs: the compiled one (``_cpickle.c``) or the Python reference
(``unpickle.py``); the choice itself is made in ``formats/compiled.py``, for every format alike."""

from __future__ import annotations

from types import ModuleType

from tb_gpu_advisor.formats.compiled import PURE_PYTHON_ENV, forced_pure_python, why_python  # noqa: F401 (re-exported)
from tb_gpu_advisor.formats.compiled import load as _load

MODULE = "tb_gpu_advisor.formats.snapshot._cpickle"


def load() -> ModuleType | None:
    """The compiled reader module, or None: not built (no compiler at install), or forced off."""
    return _load(MODULE)


def describe() -> str:
    """One line naming the snapshot pickle reader this process runs, and why when it is the Python one."""
    why = why_python(MODULE)
    return f"memory snapshot reader: pure Python ({why})" if why else "memory snapshot reader: compiled (C)"
