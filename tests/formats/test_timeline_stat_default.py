"""``Line.stat_all_default`` answers what ``Line.int_stat`` would give, without building the column: the host table
(``adapter.host_events``) takes a line's stat as all -1 on its word, so a wrong True would drop real values."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.formats.xplane.adapter import USED_STATS
from tb_gpu_advisor.formats.xplane.reader import read_timeline
from tests.support.paths import SHARED_PROFILES, TESTS

#: The repository's real captures and a few GPU ones of ../shared (metadata that carries stats: inherited values).
CAPTURES = sorted((TESTS / "fixtures" / "real").glob("*.xplane.pb")) + (
    sorted(p for p in SHARED_PROFILES.rglob("*.xplane.pb") if p.stat().st_size < 20_000_000)[:4]
    if SHARED_PROFILES.is_dir() else [])


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_all_default_is_what_the_column_holds(path):
    tl = read_timeline(str(path))
    checked = {True: 0, False: 0}
    for plane in tl.planes:
        for ln in plane.lines:
            for name in sorted(USED_STATS) + ["no such stat"]:
                for inherit in (True, False):
                    column = ln.int_stat(name, -1, inherit=inherit)
                    expected = bool((column == -1).all())
                    assert ln.stat_all_default(name, -1, inherit) == expected, (plane.name, ln.name, name, inherit)
                    checked[expected] += 1
    assert checked[True] and checked[False]  # both answers were met


def test_a_value_given_by_the_metadata_only_is_no_default(monkeypatch):
    """An event that carries no stat but whose metadata does (none of the captures here has one, so the metadata's
    column is given by hand): inherited, the column holds the value, and the line is not all default."""
    import numpy as np

    tl = read_timeline(str(CAPTURES[0]))
    ln, name = next((ln, name) for p in tl.planes for ln in p.lines for name in p.stat_names
                    if len(ln) and ln.stat_all_default(name, -1, inherit=True))
    plane = ln.plane
    given = np.full(len(plane.event_names), -1, dtype=np.int64)
    given[int(ln.name_id[0])] = 7
    monkeypatch.setattr(plane, "metadata_int_stat", lambda n, default=-1: given if n == name else None)
    assert not ln.stat_all_default(name, -1, inherit=True) and (ln.int_stat(name, -1, inherit=True) == 7).any()
    assert ln.stat_all_default(name, -1, inherit=False) and (ln.int_stat(name, -1, inherit=False) == -1).all()
