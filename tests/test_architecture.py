"""The pipeline's stage order, enforced: each stage imports only itself and the stages before it.

The order is ``tb_gpu_advisor.STAGES``, one sub-package per stage.  This test fails when a folder of the
package is not a stage (or a stage has no folder), when a module imports a later stage (at module level
or inside a function), when the package imports the test machinery, and when README's "How it works"
tree lists other folders or another order.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tb_gpu_advisor
from tests.support.paths import REPO

ROOT = REPO
PKG = ROOT / "tb_gpu_advisor"
STAGES = tb_gpu_advisor.STAGES
#: Folders of the package that hold no Python stage (the tab's files live inside serve/).
NOT_STAGES = {"__pycache__"}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


#: what each file imports and the aliases it takes, read once per file for every check here (each check walked the
#: whole package's trees again: ~1.4 s of CPU a check); sets of names only, no tree kept
_READ: dict[Path, tuple[frozenset[str], tuple[str, ...]]] = {}


def _read(path: Path) -> tuple[frozenset[str], tuple[str, ...]]:
    """:func:`imports` and :func:`_alias_imports` of ``path``, from one parse."""
    if path in _READ:
        return _READ[path]
    mod = _module(path)
    pkg = mod.split(".")[:-1]
    out, aliases = set(), []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = pkg[: len(pkg) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            out.add(name)
            out.update(f"{name}.{a.name}" for a in node.names)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            aliases += [f"{a.name} as {a.asname}" for a in node.names if a.asname in ("analysis", "discovery")]
    _READ[path] = frozenset(out), tuple(aliases)
    return _READ[path]


def imports(path: Path) -> frozenset[str]:
    """Absolute names of every module imported by ``path`` (anywhere in the file, relative imports resolved)."""
    return _read(path)[0]


def stage_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "tb_gpu_advisor" and parts[1] in STAGES else None


def test_the_folders_are_the_stages():
    folders = {p.name for p in PKG.iterdir() if p.is_dir()} - NOT_STAGES
    assert folders == set(STAGES), f"folders without a stage: {sorted(folders - set(STAGES))}; " \
                                   f"stages without a folder: {sorted(set(STAGES) - folders)}"
    loose = sorted(p.name for p in PKG.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules outside any stage folder: {loose}"


def test_stages_import_only_earlier_stages():
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        mine = stage_of(_module(path))
        if mine is None:
            continue
        for imp in sorted(imports(path)):
            theirs = stage_of(imp)
            if theirs is not None and STAGES.index(theirs) > STAGES.index(mine):
                bad.append(f"{_module(path)} ({mine}) imports {imp} ({theirs})")
    assert not bad, "imports against the pipeline order:\n" + "\n".join(bad)


def test_the_package_never_imports_test_machinery():
    bad = [f"{_module(p)} imports {i}" for p in sorted(PKG.rglob("*.py")) for i in imports(p)
           if i.split(".")[0] in ("synthetic", "tests", "benchmarks", "scripts")]
    assert not bad, bad


def test_readme_tree_lists_the_stages_in_order():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## How it works", 1)[1].split("```", 2)[1]
    listed = [m.group(1) for m in re.finditer(r"^([a-z_]+)/", section, re.M)]
    assert listed == list(STAGES), f"README tree: {listed}"


def test_the_checker_sees_a_forward_import(tmp_path):
    """The walk resolves relative imports and imports inside functions (else the test above could not fail)."""
    fake = PKG / "steps" / "_probe_forward.py"
    fake.write_text("def f():\n    from ..metrics import context\n    from tb_gpu_advisor.rules import base\n")
    try:
        found = imports(fake)
    finally:
        fake.unlink()
    assert {"tb_gpu_advisor.metrics.context", "tb_gpu_advisor.rules.base"} <= found
    assert STAGES.index(stage_of("tb_gpu_advisor.metrics.context")) > STAGES.index("steps")


#: What the command line, the tab and the MCP server reach only through the one entry point (issue 27 item 19).
BEHIND_THE_FACADE = ("tb_gpu_advisor.discover", "tb_gpu_advisor.runtime.session", "tb_gpu_advisor.runtime.pipeline",
                     "tb_gpu_advisor.runtime.cache", "tb_gpu_advisor.runtime.isolation")


def _alias_imports(path: Path) -> list[str]:
    """``import ... as X`` / ``from ... import Y as X`` where the alias hides which module it is (old names kept)."""
    return list(_read(path)[1])


def test_cli_tab_and_mcp_server_use_the_advisor_facade():
    """cli/ and serve/ ask ``runtime.advisor.Advisor`` for discovery, analysis, the cache and windows (HTA's
    ``TraceAnalysis``): none imports those modules itself, nor keeps an old alias (``session as analysis``,
    ``logdir as discovery``), and the MCP server takes nothing private from the plugin."""
    bad = []
    for stage in ("cli", "serve"):
        for path in sorted((PKG / stage).rglob("*.py")):
            names = imports(path)
            bad += [f"{_module(path)} imports {n}" for n in sorted(names)
                    if any(n == b or n.startswith(b + ".") for b in BEHIND_THE_FACADE)]
            bad += [f"{_module(path)}: {a}" for a in _alias_imports(path)]
            bad += [f"{_module(path)} imports the private {n}" for n in sorted(names)
                    if n.startswith("tb_gpu_advisor.serve.plugin._")]
    for path in sorted(PKG.rglob("*.py")):
        bad += [f"{_module(path)}: {a}" for a in _alias_imports(path)]
    assert not bad, "\n".join(sorted(set(bad)))
    uses = {p.name: "runtime.advisor" in p.read_text() for p in
            (PKG / "cli" / "report.py", PKG / "cli" / "precompute.py", PKG / "serve" / "plugin.py",
             PKG / "serve" / "mcp_server.py", PKG / "cli" / "options.py")}
    assert all(uses.values()), uses
