"""Does a PyTorch trace have GPU activity?  A bounded byte search, no JSON parsing (``formats.probe``)."""

from __future__ import annotations

import gzip
import re

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.base import is_gzip

#: How much of a PyTorch trace is searched for a GPU event before answering "unknown".
KINETO_PROBE_BYTES = 64 << 20
#: A kernel or copy event: today's categories and PyTorch 1.8-1.10's (``Kernel``, ``Memcpy``: the adapter's
#: ``OLD_CATS``), with or without the space JSON writers put after the colon.  The old names were missed, so
#: ``/runs`` said ``has_gpu: false`` for traces of 5,846 V100 kernels (issue #36 item 4).
_KINETO_GPU = re.compile(rb'"cat":\s*"(?:kernel|gpu_memcpy|Kernel|Memcpy)"')


def has_gpu_activity(path: str) -> bool | None:
    """For one local PyTorch trace (plain or gzip): True when a kernel or copy event appears in its first
    :data:`KINETO_PROBE_BYTES`; False when the whole (smaller) file has none; None when it cannot be told."""
    try:
        with fsio.open_binary(path) as raw:  # a listed file: only below its logdir, only as listed
            gz = is_gzip(raw.read(2))
            raw.seek(0)
            f = gzip.GzipFile(fileobj=raw) if gz else raw
            data = f.read(KINETO_PROBE_BYTES + 1)
    except (OSError, EOFError, ValueError):
        return None
    if _KINETO_GPU.search(data):
        return True
    return False if len(data) <= KINETO_PROBE_BYTES else None
