"""The copy floor's link is the one the capture measured (h37-copy70, issue #37 class 3): a copy's bytes cross the host
link at the rate this machine's own large pinned copies moved at -- never faster than that, never slower than any
large copy measured --, and the link a GPU's generation allows is the floor's only where no copy measured one, said as
assumed.  AMD's parts get their own links (an MI250X has no PCIe 5.0; a Ryzen APU's Radeon no bus at all).

Why: h37-bus69 floored every copy on the fastest link the GPU's generation allows (PCIe 4.0 x16 for an RTX 4090),
while ``wild/input_only_rtx4090_unetr``'s 24 pinned uploads moved at 12.3 GB/s; and an MI250X was floored on an
assumed PCIe 5.0 x16 (63 GB/s) that no MI250X host has (ROCm's MI250 page: each GCD its own PCIe 4.0 x16; OLCF's
Frontier guide: Infinity Fabric CPU-GPU at 36+36 GB/s).  Truth by construction: the writer's bytes and times."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.wild_hosts import wild_sessions

NBYTES = 268_435_456
WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _metrics(tmp_path: Path, **kw):
    p = tmp_path / "va.sqlite"
    nx.write_pageable_vector_add(str(p), **kw)
    return host_metrics(read(SimpleNamespace(host="h0", path=str(p), format="nsys")))


def _copy(m, direction: str):
    (c,) = [c for c in m.memcpy if c.direction == direction]
    return c


def test_pinned_read_back_measures_the_link_the_uploads_floor_on(tmp_path) -> None:
    """A pinned read-back of 268 MB in 33.6 ms (8.0 GB/s) says the link: the pageable uploads' 537 MB keep 67.1 ms on
    it, not the 34.1 ms PCIe 3.0 x16 would give them (base dbf6cf15: 34.1 ms "on PCIe 3.0 x16")."""
    rate = 8.0e9
    m = _metrics(tmp_path, readback_pinned=True, download_ms=NBYTES / rate * 1e3, upload_ms=40.0)
    up = _copy(m, "h2d")
    assert up.bus_floor_ms_per_step == pytest.approx(2 * NBYTES / rate * 1e3, rel=1e-3)
    assert "measured: 8.0 GB/s over 1 pinned copy from the GPU" in up.bus_link
    down = _copy(m, "d2h")  # its own pinned copy: its floor is its time
    assert down.bus_floor_ms_per_step == pytest.approx(down.ms_per_step, rel=1e-3)
    assert "measured: 8.0 GB/s over 1 pinned copy" in down.bus_link


def test_pageable_copies_faster_than_the_assumed_link_set_it(tmp_path) -> None:
    """Pageable uploads that moved at 20 GB/s on a part whose generation allows PCIe 3.0 x16 (15.8 GB/s) say the link
    is at least that fast: the floor takes their rate, and says so (base: "PCIe 3.0 x16")."""
    rate = 20.0e9
    m = _metrics(tmp_path, upload_ms=NBYTES / rate * 1e3)
    up = _copy(m, "h2d")
    assert up.bus_floor_ms_per_step == pytest.approx(2 * NBYTES / rate * 1e3, rel=1e-3)
    assert "20.0 GB/s at least, over 2 pageable copies" in up.bus_link and "PCIe 3.0" in up.bus_link


def test_no_large_pinned_copy_leaves_the_link_assumed_and_said(tmp_path) -> None:
    """The pageable vector add alone measures no pinned copy and moved slower than PCIe 3.0: the floor stays at
    PCIe 3.0 x16's best, and the words say it is assumed (base: said as the GPU's link)."""
    up = _copy(_metrics(tmp_path), "h2d")
    assert up.bus_floor_ms_per_step == pytest.approx(2 * NBYTES / 15.75e9 * 1e3, rel=1e-3)
    assert "PCIe 3.0 x16" in up.bus_link and "assumed" in up.bus_link


def test_amd_host_links_by_architecture() -> None:
    """MI250X: Infinity Fabric's 36 GB/s at best, PCIe 4.0 by platform, said so; MI210 a PCIe 4.0 card; MI300X PCIe
    5.0 as its own (not assumed); a Ryzen APU's Radeon (gfx1035) and MI300A no bus (base: all but MI300A on an assumed
    PCIe 5.0 x16)."""
    bw, words = devices.host_link("AMD Instinct MI250X", "9.0")
    assert bw == 36e9 and "PCIe 4.0" in words and "platform decides" in words
    assert devices.host_link("AMD Radeon Graphics", "gfx90a")[0] == 36e9
    assert devices.host_link("AMD Instinct MI210", "9.0")[0] == 31.5e9
    bw, words = devices.host_link("AMD Instinct MI300X VF", "9.4")
    assert bw == 63e9 and "assumed" not in words
    assert devices.host_link("AMD Radeon Graphics (gfx1035)", "gfx1035")[0] == float("inf")
    assert devices.host_link("AMD Instinct MI300A", "9.4")[0] == float("inf")


def _wild(run: str):
    (s,) = [s for s in wild_sessions() if s.run == run]
    return host_metrics(read(s.hosts[0]))


def test_real_pinned_uploads_measure_their_link() -> None:
    """``wild/input_only_rtx4090_unetr``: 2.4 GB a step of pinned uploads moved at ~12.3 GB/s (an RTX 4090's
    generation allows PCIe 4.0 x16, 31.5 GB/s): their floor is their own time, on the measured link (base: 76.7 ms
    "on PCIe 4.0 x16")."""
    up = _copy(_wild("input_only_rtx4090_unetr"), "h2d")
    assert "measured: 12.3 GB/s over 24 pinned copies" in up.bus_link
    assert up.bus_floor_ms_per_step == pytest.approx(up.ms_per_step, rel=0.01)


def test_real_apu_copies_cross_no_bus() -> None:
    """``wild/hip_matmul_rdna2_igpu`` (a Ryzen 6800H's Radeon 680M, gfx1035): its copies stay in the host's memory,
    so no link floors them (base: "PCIe 5.0 x16 ... assumed")."""
    m = _wild("hip_matmul_rdna2_igpu")
    for c in m.memcpy:
        if c.direction in ("h2d", "d2h"):
            assert c.bus_link.startswith("the host's own memory") and c.bus_floor_ms_per_step == 0.0
