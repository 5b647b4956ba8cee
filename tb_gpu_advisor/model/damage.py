"""One typed record of a file's damage: what every reader produces and every surface reads (h37-damage67).

Why one record: damage used to travel as strings -- a plain ``str`` was a cut, the ``str`` subclasses
``Contradiction`` and ``Unreadable`` the other kinds, and the report kept the kinds as lists of the same strings
(``HostReport.contradictions`` / ``unreadable``), told apart by string equality.  A reworded entry (``"worker0: " +
p``) lost its kind unless every site remembered to carry it, two kinds with the same words merged, and nothing said
where in the file the damage lay or what it was in a form a program can test.  A :class:`Damage` says all of it once:

* ``kind`` -- :data:`CUT` (the read stopped before the file's end: what lies past it is missing),
  :data:`UNREADABLE` (records skipped in a file read to its end: nothing lies past them) or :data:`CONTRADICTION`
  (records read whole that contradict each other: the numbers are the file's own);
* ``what`` -- a short machine-readable code (``json_cut``, ``untimed_events``, ``pickle_truncated`` ...);
* ``detail`` -- the words the report prints (``str(damage)`` is they, so a note joining damage reads as before);
* where: ``file`` (a member of the host's file, a worker's trace -- "" the host file itself), ``offset`` (the byte
  where the damage begins, of the stream the reader decoded: a gzip file's decompressed bytes) and ``record`` (the
  index of the record: of a snapshot's device history, its allocator event), each where the reader knows it.

The kinds' words on every surface stay in ``report.verdict`` (``VERDICT_WORDS``): this module holds no prose.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: The read stopped before the file's end: whatever the file recorded past the damage is missing.
CUT = "cut"
#: Records skipped (or a field read as 0) in a file read to its end: those are left out, nothing lies past them.
UNREADABLE = "unreadable"
#: Records read whole that contradict each other (or any clock): the numbers are the file's own.
CONTRADICTION = "contradiction"
#: The kinds, in the order the verdict leads with them (a cut first: it says the most is missing).
KINDS = (CUT, UNREADABLE, CONTRADICTION)
#: ``what`` of an entry no reader typed (a report or test from before the typed record): its words alone.
UNSPECIFIED = "unspecified"


@dataclass(frozen=True)
class Damage:
    """One piece of a file's damage (see the module's docstring)."""

    kind: str
    what: str
    detail: str
    file: str = ""
    offset: int | None = None
    record: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"damage kind {self.kind!r} is none of {KINDS}")

    def __str__(self) -> str:
        return self.detail

    def reworded(self, detail: str, file: str | None = None) -> Damage:
        """The same damage in other words (``"worker0: " + detail``), and of ``file`` where given: its kind, code and
        place kept -- the step that lost the kind when the damage was a string."""
        return dataclasses.replace(self, detail=detail, file=self.file if file is None else file)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Damage:
        """The record as the report's JSON holds it (``HostReport.damage_records``, schema 1.7: its fields, as
        ``dataclasses.asdict`` writes them) read back; a kind no version wrote reads as a cut."""
        kind = d.get("kind") if d.get("kind") in KINDS else CUT
        return cls(kind=kind, what=str(d.get("what") or UNSPECIFIED), detail=str(d.get("detail") or ""),
                   file=str(d.get("file") or ""), offset=_int_or_none(d.get("offset")),
                   record=_int_or_none(d.get("record")))


def cut(what: str, detail: str, **where: Any) -> Damage:
    """A :data:`CUT` record."""
    return Damage(CUT, what, detail, **where)


def unreadable(what: str, detail: str, **where: Any) -> Damage:
    """An :data:`UNREADABLE` record."""
    return Damage(UNREADABLE, what, detail, **where)


def contradiction(what: str, detail: str, **where: Any) -> Damage:
    """A :data:`CONTRADICTION` record."""
    return Damage(CONTRADICTION, what, detail, **where)


def as_damage(entry: Damage | str) -> Damage:
    """``entry`` as a record: a record stays itself; a plain string (a trace built by hand, a reader not yet typed)
    is a cut with no code, as a plain string always meant."""
    return entry if isinstance(entry, Damage) else Damage(CUT, UNSPECIFIED, str(entry))


def of_kind(records: Iterable[Damage], kind: str) -> list[Damage]:
    """The records of one kind, in their order."""
    return [d for d in records if d.kind == kind]


def lead_kind(records: Iterable[Damage]) -> str | None:
    """The kind a report leads with (the first of :data:`KINDS` present), None where there is no damage."""
    present = {d.kind for d in records}
    return next((k for k in KINDS if k in present), None)


def from_legacy(damage: Iterable[str], contradictions: Iterable[str] = (), unread: Iterable[str] = ()) -> list[Damage]:
    """The records of a report written before schema 1.7 (its ``damage`` words, with the ``contradictions`` and
    ``unreadable`` lists that named their kinds): each entry a record of its kind, with no code or place."""
    contra, skipped = set(contradictions or ()), set(unread or ())
    return [Damage(UNREADABLE if d in skipped else CONTRADICTION if d in contra else CUT, UNSPECIFIED, d)
            for d in damage or ()]


def attach(error: BaseException, damage: Damage) -> BaseException:
    """``error`` carrying ``damage`` (``error.damage``), for a reader whose error class is its own: the pipeline
    keeps it in the host's report (:func:`of_error`)."""
    error.damage = damage  # type: ignore[attr-defined]
    return error


def of_error(error: BaseException) -> Damage | None:
    """The damage a read error carries (:func:`attach`), following its causes and contexts; None
    where it says none (a foreign file, a limit, a missing file: no damage)."""
    seen = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        d = getattr(e, "damage", None)
        if isinstance(d, Damage):
            return d
        e = e.__cause__ or e.__context__
    return None


def _int_or_none(v: Any) -> int | None:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None
