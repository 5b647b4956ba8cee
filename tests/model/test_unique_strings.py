"""``model.columns.unique_strings``: ``np.unique`` of a column of names (widened to numpy's unicode strings,
``return_inverse``) by interning them in a dict and sorting the distinct ones.  Old vs new on generated columns:
the same sorted names, the same index per row."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.model.columns import unique_strings

_ALPHABET = list("abcXYZ_<>:, 0189") + ["\u00e9", "\u4e2d", "\U0001f600", "\t", "\x01"]


def _numpy_way(values: np.ndarray) -> tuple[list[str], np.ndarray]:
    u, inv = np.unique(values.astype(str), return_inverse=True)
    return [str(x) for x in u.tolist()], inv.reshape(-1)


def _column(rng: np.random.Generator, n: int, distinct: int) -> np.ndarray:
    """``distinct`` names (shared prefixes, empty, long, non-ASCII), drawn ``n`` times into an object column."""
    pool = []
    for i in range(distinct):
        length = int(rng.choice([0, 1, 3, 12, 300]))
        word = "".join(rng.choice(_ALPHABET, length)) if length else ""
        pool.append(("void at::native::kernel<" + word) if i % 3 == 0 else word)
    return np.array([pool[int(i)] for i in rng.integers(0, distinct, n)], dtype=object)


@pytest.mark.parametrize("seed", range(12))
def test_same_as_numpy_on_generated_columns(seed):
    rng = np.random.default_rng(seed)
    col = _column(rng, int(rng.integers(1, 3000)), int(rng.integers(1, 200)))
    names, inv = unique_strings(col)
    want_names, want_inv = _numpy_way(col)
    assert names == want_names and all(type(n) is str for n in names)
    assert inv.dtype == np.intp and inv.tolist() == want_inv.tolist()
    assert [names[i] for i in inv.tolist()] == col.tolist()  # each row's own name back


def test_empty_column_and_a_list():
    names, inv = unique_strings(np.zeros(0, dtype=object))
    assert names == [] and inv.size == 0
    names, inv = unique_strings(["b", "a", "b"])
    assert names == ["a", "b"] and inv.tolist() == [1, 0, 1]


def test_a_trailing_nul_takes_numpy_way():
    """numpy drops a name's trailing NULs ("a\\0" and "a" are one name there): such a column keeps numpy's answer."""
    col = np.array(["a\0", "a", "b\0x"], dtype=object)
    names, inv = unique_strings(col)
    want_names, want_inv = _numpy_way(col)
    assert names == want_names and inv.tolist() == want_inv.tolist()


def test_values_numpy_reads_otherwise_take_numpy_way():
    """A column of what a database may hand back beside names (a BLOB as ``bytes``, NULL as None, numbers): numpy
    decodes ``bytes`` (``str()`` would quote it: "b'x'") and tells ``1`` from ``True``, which one dict key would merge."""
    for col in (np.array(["k", b"x", None, "a"], dtype=object), np.array([1, True, 1.0, "1"], dtype=object)):
        names, inv = unique_strings(col)
        want_names, want_inv = _numpy_way(col)
        assert names == want_names and inv.tolist() == want_inv.tolist(), col
