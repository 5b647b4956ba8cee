"""The copy floor's link where several GPUs copy at once: the sum their copies moved, never above the link's peak
(issue #37 class 3, each wait to its cause; h37-copy70's Left 1).

GPUs behind one host link (a PCIe switch, a CPU root port) share its bandwidth: while two GPUs each move a pinned
read-back at once, each copy moves at its share, and the rate one GPU's copies measure is half what the link moved.
h37-copy70 measured each GPU alone, so a node's ranks copying their batches together read a link as slow as one
rank's share and floored the pageable copies twice as long as the link allows.  Where the GPUs sit on links of their
own the sum is more than one link moved: it is kept no faster than the fastest link the GPU can sit on
(``devices.host_link``: PCIe 3.0 x16's 15.75 GB/s for the writer's Pascal part).

Yet bytes that cross the link beside another GPU's cross it at their share again: each GPU's floor keeps the rate
its own side-by-side copies moved at, and only its copies alone on the link take the sum.

Truth by construction: ``synthetic.nsysexport.write_pageable_vector_add(readback_pinned=True)`` (two pageable
uploads of 268 MB, a kernel, a pinned read-back of 268 MB) on GPU 0, and on GPU 1 a second process's read-back at
the same time (side by side: GPU 0's uploads alone on the link), or its whole pass at the same times (the uploads
side by side too), or a second later (apart: the control).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.runtime.pipeline import host_metrics

NBYTES = 268_435_456
PCIE3 = 15.75e9


def _two_gpus(tmp_path: Path, download_ms: float, shift_ms: float = 0.0, uploads: bool = False) -> Path:
    """The vector add of process 6969 on GPU 0, and the same pass's read-back (with ``uploads``, its whole pass) by
    process 6970 on GPU 1, ``shift_ms`` later."""
    p = tmp_path / "va.sqlite"
    nx.write_pageable_vector_add(str(p), readback_pinned=True, download_ms=download_ms, upload_ms=66.0)
    gpid, gtid, shift = nx._gid(6970), nx._gid(6970, 6970), int(shift_ms * 1e6)
    con = sqlite3.connect(p)
    keep = "" if uploads else " WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2)"
    for table in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"):
        cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
        sel = ", ".join({"deviceId": "1", "globalPid": str(gpid), "globalTid": str(gtid),
                         "correlationId": "correlationId + 1000", "start": f"start + {shift}",
                         "end": f"end + {shift}"}.get(c, c) for c in cols)
        where = keep if uploads or table != "CUPTI_ACTIVITY_KIND_KERNEL" else " WHERE 0"
        con.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {sel} FROM {table}{where}")
    cols = [r[1] for r in con.execute("PRAGMA table_info(TARGET_INFO_GPU)")]
    sel = ", ".join({"id": "1", "cuDevice": "1", "busLocation": "'0000:02:00.0'", "uuid": "'GPU-00000001'"}.get(c, c)
                    for c in cols)
    con.execute(f"INSERT INTO TARGET_INFO_GPU ({', '.join(cols)}) SELECT {sel} FROM TARGET_INFO_GPU")
    con.commit()
    con.close()
    return p


def _h2d(p: Path):
    m = host_metrics(read(SimpleNamespace(host="h0", path=str(p), format="nsys")))
    m = m[0] if isinstance(m, tuple) else m
    (c,) = [c for c in m.memcpy if c.direction == "h2d"]
    return c


def test_two_gpus_read_backs_side_by_side_measure_their_sum(tmp_path: Path) -> None:
    """Fails on base: GPU 0's read-back moved 268 MB in 66 ms (4.07 GB/s) while GPU 1's moved its own: the link moved
    8.1 GB/s, and GPU 0's pageable uploads, alone on it, floor at that -- half their time (base: at 4.07 GB/s, their
    whole time, "over 1 pinned copy")."""
    c = _h2d(_two_gpus(tmp_path, download_ms=66.0))
    assert c.bus_floor_ms_per_step == pytest.approx(c.ms_per_step / 2, rel=1e-2), (c.bus_floor_ms_per_step, c.ms_per_step)
    assert "8.1 GB/s over 2 pinned copies from the GPU, side by side on 2 GPUs" in c.bus_link, c.bus_link


def test_copies_side_by_side_keep_their_share(tmp_path: Path) -> None:
    """Fails on base (its words: "over 1 pinned copy"): both GPUs' uploads run side by side too -- they cross the link
    beside each other again, so each GPU's keep the share they moved at (4.07 GB/s): the floor stays their time (an
    FSDP job's two ranks uploading at once; flooring each at the link's sum halved a floor the schedule keeps)."""
    c = _h2d(_two_gpus(tmp_path, download_ms=66.0, uploads=True))
    assert c.bus_floor_ms_per_step == pytest.approx(c.ms_per_step, rel=1e-2), (c.bus_floor_ms_per_step, c.ms_per_step)
    assert "8.1 GB/s over 2 pinned copies from the GPU, side by side on 2 GPUs" in c.bus_link, c.bus_link


def test_the_sum_is_never_faster_than_the_links_peak(tmp_path: Path) -> None:
    """Fails on base: each read-back at 12 GB/s side by side sums to 24 GB/s, above PCIe 3.0 x16's 15.75 GB/s -- GPUs
    on links of their own; GPU 0's uploads, alone, floor at the peak (base: 12 GB/s, each GPU alone)."""
    c = _h2d(_two_gpus(tmp_path, download_ms=NBYTES / 12e9 * 1e3))
    assert c.bus_floor_ms_per_step == pytest.approx(c.ms_per_step * (NBYTES / 66e-3) / PCIE3, rel=1e-2), (
        c.bus_floor_ms_per_step, c.ms_per_step)
    assert "15.8 GB/s" in c.bus_link and "at most PCIe 3.0 x16" in c.bus_link, c.bus_link


def test_control_copies_apart_measure_each_gpu_alone(tmp_path: Path) -> None:
    """Control (passes on base): GPU 1's read-back a second later -- no copy overlaps another GPU's, GPU 0's
    read-back measures 4.07 GB/s alone."""
    c = _h2d(_two_gpus(tmp_path, download_ms=66.0, shift_ms=1000.0))
    assert c.bus_floor_ms_per_step == pytest.approx(c.ms_per_step, rel=1e-2)
    assert "4.1 GB/s over 1 pinned copy from the GPU" in c.bus_link and "side by side" not in c.bus_link, c.bus_link
