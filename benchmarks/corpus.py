"""Large single-host 8-GPU captures for the benchmark, made by the corpus generator.

Why here and not in ``run.py``: this is the only module that knows the
generator's API, so when ``tb_gpu_advisor.synthetic`` changes only this file
follows.  It runs inside a ``bench_child.py generate`` process so the
generator's own memory never inflates the parent.

What it builds: the shape of a current-TF (raw, ungrouped) MirroredStrategy
capture on one host with 8 GPUs -- per step an input copy, ``layers`` dense
layers forward/backward/update per replica (fp16 Tensor Core GEMMs and
elementwise kernels), gpu_private launch threads, and one NCCL AllReduce per
GPU.  ``num_steps`` is chosen from a small calibration capture so the file
lands near the requested size.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any

GPUS = 8
#: Bump when this file changes what it writes: part of the cache key.
RECIPE_VERSION = 1


def generator_digest() -> str:
    """Hash of the generator's sources: a changed generator means a new file, not a stale one."""
    import tb_gpu_advisor.synthetic as synth

    folder = os.path.dirname(synth.__file__)
    h = hashlib.sha256(f"recipe={RECIPE_VERSION}".encode())
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()[:12]


def _capture(num_steps: int, layers: int, seed: int) -> Any:
    """One host, 8 GPUs, ``num_steps`` steps; returns the generator's Capture."""
    from tb_gpu_advisor.synthetic import kernels as K
    from tb_gpu_advisor.synthetic import scenarios as S
    from tb_gpu_advisor.synthetic.tfcapture import A100, Capture

    cap = Capture(GPUS, A100, seed=seed, marker="keras3", thread_mode="gpu_private")
    ops = [S._replica_ops(g, layers) for g in range(GPUS)]
    allreduce = [K.sized(K.NCCL_ALLREDUCE, 150)]
    for _ in range(num_steps):
        cap.step(ops, input_wait_us=25, allreduce=allreduce)
    return cap


def _space(cap: Any) -> Any:
    """The SpaceBuilder of a finished capture (``finish()`` where the generator has it)."""
    return cap.finish() if hasattr(cap, "finish") else cap.space


def bytes_per_step(layers: int, seed: int, steps: int = 16) -> float:
    """Calibration: encoded size of a short capture, per step."""
    a = len(_space(_capture(steps, layers, seed)).encode())
    b = len(_space(_capture(2 * steps, layers, seed)).encode())
    return (b - a) / steps


def plan(target_bytes: int, layers: int = 12, seed: int = 0) -> dict:
    """Generator parameters for a file of about ``target_bytes``."""
    per_step = bytes_per_step(layers, seed)
    steps = max(4, round(target_bytes / per_step))
    return {"gpus": GPUS, "layers": layers, "num_steps": steps, "seed": seed}


def generate(out: str, params: dict) -> dict:
    """Write the capture for ``params`` (from :func:`plan`) to ``out``; returns what it made.

    ``params`` may carry ``target_bytes`` instead of ``num_steps``: then the
    step count is calibrated here (the child does it, not the parent).
    """
    t0 = time.perf_counter()
    params = dict(params)
    if "num_steps" not in params:
        params.update(plan(int(params.pop("target_bytes")), params.get("layers", 12), params.get("seed", 0)))
    cap = _capture(params["num_steps"], params["layers"], params["seed"])
    t1 = time.perf_counter()
    raw = _space(cap).encode()
    t2 = time.perf_counter()
    tmp = out + ".part"
    with open(tmp, "wb") as f:
        f.write(raw)
    os.replace(tmp, out)
    return {"params": params, "bytes": len(raw), "simulate_s": t1 - t0, "encode_s": t2 - t1,
            "write_s": time.perf_counter() - t2}
