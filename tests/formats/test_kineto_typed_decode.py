"""The typed (msgspec) decode must take every chunk of a well-formed real trace: a struct field whose type does not
fit real values (``Raw | None`` did not: 'Expected null, got array') silently sends each chunk to the stdlib's
exact decode -- right, but 5x slower -- and no result would show it."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.formats.kineto import parse
from tests.support.paths import FIXTURES

pytest.importorskip("msgspec")

REAL = sorted((FIXTURES / "wild").glob("*/*.pt.trace.json.gz"))


@pytest.mark.parametrize("path", REAL, ids=[p.parent.name + "/" + p.name[:20] for p in REAL])
def test_every_chunk_of_a_real_trace_is_decoded_typed(path, monkeypatch):
    def no_exact(self, pos):  # noqa: ANN001
        raise AssertionError("a chunk of a well-formed trace fell back to the exact stdlib decode")

    monkeypatch.setattr(parse._Parser, "_exact", no_exact)
    kt = parse.parse_trace(str(path), decoder="msgspec")
    assert kt.decoder == "msgspec" and len(kt) > 0
