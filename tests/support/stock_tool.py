"""Run the stock xprof converter on a temp copy of profile files (it writes caches beside its input).

Runs in a worker process: the converter is C++ that logs to stderr and keeps
state; a process pool also uses both cores.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile


def stock_tools(paths: list[str], tools: tuple[str, ...] = ("overview_page", "kernel_stats")) -> dict[str, object]:
    """tool -> parsed JSON output of the stock converter for the session made of ``paths``."""
    from xprof.convert.raw_to_tool_data import xspace_to_tool_data

    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        copies = []
        for p in paths:
            dst = os.path.join(tmp, os.path.basename(p))
            shutil.copy(p, dst)
            copies.append(dst)
        for tool in tools:
            raw, _ = xspace_to_tool_data(copies, tool, {"use_saved_result": False})
            out[tool] = json.loads(raw)
    return out
