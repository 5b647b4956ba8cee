"""The typed (msgspec) decode must take every chunk of a well-formed real trace: a struct field whose type does not
fit real values (``Raw | None`` did not: 'Expected null, got array') silently sends each chunk to the stdlib's
exact decode -- right, but 5x slower -- and no result would show it."""

from __future__ import annotations

import gzip
import json

import pytest

from tb_gpu_advisor.formats.kineto import parse
from tests.support.paths import FIXTURES

pytest.importorskip("msgspec")

#: The real files kept because they are damaged (their bytes are no JSON document), whose fall-back to the exact
#: decode at the damage is the reader's job: ``test_damaged_files_are_no_json_document`` keeps this list honest.
DAMAGED = {"two_writers_v100_gloo"}
ALL = sorted((FIXTURES / "wild").glob("*/*.pt.trace.json.gz"))
REAL = [p for p in ALL if p.parent.name not in DAMAGED]


@pytest.mark.parametrize("path", REAL, ids=[p.parent.name + "/" + p.name[:20] for p in REAL])
def test_every_chunk_of_a_real_trace_is_decoded_typed(path, monkeypatch):
    def no_exact(self, pos):
        raise AssertionError("a chunk of a well-formed trace fell back to the exact stdlib decode")

    monkeypatch.setattr(parse._Parser, "_exact", no_exact)
    kt = parse.parse_trace(str(path), decoder="msgspec")
    assert kt.decoder == "msgspec" and len(kt) > 0


@pytest.mark.parametrize("path", [p for p in ALL if p.parent.name in DAMAGED], ids=lambda p: p.parent.name)
def test_damaged_files_are_no_json_document(path):
    """A file is left out above only where the stdlib's own decode refuses it too."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    with pytest.raises(ValueError):
        json.loads(data)
