"""File access for local paths and for anything TensorBoard's gfile opens (s3://, gs://, ...).

Local paths use the os module directly (fast, and symlinks can be checked);
other schemes go through ``tensorboard.compat.tf.io.gfile``, which works
without TensorFlow (boto3 for s3://, fsspec for the rest) and uses
TensorFlow's own file systems when TensorFlow happens to be installed.
"""

from __future__ import annotations

import datetime
import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def is_remote(path: str) -> bool:
    """True for ``scheme://`` paths (``file://`` counts as local)."""
    return bool(_SCHEME.match(path)) and not path.startswith("file://")


def local_path(path: str) -> str:
    """``path`` without a ``file://`` prefix (os functions do not understand it)."""
    return path[len("file://"):] if path.startswith("file://") else path


def gfile() -> Any:
    from tensorboard.compat import tf  # lazy: may import TensorFlow if installed

    return tf.io.gfile


def join(base: str, *parts: str) -> str:
    if is_remote(base):
        return "/".join([base.rstrip("/"), *parts])
    return os.path.join(local_path(base), *parts)


def size(path: str) -> int:
    """Size in bytes (checked before reading, so huge files are refused up front)."""
    if _use_boto3(path):
        return stat(path)[0]
    if is_remote(path):
        return int(gfile().stat(path).length)
    return os.path.getsize(local_path(path))


def read_bytes(path: str) -> bytes:
    """The whole file.  s3:// goes through boto3 directly when it is installed (see ``_use_boto3``)."""
    if _use_boto3(path):
        bucket, key = _bucket_key(path)
        return _s3_client().get_object(Bucket=bucket, Key=key)["Body"].read()
    if is_remote(path):
        with gfile().GFile(path, "rb") as f:
            return f.read()
    with open(local_path(path), "rb") as f:
        return f.read()


def read_head(path: str, n: int) -> bytes:
    """The first ``n`` bytes (fewer for a shorter file): a ranged request on object stores, never the whole file."""
    if _use_boto3(path):
        bucket, key = _bucket_key(path)
        return _s3_client().get_object(Bucket=bucket, Key=key, Range=f"bytes=0-{max(0, n - 1)}")["Body"].read()
    if is_remote(path):
        with gfile().GFile(path, "rb") as f:
            return f.read(n)
    with open(local_path(path), "rb") as f:
        return f.read(n)


def write_object(path: str, data: bytes) -> None:
    """Store ``data`` at a remote ``path`` in one request (an object store's put replaces whole objects: readers see
    the old object or the new one).  s3:// through boto3, other schemes through fsspec."""
    if _use_boto3(path):
        bucket, key = _bucket_key(path)
        _s3_client().put_object(Bucket=bucket, Key=key, Body=data)
        return
    import fsspec  # lazy

    fs, fs_path = fsspec.core.url_to_fs(path)
    fs.pipe_file(fs_path, data)


def remove_object(path: str) -> bool:
    """Delete a remote object; False when it could not be (already gone counts as removed)."""
    try:
        if _use_boto3(path):
            bucket, key = _bucket_key(path)
            _s3_client().delete_object(Bucket=bucket, Key=key)
            return True
        import fsspec  # lazy

        fs, fs_path = fsspec.core.url_to_fs(path)
        fs.rm_file(fs_path)
        return True
    except FileNotFoundError:
        return True
    except Exception:  # noqa: BLE001 - a store that refuses: the caller goes on
        return False


def _use_boto3(path: str) -> bool:
    """s3:// paths are read with boto3 rather than gfile, when boto3 is importable.

    Why: with TensorFlow installed, gfile is TensorFlow's, which lost s3://
    support (moved to tensorflow-io); TensorBoard's own fallback reads
    ``S3_ENDPOINT`` once at import.  boto3 here behaves the same with or
    without TensorFlow and sees the current environment.
    """
    if not path[:5].lower() == "s3://":
        return False
    try:
        import boto3  # noqa: F401
    except ImportError:
        return False
    return True


def open_binary(path: str) -> BinaryIO:
    """A readable binary stream: the file itself for local paths, an in-memory copy for remote ones."""
    if is_remote(path):
        return io.BytesIO(read_bytes(path))
    return open(local_path(path), "rb")


def mtime_ns(path: str) -> int:
    """Modification time in ns (0 where the file system has none)."""
    return stat(path)[1]


# --- remote listing and identity (discovery, cache) -------------------------
#
# gfile's own ``walk`` costs one request per directory *and* one ``isdir``
# request per entry on S3, which takes minutes on a big logdir.  Object
# stores are flat, so remote discovery asks for one flat recursive listing
# instead (1 request per 1000 objects on S3) and gets size and modification
# time with it, which ``gfile.stat`` does not give (its S3 stat has only a
# length).


@dataclass(frozen=True)
class RemoteFile:
    """One object under a remote root: path relative to the root ('/'-separated), size, mtime."""

    rel: str
    size: int
    mtime_ns: int


