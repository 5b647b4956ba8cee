"""Which PyTorch (Kineto) JSON chunk decoder runs: the compiled scanner or the msgspec reference.

The compiled scanner (``_cscan.c``, an optional C extension built beside the XPlane decoder) reads a chunk's bytes
straight into the reader's columns; it is used with msgspec installed, since the few events it hands over whole
(metadata, ``[memory]``, the shapes of FLOP and collective ops) are decoded by msgspec's typed decode as before.
``TB_GPU_ADVISOR_PURE_PYTHON=1`` forces the Python path, as for the XPlane decoder.  On any chunk it does not fully
understand the scanner returns None and the chunk is decoded by the Python path, so columns and errors are the same.

Cheap to import (no numpy): ``tb-gpu-advisor --version`` says which path runs.
"""

from __future__ import annotations

from types import ModuleType

from tb_gpu_advisor.formats.xplane.compiled import PURE_PYTHON_ENV, forced_pure_python


def load() -> ModuleType | None:
    """The compiled scanner module, or None: not built (no compiler at install), or forced off."""
    if forced_pure_python():
        return None
    try:
        from tb_gpu_advisor.formats.kineto import _cscan
    except ImportError:
        return None
    return _cscan


def describe() -> str:
    """One line naming the PyTorch JSON decoder this process runs, and why when it is the Python one."""
    if forced_pure_python():
        return f"PyTorch JSON decoder: Python ({PURE_PYTHON_ENV} is set)"
    if load() is None:
        return "PyTorch JSON decoder: Python (the compiled extension is not built: no C compiler at install?)"
    try:
        import msgspec  # noqa: F401 - the scanner hands its few whole events to the typed decode
    except ImportError:
        return "PyTorch JSON decoder: Python stdlib json (the compiled scanner needs msgspec: pip install msgspec)"
    return "PyTorch JSON decoder: compiled (C)"
