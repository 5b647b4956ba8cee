"""The test suite itself: tests that cannot fail, and test modules that depend on each other (issue #12, item 9).

Static checks over ``tests/*.py``; cheap, so the patterns do not come back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
MODULES = sorted(p for p in TESTS.rglob("*.py") if "fixtures" not in p.parts)


#: each module's tree, parsed once for this file's checks (each walks every module: ~2 s of CPU a parse of them all)
#: and dropped when the file's tests end (``_trees``), so the rest of the worker's run never carries them
_TREES: dict[Path, ast.Module] = {}


@pytest.fixture(scope="module", autouse=True)
def _trees():
    yield
    _TREES.clear()


def _tree(path: Path) -> ast.Module:
    """The module's tree (read-only to every check here: ``ast.walk``, ``ast.unparse``)."""
    if path not in _TREES:
        _TREES[path] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return _TREES[path]


def test_no_test_module_imports_another_test_module():
    """Shared helpers live in helper modules (profile_files.py, tiny_capture.py, ...): importing a test module
    runs its collection-time code and couples two test files."""
    bad = []
    for path in MODULES:
        for node in ast.walk(_tree(path)):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                last = name.split(".")[-1] if name.startswith("tests.") or node.__dict__.get("level") else ""
                if last.startswith("test_"):
                    bad.append(f"{path.name}:{node.lineno} imports {name}")
    assert not bad, bad


def test_no_assertion_on_a_constant():
    """``assert True``, ``assert "text"``, ``assert (x, "msg")``: always true."""
    bad = []
    for path in MODULES:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Assert) and isinstance(node.test, (ast.Constant, ast.Tuple, ast.JoinedStr)):
                bad.append(f"{path.name}:{node.lineno}")
    assert not bad, bad


def test_every_test_function_checks_something():
    """A test function without assert, pytest.raises/fail/skip or a call of an ``assert``/``check``/``judge``
    helper passes whatever the code does."""
    checks = ("assert", "raises", "fail", "skip", "check", "judge", "_read_error", "warns")
    bad = []
    for path in MODULES:
        if not path.name.startswith("test_"):
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
                src = ast.unparse(node)
                if not any(c in src for c in checks):
                    bad.append(f"{path.name}::{node.name}")
    assert not bad, bad


def _always_true(test: ast.expr) -> bool:
    """``x == x``, ``x is x``, ``len(x) >= 0``, ``x.count(...) >= 0``: true whatever the code under test does."""
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.And) and all(_always_true(v) for v in test.values)
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, (ast.Eq, ast.Is, ast.GtE, ast.LtE)) and ast.dump(left) == ast.dump(right):
        return True
    counts = (isinstance(left, ast.Call) and isinstance(left.func, (ast.Name, ast.Attribute))
              and getattr(left.func, "id", getattr(left.func, "attr", "")) in ("len", "count"))
    return counts and isinstance(op, ast.GtE) and isinstance(right, ast.Constant) and right.value == 0


def test_no_assertion_that_always_holds():
    """A value compared with itself, or a length / count compared with ``>= 0``."""
    bad = []
    for path in MODULES:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Assert) and _always_true(node.test):
                bad.append(f"{path.name}:{node.lineno}: {ast.unparse(node.test)}")
    assert not bad, bad


def test_the_always_true_check_sees_each_form():
    """The detector itself: each tautology is found, a real comparison is not."""
    found = [_always_true(ast.parse(src, mode="eval").body) for src in (
        "x == x", "f(a).b is f(a).b", "len(rows) >= 0", "s.count('a') >= 0", "len(x) >= 0 and y == y",
        "x == y", "len(rows) >= 1", "len(rows) > 0", "a == b and c == c")]
    assert found == [True, True, True, True, True, False, False, False, False]


