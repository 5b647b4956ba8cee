"""File access for local paths and for anything TensorBoard's gfile opens (s3://, gs://, ...).

Local paths use the os module directly (fast, and symlinks can be checked);
other schemes go through ``tensorboard.compat.tf.io.gfile``, which works
without TensorFlow (boto3 for s3://, fsspec for the rest) and uses
TensorFlow's own file systems when TensorFlow happens to be installed.
"""

from __future__ import annotations

import os
import re
from typing import Any

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def is_remote(path: str) -> bool:
    """True for ``scheme://`` paths (``file://`` counts as local)."""
    return bool(_SCHEME.match(path)) and not path.startswith("file://")


def local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def gfile() -> Any:
    from tensorboard.compat import tf  # lazy: may import TensorFlow if installed

    return tf.io.gfile


def join(base: str, *parts: str) -> str:
    if is_remote(base):
        return "/".join([base.rstrip("/"), *parts])
    return os.path.join(local_path(base), *parts)


def size(path: str) -> int:
    if is_remote(path):
        return int(gfile().stat(path).length)
    return os.path.getsize(local_path(path))


def read_bytes(path: str) -> bytes:
    if is_remote(path):
        with gfile().GFile(path, "rb") as f:
            return f.read()
    with open(local_path(path), "rb") as f:
        return f.read()


def mtime_ns(path: str) -> int:
    """Modification time in ns (0 where the file system has none)."""
    if is_remote(path):
        return int(getattr(gfile().stat(path), "mtime_nsec", 0) or 0)
    return os.stat(local_path(path)).st_mtime_ns
