"""A capture that opens while the GPU still runs work launched before it says so, with how much of the step the host
spent waiting for that work -- an info note, since the GPU was busy, not idle (issue #37, "copies that block the host",
"windows with no GPU work").

Found on burcukoglu/safe_dynaviseon's ``trace.json`` @ee33b3c (no licence: read locally, SURVEY.md "survey26"): a
forward pass whose first ``.to()`` -- a pageable 8 kB copy -- blocks the host 42.6 ms in ``cudaStreamSynchronize``
of a 60.3 ms pass, while the three fills launched at 1.2 ms start only at 44.0 ms: the GPU was finishing work from
before the window.  The ledger booked the 42.7 ms apart (``unseen``, the GPU's idle before its first work, that work
already launched: ``metrics.breakdown.queued_first_ms``), and no finding said it: the report's top finding spoke of
the 15% a fusion saves, and never of the 71%.

Truth by construction: the same shape hand-written (three fills launched at 1.2 ms starting at 44.0 ms, the copy's
sync waiting for them, then 40 kernels of 0.4 ms back to back); the control starts the fills as they are launched.
And the kept real capture ``wild/vllm_mi300x_decode`` (a window cut from a longer trace, the GPU on earlier work for
its first 7.8 ms): the note, with its truth's numbers, and still no warning.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tb_gpu_advisor.formats import read
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support import kineto_doc
from tests.support.paths import FIXTURES

TITLE = "The capture opens while the GPU still runs earlier work"
GPU = {"ph": "X", "pid": 0, "tid": 7}
HOST = {"ph": "X", "pid": 1, "tid": 1}
#: the fills' start and the forward's kernels, as the real capture has them (ms from the window's start)
FIRST_GPU_MS, KERNELS, KERNEL_MS = 44.0, 40, 0.4


def _events(late: bool) -> list[dict]:
    """Three fills launched at 1.2 ms, then ``.to()``'s pageable copy and its sync; ``late``: the fills and the copy
    start at 44.0 ms (the GPU on earlier work), else as they are launched.  Then a forward pass: 40 convolution ops,
    each a launch and a 0.4 ms kernel, the GPU busy back to back."""
    us = 1000.0
    first = FIRST_GPU_MS * us if late else 1.25 * us
    ev: list[dict] = []
    for i in range(3):
        t = 1.2 * us + 30 * i
        ev += [{**HOST, "cat": "cpu_op", "name": "aten::zeros", "ts": t, "dur": 20},
               {**HOST, "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t + 5, "dur": 6,
                "args": {"correlation": i + 1}},
               {**GPU, "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4, FillFunctor<float>>",
                "ts": first + 4 * i, "dur": 2, "args": {"correlation": i + 1, "device": 0, "stream": 7}}]
    copied = first + 12
    to_end = copied + 10
    ev += [{**HOST, "cat": "cpu_op", "name": "aten::to", "ts": 1.35 * us, "dur": to_end - 1.35 * us},
           {**HOST, "cat": "cpu_op", "name": "aten::copy_", "ts": 1.36 * us, "dur": to_end - 1.37 * us},
           {**HOST, "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "ts": 1.376 * us, "dur": 33,
            "args": {"correlation": 4}},
           {**HOST, "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "ts": 1.41 * us,
            "dur": to_end - 2 - 1.41 * us, "args": {"correlation": 5}},
           {**GPU, "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "ts": copied, "dur": 1,
            "args": {"correlation": 4, "device": 0, "stream": 7, "bytes": 8000}}]
    t, gpu_t = to_end + 20, to_end + 60
    for k in range(KERNELS):
        c = 10 + k
        ev += [{**HOST, "cat": "cpu_op", "name": "aten::conv2d", "ts": t, "dur": 30},
               {**HOST, "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t + 10, "dur": 8,
                "args": {"correlation": c}},
               {**GPU, "cat": "kernel", "name": "volta_scudnn_128x32_relu_small_nn_v1", "ts": max(gpu_t, t + 25),
                "dur": KERNEL_MS * us, "args": {"correlation": c, "device": 0, "stream": 7}}]
        gpu_t = max(gpu_t, t + 25) + KERNEL_MS * us
        t += 60
    ev.append({**HOST, "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "ts": t, "dur": gpu_t - t + 5,
               "args": {"correlation": 999}})
    return ev


def _run(tmp_path, late: bool):
    m = kineto_doc.host_metrics_of(tmp_path, _events(late))
    return m, evaluate(m)


def test_a_window_opening_on_earlier_gpu_work_says_how_much_of_the_step_waits_for_it(tmp_path):
    """Fails on main: the 42.7 ms the host waits for the earlier work (71% of the step) is in the ledger and in no
    finding."""
    m, findings = _run(tmp_path, late=True)
    step = m.headline.avg_step_ms
    waited = m.idle_queued_first
    # from the window's opening (the first fill's op at 1.2 ms): the fills, held 42.7 ms past their launch, waited on
    # the GPU's earlier work, which it ran since the window opened -- queues drain in order (h37-survey34)
    assert waited == pytest.approx(FIRST_GPU_MS - 1.2, abs=0.05)
    (note,) = [f for f in findings if f.title == TITLE]
    assert note.severity == "info"
    assert note.metric.value == pytest.approx(waited / step, abs=1e-3)
    assert f"the other {step - waited:.1f} ms" in note.summary, note.summary
    # the host spent it in the copy's call and its sync (from 1.376 ms; the 0.18 ms before, from 1.2 ms, it was
    # launching the fills): waiting for the earlier work, and the note says so
    assert m.idle_queued_first_blocked == pytest.approx(waited - 0.176, abs=0.03)
    assert note.metric.detail["host_blocked_ms"] == pytest.approx(m.idle_queued_first_blocked, abs=1e-3)
    assert "blocked in syncs or blocking copies, waiting for that earlier work" in note.summary
    code = "\n".join(a.snippet or "" for a in note.actions)
    assert "torch.cuda.synchronize()" in code
    # the wait is no launch overhead or host work: nothing warns of it as such
    assert not [f for f in findings if f.rule in ("launch_bound", "host_sync", "step_gaps")
                and f.severity in ("warning", "critical")], [(f.rule, f.severity) for f in findings]


def test_a_window_whose_gpu_starts_at_once_has_no_such_note(tmp_path):
    """Control (main too): the fills start as they are launched; nothing before the capture is waited for."""
    m, findings = _run(tmp_path, late=False)
    assert m.idle_queued_first == 0.0
    assert not [f for f in findings if f.title == TITLE]


def test_vllms_cut_window_gets_the_note_and_stays_healthy():
    """Control on a kept real capture: ``wild/vllm_mi300x_decode``'s first 7.8 ms are the GPU on work the cut left out
    (its truth: 10.7 ms of GPU work back to back from 8.4 ms into the window); the note says the step's own work is
    the rest, and no warning rests on it (its truth is GPU-bound and healthy)."""
    (path,) = (FIXTURES / "wild" / "vllm_mi300x_decode").glob("*.json.gz")
    m = host_metrics(read(SimpleNamespace(host="rank0", path=str(path), format="kineto")))
    findings = evaluate(m)
    (note,) = [f for f in findings if f.title == TITLE]
    assert note.severity == "info" and m.idle_queued_first > 7.0
    own = m.headline.avg_step_ms - min(m.idle_queued_first, m.breakdown.unseen)
    assert 10.7 <= own <= 12.0  # the GPU's own 10.7 ms and the launches before it
    # the host launched the step meanwhile (its one graph launch returned at 1.5 ms): no wait of its is said
    assert m.idle_queued_first_blocked < 0.1 * m.idle_queued_first
    # the job's word for its one marked step, as the same summary's "of the 19.1 ms engine step" (h37-words22)
    assert "goes on with the engine step's own launches" in note.summary
    assert not [f for f in findings if f.severity in ("critical", "warning")]
