"""The benchmark scripts are not a package: their tests import them with ``benchmarks/`` on the path, once here."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest

from tests.support.paths import REPO


@pytest.fixture(scope="module")
def bench_import() -> Iterator[Callable[[str], ModuleType]]:
    """``bench_import("issue30")``: that script as a module, imported as the scripts import each other."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        yield importlib.import_module
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
