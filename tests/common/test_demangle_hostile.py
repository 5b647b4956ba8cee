"""A mangled symbol is text from the file: one that prints gigabytes is kept as written, and the others still read.

The C++ runtime's demangler prints every back-reference in full.  ``pair<S_, S_>`` nested ``n`` deep, each level a
back-reference to the one before, twice, is ``15 n`` characters and prints ``2^n`` times over: on the base commit
(057f92bf) a 663-character symbol (n = 40) in an nvprof database held the reading inside one C call for over two
minutes and 2.1 GB before it was killed.  ``common.demangle`` now asks a bounded child process (address space, time
per name) and keeps a name it does not answer as written; the dtype readers read mangled names too.
Truth by construction: the symbols are built here; the real one is ATen's fill kernel as nvprof stores it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from synthetic import nvproftrace
from tb_gpu_advisor.common.demangle import demangle_all
from tb_gpu_advisor.formats.nvprof.reader import read_trace

_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _seq(i: int) -> str:
    """The Itanium ABI's substitution ``S<seq-id>_`` for table entry ``i`` (``S_``, ``S0_`` ... ``SZ_``, ``S10_``)."""
    if i == 0:
        return "S_"
    n, digits = i - 1, ""
    while True:
        digits, n = _DIGITS[n % 36] + digits, n // 36
        if not n:
            return f"S{digits}_"


def doubling_symbol(depth: int) -> str:
    """``f<pair<int,int>, pair<P0,P0>, pair<P1,P1>, ...>()``: entry 2(k+1) of the substitution table is the k-th pair,
    so each level prints the one before twice."""
    pairs = "".join(f"St4pairI{_seq(2 * (k + 1))}{_seq(2 * (k + 1))}E" for k in range(depth))
    return f"_Z1fISt4pairIiiE{pairs}Evv"


def test_the_doubling_symbol_doubles():
    """The construction is what it claims: small depths demangle, and each level doubles the printed text."""
    small = demangle_all([doubling_symbol(3), doubling_symbol(4)])
    three, four = small[doubling_symbol(3)], small[doubling_symbol(4)]
    if three == doubling_symbol(3):  # no C++ runtime on this machine: nothing is demangled, nothing to bound
        return
    assert three.startswith("void f<std::pair<int, int>, std::pair<std::pair<int, int>")
    assert len(four) > 2 * len(three) - 16


def test_a_symbol_printing_gigabytes_is_kept_and_the_names_after_it_read():
    hostile = doubling_symbol(40)
    names = ["_Z1fPPi", hostile, nvproftrace.KERNEL_SYMBOL, "volta_sgemm_128x128_tn", "_Zzz", doubling_symbol(20)]
    out = demangle_all(names)
    assert out[hostile] == hostile and out[doubling_symbol(20)] == doubling_symbol(20)
    assert out["volta_sgemm_128x128_tn"] == "volta_sgemm_128x128_tn" and out["_Zzz"] == "_Zzz"
    if out["_Z1fPPi"] != "_Z1fPPi":  # a C++ runtime: the names around the hostile one are demangled
        assert out["_Z1fPPi"] == "f(int**)"
        assert out[nvproftrace.KERNEL_SYMBOL].startswith(nvproftrace.KERNEL_DEMANGLED)


def test_names_that_are_no_symbol_are_never_sent():
    odd = ["", "_Z", "_Z1f\n_Z1g", "_Z1fé", "_Z" + "N" * 9000, "kernel 7"]
    assert demangle_all(odd) == {n: n for n in odd}


def test_an_nvprof_database_with_a_hostile_kernel_symbol_reads(tmp_path: Path):
    path = tmp_path / "loop.nvvp"
    truth = nvproftrace.write(str(path), steps=4, kernels=3)
    hostile = doubling_symbol(40)
    with sqlite3.connect(path) as con:
        (n,) = con.execute("UPDATE StringTable SET value = ? WHERE value = ?",
                           (hostile, nvproftrace.KERNEL_SYMBOL)).rowcount,
    assert n >= 1
    (dev,) = read_trace(str(path)).devices
    names = [dev.names[int(i)] for i in dev.name]
    assert names.count(hostile) == truth["kernels"]  # every kernel, named as the file wrote it
