"""Large single-host 8-GPU captures for the benchmark, made by the corpus generator.

Why here and not in ``run.py``: this is the only module that knows the
generator's API, so when ``synthetic`` changes only this file
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

import ast
import hashlib
import os
import time
from typing import Any

GPUS = 8
#: Bump when this file changes what it writes: part of the cache key.
RECIPE_VERSION = 1
#: Capture shapes: ``tf`` (our default corpus, ~42 bytes per event), ``dense``
#: (~25 bytes per event: small events with ~1.3 stats, 33 names -- the shape of a
#: foreign generator's capture a user measured, see docs/benchmarks.md) and ``stats``
#: (~90 bytes per event: every kernel with four stats, two of them distinct strings
#: per op -- the density of grouped TF captures such as the real V100 file).
SHAPES = ("tf", "dense", "stats")


#: The generator modules this corpus calls; the digest follows their imports inside ``synthetic``.
GENERATOR_ROOTS = ("tfcapture", "kernels", "scenarios")


def generator_modules(folder: str, roots: tuple[str, ...] = GENERATOR_ROOTS) -> list[str]:
    """The ``synthetic`` modules the corpus depends on: ``roots`` and every module of the package they import, found
    by reading the sources' import statements (nothing is imported).  Why not the whole folder: a change to an
    unrelated generator (a PyTorch or Nsight scenario) would otherwise invalidate gigabytes of cached XPlane
    captures that cost tens of minutes to write again."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        path = os.path.join(folder, name + ".py")
        if name in seen or not os.path.exists(path):
            continue
        seen.add(name)
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level == 1:  # ``from .x import y`` / ``from . import x``
                    todo += [mod.split(".")[0]] if mod else [a.name for a in node.names]
                elif mod == "synthetic":
                    todo += [a.name for a in node.names]
                elif mod.startswith("synthetic."):
                    todo.append(mod.split(".")[1])
            elif isinstance(node, ast.Import):
                todo += [a.name.split(".")[1] for a in node.names if a.name.startswith("synthetic.")]
    return sorted(seen | {"__init__"} if os.path.exists(os.path.join(folder, "__init__.py")) else seen)


def generator_digest() -> str:
    """Hash of the generator's sources the corpus uses: a changed generator means a new file, not a stale one."""
    import synthetic as synth

    folder = os.path.dirname(synth.__file__)
    h = hashlib.sha256(f"recipe={RECIPE_VERSION}".encode())
    for name in generator_modules(folder):
        with open(os.path.join(folder, name + ".py"), "rb") as f:
            h.update(name.encode() + b".py\0" + f.read())
    return h.hexdigest()[:12]


def _capture(num_steps: int, layers: int, seed: int, shape: str = "tf") -> Any:
    """One host, 8 GPUs, ``num_steps`` steps of the given ``shape``; returns the generator's Capture."""
    from synthetic import kernels as K
    from synthetic import scenarios as S
    from synthetic.tfcapture import A100, Capture

    cap = Capture(GPUS, A100, seed=seed, marker="keras3", thread_mode="gpu_private")
    if shape == "dense":
        ops = [_dense_ops(layers)] * GPUS
    elif shape == "stats":
        ops = [_stats_ops(g, layers) for g in range(GPUS)]
    else:
        ops = [S._replica_ops(g, layers) for g in range(GPUS)]
    allreduce = [K.sized(K.NCCL_ALLREDUCE, 150)]
    for _ in range(num_steps):
        cap.step(ops, input_wait_us=25, allreduce=allreduce)
    return cap


