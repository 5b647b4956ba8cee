#!/usr/bin/env python3
"""Real captures of jobs that are not a plain eager training loop: a Hugging Face generate() decode, a
torch.compile training loop, a CPU-only profile, an fp16 inference loop with no
step markers, and a JAX jitted inference loop. Truth is what each script did, by construction.

Usage, on a CUDA machine: python3 scripts/capture_jobs.py torch|jax [function ...]   (runs under /tmp/caps/jobs, truth in $OUT/truth_jobs_<mode>.json)"""
import sys
import time

from capture_common import guarded, workdir, write_truth

ROOT = workdir("jobs")
TRUTH = {}


def _llama(torch, config, causal_lm):
    """A random-init Llama (8 layers, hidden 1024, GQA 16/4) in bf16 and a batch of 4 prompts of 128 tokens."""
    cfg = config(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                 num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048)
    torch.manual_seed(0)
    model = causal_lm(cfg).to("cuda", torch.bfloat16).eval()
    return model, torch.randint(0, 32000, (4, 128), device="cuda")


@guarded
def hf_generate():
    import torch
    from torch.profiler import ProfilerActivity, profile, tensorboard_trace_handler
    from transformers import LlamaConfig, LlamaForCausalLM
    model, ids = _llama(torch, LlamaConfig, LlamaForCausalLM)
    gen = dict(max_new_tokens=32, min_new_tokens=32, do_sample=False, pad_token_id=0)
    model.generate(ids, **gen)  # warm-up
    torch.cuda.synchronize()
    name = "hf_generate_llama"
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 on_trace_ready=tensorboard_trace_handler(f"{ROOT}/{name}")):
        t = time.perf_counter()
        model.generate(ids, **gen)
        torch.cuda.synchronize()
        wall = time.perf_counter() - t
    TRUTH[name] = {"kind": "inference", "engine": "HF generate", "steps": 32, "gpu": torch.cuda.get_device_name(),
                   "note": "random-init Llama (8 layers, hidden 1024, GQA 16/4) in bf16, batch 4, prompt 128, greedy "
                           "generate of 32 new tokens (1 prefill + 31 decode forwards), warm; whole generate() profiled",
                   "wall_ms_profiled": round(wall * 1000, 2),
                   "expect_not": ["mixed_precision_off", "tensor_core_unused", "input_bound"]}


@guarded
def compiled_cudagraphs():
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[m for _ in range(6) for m in (torch.nn.Linear(1024, 1024), torch.nn.GELU())]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(256, 1024, device="cuda")

    cmodel = torch.compile(model)

    def fwd_bwd(x):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = cmodel(x).float().square().mean()
        loss.backward()
        return loss

    for _ in range(5):
        fwd_bwd(x); opt.step(); opt.zero_grad(set_to_none=False)
    torch.cuda.synchronize()
    name = "torch_compile_train"
    steps = 12
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=steps - 2),
                 on_trace_ready=tensorboard_trace_handler(f"{ROOT}/{name}")) as prof:
        for _ in range(steps):
            fwd_bwd(x); opt.step(); opt.zero_grad(set_to_none=False)
            prof.step()
    torch.cuda.synchronize()
    TRUTH[name] = {"kind": "training", "compiled": True, "cuda_graphs": False, "steps": steps - 2,
                   "gpu": torch.cuda.get_device_name(),
                   "note": "6 x Linear(1024)+GELU, batch 256, bf16 autocast, forward+backward under "
                           "torch.compile (inductor, default mode), eager AdamW step",
                   "expect_not": ["xla_not_used", "mixed_precision_off", "tensor_core_unused"],
                   "must_not_advise": ["torch.compile"]}


@guarded
def cpu_only():
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(16 * 30 * 30, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    name = "torch_cpu_only"
    steps = 8
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=steps - 2),
                 on_trace_ready=tensorboard_trace_handler(f"{ROOT}/{name}")) as prof:
        for _ in range(steps):
            x = torch.randn(32, 3, 32, 32)
            loss = model(x).square().mean()
            loss.backward(); opt.step(); opt.zero_grad()
            prof.step()
    TRUTH[name] = {"kind": "no_gpu", "steps": steps - 2,
                   "note": "a small CNN trained on the CPU, profiled with ProfilerActivity.CPU only (a GPU is present "
                           "but unused)",
                   "expect_not": ["mixed_precision_off", "tensor_core_unused", "launch_bound", "input_bound"]}


