"""A rule asks, never substitutes words (``/work/shared/docs/guide.md``; issue #37, h37-left29): no rule or framework
module rewrites finished text by replacing words in it.  Each composes its words from what the report's context
knows -- the job's unit (``JobView.unit``), the job's loop (``frameworks.pytorch.Loop``) -- so a sentence is right as
written, and a new sentence cannot slip past a list of words to reword.

Before h37-left29, ``rules/_job.unit_words`` turned "rank" into "GPU" with a regex over every job finding's text, and
``frameworks/base._reworded`` replaced PyTorch's capture advice's words for the ``alone`` and ``any_work`` tags; both
fail this check.  What stays allowed, by construction of the check: filling a ``{placeholder}`` of a template, and a
replace of a string with no letter in it (a Windows path's separators in a stack frame)."""

from __future__ import annotations

import ast
from pathlib import Path

import tb_gpu_advisor

PACKAGE = Path(tb_gpu_advisor.__file__).resolve().parent
MODULES = sorted((PACKAGE / "rules").glob("*.py")) + sorted((PACKAGE / "frameworks").glob("*.py"))


def _rewords(call: ast.Call) -> str | None:
    """Why ``call`` rewrites words in a text, or None: a ``re.sub`` / ``pattern.sub``, or a ``str.replace`` whose
    first argument is not a letterless constant or a ``{placeholder}``."""
    f = call.func
    if not isinstance(f, ast.Attribute):
        return None
    if f.attr in ("sub", "subn"):
        return f"{f.attr}() over a text"
    if f.attr != "replace" or (isinstance(f.value, ast.Name) and f.value.id == "dataclasses") or not call.args:
        return None
    old = call.args[0]
    if isinstance(old, ast.Constant) and isinstance(old.value, str):
        if old.value.startswith("{") or not any(c.isalpha() for c in old.value):
            return None
        return f"replace({old.value!r}, ...)"
    return "replace() of words the call does not show"


def _found(path: Path, root: Path = PACKAGE) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [f"{path.relative_to(root)}:{n.lineno}: {why}" for n in ast.walk(tree)
            if isinstance(n, ast.Call) and (why := _rewords(n)) is not None]


def test_no_rule_or_framework_module_rewords_finished_text():
    assert len(MODULES) > 40  # the rules and the frameworks were read
    bad = [x for p in MODULES for x in _found(p)]
    assert not bad, bad


def test_the_check_sees_each_way_to_reword(tmp_path):
    """The forms the two removed helpers used are caught; a template's placeholder and a path's separators are not."""
    src = tmp_path / "m.py"
    src.write_text("import re\n"
                   "_RANK = re.compile('rank')\n"
                   "def a(text, old, new):\n"
                   "    return text.replace(old, new)\n"              # frameworks/base._reworded
                   "def b(text):\n"
                   "    return _RANK.sub('GPU', text)\n"              # rules/_job.unit_words
                   "def c(text):\n"
                   "    return re.sub('rank', 'GPU', text)\n"
                   "def d(text):\n"
                   "    return text.replace('ranks', 'GPUs')\n"
                   "def ok(text, frame):\n"
                   "    return text.replace('{warn:g}', '5'), frame.replace('\\\\', '/')\n", encoding="utf-8")
    found = _found(src, tmp_path)
    assert [x.split(":")[1] for x in found] == ["4", "6", "8", "10"], found


def _restated(path: Path, root: Path = PACKAGE) -> list[str]:
    """The entries of a table keyed by a fix's words (``{LOADER.text: ...}``) whose value is words written out (a
    string of more than one word): a fix's words restated by hand (less a clause), not composed from the fix's own
    template.  A one-word value is an id (``FIX_APPLIED``: ``"compiled"``), not words."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [f"{path.relative_to(root)}:{v.lineno}: {ast.unparse(k)} restated as a literal"
            for n in ast.walk(tree) if isinstance(n, ast.Dict)
            for k, v in zip(n.keys, n.values)
            if isinstance(k, ast.Attribute) and k.attr == "text"
            and (isinstance(v, (ast.JoinedStr, ast.BinOp)) or isinstance(v, ast.Constant) and " " in str(v.value))]


def test_a_fix_told_less_a_lever_is_composed_from_its_template():
    """A fix's words for a trace that shows one of its levers in use (``pytorch._UNPINNED_WORDS``: the loader fix less
    "into pinned memory") come from the fix's own template filled without that lever, never a second copy written by
    hand: a change of the fix's words is then made once (h37-hipcode34; main restated the loader, inference-loader and
    graph-replay fixes as literals, h37-review33 *Left* 4)."""
    bad = [x for p in MODULES for x in _restated(p)]
    assert not bad, bad


def test_the_restatement_check_sees_a_literal(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("A = {FIX.text: 'Load batches in workers.', B.text: _loader(''), C.text: 'a ' 'b', D.text: 'id'}\n")
    assert [x.split(": ", 1)[1] for x in _restated(src, tmp_path)] == ["FIX.text restated as a literal",
                                                                      "C.text restated as a literal"]
