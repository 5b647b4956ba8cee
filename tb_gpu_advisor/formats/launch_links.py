"""What a reader knows of a GPU operation from the host call that launched it, asked once for every format that
links the two by a correlation id (nvprof's database and its printed trace, rocprof's CSV): whether a copy held the
host (``devices.copies_call_sync``: by the call's name and the copy's kind) and whether the call replayed a graph.
One home, so the readers cannot drift apart in how a launch names what it did."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices


def graph_launches(call_name: list[str], d_corr: np.ndarray) -> np.ndarray:
    """Per operation, its launch's correlation where that call replayed a graph (``cudaGraphLaunch``,
    ``hipGraphLaunch``); -1 else.  ``call_name``: the launching call's name per operation ("" where none)."""
    return np.where(np.array([devices.is_graph_launch(c) if c else False for c in call_name], bool), d_corr, -1)


def launch_kinds(names: list[str], call_name: list[str], op_names: np.ndarray, is_copy: np.ndarray,
                 interned: dict[str, int], d_corr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per operation: its recorded kind (``devices.recorded_kinds``: a kernel, or a copy by its name), whether its
    launching call held the host (``devices.copies_call_sync``) and its graph launch (:func:`graph_launches`).
    ``names``: the interned call names ``interned`` indexes."""
    uname, uinv = np.unique(op_names.astype(str), return_inverse=True)
    kind = devices.recorded_kinds([str(x) for x in uname.tolist()], uinv,
                                  np.where(is_copy, devices.RECORDED_TRANSFER, devices.RECORDED_KERNEL))
    call_idx = np.array([interned[c] if c else -1 for c in call_name], np.int64)
    return kind, devices.copies_call_sync(names, call_idx, kind), graph_launches(call_name, d_corr)
