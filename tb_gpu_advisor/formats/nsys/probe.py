"""Does an Nsight Systems export have GPU activity?  The answer of the one look the listing took at its tables
(``layout.probe_file``, cached by the file's identity): the file is opened once for both."""

from __future__ import annotations

import os

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.nsys.layout import is_report, probe_file


def has_gpu_activity(path: str) -> bool | None:
    """True when the export holds a kernel (or a CUDA graph execution), False when it holds none, None when it
    cannot be told (an ``.nsys-rep`` not yet exported, an unreadable file, no export)."""
    local = fsio.local_path(path)
    if is_report(os.path.basename(local)):
        return None
    try:
        st = os.stat(local)
    except OSError:
        return None
    why, header = probe_file(local, st.st_size, st.st_mtime_ns)
    return header.gpu if why is None else None
