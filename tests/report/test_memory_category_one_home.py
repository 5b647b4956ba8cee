"""What holds memory at a peak has one name per category, from one home (issue #37 class 5; h37-review33 *Left* 2).

Wrong assumption corrected (h37-memrow35): a category id ("activations", "held") is a name a user reads.  The
memory rules' evidence tables (``rules._memory.holders_table``: "What holds GPU 0's memory at its peak";
``oom_snapshot``'s live blocks at an OOM) and the MCP server's two memory tables printed the ids, the tab's chart and
tables the legend's own table of labels (``report.legend.MEMORY_LABELS``), the findings' prose the rules' words: the
same blocks read "activations" in a finding's table and "Activations (forward pass)" on the chart beside it.  Now the
names live in ``rules._memory.CATEGORY_LABELS`` (beside the prose, ``CATEGORY_WORDS``); the legend, the tab's tables,
the evidence tables and the MCP markdown read them.

- law: no module but the home holds a category's name or its prose, nor a table keyed by the category ids with words
  (main: ``report/legend.py``'s ``MEMORY_LABELS``);
- real: ``h200_memory/torch_oom_snapshot`` (our H200's real OOM) and ``snapshots_wild/windows_training_cs336`` (a real
  training snapshot, SOURCE.md): every "holds" cell of the findings' evidence, the tab's panel and the MCP markdown is
  a name from the home, the same name for the same category in all three (main: the evidence tables and the MCP
  tables print the ids).
"""

from __future__ import annotations

import ast
import gzip
import shutil
from pathlib import Path

import pytest

from tb_gpu_advisor.metrics.types import MEMORY_CATEGORIES
from tb_gpu_advisor.report.view import _memory
from tb_gpu_advisor.rules import _memory as home
from tb_gpu_advisor.serve.mcp_server import memory_text
from tests.support.paths import FIXTURES, REPO
from tests.support.report_store import session_report

PKG = REPO / "tb_gpu_advisor"
HOME = PKG / "rules" / "_memory.py"
NAMES = set(home.CATEGORY_LABELS.values())
PROSE = set(home.CATEGORY_WORDS.values()) | set(home.FORWARD_ONLY_WORDS.values())
#: the names and prose a module could only have copied (a one-word name, "Other", is any table's word)
WRITTEN = {s for s in NAMES | PROSE if " " in s}


def _strings(tree: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _category_tables(tree: ast.AST) -> list[int]:
    """Lines of dict displays keyed by three or more category ids whose values are all words (a second vocabulary)."""
    out = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Dict):
            continue
        keys = [k.value for k in n.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        words = all(isinstance(v, (ast.Constant, ast.JoinedStr)) and not isinstance(getattr(v, "value", ""), (int, float))
                    for v in n.values)
        if len(set(keys) & set(MEMORY_CATEGORIES)) >= 3 and words:
            out.append(n.lineno)
    return out


def test_the_categories_names_and_prose_have_one_home():
    """Every category has a name in the home; no other module (Python or the tab's scripts) writes a name or a
    category's prose out, or holds a table of words keyed by the ids."""
    assert set(MEMORY_CATEGORIES) <= set(home.CATEGORY_LABELS) and set(MEMORY_CATEGORIES) <= set(home.CATEGORY_WORDS)
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        if path == HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(REPO)
        bad += [f"{rel}: {s!r}" for s in sorted(_strings(tree) & WRITTEN)]
        bad += [f"{rel}:{line}: a table of words keyed by the memory categories" for line in _category_tables(tree)]
    for path in sorted((PKG / "serve" / "static").glob("*.js")):
        text = path.read_text(encoding="utf-8")
        bad += [f"{path.relative_to(REPO)}: {s!r}" for s in sorted(WRITTEN) if s in text]
    assert not bad, bad


def _holds_in_markdown(text: str) -> list[str]:
    """The "holds" cells of every markdown table whose header has that column."""
    out, col = [], None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells is None:
            col = None
        elif "holds" in cells:
            col = cells.index("holds")
        elif col is not None and not set(line) <= set("|-"):
            out.append(cells[col])
    return out


def _session(tmp_path: Path, src: Path, name: str):
    from tb_gpu_advisor.discover.logdir import discover

    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    dst = run / name
    if src.suffix == ".gz":
        dst.write_bytes(gzip.decompress(src.read_bytes()))
    else:
        shutil.copy(src, dst)
    (s,) = discover(str(tmp_path / "logs"))
    return session_report(s)


REAL = {"torch_oom_snapshot": FIXTURES / "h200_memory" / "torch_oom_snapshot" / "oom_snapshot.pickle",
        "windows_training_cs336": FIXTURES / "snapshots_wild" / "windows_training_cs336.pickle.gz"}


@pytest.mark.parametrize("case", sorted(REAL))
def test_a_real_snapshots_panels_name_each_category_from_the_home(tmp_path: Path, case: str):
    rep = _session(tmp_path, REAL[case], "memory_snapshot.pickle")
    (h,) = rep.hosts
    mems = [g.memory for g in h.gpus if g.memory and g.memory.get("top")]
    assert mems, "the snapshot's peak names what holds it"
    ids = {row[1] for m in mems for row in m["top"]} | {row[1] for m in mems for o in m.get("ooms") or []
                                                         for row in o["live"]}
    assert ids <= set(MEMORY_CATEGORIES)  # the report's data keeps the ids; the names are what is shown
    named = {home.category_label(c) for c in ids}
    # the findings' evidence tables
    evidence = [row[t.columns.index("holds")] for f in rep.findings for t in f.evidence if "holds" in t.columns
                for row in t.rows]
    assert evidence, [f.rule for f in rep.findings]
    # the tab's panel
    tab = [row[1] for m in mems for row in _memory(m, False)["top"]]
    tab += [row[1] for m in mems for o in _memory(m, False)["ooms"] for row in o["live"]]
    # the MCP server's markdown
    mcp = _holds_in_markdown(memory_text(rep, "markdown"))
    assert mcp
    for where, cells in (("evidence", evidence), ("tab", tab), ("mcp", mcp)):
        assert set(cells) <= NAMES, (where, sorted(set(cells) - NAMES))
        assert set(cells) <= named, (where, cells)
    assert set(tab) == named and set(mcp) == named
    if case == "torch_oom_snapshot":
        assert home.CATEGORY_LABELS["activations"] in set(evidence) & set(mcp)


def test_a_label_for_an_unknown_id_is_the_id():
    assert home.category_label("no such id") == "no such id" and home.category_label(None) == "None"
