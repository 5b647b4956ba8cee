"""A tiny hand-built capture for step and kernel tests (shared by test modules: tests import helpers from
here, never from another ``test_*`` module)."""

from __future__ import annotations

from synthetic.builder import SpaceBuilder
from tb_gpu_advisor.formats.xplane.adapter import to_trace
from tb_gpu_advisor.formats.xplane.reader import parse_timeline
from tb_gpu_advisor.formats.xplane.schema import message_class
from tb_gpu_advisor.steps.detect import detect_steps

US = 1_000_000
KD = "regs:32 static_shared:0 dynamic_shared:0 grid:108,1,1 block:256,1,1 occ_pct:50"


class Cap:
    """A tiny capture: a python thread, one GPU with a compute stream."""

    def __init__(self):
        self.space = SpaceBuilder("h")
        self.host = self.space.plane("/host:CPU")
        self.py = self.host.line("python", 7)
        self.gpu = self.space.plane("/device:GPU:0")
        self.gpu.add_stat("core_count", 108)
        self.stream = self.gpu.line("Stream #1(Compute)", 1)
        self._corr = 0

    def host_ev(self, name: str, start_us: float, dur_us: float, **stats) -> None:
        self.py.add(name, int(start_us * US), int(dur_us * US), **stats)

    def kernel(self, start_us: float, dur_us: float, launch_us: float | None = None, name: str = "k") -> None:
        """A kernel; with ``launch_us`` also its host launch record (correlation_id)."""
        self._corr += 1
        if launch_us is not None:
            self.py.add(name, int(launch_us * US), 2 * US, correlation_id=self._corr)
        self.stream.add(name, int(start_us * US), int(dur_us * US), correlation_id=self._corr, kernel_details=KD)

    def d2h(self, start_us: float, dur_us: float, launch_us: float, size: int = 4) -> None:
        """A device-to-host copy of ``size`` bytes on the GPU's D2H stream and its host launch record (a blocking
        read: a scalar such as a loss by default)."""
        self._corr += 1
        if not hasattr(self, "_d2h"):
            self._d2h = self.gpu.line("Stream #15(MemcpyD2H)", 15)
        self.py.add("MemcpyD2H", int(launch_us * US), 2 * US, correlation_id=self._corr)
        self._d2h.add("MemcpyD2H", int(start_us * US), int(dur_us * US), correlation_id=self._corr,
                      memcpy_details=f"kind_src:device kind_dst:pinned size:{size} dest:0 async:0")

    def steps(self):
        tl = parse_timeline(self.space.encode())
        return detect_steps(to_trace(tl))


def epoch_space(line_ns: int, offset_ps: int = 7_000, duration_ps: int = 3_000) -> bytes:
    """A one-GPU XSpace whose two compute lines start at ``line_ns`` and 5 us later (epoch ns, or relative), one
    event ``k`` on each at ``offset_ps`` into its line: the clock a reader must re-base, not wrap."""
    space = message_class("XSpace")()
    plane = space.planes.add(id=1, name="/device:GPU:0")
    plane.event_metadata.add(key=1).value.name = "k"
    for i, ts in enumerate((line_ns, line_ns + 5_000)):
        line = plane.lines.add(id=i, name=f"Stream #{i}(Compute)", timestamp_ns=ts)
        line.events.add(metadata_id=1, offset_ps=offset_ps, duration_ps=duration_ps)
    return space.SerializeToString()


def bursts(starts_us: list[float], kernels: int = 4, kernel_us: float = 10.0) -> Cap:
    """One burst of ``kernels`` kernels of ``kernel_us`` (1 us apart) at each start."""
    cap = Cap()
    for s in starts_us:
        for i in range(kernels):
            cap.kernel(s + (kernel_us + 1) * i, kernel_us)
    return cap


def capture_steps(cap: Cap, window_ms: float | None = None):  # noqa: ANN201 - Steps
    """The capture's steps; ``window_ms``: the profiler's own window, from 0, as the file would record it."""
    trace = to_trace(parse_timeline(cap.space.encode()))
    if window_ms is not None:
        trace.capture_start_ps, trace.capture_ms = 0, window_ms
    return detect_steps(trace)
