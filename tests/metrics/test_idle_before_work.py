"""The GPU's idle before each of its works is read by one rule (``metrics.breakdown._idle_before``): from the end of
everything the GPU ran before it, on any stream and of any kind, it is the host's launch wait until the work's launch
call returns, then held (the GPU idle while work it was given waits to start) -- between two works of a step and
before a step's first work alike.  Work that runs late keeps the GPU busy until it ends: only the idle after it can
be held.

Truth by construction: hand-built Kineto traces of one A100 (``tests.support.kineto_doc``), each step spelled out.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.formats import read
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support import kineto_doc

GPU = {"ph": "X", "pid": 0}
HOST = {"ph": "X", "pid": 1, "tid": 1}
STEPS, STEP_US = 6, 2000.0
#: the driver's submission after a launch call returns (``metrics.breakdown.LAUNCH_START_PS``)
SUBMIT_US = 50.0


def _metrics(tmp_path, events: list[dict]):
    return kineto_doc.host_metrics_of(tmp_path, events)


class _Step:
    """One ProfilerStep's events: launches on the host thread, their work on the GPU."""

    def __init__(self, ev: list[dict], t: float, corr: int) -> None:
        self.ev, self.t, self.corr = ev, t, corr
        ev.append({**HOST, "cat": "user_annotation", "name": f"ProfilerStep#{len(ev)}", "ts": t, "dur": STEP_US})

    def launch(self, call: str, at: float, cat: str, name: str, start: float, dur: float, stream: int,
               call_us: float = 10.0) -> None:
        """``call`` at ``at`` (us into the step, ``call_us`` long); its work on ``stream`` from ``start``."""
        self.corr += 1
        t = self.t
        self.ev.append({**HOST, "cat": "cuda_runtime", "name": call, "ts": t + at, "dur": call_us,
                        "args": {"correlation": self.corr}})
        self.ev.append({**GPU, "tid": stream, "cat": cat, "name": name, "ts": t + start, "dur": dur,
                        "args": {"correlation": self.corr, "device": 0, "stream": stream}})

    def host(self, name: str, at: float, dur: float) -> None:
        self.ev.append({**HOST, "cat": "cpu_op", "name": name, "ts": self.t + at, "dur": dur})


