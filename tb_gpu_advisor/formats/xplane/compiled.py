"""Which XPlane decoder runs: the compiled one (``_cwire.c``) or the pure-Python reference (``wire.py``); the
choice itself is made in ``formats/compiled.py``, for every format alike."""

from __future__ import annotations

from types import ModuleType

from tb_gpu_advisor.formats.compiled import PURE_PYTHON_ENV, UPB, forced_pure_python, protobuf_runtime, why_python
from tb_gpu_advisor.formats.compiled import load as _load

MODULE = "tb_gpu_advisor.formats.xplane._cwire"


def load() -> ModuleType | None:
    """The compiled decoder module, or None: not built (no compiler at install), or forced off."""
    return _load(MODULE)


def describe() -> str:
    """One line naming the XPlane decoder this process runs, and why when it is the pure-Python one."""
    why = why_python(MODULE)
    decoder = f"XPlane decoder: pure Python ({why})" if why else "XPlane decoder: compiled (C)"
    if protobuf_runtime() == UPB:
        return f"{decoder}, metadata by protobuf's upb"
    why_messages = f"{PURE_PYTHON_ENV} is set" if forced_pure_python() else "the protobuf package is not installed"
    return f"{decoder}, metadata by plain-Python messages ({why_messages})"
