"""Stats nearly every event carries (``reader.COLUMN_STATS``: a kernel's ``kernel_details``, every launch's and kernel's
``correlation_id``) are held as one narrow column per line instead of a stat row each (11 bytes an event at the read's
peak).  Every accessor of
:class:`Line` must answer exactly what it answered from the rows: checked on real captures read both ways (the
columns turned off by emptying ``COLUMN_STATS``), and on hand-built rows with a repeated stat and mixed kinds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tb_gpu_advisor.formats.xplane import reader
from tb_gpu_advisor.formats.xplane.adapter import USED_STATS
from tb_gpu_advisor.formats.xplane.timeline import StatTable, ValueKind

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent.parent / "shared" / "profiles"
CAPTURES = [p for p in (
    ROOT / "fixtures/wild/jax_mi355x/plugins/profile/2026_05_20_08_45_02/934987a2fc2f.xplane.pb",
    ROOT / "fixtures/h200_jobs/jax_jit_inference/plugins/profile/2026_11_27_14_54_27/vm.xplane.pb",
    SHARED / "v100_bert_8gpu_tf24.xplane.pb",
    SHARED / "real-h100-jax/launch_bound_eager/plugins/profile/2026_11_22_20_44_53/vm.xplane.pb",
) if p.is_file()]


def _answers(tl) -> list[tuple]:
    out = []
    for p in tl.planes:
        for ln in p.lines:
            for name in ("kernel_details", "correlation_id"):
                out.append((p.name, ln.id, name, ln.int_stat(name).tolist(), ln.int_stat(name, inherit=False).tolist(),
                            ln.str_stat(name).tolist(), ln.has_stat(name).tolist(), ln.stat_all_default(name),
                            np.nan_to_num(ln.float_stat(name), nan=-0.5).tolist()))
    return out


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.parent.name if p.name == "vm.xplane.pb" else p.stem)
def test_a_stat_held_as_a_column_answers_as_its_rows(path, monkeypatch):
    as_columns = reader.read_timeline(str(path), keep_stats=USED_STATS)
    held = sum(len(ln.columns) for p in as_columns.planes for ln in p.lines)
    monkeypatch.setattr(reader, "COLUMN_STATS", frozenset())
    as_rows = reader.read_timeline(str(path), keep_stats=USED_STATS)
    assert sum(len(ln.columns) for p in as_rows.planes for ln in p.lines) == 0
    assert _answers(as_columns) == _answers(as_rows)
    kernels = sum(int(ln.has_stat("kernel_details").sum()) for p in as_rows.planes for ln in p.lines)
    assert (held > 0) == (kernels > 0)
    # the column the event tables take without int_stat's int64 copy is int_stat's answer, value for value
    for p in as_columns.planes:
        for ln in p.lines:
            for name in ("kernel_details", "correlation_id"):
                for inherit in (True, False):
                    got = ln.held_column(name, inherit)
                    if got is not None:
                        assert got.tolist() == ln.int_stat(name, inherit=inherit).tolist()


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.parent.name if p.name == "vm.xplane.pb" else p.stem)
def test_the_columns_take_less_memory_than_the_rows(path, monkeypatch):
    """The point of the columns: a line's stats take fewer bytes (a column is made only where it is no larger than
    the rows it replaces), strictly fewer wherever one is made."""

    def stat_bytes(tl) -> tuple[int, int]:
        arrays = [a for p in tl.planes for ln in p.lines
                  for a in (ln.stats.owner, ln.stats.key, ln.stats.kind, ln.stats.value, *ln.columns.values())]
        return sum(a.nbytes for a in arrays), sum(len(ln.columns) for p in tl.planes for ln in p.lines)

    as_columns, made = stat_bytes(reader.read_timeline(str(path), keep_stats=USED_STATS))
    monkeypatch.setattr(reader, "COLUMN_STATS", frozenset())
    as_rows, _ = stat_bytes(reader.read_timeline(str(path), keep_stats=USED_STATS))
    assert as_columns < as_rows if made else as_columns == as_rows


def test_rows_move_to_a_column_only_where_every_row_is_a_string():
    """Key 0 (strings, one event twice: the later row wins, as ``int_stat`` reads rows) becomes a column; key 1
    holds an integer row and stays rows; key 2 is no column key."""
    S, R, I = int(ValueKind.STR), int(ValueKind.REF), int(ValueKind.INT)
    stats = StatTable(owner=np.array([0, 2, 2, 1, 3, 0], np.int32), key=np.array([0, 0, 0, 1, 1, 2], np.int16),
                      kind=np.array([S, R, S, R, I, S], np.int8), value=np.array([5, 7, 9, 4, 300, 1], np.int32))
    got = reader._split_columns(stats, frozenset({0, 1}), 4)
    assert list(got["columns"]) == [0]
    assert got["columns"][0].tolist() == [5, -1, 9, -1] and got["columns"][0].dtype == np.int8
    rest = got["stats"]
    assert rest.key.tolist() == [1, 1, 2] and rest.owner.tolist() == [1, 3, 0] and rest.value.tolist() == [4, 300, 1]


def test_integer_rows_move_to_a_number_column_only_where_every_value_is_a_non_negative_integer():
    """Key 0: integers >= 0 (UINT and INT, one event twice: the later wins) -> a number column; key 1 holds a negative
    integer and key 2 a double: both stay rows (-1 means absent in a column); key 3 is carried by 1 event of 6 and needs
    int32: its row (15 bytes) is smaller than a column over the line (24), so it stays a row."""
    U, I, D = int(ValueKind.UINT), int(ValueKind.INT), int(ValueKind.DOUBLE)
    stats = StatTable(owner=np.array([0, 1, 1, 2, 3, 0, 5], np.int32), key=np.array([0, 0, 0, 1, 1, 2, 3], np.int16),
                      kind=np.array([U, I, U, I, I, D, I], np.int8), value=np.array([70000, 3, 9, -5, 4, 7, 100000], np.int64))
    got = reader._split_columns(stats, frozenset({0, 1, 2, 3}), 6)
    assert list(got["columns"]) == [0] and got["number_columns"] == frozenset({0})
    col = got["columns"][0]
    assert col.dtype == np.int32 and col[:4].tolist() == [70000, 9, -1, -1] and (col[4:] == -1).all()
    assert got["stats"].key.tolist() == [1, 1, 2, 3]


def test_bytes_stay_rows_and_a_line_of_column_stats_only_keeps_an_empty_table_of_its_dtypes():
    """BYTES values (a blob, no string id) never become a column, alone or beside strings; where every row moves to a
    column the table left is empty, in the dtypes the rows had."""
    S, B = int(ValueKind.STR), int(ValueKind.BYTES)
    stats = StatTable(owner=np.array([0, 1, 0, 1, 0], np.int32), key=np.array([0, 0, 1, 1, 2], np.int16),
                      kind=np.array([B, B, S, B, S], np.int8), value=np.array([3, 4, 5, 6, 7], np.int32))
    got = reader._split_columns(stats, frozenset({0, 1, 2}), 2)
    assert list(got["columns"]) == [2] and got["stats"].key.tolist() == [0, 0, 1, 1]
    only = StatTable(owner=np.array([0, 1], np.int32), key=np.array([2, 2], np.int16), kind=np.array([S, S], np.int8),
                     value=np.array([7, 8], np.int32))
    rest = reader._split_columns(only, frozenset({2}), 2)["stats"]
    assert len(rest) == 0 and [a.dtype for a in (rest.owner, rest.key, rest.kind, rest.value)] == [
        np.int32, np.int16, np.int8, np.int32]


def _copy(t: StatTable) -> StatTable:
    return StatTable(owner=t.owner.copy(), key=t.key.copy(), kind=t.kind.copy(), value=t.value.copy())


def _cut(t: StatTable, n: int, cuts: list[int]) -> tuple[list[StatTable], list[int]]:
    """The rows of a line's table cut into batches at event boundaries ``cuts`` (owners made batch-local)."""
    bounds = [0, *cuts, n]
    tables = []
    for a, b in zip(bounds, bounds[1:]):
        m = (t.owner >= a) & (t.owner < b)
        tables.append(StatTable(owner=(t.owner[m] - a).astype(np.int32), key=t.key[m], kind=t.kind[m], value=t.value[m]))
    return tables, bounds[:-1]


