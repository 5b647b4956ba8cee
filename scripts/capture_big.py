#!/usr/bin/env python3
"""Large real captures for the benchmarks of issue #30 (peak memory and CPU against the floor on real shapes, not
only generated ones): one ~100 MB XPlane file of a jitted GPT trained with AdamW (an XLA capture: kernels with a
dozen stats each, the shape whose decode batches once took 90 MB of temporaries), and one ~100 MB PyTorch trace
of a Hugging Face GPT-2 trained with AdamW under bf16 autocast (record_shapes on).

Usage, on a CUDA machine with JAX, optax, PyTorch and transformers:

    python3 scripts/capture_big.py [jax] [torch]        # both when none is named

The device tool brings back at most 16 MiB a file, so each capture is compressed (xz for the XPlane file; the
PyTorch trace is written gzip'd by its handler) and split into 15 MiB parts under $OUT:
``cat NAME.part* > NAME`` (then ``xz -d`` for the XPlane file) rebuilds it.  What each run did is in
``$OUT/truth_big.json``.  Not for the repository: the files are far over its 5 MB limit; keep them beside it.
"""
import glob
import os
import subprocess
import sys
import time
import traceback

from capture_common import OUT, log, workdir, write_truth

ROOT = workdir("big")
TRUTH = {}


def jax_gpt(steps: int = 800, layers: int = 12, d: int = 1024, seq: int = 1024, batch: int = 8, heads: int = 16):
    """A GPT-style decoder (tied 32k embedding, RMSNorm, causal attention, GELU MLP) in bf16, AdamW, jitted."""
    import functools

    import jax
    import jax.numpy as jnp
    import optax

    dt = jnp.bfloat16

    def init(key):
        ks = jax.random.split(key, 4 * layers + 1)
        normal = lambda k, shape: jax.random.normal(k, shape) * 0.02  # noqa: E731
        return {"emb": normal(ks[0], (32000, d)),
                "layers": [{"qkv": normal(ks[1 + 4 * i], (d, 3 * d)), "o": normal(ks[2 + 4 * i], (d, d)),
                            "up": normal(ks[3 + 4 * i], (d, 4 * d)), "down": normal(ks[4 + 4 * i], (4 * d, d)),
                            "g1": jnp.ones((d,)), "g2": jnp.ones((d,))} for i in range(layers)]}

    def rms(x, g):
        return x * jax.lax.rsqrt(jnp.mean(x.astype(jnp.float32) ** 2, -1, keepdims=True) + 1e-6).astype(x.dtype) * g

    def loss_fn(p, tok):
        x, y = tok[:, :-1], tok[:, 1:]
        h = p["emb"][x].astype(dt)
        b, t = x.shape
        for layer in p["layers"]:
            w = jax.tree.map(lambda a: a.astype(dt), layer)
            q, k, v = jnp.split(rms(h, w["g1"]) @ w["qkv"], 3, -1)
            q, k, v = (a.reshape(b, t, heads, d // heads) for a in (q, k, v))
            h = h + jax.nn.dot_product_attention(q, k, v, is_causal=True).reshape(b, t, d) @ w["o"]
            h = h + jax.nn.gelu(rms(h, w["g2"]) @ w["up"]) @ w["down"]
        logits = (h @ p["emb"].astype(dt).T).astype(jnp.float32)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    opt = optax.adamw(3e-4)

    @functools.partial(jax.jit, donate_argnums=(0, 1))
    def step(p, s, tok):
        loss, g = jax.value_and_grad(loss_fn)(p, tok)
        upd, s = opt.update(g, s, p)
        return optax.apply_updates(p, upd), s, loss

    p = init(jax.random.PRNGKey(0))
    s = opt.init(p)
    tok = jax.random.randint(jax.random.PRNGKey(1), (batch, seq + 1), 0, 32000)
    for _ in range(3):
        p, s, loss = step(p, s, tok)
    loss.block_until_ready()
    logdir = f"{ROOT}/jax_gpt"
    t0 = time.perf_counter()
    jax.profiler.start_trace(logdir)
    for i in range(steps):
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            p, s, loss = step(p, s, tok)
    loss.block_until_ready()
    jax.profiler.stop_trace()
    TRUTH["jax_gpt"] = dict(kind="jax", model="gpt", layers=layers, d=d, seq=seq, batch=batch, steps=steps,
                            dtype="bfloat16", jax=jax.__version__,
                            wall_step_ms=round((time.perf_counter() - t0) / steps * 1e3, 3))


def torch_gpt2(steps: int = 40):
    """transformers' GPT2LMHeadModel (12 x 768, random init from its config), AdamW, bf16 autocast, eager."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=512)
    model = GPT2LMHeadModel(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tok = torch.randint(0, cfg.vocab_size, (8, 512), device="cuda")

    def one():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=tok, labels=tok).loss
        loss.backward()
        opt.step()

    for _ in range(3):
        one()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 schedule=schedule(wait=1, warmup=1, active=steps),
                 on_trace_ready=tensorboard_trace_handler(f"{ROOT}/torch_gpt2", use_gzip=True)) as prof:
        for _ in range(steps + 2):
            one()
            prof.step()
    torch.cuda.synchronize()
    TRUTH["torch_gpt2"] = dict(kind="torch", model="transformers GPT2LMHeadModel 12 x 768, seq 512, batch 8",
                               steps=steps, optimizer="AdamW", autocast="bf16", torch=torch.__version__,
                               capture_and_export_s=round(time.perf_counter() - t0, 1))


def ship() -> None:
    """Each capture compressed and split into 15 MiB parts under $OUT."""
    for path in glob.glob(f"{ROOT}/**/*", recursive=True):
        if not path.endswith((".xplane.pb", ".pt.trace.json.gz")):
            continue
        log(path, os.path.getsize(path), "bytes")
        if path.endswith(".xplane.pb"):
            subprocess.run(["xz", "-T0", "-6", "-k", "-f", path], check=True)
            path += ".xz"
        subprocess.run(["split", "-b", "15M", "-d", path, f"{OUT}/{os.path.basename(path)}.part"], check=True)


def main(which: list[str]) -> None:
    for name, fn in (("torch", torch_gpt2), ("jax", jax_gpt)):
        if which and name not in which:
            continue
        t = time.perf_counter()
        try:
            fn()
        except Exception:  # noqa: BLE001 - the other capture still runs
            traceback.print_exc()
        log(name, "took", round(time.perf_counter() - t, 1), "s")
    write_truth("truth_big", TRUTH)
    ship()


if __name__ == "__main__":
    main(sys.argv[1:])
