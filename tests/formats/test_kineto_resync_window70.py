"""The damaged-Kineto resync decodes each candidate event in a window that starts at an event's size (4 KiB) and
doubles while the event runs past it; an error within the window's last bytes is the window's cut, not the event's
(review70).  On main 492a2e11 the window began at 64 KiB (every candidate after damage decoded 64 KiB of text) and
only an error at the window's very last character read as its cut: a large event whose ``true`` straddled the
window's end was dropped as broken.  Fails on 492a2e11 (the straddling event); by construction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tb_gpu_advisor.formats.kineto import parse

WINDOW = 1 << 16  # main's first window: the straddle is placed at its end


def _event(name: str, ts: int, **args) -> str:
    return json.dumps({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 5,
                       "args": args}, separators=(",", ":"))


def _big_event_straddling(at: int) -> str:
    """An event whose ``true`` literal begins 2 characters before byte ``at`` of its own text."""
    head = json.dumps({"ph": "X", "cat": "cpu_op", "name": "big_op", "pid": 1, "tid": 1, "ts": 300, "dur": 5},
                      separators=(",", ":"))[:-1] + ',"args":{"pad":"'
    pad = at - 2 - len(head) - len('","flag":')
    text = head + "x" * pad + '","flag":true}}'
    assert text.index("true") == at - 2
    return text


@pytest.mark.parametrize("at", [WINDOW, 1 << 12, 1 << 13])
def test_an_event_straddling_the_window_after_damage_is_read(tmp_path: Path, at: int):
    broken = '{"ph":"X","cat":"cpu_op","name":"broken_op","pid":1,"ts":2'  # cut off by the next event's bytes
    doc = ('{"schemaVersion":1,"traceEvents":[' + _event("a_op", 100) + "," + broken + _big_event_straddling(at)
           + "," + _event("c_op", 400) + '],"traceName":"x"}')
    path = tmp_path / "damaged.pt.trace.json"
    path.write_text(doc)
    kt = parse.parse_trace(str(path), workers=1)
    names = {kt.names[i] for i in kt.name.tolist()}
    assert {"a_op", "big_op", "c_op"} <= names, names
    assert "broken_op" not in names
    assert kt.problems and kt.problems[0].kind == "unreadable"
