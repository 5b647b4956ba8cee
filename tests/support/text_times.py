"""The reference rewrite of a trace whose times are written as text: the whole document read (``json.loads``), every
event's numeric ``ts``/``dur`` string made a number, written again (``json.dumps``).  Independent of the reader's own
code (``formats.kineto.parse.times_as_numbers``), which writes the same text without the document."""

from __future__ import annotations

import json
import math
import re


def whole_rewrite(text: bytes) -> bytes | None:
    """The rewrite as the whole document gives it; None where it holds no event list or mends nothing."""
    doc = json.loads(text)
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        return None
    changed = 0
    for e in events:
        for key in ("ts", "dur") if isinstance(e, dict) else ():
            v = e.get(key)
            if isinstance(v, str) and re.fullmatch(r"-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?", v.strip()) and \
                    math.isfinite(float(v)):
                e[key] = int(v) if re.fullmatch(r"-?[0-9]+", v.strip()) else float(v)
                changed += 1
    return json.dumps(doc).encode() if changed else None
