"""The device allocator's churn named by its cause: a program that empties PyTorch's cache itself
(``torch.cuda.empty_cache()`` in its loop) is told to drop that call, not to turn on a cache that is on.

A caching allocator hands memory back to the driver (``cudaFree``) only when told to or when an allocation fails, so a
step's frees inside the program's own ``empty_cache`` are that call's; with the cache off they fall wherever tensors
die.  Truth by construction (hand-written PyTorch traces: the same churn with the frees inside ``empty_cache``'s
Python frame, and inside the ops, the call made only before the steps) and on the kept real trace where it was found
(``tests/fixtures/wild/cold_a100_alexnet``: PARAM's ``_clear_cache`` wraps ``torch.cuda.empty_cache()`` in
``record_function("[param|clear_cache]")``; SURVEY.md "h37-left17", "h37-left21").
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from tests.support import kineto_doc
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

GPU = {"ph": "X", "pid": 0, "tid": 7}
HOST = {"ph": "X", "pid": 1, "tid": 1}
EMPTY_CACHE = "torch/cuda/memory.py(192): empty_cache"


def _steps(free_in: str, n: int = 5) -> list[dict]:
    """``n`` ProfilerSteps of 1 ms: an op whose ``cudaMalloc`` takes 300 us (the GPU idle), a kernel, and a 100 us
    ``cudaFree`` -- inside ``empty_cache``'s frame at the step's end (``free_in="empty_cache"``), or inside the op
    that drops its tensor (``"op"``: the cache off).  ``"before"``: the frees in the ops, and ``empty_cache`` called
    once before the first step (no step's free is its)."""
    ev: list[dict] = []
    if free_in == "before":
        ev += [{**HOST, "cat": "python_function", "name": EMPTY_CACHE, "ts": 20, "dur": 50},
               {**HOST, "cat": "cuda_runtime", "name": "cudaFree", "ts": 30, "dur": 30, "args": {"correlation": 9999}}]
    t, corr = 100.0, 0
    for s in range(n):
        ev.append({**HOST, "cat": "user_annotation", "name": f"ProfilerStep#{s + 1}", "ts": t, "dur": 1000})
        corr += 1
        ev += [{**HOST, "cat": "cpu_op", "name": "aten::empty", "ts": t + 10, "dur": 320},
               {**HOST, "cat": "cuda_runtime", "name": "cudaMalloc", "ts": t + 15, "dur": 300,
                "args": {"correlation": corr}}]
        corr += 1
        ev += kineto_doc.mm_launch(t + 340, corr, 300)
        corr += 1
        host_free = {**HOST, "cat": "cuda_runtime", "name": "cudaFree", "ts": t + 700, "dur": 100,
                     "args": {"correlation": corr}}
        wrap = EMPTY_CACHE if free_in == "empty_cache" else "aten::add"
        ev += [{**HOST, "cat": "python_function" if free_in == "empty_cache" else "cpu_op", "name": wrap,
                "ts": t + 690, "dur": 120}, host_free]
        t += 1000
    return ev


def _report(tmp_path: Path, free_in: str) -> dict:
    return kineto_doc.session_report(tmp_path, _steps(free_in))


def _churn(rep: dict) -> dict:
    found = [f for f in rep["findings"] if f["id"].split(":")[0].split("#")[0] == "allocator_churn"]
    assert len(found) == 1, [f["id"] for f in rep["findings"]]
    return found[0]


def _fix_text(f: dict) -> str:
    return " ".join(a["text"] for a in f["actions"])


def test_frees_inside_the_programs_empty_cache_get_drop_that_call(tmp_path):
    f = _churn(_report(tmp_path, "empty_cache"))
    assert "empties the allocator's cache itself" in f["summary"]
    assert "all 5 cudaFree calls of the steps run inside its own" in f["summary"] and EMPTY_CACHE in f["summary"]
    assert _fix_text(f).startswith("Drop torch.cuda.empty_cache() from the loop")
    assert "PYTORCH_NO_CUDA_MEMORY_CACHING" not in _fix_text(f)


def test_frees_where_tensors_die_keep_the_cache_off_fix(tmp_path):
    f = _churn(_report(tmp_path, "op"))
    assert "the caching allocator is off" in f["summary"] and "empties" not in f["summary"]
    assert "PYTORCH_NO_CUDA_MEMORY_CACHING" in _fix_text(f) and "empty_cache" not in _fix_text(f)


def test_an_empty_cache_before_the_steps_is_not_the_steps_cause(tmp_path):
    f = _churn(_report(tmp_path, "before"))
    assert "empties" not in f["summary"] and "PYTORCH_NO_CUDA_MEMORY_CACHING" in _fix_text(f)


@cache
def _alexnet() -> dict:
    s = next(s for s in wild_sessions() if s.run == "cold_a100_alexnet")
    return session_report(s).to_dict()


def test_param_alexnets_clear_cache_is_named_as_the_cause():
    # the measured pass (79.7 ms) holds one cudaFree (1.25 ms), inside `[param|clear_cache]`, which calls
    # torch.cuda.empty_cache(); its forward's 5 cudaMalloc (33 ms) ask the driver for the memory again
    f = _churn(_alexnet())
    # "the pass's": the capture is that one pass, no steps (h37-onepass2)
    assert "the pass's one cudaFree call runs inside its own `[param|clear_cache]`" in f["summary"]
    assert _fix_text(f).startswith("Drop torch.cuda.empty_cache() from the loop")