def _held_copy_steps(copy_start: float) -> list[dict]:
    """Each step: kernel A (0.06 ms), a host-to-device copy launched at 20 us that the GPU starts at ``copy_start``
    (it waits on something the capture lacks; 100 us long), the host in its own op until 690 us, then kernel B,
    launched late (its call returns at 702 us), starting once the copy and the call are done."""
    ev: list[dict] = []
    corr = 0
    for s in range(STEPS):
        st = _Step(ev, 100.0 + s * STEP_US, corr)
        st.launch("cudaMemcpyAsync", 10, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", copy_start, 100.0, 8)
        st.launch("cudaLaunchKernel", 25, "kernel", "ampere_sgemm_128x64_nn", 40, 60, 7)
        st.host("aten::index", 40, 650)
        st.launch("cudaLaunchKernel", 692, "kernel", "ampere_sgemm_128x64_tn", max(copy_start + 100, 702) + 3, 200, 7)
        corr = st.corr
    return ev


def test_the_idle_before_a_copy_the_gpu_holds_is_held_not_the_next_kernels_launch_wait(tmp_path):
    """Fails on main: read off kernels alone, the 0.5 ms the GPU held the copy (launched 0.58 ms before it started,
    nothing else to run) was kernel B's launch wait, because B's call returned late -- host time, where the GPU held
    work it was given."""
    m = _metrics(tmp_path, _held_copy_steps(600.0))
    held = (600.0 - 100.0) / 1e3  # from kernel A's end (the copy's call returned 20 us in) to the copy's start
    assert m.idle_held == pytest.approx(held, abs=0.005)
    # the host's: the launch calls before kernel A (20 us) and, from 0.1.0+a83 (h37-copy62: an upload run while the
    # GPU would idle for the host anyway is the host's idle, ``metrics.breakdown.off_path_uploads``), the copy's
    # 92 us before B's launch call at 692 us; the copy's last 8 us, after that call, delay B: the copy's own
    assert m.breakdown.launch_wait == pytest.approx(0.02 + 0.092, abs=0.005)
    assert m.breakdown.memcpy_h2d == pytest.approx(0.008, abs=0.003)


def test_control_a_copy_that_starts_at_once_holds_nothing(tmp_path):
    """Control (main too): the same steps, the copy starting as kernel A ends -- the GPU then idles for B's late
    launch only, the host's launch wait."""
    m = _metrics(tmp_path, _held_copy_steps(100.0))
    assert m.idle_held < 0.005
    # B's late launch, the calls before A and (h37-copy62) the 100 us copy, run before B's launch call: the host's idle
    assert m.breakdown.launch_wait == pytest.approx((705.0 - 200.0 + 20.0 + 100.0) / 1e3, abs=0.01)
    assert m.breakdown.memcpy_h2d < 0.005


def _collective_steps(after_us: float) -> list[dict]:
    """Each step: kernel A (40-100 us); an all-reduce launched at 30 us on stream 9 that starts at 110 us and runs
    until 900 us (its peers arrive late); kernel B, launched at 50 us, waiting on it, starting ``after_us`` after it
    ends."""
    ev: list[dict] = []
    corr = 0
    for s in range(STEPS):
        st = _Step(ev, 100.0 + s * STEP_US, corr)
        st.launch("cudaLaunchKernel", 15, "kernel", "ampere_sgemm_128x64_nn", 40, 60, 7)
        st.launch("cudaLaunchKernel", 30, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 110, 790, 9)
        st.launch("cudaLaunchKernel", 50, "kernel", "ampere_sgemm_128x64_tn", 900 + after_us, 200, 7)
        st.host("aten::mm", 10, 60)
        corr = st.corr
    return ev


@pytest.mark.parametrize("after_us", [30.0, 2.0])
def test_a_kernel_queued_behind_a_late_collective_is_held_only_after_it(tmp_path, after_us):
    """Kernel B, launched long before, waits 0.79 ms on an all-reduce whose peers are late: the GPU is busy with the
    collective that long (communication), never holding B; only the idle after the collective ends is held -- and
    under ``launch.kernel_switch_us`` that is the GPU's own switch."""
    m = _metrics(tmp_path, _collective_steps(after_us))
    assert m.breakdown.collectives == pytest.approx(0.79, abs=0.005)
    if after_us > 5.0:  # B on stream 7 after the all-reduce on stream 9: the hold is a handoff (h37-handoff32)
        assert m.breakdown.stream_handoff == pytest.approx(after_us / 1e3, abs=0.002)
        assert m.idle_held < 0.001
    else:
        assert m.idle_held < 0.001 and m.breakdown.kernel_switch == pytest.approx(after_us / 1e3, abs=0.001)
    # every launch returned long before its work could start: the host's launch calls before kernel A only
    assert m.breakdown.launch_wait < 0.05


def test_control_a_replica_idle_while_a_peer_gpu_of_its_process_runs_is_no_held_work(tmp_path):
    """Control (main too; a first version of the one rule booked 3.0 ms of each 8.35 ms step held): synthetic
    ``multi_gpu_sequential``, four GPUs of one TensorFlow process taking turns -- each replica idles after its batch
    copy, its kernels launched, while another GPU runs: a wait on that GPU (the turn-taking ``sequential_gpus``
    recovers), not work held for a cause outside the capture."""
    from synthetic import scenarios
    from tb_gpu_advisor.discover.logdir import discover

    scenarios.multi_gpu_sequential().write(tmp_path)
    (s,) = discover(str(tmp_path))
    m = host_metrics(read(s.hosts[0]))
    assert m.multi_gpu.peer_wait_ledger_ms.get("other", 0.0) > 1.0  # the turns are there to take
    assert m.idle_held == 0.0