def split_scheme(path: str) -> tuple[str, str]:
    """('s3', 'bucket/key') for 's3://bucket/key'; ('', path) for local paths."""
    if not is_remote(path):
        return "", local_path(path)
    scheme, rest = path.split("://", 1)
    return scheme.lower(), rest


def s3_endpoint() -> str | None:
    """``S3_ENDPOINT`` as a URL, accepting TensorFlow's scheme-less form.

    TensorBoard's boto3 file system passes ``S3_ENDPOINT`` to boto3 verbatim
    (it must be a URL); TensorFlow's own S3 support takes ``host:port`` plus
    ``S3_USE_HTTPS``.  Accept both so one setting serves both readers.
    """
    endpoint = os.environ.get("S3_ENDPOINT") or None
    if endpoint and "://" not in endpoint:
        https = os.environ.get("S3_USE_HTTPS", "1") not in ("0", "false", "False")
        endpoint = ("https://" if https else "http://") + endpoint
    return endpoint


def _s3_client() -> Any:
    import boto3  # lazy: only needed for s3:// logdirs

    return boto3.client("s3", endpoint_url=s3_endpoint())


def _ns(ts: Any) -> int:
    """Modification time from a listing (datetime, epoch seconds or ISO text) in ns; 0 if unknown."""
    if ts is None:
        return 0
    if isinstance(ts, (int, float)):
        return int(ts * 1_000_000_000)
    if isinstance(ts, str):
        try:
            ts = datetime.datetime.fromisoformat(ts.replace("Z", "+00:00"))
        except ValueError:
            return 0
    if isinstance(ts, datetime.datetime):
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=datetime.timezone.utc)
        return int(ts.timestamp()) * 1_000_000_000 + ts.microsecond * 1000
    return 0


def _info_mtime(info: dict[str, Any]) -> int:
    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created"):
        if info.get(key) is not None:
            return _ns(info[key])
    return 0


def _bucket_key(path: str) -> tuple[str, str]:
    """('bucket', 'key/of/object') of an s3:// URL."""
    bucket, _, key = split_scheme(path)[1].partition("/")
    return bucket, key


def _s3_walk(root: str) -> Iterator[RemoteFile]:
    _, rest = split_scheme(root)
    bucket, _, prefix = rest.partition("/")
    prefix = prefix.strip("/")
    prefix = prefix + "/" if prefix else ""
    pages = _s3_client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    for page in pages:  # lazy: a caller that stops early saves the remaining requests
        for obj in page.get("Contents", []):
            rel = obj["Key"][len(prefix):]
            if rel and not rel.endswith("/"):  # "folder" marker objects are not files
                yield RemoteFile(rel, int(obj.get("Size", 0)), _ns(obj.get("LastModified")))


def _fsspec_walk(root: str) -> Iterator[RemoteFile]:
    import fsspec  # lazy

    fs, fs_root = fsspec.core.url_to_fs(root)
    fs_root = fs_root.rstrip("/")
    for name, info in fs.find(fs_root, detail=True, withdirs=False).items():
        rel = name[len(fs_root):].lstrip("/") if name.startswith(fs_root) else None
        if rel:
            yield RemoteFile(rel, int(info.get("size") or 0), _info_mtime(info))


def _gfile_walk(root: str) -> Iterator[RemoteFile]:
    g = gfile()
    base = root.rstrip("/")
    for top, _dirs, files in g.walk(base):
        for name in files:
            path = join(top, name)
            rel = path[len(base):].lstrip("/")
            yield RemoteFile(rel, int(g.stat(path).length), 0)


def remote_walk(root: str) -> Iterator[RemoteFile]:
    """Every file below a remote ``root``, lazily, as one flat listing where the store allows.

    s3:// uses boto3 directly (with ``S3_ENDPOINT`` like TensorBoard does);
    other schemes use fsspec (gs:// needs gcsfs) and fall back to gfile.walk.
    """
    scheme, _ = split_scheme(root)
    if scheme == "s3":
        return _s3_walk(root)
    try:
        import fsspec

        fsspec.get_filesystem_class(scheme)
    except (ImportError, ValueError):
        return _gfile_walk(root)
    return _fsspec_walk(root)


def stat(path: str) -> tuple[int, int]:
    """(size, mtime_ns) of one file; mtime 0 where the store has none.

    The cache keys reports on this identity, so remote files get their real
    modification time (S3 ``LastModified``) rather than gfile's length-only stat.
    """
    scheme, rest = split_scheme(path)
    if not scheme:
        st = os.stat(rest)
        return st.st_size, st.st_mtime_ns
    if scheme == "s3":
        bucket, key = _bucket_key(path)
        head = _s3_client().head_object(Bucket=bucket, Key=key)
        return int(head["ContentLength"]), _ns(head.get("LastModified"))
    try:
        import fsspec

        fs, fs_path = fsspec.core.url_to_fs(path)
        info = fs.info(fs_path)
        return int(info.get("size") or 0), _info_mtime(info)
    except ImportError:
        return int(gfile().stat(path).length), 0