def _pure_python_tests() -> list[Path]:
    """The Makefile's ``PURE_PYTHON_TESTS``: the files ``make test`` runs again on the pure-Python path."""
    make = (TESTS.parent / "Makefile").read_text(encoding="utf-8")
    block = make.split("PURE_PYTHON_TESTS ?=", 1)[1].split("\n\n", 1)[0].replace("\\\n", " ")
    return [TESTS.parent / w for w in block.split() if w.endswith(".py")]


def test_the_pure_python_rerun_leaves_out_only_what_it_would_repeat():
    """The rerun (issue #38) deselects ``same_on_both_paths``: a test so marked must run only fresh interpreters or
    the C toolchain (``in_child``, ``version_text``, ``forced_pure_description``, ``subprocess``), or -- needing the
    compiled reader -- compare both paths in this process by its own switch (``compare(``, ``_CPICKLE``,
    ``read_both(``: under the pure-Python switch it would compare Python with Python), or read in a module that forces
    its one compiled reader off for every test (``_CSQLITE`` set to None: both runs read the Python path); never read a
    capture in this process otherwise -- that would be a reader test the pure-Python path must repeat.  The Makefile's
    rerun names the marker, and each of its files exists.  (suiteB's marks on ``read_both`` and on
    ``test_nsys_packed``'s forced-Python reads failed this check at 2aa60c44: the words, not the marks, were short;
    h37-review62.)"""
    make = (TESTS.parent / "Makefile").read_text(encoding="utf-8")
    assert '-m "not same_on_both_paths and not proved_on_python_path" $(PURE_PYTHON_TESTS)' in make
    files = _pure_python_tests()
    assert len(files) >= 10 and all(p.is_file() for p in files), files
    children = ("in_child(", "version_text(", "forced_pure_description(", "subprocess.run(")
    readers = ("read(", "read_trace(", "analyze", "parse(", "decode(", "compare(", "report(")
    marked, bad = [], []
    for path in MODULES:
        # a module that forces its one compiled reader off for every test: both runs read the Python path
        forced_python = 'setattr(shared_sqlite, "_CSQLITE", None)' in path.read_text(encoding="utf-8")
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.FunctionDef) or not any(
                    "same_on_both_paths" in ast.unparse(d) for d in node.decorator_list):
                continue
            marked.append(node.name)
            body = ast.unparse(node)
            both = (any("needs_compiled" in ast.unparse(d) for d in node.decorator_list) and any(
                w in body for w in ("compare(", "_CPICKLE", "read_both("))) or forced_python
            if path not in files or not (both or (any(c in body for c in children)
                                                  and not any(r in body for r in readers))):
                bad.append(f"{path.name}::{node.name}")
    assert marked and not bad, bad


def _marked(node: ast.AST, marker: str) -> list[ast.expr]:
    """The decorators of a function ``node`` that name ``marker``."""
    return [d for d in getattr(node, "decorator_list", []) if marker in ast.unparse(d)]


def test_a_test_left_to_the_main_run_names_its_python_path_proof():
    """The rerun also deselects ``proved_on_python_path("FILE::TEST")``: a test of a rerun file whose claim the main
    run checks on the Python path by the named test -- one that exists, needs the compiled reader and compares both
    paths itself (``same_on_both_paths``, ``read_both(``/``compare(``).  A mark naming nothing, or a test that does
    not compare the paths, would drop a Python-path check silently."""
    files = _pure_python_tests()
    marked, bad = [], []
    for path in MODULES:
        for node in ast.walk(_tree(path)):
            for d in _marked(node, "proved_on_python_path"):
                marked.append(node.name)
                target = ast.literal_eval(d.args[0]) if isinstance(d, ast.Call) and d.args else ""
                rel, _, name = target.partition("::")
                proof = [n for n in ast.walk(_tree(TESTS.parent / rel))
                         if isinstance(n, ast.FunctionDef) and n.name == name] if (TESTS.parent / rel).is_file() else []
                ok = proof and _marked(proof[0], "same_on_both_paths") and _marked(proof[0], "needs_compiled") and any(
                    w in ast.unparse(proof[0]) for w in ("read_both(", "compare("))
                if path not in files or not ok:
                    bad.append(f"{path.name}::{node.name} -> {target!r}")
    assert marked and not bad, bad


