"""Input formats: each owns its file layout, its GPU-activity probe and its reader into the neutral
:class:`~tb_gpu_advisor.model.trace.Trace` (``formats/base.py``: :class:`Format`).

Discovery asks the registered formats which files are theirs and tags every host file with its format
(``HostFile.format``); :func:`read` hands the file to that format's reader.  Adding a format is one
package here and one line in :data:`REGISTRY`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tb_gpu_advisor.common.dependencies import missing_dependency
from tb_gpu_advisor.formats import kineto, nsys, nvprof, rocprof, rpd, snapshot, xplane
from tb_gpu_advisor.formats.base import (ENV_MAX_BYTES, Format, LfsPointerError, TextDecodedError, foreign_capture,
                                         lfs_pointer, max_profile_bytes, text_decoded)

if TYPE_CHECKING:  # the trace model imports numpy; importing a format or framework must not
    from tb_gpu_advisor.model.trace import Trace

#: Every format, by id; discovery asks them in this order.
REGISTRY: dict[str, Format] = {f.id: f for f in (xplane.FORMAT, kineto.FORMAT, nsys.FORMAT)}
REGISTRY[rpd.FORMAT.id] = rpd.FORMAT  # rocmProfileData databases (issue #37): SQLite names after Nsight's
REGISTRY[nvprof.FORMAT.id] = nvprof.FORMAT  # nvprof's databases (issue #37): SQLite told by its tables after Nsight's
REGISTRY[rocprof.FORMAT.id] = rocprof.FORMAT  # rocprof's results.json (issue #37): JSON told by content after Kineto
REGISTRY[rocprof.ROCPD_FORMAT.id] = rocprof.ROCPD_FORMAT  # rocprofv3's rocpd SQLite: after Nsight's and rpd's
REGISTRY[rocprof.CSV_FORMAT.id] = rocprof.CSV_FORMAT  # rocprofv3's CSV files: told by their headers
REGISTRY[nvprof.CSV_FORMAT.id] = nvprof.CSV_FORMAT  # nvprof's printed GPU trace (--csv): any .csv, by its header
REGISTRY[rocprof.JSON_FORMAT.id] = rocprof.JSON_FORMAT  # rocprofv3's JSON: told by its top key, after rocprof's
REGISTRY[snapshot.FORMAT.id] = snapshot.FORMAT  # memory snapshots (issue #29)

__all__ = ["REGISTRY", "ENV_MAX_BYTES", "Format", "LfsPointerError", "TextDecodedError", "foreign_capture", "get",
           "lfs_pointer", "max_profile_bytes", "read", "text_decoded"]


def get(fmt: str) -> Format:
    """The format ``fmt``; ValueError for a format nobody registered."""
    if fmt not in REGISTRY:
        raise ValueError(f"unknown profile format {fmt!r} (known: {', '.join(sorted(REGISTRY))})")
    return REGISTRY[fmt]


def read(host_file) -> Trace:  # noqa: ANN001 - a discovery.HostFile or anything with host, path (and format)
    """Read one host file with its format's reader (XPlane when the file does not say); a host made of
    several ranks' files (``HostFile.ranks``, PyTorch) is read as one trace; a Git LFS pointer in the profile's place
    is refused as that, in every format.  Times no profiler's clock writes
    (``model.sanity``) are damage of the file, whatever its format, and a name no program writes is cut (every
    name pattern would cost its length).""" 
    pointer = lfs_pointer(host_file.path)  # every format alike: the profile was never fetched
    if pointer:
        raise LfsPointerError(f"{host_file.path}: {pointer}")
    fmt = get(getattr(host_file, "format", "xplane"))
    ranks = [r.path for r in getattr(host_file, "ranks", ())]
    # a rank file's rank its layout inferred (a file stating none, the one its job misses): only Kineto's layout infers
    inferred = {r.path: r.inferred_rank for r in getattr(host_file, "ranks", ()) if r.inferred_rank is not None}
    try:  # the reader's module is imported here, and its readers import more on first use: a package not installed
        read_trace = fmt.reader()
        trace = (read_trace(host_file.path, host=host_file.host, ranks=ranks, **_inferred_kw(inferred)) if ranks
                 else read_trace(host_file.path, host=host_file.host))
    except MemoryError:
        raise
    except ImportError as e:  # which package to install where, not "No module named 'google'"
        missing = missing_dependency(f"reading {fmt.name} files", e)
        if missing is None:
            raise
        raise missing from e
    except Exception as e:  # the reader's own words, unless the file is a binary converted to text
        _raise_if_text_decoded([host_file.path, *ranks], e)
        raise
    if getattr(host_file, "format", "") == "snapshot" and getattr(host_file, "gpu_totals", ()):
        from tb_gpu_advisor.formats.snapshot.reader import with_job_capacity

        # the GPUs' totals a linked capture of the same job lists, as numbers (discover): no format reads another's
        trace = with_job_capacity(trace, host_file.gpu_totals, host_file.gpu_totals_from)
    from tb_gpu_advisor.model.sanity import MAX_NAME_CHARS, cut_long_names, time_problems  # numpy: not at import

    from tb_gpu_advisor.model.damage import as_damage

    # every reader's damage as the typed record (a reader's plain string is a cut, as it always meant)
    trace.problems = [as_damage(p) for p in trace.problems]
    said = {p.detail for p in trace.problems}
    trace.problems += [p for p in time_problems(trace) if p.detail not in said]
    cut = cut_long_names(trace)
    if cut:
        trace.notes.append(f"names longer than {MAX_NAME_CHARS:,} characters, cut to that length: {cut:,}")
    return trace


def _inferred_kw(inferred: dict[str, int]) -> dict[str, dict[str, int]]:
    """``inferred_ranks=`` for a reader only where a rank was inferred: the other readers take no such argument."""
    return {"inferred_ranks": inferred} if inferred else {}


def _raise_if_text_decoded(paths: list[str], error: Exception) -> None:
    """:class:`TextDecodedError` naming the first of ``paths`` (a host's files) that is a binary profile converted to
    text, when its reader failed with ``error``: the reader's words (a protobuf wire error, "not a pickle", a
    malformed database) would name damage or a foreign file, where the file is the profile's text copy."""
    for path in paths:
        why = text_decoded(path)
        if why:
            raise TextDecodedError(f"{path}: {why}") from error
