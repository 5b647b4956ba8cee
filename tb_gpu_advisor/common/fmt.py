"""How numbers read in every output (CLI text, markdown, finding summaries, cards).

One place, so a finding's summary and the table under it never disagree
on rounding.
"""

from __future__ import annotations


def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percentage: 0.1234 -> '12.3%'.  A share above zero that rounds to zero at these digits reads
    '<0.1%' ('<1%' at no digits), never '0.0%' beside the time it is a share of: "the GPU waiting in them 15 us of the
    585.2 ms pass (0.0%)" said the wait was none (h37-coldshare34).  A share that is zero reads '0.0%', -0.0 too; a
    negative one that rounds to zero reads '-<0.1%', never '-0.0%', a zero with a sign (h37-floor35)."""
    if x is None:
        return "n/a"
    text = f"{abs(x) * 100:.{digits}f}%"
    if x != 0 and text == f"{0:.{digits}f}%":
        text = f"<{10.0 ** -digits:.{digits}f}%"
    return "-" + text if x < 0 else text


def pct_part(x: float) -> str:
    """A share of a whole that is less than all of it, as :func:`pct` with the digits that show it is less: 0.99973
    reads '99.97%', never '100.0%' beside the part that is not in it (h37-lawseeds: "the rest (100.0%) lies between
    the windows" of a gap whose 10 us inside a step the saving counts)."""
    d = 1
    while d < 4 and x < 1.0 and pct(x, d) == pct(1.0, d):
        d += 1
    return pct(x, d)


def ms(x: float | None) -> str:
    """Milliseconds with a unit that keeps 3 significant digits: '1.23 s', '12.3 ms', '1.23 ms', '456 us'."""
    if x is None:
        return "n/a"
    if abs(x) >= 999.95:  # 999.96 ms reads '1.00 s', not '1000.0 ms' (--default walk seed 77007's capture window)
        return f"{x / 1000:.2f} s"
    if abs(x) >= 9.995:  # 9.996 ms reads '10.0 ms', not '10.00 ms'
        return f"{x:.1f} ms"
    if abs(x) >= 0.995:  # 0.9996 ms reads '1.00 ms', not '1000 us'
        return f"{x:.2f} ms"
    return f"{x * 1000:.0f} us"


def ms_span(start: float, end: float, sep: str = "–") -> str:
    """A window of a trace in the viewer's ms, to 0.1 ms: ``120.0–160.0 ms`` (the finding's windows in the text,
    markdown and the tab, the tab's step timeline of one) -- to the digits that tell its ends apart where a window
    shorter than that would print equal ends ("2512.4 – 2512.4 ms" of a 584 us step, h37-review14: "2512.42–2512.98")."""
    d = 1
    while d < 4 and end != start and f"{start:.{d}f}" == f"{end:.{d}f}":
        d += 1
    return f"{start:.{d}f}{sep}{end:.{d}f} ms"


def ms_step(x: float) -> float:
    """The time (ms) one unit of the last digit :func:`ms` prints for ``x`` stands for: 10 ms for '1.23 s', 0.1 ms for
    '12.3 ms', 0.01 ms for '1.23 ms', 1 us for '456 us' -- a difference under half of it does not show."""
    return 10.0 if abs(x) >= 999.95 else 0.1 if abs(x) >= 9.995 else 0.01 if abs(x) >= 0.995 else 0.001


def _ms_as(x: float, whole: float, extra: int) -> str:
    """``x`` in the unit :func:`ms` gives ``whole``, with ``extra`` more decimals than it prints there."""
    if abs(whole) >= 1000:
        return f"{x / 1000:.{2 + extra}f} s"
    if abs(whole) >= 10:
        return f"{x:.{1 + extra}f} ms"
    if abs(whole) >= 0.995:
        return f"{x:.{2 + extra}f} ms"
    return f"{x * 1000:.{extra}f} us"


def _as_unit(whole: float, extra: int) -> float:
    """The time (ms) one unit of the last digit :func:`_ms_as` prints in ``whole``'s unit with ``extra`` decimals."""
    if abs(whole) >= 1000:
        return 1000.0 * 10.0 ** -(2 + extra)
    if abs(whole) >= 10:
        return 10.0 ** -(1 + extra)
    if abs(whole) >= 0.995:
        return 10.0 ** -(2 + extra)
    return 0.001 * 10.0 ** -extra


#: The most a printed part may be off its time, as a share of it -- or, for a part too small a share of its whole for
#: that to show, as a share of the whole (the last digit of a share printed to 0.1%): a share printed beside a part
#: and its whole is then the printed part's share of the printed whole.
_PART_ROUNDING, _WHOLE_ROUNDING = 0.05, 0.001


def _carries_share(unit: float, part: float, whole: float) -> bool:
    """Whether a part printed to ``unit`` (ms per last digit) is close enough to ``part`` for its share of ``whole``."""
    return 0.5 * unit <= max(_PART_ROUNDING * abs(part), _WHOLE_ROUNDING * abs(whole))


def ms_apart(part: float | None, whole: float | None) -> tuple[str, str]:
    """A part of a time and its whole, each as :func:`ms` prints it -- to more digits, both in the whole's unit, where
    those read alike though the part is less ("21.96 ms of the 22.03 ms pass", not "22.0 ms of the 22.0 ms pass"
    beside a share of 99.7%), or where the part prints too few digits to carry the share beside it ("4.4 us ... of
    the 21.0 us step", not "4 us, 21.1% of the 21 us step": walk ``--zero12`` seed 260295).  A part and its whole
    that are one time read alike (the share then says 100%).  The one home of the digits of a part beside its whole
    (``rules.base.Ctx.part_of_step``, ``metrics.job.JobView``'s, the AllReduce finding's)."""
    p, w = ms(part), ms(whole)
    if part is None or whole is None or not part or abs(part) >= abs(whole):
        return p, w
    if p != w and _carries_share(ms_step(part), part, whole):
        return p, w
    for extra in (1, 2, 3):
        p, w = _ms_as(part, whole, extra), _ms_as(whole, whole, extra)
        if p != w and _carries_share(_as_unit(whole, extra), part, whole):
            break
    return p, w


def and_list(names: tuple[str, ...] | list[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    names = tuple(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


#: A name from a request, a command line or a logdir is echoed in errors and logs cut to this many characters: a
#: hostile run name of 100,000 characters must not come back whole (nor be logged whole, once per poll).
MAX_ECHO_CHARS = 200


def clip(text: object, limit: int = MAX_ECHO_CHARS) -> str:
    """``text`` as it is when short, else its first ``limit`` characters, an ellipsis and its length."""
    s = str(text)
    return s if len(s) <= limit else f"{s[:limit]}… ({len(s):,} characters)"


def echo(text: object, limit: int = MAX_ECHO_CHARS) -> str:
    """A name quoted for an error or a log line (``repr``), cut like :func:`clip`: ``'aaa…' (100,000 characters)``."""
    s = str(text)
    return repr(s) if len(s) <= limit else f"{s[:limit]!r}… ({len(s):,} characters)"


def echo_list(names: object, n: int = 30, limit: int = MAX_ECHO_CHARS) -> str:
    """``a, b, c ... (12 more)``: the first ``n`` names, each cut like :func:`clip` (a listing of names read from a
    logdir or a report)."""
    xs = list(names)  # type: ignore[call-overload]
    more = f" ... ({len(xs) - n} more)" if len(xs) > n else ""
    return ", ".join(clip(x, limit) for x in xs[:n]) + more


def plural(n: float | int, noun: str, many: str | None = None) -> str:
    """``1 host``, ``2 hosts``, ``1 launch``, ``3 launches``: a count and its noun in the number it needs (never
    ``host(s)``); ``many`` where the plural is irregular."""
    word = noun if float(n) == 1.0 else (many or (noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")))
    return f"{_num(n)} {word}"


def times(x: float) -> str:
    """An estimated factor as precise as an estimate is: ``2.3x``, ``57x``, ``4,600x`` (two significant digits);
    never ``4636.8x``, whose tenth says more than the estimate knows."""
    if abs(x) < 10:
        return f"{x:.1f}x"
    digits = len(str(int(abs(x)))) - 2
    return f"{int(round(x, -digits)):,}x"


def _num(n: float | int) -> str:
    return f"{int(n):,}" if float(n).is_integer() else f"{n:,.1f}"


#: the binary units, largest first, as IEC 80000-13 spells them ("KiB", never "kiB"): the one home of their names,
#: for the report's sizes (:func:`gb`) and the listing's and error messages' (``formats.base.human_size``)
BINARY_UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def gb(n: float | None) -> str:
    """Bytes in binary units with 3 significant digits: '1.95 GiB', '512 MiB', '12.0 KiB' -- and '0.98 GiB', never
    '1001 MiB': from 999.5 of a unit on, the next unit (h37-review11: snapshot_windows_gpt read "1001 MiB")."""
    if n is None:
        return "n/a"
    for unit, size in BINARY_UNITS:
        if abs(n) >= size * (999.5 / 1024):
            v = n / size
            return f"{v:.2f} {unit}" if abs(v) < 10 else f"{v:.1f} {unit}" if abs(v) < 100 else f"{v:.0f} {unit}"
    return f"{int(n)} B"
