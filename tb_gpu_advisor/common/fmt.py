"""How numbers read in every output (CLI text, markdown, finding summaries, cards).

One place, so a finding's summary and the table under it never disagree
on rounding.
"""

from __future__ import annotations


def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percentage: 0.1234 -> '12.3%'."""
    if x is None:
        return "n/a"
    return f"{x * 100:.{digits}f}%"


def ms(x: float | None) -> str:
    """Milliseconds with a unit that keeps 3 significant digits: '1.23 s', '12.3 ms', '1.23 ms', '456 us'."""
    if x is None:
        return "n/a"
    if abs(x) >= 1000:
        return f"{x / 1000:.2f} s"
    if abs(x) >= 10:
        return f"{x:.1f} ms"
    if abs(x) >= 0.995:  # 0.9996 ms reads '1.00 ms', not '1000 us'
        return f"{x:.2f} ms"
    return f"{x * 1000:.0f} us"


def and_list(names: tuple[str, ...] | list[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    names = tuple(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def gb(n: float | None) -> str:
    """Bytes in binary units with 3 significant digits: '1.95 GiB', '512 MiB', '12.0 kiB'."""
    if n is None:
        return "n/a"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("kiB", 1 << 10)):
        if abs(n) >= size * 0.995:
            v = n / size
            return f"{v:.2f} {unit}" if abs(v) < 10 else f"{v:.1f} {unit}" if abs(v) < 100 else f"{v:.0f} {unit}"
    return f"{int(n)} B"
