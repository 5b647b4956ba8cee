"""What the by-construction reader tests read back from a trace's device columns, in one place: the AMD readers'
tests (rocprof, rocprofv3's CSV, rocpd) compare the same per-kernel totals with their writers' truth."""

from __future__ import annotations


def kernel_ns(d) -> dict[str, int]:
    """Kernel name -> ns its kernels ran, summed over the device events ``d`` (copies, ``Copy...``, left out)."""
    out: dict[str, int] = {}
    for i in range(len(d)):
        n = d.names[int(d.name[i])]
        if not n.startswith("Copy"):
            out[n] = out.get(n, 0) + int(d.end[i] - d.start[i]) // 1000
    return out
