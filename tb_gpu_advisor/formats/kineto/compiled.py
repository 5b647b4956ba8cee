"""Which PyTorch (Kineto) JSON chunk decoder runs: the compiled scanner (``_cscan.c``) or the msgspec reference; the
choice itself is made in ``formats/compiled.py``, for every format alike.

The scanner reads a chunk's bytes straight into the reader's columns; it is used with msgspec installed, since the
few events it hands over whole (metadata, ``[memory]``, the shapes of FLOP and collective ops) are decoded by
msgspec's typed decode as before.  On any chunk it does not fully understand it returns None and the chunk is decoded
by the Python path, so columns and errors are the same.
"""

from __future__ import annotations

from types import ModuleType

from tb_gpu_advisor.formats.compiled import PURE_PYTHON_ENV, forced_pure_python, why_python  # noqa: F401 (re-exported)
from tb_gpu_advisor.formats.compiled import load as _load

MODULE = "tb_gpu_advisor.formats.kineto._cscan"


def load() -> ModuleType | None:
    """The compiled scanner module, or None: not built (no compiler at install), or forced off."""
    return _load(MODULE)


def describe() -> str:
    """One line naming the PyTorch JSON decoder this process runs, and why when it is the Python one."""
    why = why_python(MODULE)
    if why:
        return f"PyTorch JSON decoder: Python ({why})"
    try:
        import msgspec  # noqa: F401 - the scanner hands its few whole events to the typed decode
    except ImportError:
        return "PyTorch JSON decoder: Python stdlib json (the compiled scanner needs msgspec: pip install msgspec)"
    return "PyTorch JSON decoder: compiled (C)"
