"""Preloaded by the forkserver (``isolation._PRELOAD``): imports the parent's main module there, once.

Every forkserver child runs ``multiprocessing.spawn.prepare`` before its
target, and that imports the parent's ``__main__`` unless the child already
has it.  CPython 3.11's forkserver never imports it itself (its ``'__main__'``
preload reads a ``main_path`` key that ``get_preparation_data`` no longer
sets), so under TensorBoard every analysis child imported
``tensorboard.main`` again: about 0.8 s per analysis.  The parent puts its
main module's preparation data in ``ENV`` (``isolation._context``); importing
it here makes the children find it already loaded.
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


def _import_main() -> None:
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


_import_main()
