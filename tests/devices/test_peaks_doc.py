"""``docs/peaks.md`` shows the table and the per-SM rates the code uses, figure for figure."""

from __future__ import annotations

from tests.support.paths import REPO
from tests.support.peaks_table import markdown, rates_markdown

DOC = (REPO / "docs" / "peaks.md").read_text(encoding="utf-8")


def test_doc_table_is_the_code_s_table():
    assert markdown() in DOC, "docs/peaks.md: paste tests.support.peaks_table.markdown() over its table"


def test_doc_rates_are_the_code_s_rates():
    assert rates_markdown() in DOC, "docs/peaks.md: paste tests.support.peaks_table.rates_markdown() over its rates"
