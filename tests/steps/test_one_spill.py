"""One measure of a step's spill past its host window (``steps.place._spill``) for the three questions placement asks
of it: the least every step carried (``_carried_spill``), the typical (``_spill_median``), whether it grows
(``_spill_grows``) -- h37-spill4, issue #37 "one account".

The wrong assumption (``steps.place._async_device_windows``): *every step's spill past its host window says whether
the GPU falls further behind its host*.  The median took the spill of the steps with a next one (h37-forms12b): only
those end where the next starts.  The growth test took every step's, the last's too -- and the last ends where its own
reading ends it (a read-back that waited for the GPU, a rank's own reach stretched to its work's end), so its "spill"
is zero or less whatever the host's lead, and a GPU falling behind its host step by step read as one that did not.

Truth by construction: one GPU whose step runs 3.3 ms behind a host that launches every 3.0 ms, the last host window
stretched past its work (a read-back): every GPU step is 3.3 ms.  Main kept the host windows (3.0 ms each, the last
4.6).  Controls: the same host waiting for its GPU each step (no spill to grow: host windows on both), and the measure's
own definition."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.steps import place

MS = 10**9  # ps


class _Gpu(SimpleNamespace):
    def __len__(self) -> int:
        return int(self.start.size)


def _job(steps: int, host_ms: float, gpu_ms: float, waits: bool):
    """One kernel launched 0.1 ms into each host step, running ``gpu_ms`` on a GPU that runs one at a time; the host
    starts its next step ``host_ms`` later, or (``waits``) when the GPU is done.  The last host window ends 0.05 ms
    after its work (its read-back)."""
    launch_at, start, end, t, free = [], [], [], 0.0, 0.0
    for _ in range(steps):
        launch_at.append(t + 0.1)
        s = max(t + 0.1, free)
        start.append(s)
        free = s + gpu_ms
        end.append(free)
        t = max(t + host_ms, free + 0.01) if waits else t + host_ms
    hs = np.array([round(x * MS) for x in [launch_at[k] - 0.1 for k in range(steps)]], np.int64)
    he = np.r_[hs[1:], round((end[-1] + 0.05) * MS)].astype(np.int64)
    h = SimpleNamespace(start=np.array([round(x * MS) for x in launch_at], np.int64),
                        line=np.zeros(steps, np.int64))
    d = _Gpu(gpu=0, start=np.array([round(x * MS) for x in start], np.int64),
             end=np.array([round(x * MS) for x in end], np.int64),
             kind=np.full(steps, devices.KIND_KERNEL, np.int8))
    return hs, he, h, d, np.arange(steps, dtype=np.int64)


@pytest.mark.parametrize("steps", [3, 5, 8])
def test_a_gpu_falling_behind_is_placed_on_the_gpu_though_the_last_window_waited(steps: int) -> None:
    """Main: the last step's spill (-0.05 ms) broke the growth, the median (1 ms of 3) under the bar: host windows."""
    hs, he, h, d, launch = _job(steps, 3.0, 3.3, waits=False)
    out, ahead = place._async_device_windows(hs, he, h, [d], [launch])
    assert ahead and 0 in out, (out, ahead)
    lengths = (out[0][:, 1] - out[0][:, 0]) / MS
    assert np.allclose(lengths, 3.3, atol=1e-6), lengths


def test_a_host_waiting_for_its_gpu_keeps_its_windows_control() -> None:
    hs, he, h, d, launch = _job(5, 3.0, 3.3, waits=True)
    assert place._async_device_windows(hs, he, h, [d], [launch]) == ({}, False)


def test_the_measure_is_each_step_with_a_next_ones_end_past_its_window() -> None:
    hs, he, h, d, launch = _job(5, 3.0, 3.3, waits=False)
    last = place._launched_per_step(hs, he, h, d, launch)[2]
    got = place._spill(last, he) / MS
    assert np.allclose(got, [0.4, 0.7, 1.0, 1.3]), got  # 0.1 + 0.3 (k+1): the last's (its read-back's) left out
    none = last.copy()
    none[1] = np.iinfo(np.int64).min  # a step that launched nothing on this GPU: no spill, not zero
    assert np.isnan(place._spill(none, he)[1])
