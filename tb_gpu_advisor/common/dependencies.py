"""Our run-time dependencies, told apart from our own bugs when an import fails.

Why: a Python that lacks one of them (a plain ``python3`` beside the venv the package was installed into) fails with
"No module named 'google'" -- a module name no user installs.  The installed package's metadata says which
distributions it needs; :func:`missing_dependency` turns the failed import into what to install, where and how.
"""

from __future__ import annotations

import re
import sys


class MissingDependencyError(ImportError):
    """The analysis (a format's reader, the command's own stages) needs a package this Python lacks: the message names
    the package, the Python and how to install it (``missing_dependency``), where the bare ImportError names only a
    module ("No module named 'google'")."""


#: Top-level modules we import whose distribution is named otherwise (protobuf installs ``google``).
_DISTRIBUTION_OF = {"google": "protobuf"}
#: What a source tree never installed (no metadata) still knows it needs, by top-level module.
_KNOWN_MODULES = ("google", "numpy", "msgspec")
#: The distribution this package is installed as: its metadata lists the version each dependency needs.
_OWN_DISTRIBUTION = "tb-gpu-advisor"


def _requirements() -> dict[str, str]:
    """Each run-time dependency's distribution name (lower case) -> its requirement (``protobuf>=3.20``), from the
    installed package's metadata; empty where the package runs from a source tree that was never installed."""
    from importlib import metadata

    try:
        listed = metadata.requires(_OWN_DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return {}
    out: dict[str, str] = {}
    for req in listed:
        if ";" in req:  # an extra's (test, s3, mcp): not what the analysis needs
            continue
        name = re.split(r"[<>=!~\[ ]", req, maxsplit=1)[0].strip()
        out.setdefault(name.lower(), req.strip())
    return out


def missing_dependency(what: str, error: ImportError) -> MissingDependencyError | None:
    """The error to report when ``what`` ("reading XPlane (TensorFlow/JAX) files", "tb-gpu-advisor report") failed on
    ``error``, a module that is not installed: which package to install, into which Python, and how.  None for a
    module that is none of our dependencies (a bug of ours, which keeps its own traceback) and for an ImportError that
    is not a missing module."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    top = error.name.split(".", 1)[0]
    dist = _DISTRIBUTION_OF.get(top, top)
    needs = _requirements()
    if (dist.lower() not in needs) if needs else (top not in _KNOWN_MODULES):
        return None
    spec = needs.get(dist.lower(), dist)
    return MissingDependencyError(
        f"{what} needs the Python package {dist!r} (module {error.name!r}), which is not installed in the Python that "
        f"runs it ({sys.executable}): install it with `{sys.executable} -m pip install '{spec}'`, or install "
        f"{_OWN_DISTRIBUTION} with its dependencies (`pip install -e .` in its source, or "
        f"`pip install {_OWN_DISTRIBUTION}`)", name=error.name)
