"""Archives holding a profile: a logdir or a session folder packed whole (``zip -r trace_jax.zip plugins``,
``tar czf logs.tar.gz logs``) to hand it in, attach it or commit it -- told by the names of its members, so that the
archive is named for what it holds instead of "not a profile this tool reads" or, in a logdir, the silent "no GPU
profiles found" with the frameworks' capture help.

The Advisor reads a profile where the profiler wrote it (each format's layout: ``<run>/plugins/profile/<session>/
<host>.xplane.pb``, ``<worker>.<time>.pt.trace.json.gz`` ...); an archive's members are not files on disk, and a
session's files are read together, beside one another, so the archive is unpacked first.  Facts (survey h37-huntxla63):
a UIUC CS521 student committed each JAX logdir of an A10G job as ``trace1/trace_jax.zip``, ``trace2/trace_jax.zip``
(x2w-soda/cs521-fa26-mp2); iree-org/aster commits rocpd runs as ``traces.zip``; facebookresearch/param ships its
Kineto traces as ``dlrm_kineto.tar.gz``.

Only the member list is read (zip's central directory; a tar's headers, bounded by :data:`MAX_MEMBERS`), never a
member's bytes; which member is a profile is the caller's question (the formats' layouts), asked of its path parts.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

#: How many member names an archive's listing reads at most: a hint, never a crawl of a large tarball.
MAX_MEMBERS = 20_000

#: How a name ends for each kind of archive this module lists, with the command that unpacks it.
_KINDS = ((".zip", "zip", "unzip {name} -d <folder>"),
          (".tar", "tar", "tar -xf {name} -C <folder>"),
          (".tar.gz", "tar.gz", "tar -xzf {name} -C <folder>"),
          (".tgz", "tar.gz", "tar -xzf {name} -C <folder>"),
          (".tar.bz2", "tar.bz2", "tar -xjf {name} -C <folder>"),
          (".tar.xz", "tar.xz", "tar -xJf {name} -C <folder>"))


def maybe(name: str) -> bool:
    """Whether a file name is an archive's this module lists."""
    return _kind(name) is not None


def _kind(name: str) -> tuple[str, str] | None:
    low = name.lower()
    # the longest suffix that fits: ``x.tar.gz`` is a gzipped tar, not a ``.gz``
    hit = max((k for k in _KINDS if low.endswith(k[0])), key=lambda k: len(k[0]), default=None)
    return None if hit is None else (hit[1], hit[2])


@dataclass(frozen=True)
class Held:
    """The profiles an archive holds, by its member names."""

    name: str  # the archive's file name
    kind: str  # "zip", "tar.gz" ...
    unpack: str  # the command that unpacks it
    members: tuple[str, ...]  # the member paths a format's layout claims (at most a few)
    count: int  # how many such members

    def words(self) -> str:
        first = ", ".join(self.members)
        more = f" and {self.count - len(self.members)} more" if self.count > len(self.members) else ""
        return (f"{self.name}, a {self.kind} archive of {self.count} profile file"
                f"{'' if self.count == 1 else 's'} the Advisor reads ({first}{more}): it reads a profile where the profiler "
                f"wrote it, not inside an archive -- unpack it ({self.unpack.format(name=self.name)}) and point the "
                f"Advisor at that folder")


def _names(path: str, kind: str) -> list[str]:
    if kind == "zip":
        with zipfile.ZipFile(path) as z:
            return [i.filename for i in z.infolist()[:MAX_MEMBERS] if not i.is_dir()]
    names = []
    with tarfile.open(path, "r:*") as t:
        for i, member in enumerate(t):
            if i >= MAX_MEMBERS:
                break
            if member.isfile():
                names.append(member.name)
    return names


def members(path: str) -> tuple[str, list[str]] | None:
    """(kind, member paths) of the archive at local ``path`` -- its files' names, at most :data:`MAX_MEMBERS`, never
    their bytes -- for a caller asking them of something other than a profile layout (a counter tool's names:
    ``discover.archive_file``); None for a file that is no archive this module lists, or an unreadable one."""
    kind = _kind(os.path.basename(path))
    if kind is None:
        return None
    try:
        return kind[0], _names(path, kind[0])
    except Exception:  # noqa: BLE001 - damaged or not an archive at all: the formats' own words stand
        return None


def held(path: str, is_profile: Callable[[tuple[str, ...]], bool], shown: int = 3) -> Held | None:
    """The profiles the archive at local ``path`` holds, by member names ``is_profile`` says a format reads (asked of
    each member's path parts); None for a file that is no archive, an archive of other files, or an unreadable one."""
    name = os.path.basename(path)
    kind = _kind(name)
    if kind is None:
        return None
    try:
        names = _names(path, kind[0])
    except Exception:  # noqa: BLE001 - damaged or not an archive at all: the formats' own words stand
        return None
    found = [n for n in names if is_profile(tuple(p for p in n.replace("\\", "/").split("/") if p not in ("", ".")))]
    if not found:
        return None
    return Held(name, kind[0], kind[1], tuple(found[:shown]), len(found))
