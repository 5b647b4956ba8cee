"""A hand-written decode step replayed as a CUDA graph (Kineto events): three small fills launched one by one, one
``cudaGraphLaunch`` of N kernels sharing its correlation id (as CUPTI records a graph's kernels), then the host's
sync -- the shape of ranonrkm/TriForce-legacy's ``trace_flash.json`` (SURVEY.md "survey26"), shared by the tests of
the launch's phase (tests/job) and of the GPU idle under it (tests/metrics)."""

from __future__ import annotations

GPU = {"ph": "X", "pid": 0, "tid": 7}
HOST = {"ph": "X", "pid": 1, "tid": 1}
LAUNCH_US, GRAPH_CORR = 1600.0, 100


def decode_step(nodes: int) -> list[dict]:
    """A decode step: three fills, a graph launch of ``nodes`` kernels (15 us each, back to back from its return),
    then the host's sync until the GPU is done."""
    ev: list[dict] = [{**HOST, "cat": "user_annotation", "name": "model_inference", "ts": 400, "dur": 2500}]
    for i in range(3):
        t = 1000 + 20 * i
        ev += [{**HOST, "cat": "cpu_op", "name": "aten::fill_", "ts": t, "dur": 15},
               {**HOST, "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t + 3, "dur": 8,
                "args": {"correlation": i + 1}},
               {**GPU, "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4, FillFunctor<c10::Half>>",
                "ts": t + 12, "dur": 1, "args": {"correlation": i + 1, "device": 0, "stream": 7}}]
    start = 1100.0
    ev.append({**HOST, "cat": "cuda_runtime", "name": "cudaGraphLaunch", "ts": start, "dur": LAUNCH_US,
               "args": {"correlation": GRAPH_CORR}})
    t = start + LAUNCH_US + 1
    for k in range(nodes):
        ev.append({**GPU, "cat": "kernel", "name": "void gemvx::kernel<int, int, __half, __half, __half, float>",
                   "ts": t, "dur": 15, "args": {"correlation": GRAPH_CORR, "device": 0, "stream": 7}})
        t += 16
    sync = start + LAUNCH_US + 20
    ev.append({**HOST, "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "ts": sync, "dur": t - sync + 5,
               "args": {"correlation": 999}})
    return ev