def _check_same(a: dict, b: dict) -> None:
    sa, sb = a["stats"], b["stats"]
    for f in ("owner", "key", "kind", "value"):
        x, y = getattr(sa, f), getattr(sb, f)
        assert (x.dtype, x.tolist()) == (y.dtype, y.tolist()), f
    assert a["number_columns"] == b["number_columns"]
    assert {k: (c.dtype, c.tolist()) for k, c in a["columns"].items()} == {
        k: (c.dtype, c.tolist()) for k, c in b["columns"].items()}


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.parent.name if p.name == "vm.xplane.pb" else p.stem)
def test_splitting_batch_by_batch_gives_the_split_of_the_joined_table(path, monkeypatch):
    """``_split_batches`` (the reader's) against its definition, ``_split_columns`` of the joined batches, on every
    line of a real capture read with its stats as rows, cut into 1, 2 and 5 batches at random event boundaries."""
    monkeypatch.setattr(reader, "COLUMN_STATS", frozenset())
    tl = reader.read_timeline(str(path), keep_stats=USED_STATS)
    rng = np.random.default_rng(38)
    for p in tl.planes:
        keys = frozenset(p.stat_key(name) for name in ("kernel_details", "correlation_id", "shape") if p.stat_key(name) is not None)
        for ln in p.lines:
            n = len(ln)
            for parts in (1, 2, 5):
                cuts = sorted(rng.integers(0, n + 1, size=parts - 1).tolist()) if n else [0] * (parts - 1)
                tables, offsets = _cut(ln.stats, n, cuts)
                want_tables, _ = _cut(ln.stats, n, cuts)
                want = reader._split_columns(reader._concat_stats(want_tables, offsets), keys, n)
                _check_same(reader._split_batches(tables, offsets, keys, n), want)


