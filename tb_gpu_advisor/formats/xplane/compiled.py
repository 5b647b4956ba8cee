"""Which XPlane decoder runs: the compiled one or the pure-Python reference.

The compiled decoder (``_cwire.c``, an optional C extension) is built by ``pip install`` when a C compiler is
there, as PyYAML and msgpack build their speedups; without one the install still succeeds and the pure-Python
decoder (``wire.py``) runs.  ``TB_GPU_ADVISOR_PURE_PYTHON=1`` forces the pure-Python path (the equality tests
and the benchmark run both).  The compiled decoder gives the same columns, and the same errors, as the Python
one: on any input it does not fully understand it hands the line back to the Python path (``reader.py``).

Cheap to import (no numpy): ``tb-gpu-advisor --version`` says which path runs.
"""

from __future__ import annotations

import os
from types import ModuleType

#: Set to a non-empty value other than ``0``: the pure-Python decoder runs even where the compiled one is built.
PURE_PYTHON_ENV = "TB_GPU_ADVISOR_PURE_PYTHON"


def forced_pure_python() -> bool:
    """True when ``TB_GPU_ADVISOR_PURE_PYTHON`` asks for the pure-Python decoder."""
    return os.environ.get(PURE_PYTHON_ENV, "").strip() not in ("", "0")


def load() -> ModuleType | None:
    """The compiled decoder module, or None: not built (no compiler at install), or forced off."""
    if forced_pure_python():
        return None
    try:
        from tb_gpu_advisor.formats.xplane import _cwire
    except ImportError:
        return None
    return _cwire


def describe() -> str:
    """One line naming the XPlane decoder this process runs, and why when it is the pure-Python one."""
    if forced_pure_python():
        return f"XPlane decoder: pure Python ({PURE_PYTHON_ENV} is set)"
    if load() is None:
        return "XPlane decoder: pure Python (the compiled extension is not built: no C compiler at install?)"
    return "XPlane decoder: compiled (C)"
