"""Where the report cache lives: one answer for the cache itself (``runtime.cache``) and for what a format keeps
beside it (an Nsight ``.nsys-rep`` exported to SQLite once, ``formats.nsys.export``).

``$TB_GPU_ADVISOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/tb-gpu-advisor``, else ``~/.cache/tb-gpu-advisor``;
``TB_GPU_ADVISOR_CACHE_DIR=off`` disables it.  The command line's ``--cache-dir`` sets the variable, so worker
processes see the same folder.
"""

from __future__ import annotations

import os

ENV_DIR = "TB_GPU_ADVISOR_CACHE_DIR"
DISABLED_VALUES = frozenset({"off", "none", "0", "false", "disabled"})


def default_dir() -> str | None:
    """The cache folder from the environment, or None when ``TB_GPU_ADVISOR_CACHE_DIR=off``."""
    env = os.environ.get(ENV_DIR)
    if env is not None and env.strip():
        return None if env.strip().lower() in DISABLED_VALUES else os.path.expanduser(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tb-gpu-advisor")


def mark_used(path: str) -> None:
    """Mark a cache entry as recently used: its mtime is the cache's LRU clock (atime is often disabled); an entry
    that cannot be touched (removed meanwhile, read-only) is left as it is.  One answer for the report cache's entries
    and a format's (``runtime.cache``, ``formats.nsys.export``)."""
    try:
        os.utime(path)
    except OSError:
        pass