@guarded
def fp16_inference_unmarked():
    import torch
    from torch.profiler import ProfilerActivity, profile, tensorboard_trace_handler
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=6).cuda().half().eval()
    x = torch.randn(16, 512, 1024, device="cuda", dtype=torch.half)
    with torch.inference_mode():
        for _ in range(3):
            model(x)
        torch.cuda.synchronize()
        name = "torch_fp16_inference_unmarked"
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     on_trace_ready=tensorboard_trace_handler(f"{ROOT}/{name}")):
            for _ in range(10):
                model(x)
            torch.cuda.synchronize()
    TRUTH[name] = {"kind": "inference", "steps": 10, "gpu": torch.cuda.get_device_name(),
                   "note": "nn.TransformerEncoder (6 layers, d 1024, batch 16 x 512) in fp16 under inference_mode, 10 "
                           "forward calls with no prof.step() and no step markers",
                   "expect_not": ["mixed_precision_off", "tensor_core_unused"],
                   "must_not_advise": ["GradScaler", "backward"]}


@guarded
def hf_generate_stack():
    """The same generate() as hf_generate, profiled as many users do: shapes, stacks and module names recorded."""
    import torch
    from torch.profiler import ProfilerActivity, profile, tensorboard_trace_handler
    from transformers import LlamaConfig, LlamaForCausalLM
    model, ids = _llama(torch, LlamaConfig, LlamaForCausalLM)
    gen = {"max_new_tokens": 16, "min_new_tokens": 16, "do_sample": False, "pad_token_id": 0}
    model.generate(ids, **gen)
    torch.cuda.synchronize()
    name = "hf_generate_llama_stack"
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True, with_stack=True,
                 with_modules=True, on_trace_ready=tensorboard_trace_handler(f"{ROOT}/{name}")):
        model.generate(ids, **gen)
        torch.cuda.synchronize()
    TRUTH[name] = {"kind": "inference", "engine": "HF generate", "steps": 16, "gpu": torch.cuda.get_device_name(),
                   "note": "as hf_generate_llama with 16 new tokens (1 prefill + 15 decode forwards), profiled with "
                           "record_shapes, with_stack and with_modules",
                   "expect_not": ["mixed_precision_off", "tensor_core_unused", "input_bound"],
                   "must_not_advise": ["GradScaler"]}


@guarded
def compiled_graphs_inference():
    """A bf16 MLP forward compiled with mode="reduce-overhead" (CUDA graphs) under inference_mode, prof.step() a call."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[m for _ in range(8) for m in (torch.nn.Linear(1024, 1024), torch.nn.GELU())])
    model = model.cuda().to(torch.bfloat16).eval()
    cmodel = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(64, 1024, device="cuda", dtype=torch.bfloat16)
    with torch.inference_mode():
        for _ in range(5):
            cmodel(x).sum().item()
        name = "torch_compile_cudagraphs_inference"
        steps = 12
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     schedule=schedule(wait=1, warmup=1, active=steps - 2),
                     on_trace_ready=tensorboard_trace_handler(f"{ROOT}/{name}")) as prof:
            for _ in range(steps):
                cmodel(x).sum().item()
                prof.step()
    TRUTH[name] = {"kind": "inference", "compiled": True, "cuda_graphs": True, "steps": steps - 2,
                   "gpu": torch.cuda.get_device_name(),
                   "note": "8 x Linear(1024)+GELU in bf16, batch 64, torch.compile(mode='reduce-overhead') under "
                           "inference_mode, .item() after each call",
                   "expect_not": ["mixed_precision_off", "tensor_core_unused", "xla_not_used"],
                   "must_not_advise": ["torch.compile(model)\n", "GradScaler", "reduce-overhead"]}


def jax_inference():
    import jax
    import jax.numpy as jnp
    key = jax.random.PRNGKey(0)
    ws = [jax.random.normal(jax.random.fold_in(key, i), (2048, 2048), jnp.bfloat16) * 0.02 for i in range(8)]

    @jax.jit
    def forward(ws, x):
        for w in ws:
            x = jax.nn.gelu(x @ w)
        return jnp.argmax(x, axis=-1)

    x = jax.random.normal(key, (4096, 2048), jnp.bfloat16)
    jax.block_until_ready(forward(ws, x))
    name = "jax_jit_inference"
    jax.profiler.start_trace(f"{ROOT}/{name}")
    for _ in range(10):
        out = forward(ws, x)
    jax.block_until_ready(out)
    jax.profiler.stop_trace()
    TRUTH[name] = {"kind": "inference", "steps": 10, "gpu": jax.devices()[0].device_kind,
                   "note": "jitted 8-layer bf16 MLP forward (batch 4096, width 2048) with argmax, called 10 times, no "
                           "step annotations",
                   "expect_not": ["mixed_precision_off", "tensor_core_unused", "xla_not_used"]}


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "torch":
        only = sys.argv[2:]
        for f in (hf_generate, compiled_cudagraphs, cpu_only, fp16_inference_unmarked, hf_generate_stack,
                  compiled_graphs_inference):
            if only and f.__name__ not in only:
                continue
            f()
    else:
        guarded(jax_inference)()
    write_truth(f"truth_jobs_{mode}", TRUTH)