def test_splitting_batch_by_batch_on_mixed_rows():
    """Hand-made batches: a repeated stat (the later row wins across the batch), an int32 and an int64 value batch
    (the joined dtypes), a stat that is strings in one batch and an integer in another (rows), a negative (rows), and
    every row of a batch moved."""
    S, R, I, U = int(ValueKind.STR), int(ValueKind.REF), int(ValueKind.INT), int(ValueKind.UINT)
    a = StatTable(owner=np.array([0, 0, 1, 1, 2], np.int32), key=np.array([0, 0, 1, 2, 3], np.int16),
                  kind=np.array([I, U, S, I, I], np.int8), value=np.array([5, 6, 7, 8, -1], np.int32))
    b = StatTable(owner=np.array([0, 1, 1, 2], np.int32), key=np.array([0, 1, 0, 2], np.int16),
                  kind=np.array([U, R, I, S], np.int8), value=np.array([1 << 40, 9, 4, 3], np.int64))
    c = StatTable(owner=np.array([0, 1], np.int32), key=np.array([0, 0], np.int16), kind=np.array([I, I], np.int8),
                  value=np.array([2, 3], np.int32))
    for tables, offsets, n in (([a, b], [0, 3], 6), ([a, b, c], [0, 3, 6], 8), ([c, c], [0, 2], 4)):
        want = reader._split_columns(reader._concat_stats([_copy(t) for t in tables], offsets), frozenset({0, 1, 2, 3}), n)
        _check_same(reader._split_batches([_copy(t) for t in tables], offsets, frozenset({0, 1, 2, 3}), n), want)


def test_splitting_batch_by_batch_on_random_tables():
    """400 random lines (kinds of every value type, negative and wide values, repeated stats, sparse and dense keys,
    int32 and int64 batches) cut at random event boundaries: the batch-by-batch split equals the joined one's."""
    rng = np.random.default_rng(3838)
    for _ in range(400):
        n = int(rng.integers(0, 40))
        parts = int(rng.integers(2, 5))
        cuts = sorted(rng.integers(0, n + 1, size=parts - 1).tolist())
        bounds = [0, *cuts, n]
        tables = []
        for a, b in zip(bounds, bounds[1:]):
            rows = int(rng.integers(0, 3 * (b - a) + 1)) if b > a else 0
            wide = rng.random() < 0.3
            value = rng.integers(-2, 1 << 40 if wide else 300, size=rows)
            tables.append(StatTable(owner=np.sort(rng.integers(0, max(b - a, 1), size=rows)).astype(np.int32),
                                    key=rng.integers(0, 4, size=rows).astype(np.int16),
                                    kind=rng.choice([2, 3, 4, 5, 6, 1, 0], size=rows, p=[.3, .2, .2, .05, .15, .05, .05]).astype(np.int8),
                                    value=value.astype(np.int64 if wide else np.int32)))
        keys = frozenset(rng.choice(4, size=int(rng.integers(0, 4)), replace=False).tolist())
        offsets = bounds[:-1]
        want = reader._split_columns(reader._concat_stats([_copy(t) for t in tables], offsets), keys, n)
        _check_same(reader._split_batches([_copy(t) for t in tables], offsets, keys, n), want)
