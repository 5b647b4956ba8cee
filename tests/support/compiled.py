"""The compiled decoders as the equality tests see them: the built module (or None), a skip mark for tests that
compare it with its Python twin, and the CI check that it is built where required."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from types import ModuleType

import pytest

from tb_gpu_advisor.formats.compiled import PURE_PYTHON_ENV
from tests.support.paths import REPO

#: Set by ``.ci/run``: a compiled decoder that did not build fails the run instead of skipping its tests.
REQUIRE_ENV = "TB_GPU_ADVISOR_REQUIRE_COMPILED"


def built(module: str) -> ModuleType | None:
    """The compiled module, or None where it was not built (no C compiler at install: nothing to compare)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def needs(module: ModuleType | None, what: str) -> pytest.MarkDecorator:
    """Skip a comparison when ``what`` is not built, unless CI requires it (then the test fails on the None)."""
    return pytest.mark.skipif(module is None and not os.environ.get(REQUIRE_ENV),
                              reason=f"the compiled {what} is not built (pip install -e . with a C compiler builds it)")


def check_built_where_required(module: ModuleType | None, chooser: ModuleType, in_use: ModuleType | None) -> None:
    """CI (``REQUIRE_ENV``) must test the compiled path, never skip it: the module is built and the reader uses it
    (unless the pure-Python path is forced)."""
    if not os.environ.get(REQUIRE_ENV):
        pytest.skip(f"{REQUIRE_ENV} not set")
    assert module is not None, "the C extension was not built: is a C compiler installed?"
    assert chooser.forced_pure_python() or in_use is module


def in_child(code: str, **env: str) -> str:
    """``code``'s output in a fresh interpreter with ``env`` (the decoders are chosen once per process, at import):
    the pure-Python switch is unset there unless ``env`` sets it."""
    full = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO)] + sys.path), **env}
    if PURE_PYTHON_ENV not in env:
        full.pop(PURE_PYTHON_ENV, None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def version_text() -> str:
    """What ``tb-gpu-advisor --version`` prints, from a fresh interpreter (the readers it names are chosen there)."""
    return in_child("import sys; sys.argv = ['tb-gpu-advisor', '--version']\n"
                    "from tb_gpu_advisor.cli.main import main\ntry: main()\nexcept SystemExit: pass")


def forced_pure_description(package: str) -> str:
    """``formats.<package>.compiled.describe()`` in a fresh interpreter with the pure-Python path forced."""
    return in_child(f"from tb_gpu_advisor.formats.{package} import compiled; print(compiled.describe())",
                    **{PURE_PYTHON_ENV: "1"}).strip()