def _dense_ops(layers: int) -> list:
    """One replica's ops for the ``dense`` shape: many short events, few stats, few names.

    Why this shape: memory follows events, not bytes, so a file of small
    events holds ~1.7x the events per MB of our ``tf`` shape.  Each op
    launches four tiny kernels that carry only ``correlation_id`` and a
    ``kernel_details`` reference (no ``tf_op`` string, no per-replica op
    names): 9 events and 12 stats per op (1.33 stats per event); the names
    are the same on every GPU, so the capture has ~33 distinct names.
    """
    from dataclasses import replace

    from synthetic import kernels as K
    from synthetic import scenarios as S
    from synthetic.tfcapture import Op

    details = "grid:64,1,1 block:256,1,1"
    pool = [replace(k, us=us, details=details) for k, us in (
        (K.GEMM_FP16_TC, 6), (K.GEMM_FP16_XMMA, 5), (K.GEMM_BF16_TC, 5), (K.SGEMM_VOLTA, 8), (K.HGEMM_FALLBACK, 7),
        (K.EW_ADD_HALF, 2), (K.EW_MUL_HALF, 2), (K.EW_ADD_F32, 2), (K.EW_MUL_F32, 2), (K.EW_ADD_BF16, 2),
        (K.BIAS_RELU_HALF, 2), (K.ADAM_F32, 3), (K.SOFTMAX_F32, 3))]
    kinds = ("MatMul", "BiasAdd", "Relu", "AddV2", "Mul", "Cast", "Softmax", "BiasAddGrad", "ResourceApplyAdam",
             "Sum", "Sub", "Square", "Mean")
    ops = [Op(f"model/{kind}:{kind}", [pool[(i * 3 + j) % len(pool)] for j in range(4)], host_us=1.0, launch_us=1.0,
              tf_op_stat=False)
           for _ in range(max(1, layers * 4 // len(kinds))) for i, kind in enumerate(kinds)]
    return [S._input_copy()] + ops


def _stats_ops(g: int, layers: int) -> list:
    """One replica's ops for the ``stats`` shape: few events per MB, many stats and strings per event.

    Why this shape: the other end of the density range from ``dense``.  Each
    op (distinct names per replica and layer, as TF writes them) launches
    three kernels that carry ``correlation_id``, ``tf_op``, a ``shape`` string
    per layer and a long ``kernel_details``: four stats per kernel, ~90 bytes
    per event, and thousands of distinct strings for the reader to intern.
    """
    from dataclasses import replace

    from synthetic import kernels as K
    from synthetic import scenarios as S
    from synthetic.tfcapture import Op

    details = ("regs:{r} static_shared:0 dynamic_shared:{s} grid:{g},1,1 block:256,1,1 occ_pct:{o} "
               "registers_per_thread:{r} is_kernel_using_tensor_core:{tc}")
    ops = [S._input_copy()]
    for layer in range(layers):
        for part, kinds in (("forward", (K.GEMM_FP16_TC, K.EW_ADD_HALF, K.BIAS_RELU_HALF)),
                            ("backward", (K.GEMM_FP16_XMMA, K.GEMM_FP16_TC, K.EW_MUL_HALF)),
                            ("update", (K.ADAM_F32, K.EW_ADD_F32, K.EW_MUL_F32))):
            kernels = [replace(k, us=3 + 2 * j, shape=f"[{64 * (layer + 1)},{512 + j}]",
                               details=details.format(r=32 + j, s=1024 * layer, g=108 + layer, o=50 + j,
                                                      tc=int(k.tensor_core)))
                       for j, k in enumerate(kinds)]
            ops.append(Op(f"replica_{g}/model/dense_{layer}/{part}/MatMul:MatMul", kernels, host_us=2.0,
                          launch_us=1.5))
    return ops


def _space(cap: Any) -> Any:
    """The SpaceBuilder of a finished capture (``finish()`` where the generator has it)."""
    return cap.finish() if hasattr(cap, "finish") else cap.space


def bytes_per_step(layers: int, seed: int, steps: int = 16, shape: str = "tf") -> float:
    """Calibration: encoded size of a short capture, per step."""
    a = len(_space(_capture(steps, layers, seed, shape)).encode())
    b = len(_space(_capture(2 * steps, layers, seed, shape)).encode())
    return (b - a) / steps


def plan(target_bytes: int, layers: int = 12, seed: int = 0, shape: str = "tf") -> dict:
    """Generator parameters for a file of about ``target_bytes``."""
    per_step = bytes_per_step(layers, seed, shape=shape)
    steps = max(4, round(target_bytes / per_step))
    out = {"gpus": GPUS, "layers": layers, "num_steps": steps, "seed": seed}
    if shape != "tf":  # the tf shape's params (and so its cache key) stay as they were
        out["shape"] = shape
    return out


def generate(out: str, params: dict) -> dict:
    """Write the capture for ``params`` (from :func:`plan`) to ``out``; returns what it made.

    ``params`` may carry ``target_bytes`` instead of ``num_steps``: then the
    step count is calibrated here (the child does it, not the parent).
    """
    t0 = time.perf_counter()
    params = dict(params)
    if "num_steps" not in params:
        params.update(plan(int(params.pop("target_bytes")), params.get("layers", 12), params.get("seed", 0),
                           params.get("shape", "tf")))
    cap = _capture(params["num_steps"], params["layers"], params["seed"], params.get("shape", "tf"))
    t1 = time.perf_counter()
    raw = _space(cap).encode()
    t2 = time.perf_counter()
    tmp = out + ".part"
    with open(tmp, "wb") as f:
        f.write(raw)
    os.replace(tmp, out)
    return {"params": params, "bytes": len(raw), "simulate_s": t1 - t0, "encode_s": t2 - t1,
            "write_s": time.perf_counter() - t2}
