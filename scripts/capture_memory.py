#!/usr/bin/env python3
"""Memory captures with truth measured outside the profiler (issue #29).

torch: profile_memory=True training runs (activation-heavy, fragmenting), an OOM snapshot from
_record_memory_history/_dump_snapshot with torch's own _memory_viz readings of it; jax: an xplane capture with
the device's memory_stats(). Usage, on a CUDA machine: python3 scripts/capture_memory.py torch|jax  (writes under /tmp/caps/mem, truth in
$OUT/truth_<mode>.json)."""
import os
import subprocess
import sys
import time
import traceback

from capture_common import log, workdir, write_truth

ROOT = workdir("mem")
TRUTH = {}


def mlp(torch, width, depth):
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).cuda()


def tensor_bytes(ts):
    return int(sum(t.numel() * t.element_size() for t in ts))


def torch_runs():
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    props = torch.cuda.get_device_properties(0)
    dev = {"gpu": props.name, "total_memory": int(props.total_memory), "torch": torch.__version__}
    log("device", dev)

    # 1. activation-heavy: 12 x Linear(4096) under bf16 autocast, batch 32768, Adam
    name = "torch_mem_activations"
    logdir = f"{ROOT}/{name}"
    torch.manual_seed(0)
    model = mlp(torch, 4096, 12)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.randn(32768, 4096, device="cuda")
    steps = 6

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step(); torch.cuda.synchronize()
    params = tensor_bytes(model.parameters())
    opt_state = tensor_bytes([v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)])
    torch.cuda.reset_peak_memory_stats()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True, record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=steps - 1),
                 on_trace_ready=tensorboard_trace_handler(logdir)) as prof:
        for _ in range(steps):
            step(); prof.step()
    torch.cuda.synchronize()
    st = torch.cuda.memory_stats()
    TRUTH[name] = {**dev, "steps": steps - 1, "mode": "activations",
                   "note": "12 x Linear(4096)+ReLU, fp32 params, bf16 autocast, batch 32768, Adam; activations dominate the peak",
                   "param_bytes": params, "grad_bytes": params, "optimizer_state_bytes": opt_state,
                   "max_memory_allocated": int(torch.cuda.max_memory_allocated()),
                   "max_memory_reserved": int(torch.cuda.max_memory_reserved()),
                   "allocated_at_end": int(st["allocated_bytes.all.current"]),
                   "reserved_at_end": int(st["reserved_bytes.all.current"]),
                   "expect_memory_top": "activations"}
    log(name, TRUTH[name])
    model = opt = x = None  # the first run's tensors freed (step() still names x: rebound, not deleted)
    torch.cuda.empty_cache()

    # 2. fragmenting: variable-length batches of growing length; the caching allocator keeps every old size
    name = "torch_mem_fragmented"
    logdir = f"{ROOT}/{name}"
    torch.manual_seed(0)
    model = mlp(torch, 2048, 4)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    lengths = [1024 + 384 * i for i in range(10)]
    torch.cuda.reset_peak_memory_stats()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True, record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=len(lengths) - 1),
                 on_trace_ready=tensorboard_trace_handler(logdir)) as prof:
        for n in lengths:
            xb = torch.randn(16, n, 2048, device="cuda")
            loss = model(xb).square().mean()
            loss.backward()
            opt.step(); opt.zero_grad(set_to_none=True)
            del xb, loss
            prof.step()
    torch.cuda.synchronize()
    st = torch.cuda.memory_stats()
    TRUTH[name] = {**dev, "steps": len(lengths) - 1, "mode": "fragmented",
                   "note": "4 x Linear(2048) fp32, batches [16, L, 2048] with L growing 1024..4480 by 384: each step's sizes miss the cached blocks",
                   "max_memory_allocated": int(torch.cuda.max_memory_allocated()),
                   "max_memory_reserved": int(torch.cuda.max_memory_reserved()),
                   "allocated_at_end": int(st["allocated_bytes.all.current"]),
                   "reserved_at_end": int(st["reserved_bytes.all.current"]),
                   "num_alloc_retries": int(st.get("num_alloc_retries", 0)),
                   "segments_allocated": int(st.get("segment.all.allocated", 0)),
                   "expect_memory_top": "fragmentation"}
    log(name, TRUTH[name])
    del model, opt
    torch.cuda.empty_cache()

    # 3. OOM snapshot: a memory cap, then a batch 16x larger than the one that fit
    name = "torch_oom_snapshot"
    d = f"{ROOT}/{name}"
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(0)
    cap = 6 * 1024 ** 3
    torch.cuda.set_per_process_memory_fraction(cap / props.total_memory)
    torch.cuda.memory._record_memory_history(max_entries=20000)
    model = mlp(torch, 4096, 8)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    err = None
    for b in (2048, 2048, 32768):
        try:
            xo = torch.randn(b, 4096, device="cuda")
            loss = model(xo).square().mean()
            loss.backward()
            opt.step(); opt.zero_grad(set_to_none=True)
            del xo, loss
        except torch.OutOfMemoryError as e:
            err = str(e)
            break
    st = torch.cuda.memory_stats()
    path = f"{d}/oom_snapshot.pickle"
    torch.cuda.memory._dump_snapshot(path)
    torch.cuda.memory._record_memory_history(enabled=None)
    TRUTH[name] = {**dev, "mode": "oom", "cap_bytes": cap,
                   "note": "8 x Linear(4096) fp32, Adam, memory fraction capped at 6 GiB; batch 2048 fits, batch 32768 OOMs in the forward pass",
                   "oom_message": err, "allocated_at_dump": int(st["allocated_bytes.all.current"]),
                   "reserved_at_dump": int(st["reserved_bytes.all.current"]),
                   "max_memory_allocated": int(st["allocated_bytes.all.peak"]),
                   "max_memory_reserved": int(st["reserved_bytes.all.peak"]),
                   "num_ooms": int(st.get("num_ooms", 0)), "param_bytes": tensor_bytes(model.parameters())}
    for cmd in ("stats", "segments", "trace"):
        r = subprocess.run([sys.executable, "-m", "torch.cuda._memory_viz", cmd, path], capture_output=True, text=True)
        with open(f"{d}/memory_viz_{cmd}.txt", "w") as f:
            f.write(r.stdout[-400000:] + ("\n[stderr]\n" + r.stderr[-4000:] if r.returncode else ""))
        log("memory_viz", cmd, r.returncode, r.stdout[:600])
    log(name, TRUTH[name])


