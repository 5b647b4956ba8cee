"""No format imports another (h37-debt46): where one format's layout refuses another format's file by its head -- the
Kineto layout a rocprof ``results.json``, the Nsight layout an ``.rpd`` saved as ``.sqlite`` -- the test of that head
lives in ``formats.heads``, read by both, as the bounded gzip reader lives in ``formats.gz`` (h37-debt45).  On BASE the
Kineto layout imported ``formats.rocprof.layout`` and the Nsight layout ``formats.kineto.layout`` and
``formats.rpd.tables``.

Nor does a shared module of ``formats/`` (the machinery every format reads through: ``formats/sqlite.py``,
``formats/gz.py``, ...) import a format's package -- only the registry (``formats/__init__.py``) names them all
(h37-debt47): on BASE 3b05c8b4 ``formats/sqlite.py``, the SQLite reading of Nsight, rpd and rocpd alike, imported
``formats.nsys.compiled`` to find the compiled SQLite reader built inside the Nsight package; it now lives beside it
(``formats/_csqlite.c``, chosen in ``formats/sqlite_compiled.py``).  A dotted name of a format's module in a string
(``importlib`` of ``"tb_gpu_advisor.formats.nsys._csqlite"``) imports that package too, and counts."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

from tb_gpu_advisor.formats import heads, sqlite, sqlite_compiled
from tb_gpu_advisor.formats.kineto import layout as kineto_layout
from tb_gpu_advisor.formats.nsys import layout as nsys_layout
from tb_gpu_advisor.formats.rocprof import layout as rocprof_layout
from tests.support.paths import REPO

FORMATS = REPO / "tb_gpu_advisor" / "formats"
PACKAGES = sorted(p.name for p in FORMATS.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def _imported(path: Path) -> set[str]:
    """The modules ``path`` imports (top level or inside a function), as dotted names."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def _other_formats(pkg: str) -> list[str]:
    """``file: module`` of each import of another format's package by ``pkg``'s modules."""
    others = [p for p in PACKAGES if p != pkg]
    hits = []
    for path in sorted((FORMATS / pkg).rglob("*.py")):
        for mod in sorted(_imported(path)):
            if any(mod == f"tb_gpu_advisor.formats.{o}" or mod.startswith(f"tb_gpu_advisor.formats.{o}.") for o in others):
                hits.append(f"{path.relative_to(FORMATS)}: {mod}")
    return hits


SHARED = sorted(p for p in FORMATS.glob("*.py") if p.name != "__init__.py")  # the registry names every format


def _named_modules(path: Path) -> set[str]:
    """Dotted module names of ``tb_gpu_advisor`` that ``path`` holds as string constants (an ``importlib`` target)."""
    return {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and n.value.startswith("tb_gpu_advisor.") and " " not in n.value}


def _of_a_format(mod: str) -> bool:
    return any(mod == f"tb_gpu_advisor.formats.{p}" or mod.startswith(f"tb_gpu_advisor.formats.{p}.") for p in PACKAGES)


def test_no_shared_module_imports_a_format() -> None:
    hits = [f"{path.name}: {mod}" for path in SHARED for mod in sorted(_imported(path) | _named_modules(path))
            if _of_a_format(mod)]
    assert SHARED and hits == []


def test_the_shared_sqlite_reader_runs_the_compiled_reader_of_its_own_home() -> None:
    """The compiled SQLite reader is the shared module's twin, built beside it; where built, the one it runs."""
    assert sqlite_compiled.MODULE == "tb_gpu_advisor.formats._csqlite"
    assert (FORMATS / "_csqlite.c").is_file() and not (FORMATS / "nsys" / "_csqlite.c").exists()
    assert sqlite._CSQLITE is sqlite_compiled.load()


def test_the_format_packages_are_read() -> None:
    assert {"kineto", "nsys", "rocprof", "rpd"} <= set(PACKAGES)


def test_no_format_imports_another() -> None:
    hits = [h for pkg in PACKAGES for h in _other_formats(pkg)]
    assert hits == []


def test_the_refusing_layouts_ask_the_heads() -> None:
    """The heads' tests are the ones both sides ask, one object each (no copy to drift)."""
    assert kineto_layout.is_rocprof_head is heads.is_rocprof_head is rocprof_layout.is_rocprof_head
    assert nsys_layout.RPD_DATABASE is heads.RPD_DATABASE


def test_an_rpd_database_named_sqlite_is_refused_by_the_nsight_layout(tmp_path: Path) -> None:
    """Behaviour kept: the Nsight probe says an ``.rpd`` saved as ``.sqlite`` is rocmProfileData's, by name."""
    db = tmp_path / "trace.sqlite"
    con = sqlite3.connect(db)
    for t in heads.RPD_OWN:
        con.execute(f'CREATE TABLE "{t}" (id INTEGER)')
    con.commit()
    con.close()
    assert nsys_layout._probe(str(db))[0] == heads.RPD_DATABASE


def test_a_rocprof_head_is_told_and_a_kineto_head_is_not() -> None:
    rocprof = b'{ "traceEvents":[{}\n,{"args":{"name":"CPU HIP API"},"ph":"M","pid":2,"name":"process_name"}'
    kineto = b'{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm"}]}'
    assert heads.is_rocprof_head(rocprof) and not heads.is_rocprof_head(kineto)
