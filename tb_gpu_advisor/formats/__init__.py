"""Input formats: each reads one host file into the neutral :class:`~tb_gpu_advisor.model.trace.Trace`.

Discovery tags every host file with its format (``HostFile.format``); :func:`read`
hands the file to that format's reader.  Adding a format is one package here
with a ``read_trace(path, host)`` and one line in :data:`READERS`.
"""

from __future__ import annotations

import importlib
import os
from typing import Callable

from tb_gpu_advisor.model.trace import Trace

#: format id -> the module whose ``read_trace(path, host)`` reads it (imported on first use: a TensorBoard
#: that serves only XPlane runs never loads the Kineto reader, and the reverse)
READERS: dict[str, str] = {
    "xplane": "tb_gpu_advisor.formats.xplane",
    "kineto": "tb_gpu_advisor.formats.kineto",
}


#: Files larger than this are refused with a clear error instead of exhausting memory (every format).
DEFAULT_MAX_BYTES = 8 << 30
ENV_MAX_BYTES = "TB_GPU_ADVISOR_MAX_PROFILE_BYTES"


def max_profile_bytes() -> int:
    """The size limit now: ``TB_GPU_ADVISOR_MAX_PROFILE_BYTES`` read at each call (a worker started
    before the variable changed still sees the new value), else 8 GiB."""
    try:
        return int(os.environ.get(ENV_MAX_BYTES, DEFAULT_MAX_BYTES))
    except ValueError:
        return DEFAULT_MAX_BYTES


def reader(fmt: str) -> Callable[..., Trace]:
    """The ``read_trace`` of format ``fmt``; ValueError for a format nobody registered."""
    if fmt not in READERS:
        raise ValueError(f"unknown profile format {fmt!r} (known: {', '.join(sorted(READERS))})")
    return importlib.import_module(READERS[fmt]).read_trace


def read(host_file) -> Trace:  # noqa: ANN001 - a discovery.HostFile or anything with host, path (and format)
    """Read one host file with its format's reader (XPlane when the file does not say); a host made of
    several ranks' files (``HostFile.ranks``, PyTorch) is read as one trace."""
    read_trace = reader(getattr(host_file, "format", "xplane"))
    ranks = getattr(host_file, "ranks", ())
    if ranks:
        return read_trace(host_file.path, host=host_file.host, ranks=[r.path for r in ranks])
    return read_trace(host_file.path, host=host_file.host)
