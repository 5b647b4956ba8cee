"""A rule asks, never substitutes words (``/work/shared/docs/guide.md``; issue #37, h37-left29): no rule or framework
module rewrites finished text by replacing words in it.  Each composes its words from what the report's context
knows -- the job's unit (``JobView.unit``), the job's loop (``frameworks.pytorch.Loop``) -- so a sentence is right as
written, and a new sentence cannot slip past a list of words to reword.

Before h37-left29, ``rules/_job.unit_words`` turned "rank" into "GPU" with a regex over every job finding's text, and
``frameworks/base._reworded`` replaced PyTorch's capture advice's words for the ``alone`` and ``any_work`` tags; both
fail this check.  What stays allowed, by construction of the check: filling a ``{placeholder}`` of a template, a
replace of a string with no letter in it (a Windows path's separators in a stack frame), and a substitution that can
touch no letter: its pattern matches no letter (its lookarounds aside) and its replacement writes none -- a name's
numbers masked (``frameworks.nvtx.layer_family``: each layer index a ``#``), never a word changed, added or dropped.
Why by what it does (h37-review63): the law read every ``sub`` as rewording, so ``layer_family`` ran its regex twice
(a search, then a split and a join) to mask a name's indices; a list of exempt helpers would let a rewording slip in
under an exempt name."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from re import _constants as sre_c, _parser as sre_parse

import tb_gpu_advisor

PACKAGE = Path(tb_gpu_advisor.__file__).resolve().parent
MODULES = sorted((PACKAGE / "rules").glob("*.py")) + sorted((PACKAGE / "frameworks").glob("*.py"))


def _rewords(call: ast.Call, compiled: dict[str, tuple[str, int]] | None = None) -> str | None:
    """Why ``call`` rewrites words in a text, or None: a ``re.sub`` / ``pattern.sub`` that can touch a letter
    (:func:`_letterless_sub`; ``compiled``: the module's ``NAME = re.compile(...)`` patterns), or a ``str.replace``
    whose first argument is not a letterless constant or a ``{placeholder}``."""
    f = call.func
    if not isinstance(f, ast.Attribute):
        return None
    if f.attr in ("sub", "subn"):
        return None if _letterless_sub(call, compiled or {}) else f"{f.attr}() over a text"
    if f.attr != "replace" or (isinstance(f.value, ast.Name) and f.value.id == "dataclasses") or not call.args:
        return None
    old = call.args[0]
    if isinstance(old, ast.Constant) and isinstance(old.value, str):
        if old.value.startswith("{") or not any(c.isalpha() for c in old.value):
            return None
        return f"replace({old.value!r}, ...)"
    return "replace() of words the call does not show"


def _letterless_sub(call: ast.Call, compiled: dict[str, tuple[str, int]]) -> bool:
    """Whether a ``sub``/``subn`` call can change no word: its replacement a string constant with no letter, its
    pattern one the call shows (a constant of ``re.sub``, or a module's ``NAME = re.compile(constant)``) that consumes
    no letter (:func:`_no_letter`).  A pattern the check cannot read counts as rewording."""
    f = call.func
    args = list(call.args)
    if isinstance(f.value, ast.Name) and f.value.id == "re":  # re.sub(pattern, repl, text)
        if not args:
            return False
        pat = args.pop(0)
        if isinstance(pat, ast.Constant) and isinstance(pat.value, str):
            pattern = (pat.value, 0)
        else:
            pattern = compiled.get(pat.id) if isinstance(pat, ast.Name) else None
    else:  # PATTERN.sub(repl, text)
        pattern = compiled.get(f.value.id) if isinstance(f.value, ast.Name) else None
    if pattern is None or not args:
        return False
    repl = args[0]
    if not (isinstance(repl, ast.Constant) and isinstance(repl.value, str)) or any(c.isalpha() for c in repl.value):
        return False
    try:
        return _no_letter(sre_parse.parse(*pattern))
    except (re.error, TypeError, ValueError):
        return False


def _no_letter(items) -> bool:  # noqa: ANN001 - a parsed pattern (re._parser.SubPattern or a list of its items)
    """Whether a parsed pattern can match no letter: every character it consumes a non-letter literal, a digit or a
    space, or a range holding no letter; what it only looks at (a lookaround, an anchor) consumes nothing."""
    for op, av in items:
        if op in (sre_c.ASSERT, sre_c.ASSERT_NOT, sre_c.AT):
            continue
        if op is sre_c.LITERAL:
            if chr(av).isalpha():
                return False
        elif op is sre_c.IN:
            if not all(_no_letter_in(o, a) for o, a in av):
                return False
        elif op is sre_c.BRANCH:
            if not all(_no_letter(b) for b in av[1]):
                return False
        elif op is sre_c.SUBPATTERN:
            if not _no_letter(av[-1]):
                return False
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", sre_c.MAX_REPEAT)):
            if not _no_letter(av[2]):
                return False
        else:  # any character, a back-reference, a negated literal, a group of unknown shape
            return False
    return True


def _no_letter_in(op, av) -> bool:  # noqa: ANN001 - one item of a parsed character set
    if op is sre_c.LITERAL:
        return not chr(av).isalpha()
    if op is sre_c.RANGE:
        lo, hi = av
        return hi - lo < 4096 and not any(chr(c).isalpha() for c in range(lo, hi + 1))
    if op is sre_c.CATEGORY:
        return av in (sre_c.CATEGORY_DIGIT, sre_c.CATEGORY_SPACE)
    return False  # a negated set, a category of letters or words


def _compiled(tree: ast.Module) -> dict[str, tuple[str, int]]:
    """A module's ``NAME = re.compile(constant[, flags])`` at its top level: name -> (pattern, flags)."""
    out = {}
    for n in tree.body:
        v = n.value if isinstance(n, (ast.Assign, ast.AnnAssign)) else None
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
        if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "compile"
                and isinstance(v.func.value, ast.Name) and v.func.value.id == "re" and v.args
                and isinstance(v.args[0], ast.Constant) and isinstance(v.args[0].value, str)):
            continue
        flags = _flags(v.args[1]) if len(v.args) > 1 else 0
        if flags is None:
            continue
        for t in targets:
            if isinstance(t, ast.Name):
                out[t.id] = (v.args[0].value, flags)
    return out


def _flags(node: ast.expr) -> int | None:
    """``re.I | re.X`` as an int; None where the flags are not ``re``'s names."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        return int(getattr(re, node.attr, None) or 0) or None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        a, b = _flags(node.left), _flags(node.right)
        return None if a is None or b is None else a | b
    return None


def _found(path: Path, root: Path = PACKAGE) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    compiled = _compiled(tree)
    return [f"{path.relative_to(root)}:{n.lineno}: {why}" for n in ast.walk(tree)
            if isinstance(n, ast.Call) and (why := _rewords(n, compiled)) is not None]


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


def test_a_substitution_that_touches_no_letter_is_no_rewording(tmp_path):
    """A name's numbers masked (a pattern that consumes no letter, a replacement with none) pass; a pattern that can
    match a letter, a replacement that writes one, a deletion of words, a pattern the check cannot read, do not
    (h37-review63: ``frameworks.nvtx.layer_family`` as one ``subn``).  Fails on base (line 6 flagged)."""
    src = tmp_path / "m.py"
    src.write_text("import re\n"
                   "_INDEX = re.compile(r'(?<=[A-Za-z_]\\.)\\d+(?=\\.|$)')\n"
                   "_WORD = re.compile(r'rank\\d')\n"
                   "_ANY = re.compile(r'.\\d')\n"
                   "def ok(name):\n"
                   "    return _INDEX.subn('#', name), re.sub(r'[0-9]+', '#', name), re.sub(r'\\s+', ' ', name)\n"
                   "def a(text):\n"
                   "    return _WORD.sub('#', text)\n"                  # a letter matched
                   "def b(text):\n"
                   "    return _INDEX.sub('N', text)\n"                 # a letter written
                   "def c(text):\n"
                   "    return re.sub(r'\\w+', '', text)\n"              # words dropped
                   "def d(text, pat):\n"
                   "    return pat.sub('#', text), _ANY.sub('#', text), re.sub(r'[^0-9]', '#', text)\n",
                   encoding="utf-8")
    found = _found(src, tmp_path)
    assert sorted({int(x.split(":")[1]) for x in found}) == [8, 10, 12, 14], found
    assert len([x for x in found if ":14:" in x]) == 3, found


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
