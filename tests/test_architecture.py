"""The pipeline's stage order, enforced: each stage imports only the stages before it.

discover -> trace model <- read (formats: each fills the model) -> steps -> metrics -> rules -> report -> serve.  A module
that reaches forward (steps reading a metrics module, the report layer a format's types) is what
made the XPlane format leak into every stage before the trace model existed; this test fails on the
first such import, at module level or inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "tb_gpu_advisor"

#: Stages in pipeline order: a module of stage i may import stages 0..i (and the shared modules).
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("discover", ("discovery",)),
    ("model", ("trace",)),
    ("read", ("formats",)),
    ("steps", ("steps",)),
    ("metrics", ("metrics",)),
    ("rules", ("rules",)),
    ("report", ("analyze", "render", "diff", "diff_render", "cache", "isolation", "analysis", "report_service", "forkserver_main")),
    ("serve", ("plugin", "plugin_entry", "cli", "cli_report", "cli_diff", "precompute", "gpu_probe")),
)
#: Vocabulary and utilities any stage may use; they import no stage themselves.
SHARED = ("thresholds", "idtable", "memory", "columns", "fsio", "fmt", "kernel_classes", "report_schema", "frameworks")
#: Not part of the pipeline: generators of test and demo captures (they may use every stage).
OUTSIDE = ("synthetic", "__init__", "static")


def _module(path: Path) -> str:
    return ".".join(path.relative_to(PKG.parent).with_suffix("").parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every ``tb_gpu_advisor`` module imported by ``path`` (anywhere in the file)."""
    mod = _module(path)
    pkg = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("tb_gpu_advisor"))
        elif isinstance(node, ast.ImportFrom):
            base = pkg[: len(pkg) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            if not name.startswith("tb_gpu_advisor"):
                continue
            out.add(name)
            if not node.module or node.level:  # "from . import x" / "from .pkg import mod": modules too
                out.update(f"{name}.{a.name}" for a in node.names)
    return out


def _top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _stage(top: str) -> int | None:
    for i, (_, tops) in enumerate(STAGES):
        if top in tops:
            return i
    return None


def test_every_module_has_a_place():
    tops = {_top(_module(p)) for p in PKG.rglob("*.py")}
    placed = {t for _, ts in STAGES for t in ts} | set(SHARED) | set(OUTSIDE)
    assert tops <= placed, f"modules without a stage: {sorted(tops - placed)} (add them to STAGES or SHARED)"


def test_stages_import_only_earlier_stages():
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        top = _top(_module(path))
        if top in OUTSIDE and top != "__init__":
            continue
        mine = _stage(top)
        for imp in sorted(_imports(path)):
            t = _top(imp)
            if t in SHARED or t == "__init__" or t == top:
                if top in SHARED and t not in SHARED and t != "__init__":
                    bad.append(f"{_module(path)} (shared) imports {imp}")
                continue
            theirs = _stage(t)
            if top in SHARED:
                if theirs is not None:
                    bad.append(f"{_module(path)} (shared) imports stage module {imp}")
            elif theirs is not None and mine is not None and theirs > mine:
                bad.append(f"{_module(path)} ({STAGES[mine][0]}) imports {imp} ({STAGES[theirs][0]})")
    assert not bad, "imports against the pipeline order:\n" + "\n".join(bad)


def test_the_checker_sees_a_forward_import(tmp_path):
    """The import walk resolves relative imports, in functions too (else the test above could not fail)."""
    f = PKG / "steps.py"
    imports = _imports(f)
    assert "tb_gpu_advisor.trace" in imports and "tb_gpu_advisor.columns" in imports
    fake = tmp_path / "x.py"
    fake.write_text("def f():\n    from tb_gpu_advisor.metrics import context\n")
    assert "tb_gpu_advisor.metrics.context" in _imports_abs(fake)


def _imports_abs(path: Path) -> set[str]:
    """:func:`_imports` for a file outside the package (absolute imports only)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tb_gpu_advisor"):
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out