def _called(node: ast.AST, names: tuple[str, ...]) -> bool:
    """Whether ``node`` calls one of ``names`` (``tempfile.mkdtemp(...)`` or a bare ``mkdtemp(...)``)."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)) in names


def _removes_in_finally(fn: ast.AST) -> bool:
    """Whether ``fn`` removes a folder (``rmtree``) in a ``finally``: the fixture or helper that made it cleans up
    however its body ends."""
    return any(isinstance(t, ast.Try) and any(_called(n, ("rmtree",)) for s in t.finalbody for n in ast.walk(s))
               for t in ast.walk(fn))


def _leaked_scratch(tree: ast.Module) -> list[int]:
    """The lines of ``mkdtemp``/``mkstemp`` calls that nothing removes: a call outside any function, or in one that
    removes nothing in a ``finally``.  ``tmp_path`` and ``with tempfile.TemporaryDirectory()`` are the forms that
    clean up by construction; a bare ``mkdtemp`` leaves its folder in /tmp on every run."""
    owner: dict[ast.AST, ast.AST] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for n in ast.walk(fn):
                owner[n] = fn  # ast.walk is breadth-first: an inner function's calls are set last, to it
    return [n.lineno for n in ast.walk(tree) if _called(n, ("mkdtemp", "mkstemp"))
            and not (n in owner and _removes_in_finally(owner[n]))]


def test_no_test_leaves_a_scratch_folder_behind():
    """A test's scratch folder is pytest's ``tmp_path`` or a ``with tempfile.TemporaryDirectory()``; a bare
    ``mkdtemp`` (a thousand random jobs a run, each written to its own folder) filled the lead's /tmp with ~3,000
    folders, 2 GB.  Fails on main (``report_of(job, tempfile.mkdtemp(prefix="randjob"))`` and 30 more)."""
    bad = [f"{path.relative_to(TESTS)}:{line}" for path in MODULES for line in _leaked_scratch(_tree(path))]
    assert not bad, bad


def test_the_scratch_check_sees_each_form():
    """The detector itself: a bare ``mkdtemp`` (in a function, at module level, nested) is found; one whose function
    removes it in a ``finally`` (the e2e fixtures) is not, nor a ``with TemporaryDirectory()``."""
    forms = {
        "def f():\n    return report_of(job, tempfile.mkdtemp())": [2],
        "d = mkdtemp()": [1],
        "def f():\n    d = mkdtemp()\n    try:\n        yield d\n    finally:\n        shutil.rmtree(d)": [],
        "def f():\n    def g():\n        return mkdtemp()\n    try:\n        g()\n    finally:\n        rmtree(x)": [3],
        "def f():\n    d = mkdtemp()\n    try:\n        yield d\n    finally:\n        close(d)": [2],
        "def f():\n    with tempfile.TemporaryDirectory() as d:\n        return run(d)": [],
    }
    assert {src: _leaked_scratch(ast.parse(src)) for src in forms} == forms


def test_no_frontend_test_leaves_a_scratch_folder_behind():
    """The tab's node tests: a ``mkdtempSync`` folder is removed when its test ends, the removal registered on the
    next line (``t.after(() => rmSync(dir, ...))``).  Fails on main: settings.test.js left an ``advisor-tab-*``
    folder in /tmp on every run."""
    bad = []
    for path in sorted((TESTS.parent / "frontend" / "test").glob("*.js")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            after = lines[i + 1] if i + 1 < len(lines) else ""
            if "mkdtempSync(" in line and not ("after(" in after and "rmSync(" in after):
                bad.append(f"{path.name}:{i + 1}")
    assert not bad, bad
