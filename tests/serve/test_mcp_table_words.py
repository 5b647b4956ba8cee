"""The MCP server's words for its copies table name every row that table can hold (h37-review30, issue #37).

Wrong assumption (``serve.mcp_server.TABLES``): *the copies table holds host<->device copies*.  Its rows are each
direction the metrics stage tallies (``metrics.memcpy``: h2d, d2h, d2d, p2p, other) and the memsets, which h37-fill30
made a ledger category of their own (``memset``): on ``wild/mordred_rtx6000_hashjoin`` the table's rows are d2h, h2d
and memset -- a fill the tool's description called a host<->device copy.  Main b6073b11: "host<->device copies by
direction" names none of ``memset``, ``d2d``, ``p2p``.
"""

from __future__ import annotations

import re

from tb_gpu_advisor.metrics import memcpy
from tb_gpu_advisor.serve.mcp_server import TABLES
from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES


def _directions() -> set[str]:
    """Every direction a row of the copies table can have: the metrics stage's own names (``_BLOCK_CAT`` keys)."""
    return set(memcpy._BLOCK_CAT)


def test_the_copies_table_description_names_every_direction_it_can_hold():
    words = set(re.findall(r"[a-z0-9]+", TABLES["memcpy"].lower()))
    assert _directions() <= words, sorted(_directions() - words)


def test_a_real_table_with_memsets_holds_only_rows_the_description_names():
    """The kept Nsight export whose memsets made the ledger's ``memset`` (h37-fill30): by hand its SQLite holds copies of
    copyKind 1 (H2D, 164) and 2 (D2H, 24) and 16 memsets (CUPTI_ACTIVITY_KIND_MEMSET), no device copy."""
    rep = first_report(FIXTURES / "wild" / "mordred_rtx6000_hashjoin")
    (h,) = rep["hosts"]
    rows = {r[0] for r in h["memcpy"]["rows"]}
    assert "memset" in rows and rows <= _directions()
