"""One reader of Linux ``/proc`` status files for the benchmark scripts.

Peak and current RSS come from ``VmHWM``/``VmRSS`` of ``/proc/<pid>/status``;
machine memory from ``/proc/meminfo``.  All of them are ``key:  N kB`` lines.
"""

from __future__ import annotations


def status_kb(key: str, path: str = "/proc/self/status") -> int | None:
    """The ``key:  N kB`` field of a /proc status file, in kB (None when absent or unreadable)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None
