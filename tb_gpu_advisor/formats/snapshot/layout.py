"""Where memory snapshots lie: any ``*.pickle`` / ``*.pkl`` in a run folder whose content is one.

``torch.cuda.memory._dump_snapshot(path)`` writes wherever it is told (people keep them beside their logs and traces),
so a name claims nothing: a pickle is a snapshot when its first bytes say so (:func:`sniff`: a pickle whose top-level
dict opens with the ``segments`` key and names the snapshot's own keys, or, pickled from the public
``torch.cuda.memory_snapshot()``, a list of segments).  Each snapshot is a session of its own,
named after its file's time with ``_snapshot`` appended (it never joins a trace's session), its one host the file's
name without the suffix.  Never below a ``plugins`` folder (other tools' assets).
"""

from __future__ import annotations

import re

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.base import Found, Groups, RunFolderLayout, session_name
from tb_gpu_advisor.model.logdir import ROOT_RUN, HostFile

SUFFIXES = (".pickle", ".pkl")
EXPECTED = "<run>/<name>.pickle (torch.cuda.memory._dump_snapshot)"
#: How much of a file's start is read to tell a snapshot.
SNIFF_BYTES = 4096
_PICKLE_START = re.compile(rb"^\x80[\x02-\x05]|^\(dp0|^\}")
#: Keys only a snapshot's segments and blocks hold, one of which is in any snapshot's first kilobytes.
_SNAPSHOT_KEYS = (b"segments",)
_SEGMENT_KEYS = (b"total_size", b"device_traces", b"allocated_size", b"segment_type", b"blocks")
#: ``torch.cuda.memory_snapshot()`` (the public call, no history) returns the segments alone: a pickled list (``]``
#: after the protocol and frame opcodes) whose first dict opens with a segment's own keys.
_SEGMENT_LIST = re.compile(rb"^\x80[\x02-\x05](?:\x95.{8})?(?:\]|\(l)", re.S)
_LIST_SEGMENT_KEYS = (b"device", b"total_size")


def is_pickle_name(name: str) -> bool:
    return name.endswith(SUFFIXES) and len(name) > max(len(s) for s in SUFFIXES if name.endswith(s))


def sniff(path: str) -> str | None:
    """None when the file's start is a memory snapshot's pickle, else why not, in words (nothing is unpickled)."""
    try:
        head = fsio.read_head(path, SNIFF_BYTES)
    except Exception:  # noqa: BLE001 - unreadable: not ours, said so
        return "unreadable"
    if not head:
        return "empty"
    if not _PICKLE_START.search(head):
        return "not a pickle"
    if _SEGMENT_LIST.search(head[:64]) and all(k in head[:256] for k in _LIST_SEGMENT_KEYS):
        return None  # ``torch.cuda.memory_snapshot()`` pickled: the segments alone, a list of them
    if not any(k in head[:256] for k in _SNAPSHOT_KEYS) or not any(k in head for k in _SEGMENT_KEYS):
        return "a pickle, but no memory snapshot (torch.cuda.memory._dump_snapshot writes `segments` first)"
    return None


class SnapshotLayout(RunFolderLayout):
    expected = EXPECTED

    def claims(self, rel: tuple[str, ...]) -> bool:
        return False  # a name never says: the content does (maybe + sniff)

    def maybe(self, rel: tuple[str, ...]) -> bool:
        return is_pickle_name(rel[-1]) and self.in_run_folder(rel)

    def sniff(self, path: str) -> str | None:
        return sniff(path)

    def group(self, found: list[Found]) -> Groups:
        """One session per snapshot, named after its file's time (``_snapshot`` appended), in its folder's run."""
        groups: Groups = {}
        for f in sorted(found, key=lambda x: x.rel):
            run = "/".join(f.rel[:-1]) or ROOT_RUN
            name = session_name(f.mtime_ns / 1e9 if f.mtime_ns else None, "_snapshot")
            key, k = (run, name, f.folder), 1
            while key in groups:
                k += 1
                key = (run, f"{name}_{k}", f.folder)
            host = _host(f.name)
            groups[key] = [HostFile(host, f.path, f.size, f.mtime_ns, "snapshot")]
        return groups



def _host(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)] or name
    return name


LAYOUT = SnapshotLayout()
