"""The one place that chooses between each format's compiled decoder and its Python reference.

The compiled decoders (``xplane/_cwire.c``, ``kineto/_cscan.c``, ``snapshot/_cpickle.c``, ``_csqlite.c``) are
optional C extensions that ``pip install`` builds where a C compiler is found, as PyYAML and msgpack build their
speedups; without one the install still succeeds and the Python decoders run. ``TB_GPU_ADVISOR_PURE_PYTHON=1`` forces
the Python path for every format (the equality tests and the benchmarks run both). A compiled decoder gives the same
columns and the same errors as its Python twin: on any input it does not fully understand it hands that piece back to
the Python path (the snapshot reader mirrors its twin opcode for opcode instead, and hands back only a call whose
numbers do not fit in 64 bits).

The same place chooses protobuf's runtime for the XPlane and HLO messages (:func:`protobuf_runtime`): upb, protobuf's
C parser, where the ``protobuf`` package is installed and nothing forced the Python path; else the plain-Python
messages of ``formats/protomsg.py`` -- so a Python without ``protobuf`` still reads TensorFlow and JAX captures.

Cheap to import (no numpy): ``tb-gpu-advisor --version`` says which path runs for each format.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

#: Set to a non-empty value other than ``0``: the Python decoders run even where the compiled ones are built.
PURE_PYTHON_ENV = "TB_GPU_ADVISOR_PURE_PYTHON"
#: Why a compiled decoder is absent where nothing forced it off.
NOT_BUILT = "the compiled extension is not built: no C compiler at install?"


def forced_pure_python() -> bool:
    """True when ``TB_GPU_ADVISOR_PURE_PYTHON`` asks for the Python decoders."""
    return os.environ.get(PURE_PYTHON_ENV, "").strip() not in ("", "0")


def load(module: str) -> ModuleType | None:
    """The compiled decoder ``module`` (a dotted name), or None: not built (no compiler at install), or forced off."""
    if forced_pure_python():
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def why_python(module: str) -> str | None:
    """Why the Python path runs instead of ``module``'s compiled decoder, or None when the compiled one runs."""
    if forced_pure_python():
        return f"{PURE_PYTHON_ENV} is set"
    return NOT_BUILT if load(module) is None else None


#: protobuf's runtime for the message schemas: upb where installed, else (or forced) the plain-Python messages.
UPB, PYTHON_MESSAGES = "upb", "python"


def protobuf_runtime() -> str:
    """Which runtime parses the XSpace and HLO messages: :data:`UPB` (protobuf's C parser, where the ``protobuf``
    package is installed) or :data:`PYTHON_MESSAGES` (``formats/protomsg.py``: no protobuf, or
    ``TB_GPU_ADVISOR_PURE_PYTHON`` set)."""
    if forced_pure_python():
        return PYTHON_MESSAGES
    try:
        importlib.import_module("google.protobuf.message_factory")
    except ImportError:
        return PYTHON_MESSAGES
    return UPB
