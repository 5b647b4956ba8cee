"""Does a capture have GPU activity?  Each format's cheap probe, within a time budget, for ``/runs``.

The Advisor tab opens on the newest session *with GPU activity*, not on a CPU-only capture that happens to
be newer.  Deciding that from a full analysis would mean analysing every session, so each format answers
from a cheap look at its files (``formats/<format>/probe.py``).  Answers are ``True``, ``False``, or
``None`` for unknown: remote files (reading them means downloading them), unreadable or oddly laid out
files, and anything left once the time budget of one request is spent -- the listing is probed newest
session first, so the sessions the tab chooses between are the ones answered first.  Results are cached by
the file's identity (path, size, mtime), so the page's later ``/runs`` requests cost nothing.
"""

from __future__ import annotations

import time
from typing import Any, Iterable

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.memo import Memo
from tb_gpu_advisor.formats import get

#: Time one ``/runs`` request may spend probing files not seen before (seconds).
DEFAULT_BUDGET_S = 0.3
#: Each file's answer by its identity (path, size, mtime); None (unknown) is an answer too.
_cache: Memo[bool | None] = Memo(20_000)
_UNASKED = object()


def file_has_gpu_activity(path: str, fmt: str = "xplane") -> bool | None:
    """For one local host file: True/False, or None when it cannot be told cheaply."""
    if fsio.is_remote(path):
        return None
    return get(fmt).probe(path)


def session_activity(sessions: Iterable[Any], budget_s: float = DEFAULT_BUDGET_S,
                     clock=time.monotonic) -> dict[tuple[str, str], bool | None]:
    """(run, session) -> True (a host has GPU activity), False (none has), None (unknown).

    ``sessions`` are ``discovery.Session``.  Newest sessions are probed
    first; files not cached are probed only while ``budget_s`` lasts.
    """
    ordered = sorted(sessions, key=lambda s: max((h.mtime_ns for h in s.hosts), default=0), reverse=True)
    deadline = clock() + budget_s
    out: dict[tuple[str, str], bool | None] = {}
    for s in ordered:
        answers = []
        for h in s.hosts:
            key = (h.path, h.size, h.mtime_ns)
            answer = _cache.get(key, _UNASKED)
            if answer is _UNASKED:
                if clock() > deadline:
                    answers.append(None)
                    continue
                answer = _cache.put(key, file_has_gpu_activity(h.path, getattr(h, "format", "xplane")))
            answers.append(answer)
            if answer:
                break
        out[(s.run, s.session)] = True if any(answers) else (False if answers and all(a is False for a in answers) else None)
    return out
