"""How a process's children import its main module: the data the parent hands its forkserver (``ENV``), and the import
the forkserver makes of it (:func:`import_main`, run by ``forkserver_main`` -- only there).

Why apart from ``forkserver_main``: that module imports the main module as a side effect of being imported, which the
forkserver's preload needs; every other process that imports the analysis (``isolation``) needs only ``ENV`` and
:func:`main_data`, and a process that inherited ``ENV`` (a child of TensorBoard, a test run after one) imported
multiprocessing and re-prepared its parent's main module at its own start-up.
"""

from __future__ import annotations

import json
import logging
import os

ENV = "TB_GPU_ADVISOR_MP_MAIN"
_KEYS = ("init_main_from_path", "init_main_from_name")


def main_data() -> dict[str, str]:
    """How this process's children would import its main module (``spawn.get_preparation_data``'s keys)."""
    from multiprocessing import spawn

    data = spawn.get_preparation_data("gpu-advisor-analysis")
    return {k: data[k] for k in _KEYS if k in data}


def import_main() -> None:
    """In the forkserver: import the main module named in ``ENV`` (best effort: children fall back to it)."""
    raw = os.environ.get(ENV)
    if not raw:
        return
    try:
        from multiprocessing import spawn

        data = {k: v for k, v in json.loads(raw).items() if k in _KEYS}
        if data:
            spawn.prepare(data)
    except Exception:  # noqa: BLE001 - a main that cannot be imported here is imported by each child as before
        logging.getLogger(__name__).debug("forkserver: main module not preloaded", exc_info=True)

