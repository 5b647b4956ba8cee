"""One generated Nsight export analysed as one host: the report's host dict with the writer's truth beside it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tb_gpu_advisor.runtime.pipeline import analyze_session


def nsys_host(folder: Path, write: Callable[..., dict], file: str = "job.sqlite", **kw: Any) -> dict:
    """``write(path, **kw)`` into ``folder``, analysed through the one analysis entry point; the first host's JSON
    dict with the writer's truth under ``truth``."""
    p = str(folder / file)
    truth = write(p, **kw)
    host = analyze_session("w", "s", [SimpleNamespace(host="h0", path=p, format="nsys",
                                                      size=os.path.getsize(p))]).to_dict()["hosts"][0]
    return host | {"truth": truth}