def jax_runs():
    import jax
    import jax.numpy as jnp
    name = "jax_mem_mlp"
    logdir = f"{ROOT}/{name}"
    dev = jax.devices()[0]
    key = jax.random.PRNGKey(0)
    width, depth, batch = 4096, 8, 16384
    params = [jax.random.normal(jax.random.fold_in(key, i), (width, width), jnp.float32) * 0.01 for i in range(depth)]
    x = jax.random.normal(key, (batch, width), jnp.bfloat16)

    def loss_fn(ps, x):
        h = x
        for w in ps:
            h = jax.nn.relu(h @ w.astype(jnp.bfloat16))
        return jnp.mean(jnp.square(h.astype(jnp.float32)))

    @jax.jit
    def step(ps, x):
        g = jax.grad(loss_fn)(ps, x)
        return [p - 1e-4 * gi for p, gi in zip(ps, g)]

    params = step(params, x); jax.block_until_ready(params)
    before = dev.memory_stats() or {}
    jax.profiler.start_trace(logdir)
    for s in range(6):
        with jax.profiler.StepTraceAnnotation("train", step_num=s):
            params = step(params, x)
    jax.block_until_ready(params)
    jax.profiler.stop_trace()
    after = dev.memory_stats() or {}
    TRUTH[name] = {"gpu": dev.device_kind, "jax": jax.__version__, "mode": "jax", "steps": 6,
                   "note": "8 x (4096x4096) fp32 weights, bf16 matmuls, batch 16384, SGD under jit",
                   "memory_stats_before": {k: int(v) for k, v in before.items()},
                   "memory_stats_after": {k: int(v) for k, v in after.items()},
                   "param_bytes": depth * width * width * 4}
    log(name, TRUTH[name])


if __name__ == "__main__":
    mode = sys.argv[1]
    t = time.time()
    try:
        torch_runs() if mode == "torch" else jax_runs()
    except Exception:
        traceback.print_exc()
    write_truth(f"truth_{mode}", TRUTH)
    log(mode, "done in", round(time.time() - t, 1), "s")
