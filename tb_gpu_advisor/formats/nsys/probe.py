"""Does an Nsight Systems export have GPU activity?  One look at its tables (``formats.probe``)."""

from __future__ import annotations

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.nsys.layout import REP_SUFFIX


def has_gpu_activity(path: str) -> bool | None:
    """True when the export holds a kernel (or a CUDA graph execution), False when it holds none, None when it
    cannot be told (an ``.nsys-rep`` not yet exported, an unreadable file)."""
    import sqlite3  # here, not above: listing a logdir without Nsight files imports neither (layout.py)

    from tb_gpu_advisor.formats.nsys import tables as tb

    local = fsio.local_path(path)
    if local.endswith(REP_SUFFIX) or not tb.is_sqlite(local):
        return None
    try:
        with tb.open_db(local) as con:  # a listed file: only below its logdir, only as listed
            schema = tb.Schema(con)
            if not schema.is_export():
                return None
            return schema.nonempty(tb.KERNEL) or schema.nonempty(tb.GRAPH_TRACE)
    except (sqlite3.Error, OSError):
        return None
