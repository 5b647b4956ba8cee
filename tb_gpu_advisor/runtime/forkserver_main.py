"""Preloaded by the forkserver (``isolation._PRELOAD``): imports the parent's main module there, once.

Every forkserver child runs ``multiprocessing.spawn.prepare`` before its
target, and that imports the parent's ``__main__`` unless the child already
has it.  CPython 3.11's forkserver never imports it itself (its ``'__main__'``
preload reads a ``main_path`` key that ``get_preparation_data`` no longer
sets), so under TensorBoard every analysis child imported
``tensorboard.main`` again: about 0.8 s per analysis.  The parent puts its
main module's preparation data in ``ENV`` (``isolation.mp_context``); importing
it here makes the children find it already loaded.
"""

from __future__ import annotations

from tb_gpu_advisor.runtime.parent_main import import_main

import_main()  # the reason this module exists: the forkserver's preload imports it, and nothing else does
