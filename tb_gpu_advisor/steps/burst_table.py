"""One table of the GPU's bursts, built once per cut, that every reading of the bursts asks (h37-bursts35).

Why: the bursts' readings -- is some work repeated (:func:`steps.bursts._bursts_repeat`), do copy-only bursts repeat,
which kernels run in one burst only, does a burst hold a backward or one-time costs, which bursts hold kernels at all
-- each placed every event in its burst again, by its own searchsorted, and each kept its own idea of a burst's names
and transfers.  Here each burst's work is read once: one row per (burst, GPU, kind, name, stream, bytes) with how
many events and how much time, so a reading groups rows and never re-derives a burst.  A loop's bursts repeat a few
dozen kernels each, so the table is small beside the events it sums.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.model.trace import DeviceEvents


@dataclass(frozen=True)
class BurstTable:
    """The GPU's work placed in its bursts, one row per kind of work a burst runs (its burst, GPU, kind, name, stream
    and bytes alike), with how often and how long.  ``burst`` is -1 for work before the first burst's start (a reading
    that wants bursts alone drops it).  Names and streams are codes into one vocabulary over every GPU, so a kernel of
    one name on two GPUs is one name (``names``), and a stream is its GPU's (``streams``: (gpu, the stream's name))."""

    starts: np.ndarray  # int64 ps: each burst's start
    ends: np.ndarray  # int64 ps: each burst's end (empty where the reading gave none)
    burst: np.ndarray  # int64 per row
    dev: np.ndarray  # int64 per row: the index of its GPU's events among the devices read
    gpu: np.ndarray  # int64 per row: the GPU's id
    kind: np.ndarray  # int64 per row: ``devices.KIND_*``
    name: np.ndarray  # int64 per row: into ``names``
    stream: np.ndarray  # int64 per row: into ``streams``
    nbytes: np.ndarray  # int64 per row: a copy's or fill's bytes, -1 unknown (and for kernels and collectives)
    count: np.ndarray  # int64 per row: how many events
    time: np.ndarray  # int64 per row: their summed duration, ps
    own: np.ndarray  # bool per row: the program's own work (Unified Memory migrations, the driver's paging, not)
    names: list[str]
    streams: list[tuple[int, str]]

    @property
    def size(self) -> int:
        """How many bursts."""
        return int(self.starts.size)

    @property
    def work(self) -> np.ndarray:
        """Per row: a kernel or collective (the program's compute), against a copy or fill."""
        return (self.kind == devices.KIND_KERNEL) | (self.kind == devices.KIND_COLLECTIVE)

    def holding(self, rows: np.ndarray) -> np.ndarray:
        """Per burst (bool, ``size``): whether it holds any of ``rows`` (a mask over the rows); work before the first
        burst is in none."""
        held = np.zeros(self.size, bool)
        b = self.burst[rows]
        held[b[b >= 0]] = True
        return held

    def in_two(self, rows: np.ndarray) -> bool:
        """Whether some name among ``rows`` (a mask) runs in two bursts or more (work before the first burst counts
        as one burst of its own)."""
        return bool((self.bursts_per_name(rows) > 1).any())

    def bursts_per_name(self, rows: np.ndarray, key: np.ndarray | None = None) -> np.ndarray:
        """Per name among ``rows`` (or per ``key``, a code per row such as a GPU's own name): in how many bursts it
        runs, in the order of ``np.unique``."""
        k = self.name if key is None else key
        pairs = np.unique(np.stack([k[rows], self.burst[rows]]), axis=1)
        return np.unique(pairs[0], return_counts=True)[1]

    def per_gpu_name(self) -> np.ndarray:
        """A code per row for its name on its GPU (a name on two GPUs is two): the readings that judge each GPU's
        kernels by that GPU's other bursts."""
        return self.dev * max(len(self.names), 1) + self.name

    @staticmethod
    def of(devs: list[DeviceEvents], starts: np.ndarray, ends: np.ndarray | None = None,
           keep: list[np.ndarray] | None = None) -> BurstTable:
        """The table of ``devs``' events (each GPU's events in ``keep``, a mask per GPU, where given; else all of them)
        in the bursts that start at ``starts``."""
        vocab: dict[str, int] = {}
        stream_vocab: dict[tuple[int, str], int] = {}
        parts: list[np.ndarray] = []
        for i, d in enumerate(devs):
            if not len(d):
                continue
            rows = np.flatnonzero(keep[i]) if keep is not None else np.arange(len(d))
            if rows.size:
                parts.append(_rows(i, d, rows, starts, vocab, stream_vocab))
        table = np.concatenate(parts, axis=1) if parts else np.zeros((9, 0), np.int64)
        names = list(vocab)
        migration = devices.managed_migration(names) if names else np.zeros(0, bool)
        col = dict(zip(("burst", "dev", "gpu", "kind", "name", "stream", "nbytes", "count", "time"), table[:9]))
        return BurstTable(starts=np.asarray(starts, np.int64), ends=np.asarray(ends if ends is not None else [], np.int64),
                          own=~migration[col["name"]] if names else np.zeros(0, bool), names=names,
                          streams=list(stream_vocab), **col)


def _rows(i: int, d: DeviceEvents, rows: np.ndarray, starts: np.ndarray, vocab: dict[str, int],
          stream_vocab: dict[tuple[int, str], int]) -> np.ndarray:
    """The grouped rows of one GPU's events ``rows``: (burst, dev, gpu, kind, name, stream, bytes, count, time), one
    column per kind of work in a burst; names and streams coded into the shared vocabularies."""
    name_code = np.asarray([vocab.setdefault(n, len(vocab)) for n in d.names], np.int64)
    local = np.unique(d.stream[rows].astype(np.int64))
    labels = [d.stream_names[s] if 0 <= s < len(d.stream_names) else str(s) for s in local.tolist()]
    stream_code = np.asarray([stream_vocab.setdefault((d.gpu, lab), len(stream_vocab)) for lab in labels], np.int64)
    kind = d.kind[rows].astype(np.int64)
    work = (kind == devices.KIND_KERNEL) | (kind == devices.KIND_COLLECTIVE)
    nbytes = np.where(work, -1, d.mem_bytes[rows].astype(np.int64))
    keys = np.stack([np.searchsorted(starts, d.start[rows], side="right") - 1, np.full(rows.size, i, np.int64),
                     np.full(rows.size, d.gpu, np.int64), kind, name_code[d.name[rows].astype(np.int64)],
                     stream_code[np.searchsorted(local, d.stream[rows].astype(np.int64))], nbytes])
    dur = (d.end[rows] - d.start[rows]).astype(np.int64)
    order = np.lexsort(keys[::-1])
    keys, dur = keys[:, order], dur[order]
    first = np.r_[True, (keys[:, 1:] != keys[:, :-1]).any(axis=0)] if rows.size else np.zeros(0, bool)
    at = np.flatnonzero(first)
    count = np.diff(np.r_[at, rows.size])
    return np.concatenate([keys[:, at], count[None, :], np.add.reduceat(dur, at)[None, :] if at.size
                           else np.zeros((1, 0), np.int64)], axis=0)
