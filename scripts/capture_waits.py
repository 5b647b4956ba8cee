#!/usr/bin/env python3
"""Real captures of waits the profiler may not record as such (issue #37 class 3): JAX loops that wait for the
device with `block_until_ready` or read a value with `float(loss)`, a JAX loop that never waits (the control), and
PyTorch loops whose host does work no profiler event covers (numpy preprocessing) or reads the loss to numpy.
Truth is what each script did, by construction.

Usage, on a CUDA machine: python3 scripts/capture_waits.py torch|jax|tf   (runs under /tmp/caps/waits, truth in
$OUT/truth_waits_<mode>.json).  ``torch`` also writes each read's twin (h37-waits2: a wait is measured against the
same loop without it): ``torch_no_read`` (``torch_numpy_read`` without its read), ``torch_item_read`` (``loss.item()``)
and ``torch_synchronize`` (``torch.cuda.synchronize()``); ``tf`` the TF eager loop reading ``loss.numpy()`` each step
with the Python tracer on, and its twin without the read (``TFE_TensorHandleResolve``: h37-left55)."""
import sys
import time

from capture_common import guarded, workdir, write_truth

ROOT = workdir("waits")
TRUTH = {}
STEPS = 12
HOST_WORK_MS = 4.0


def _busy_numpy(ms: float):
    """Host work no profiler event covers: numpy arithmetic for about `ms` milliseconds; returns a batch."""
    import numpy as np
    end = time.perf_counter() + ms / 1000
    a = np.random.rand(256, 256).astype(np.float32)
    while time.perf_counter() < end:
        a = np.tanh(a @ a.T / 256.0)
    return a


# ---------------------------------------------------------------- JAX

def _jax_mlp():
    import jax
    import jax.numpy as jnp
    key = jax.random.PRNGKey(0)
    width, layers, batch = 2048, 6, 1024
    params = [jax.random.normal(jax.random.fold_in(key, i), (width, width), jnp.bfloat16) * 0.02
              for i in range(layers)]
    x = jax.random.normal(key, (batch, width), jnp.bfloat16)

    def loss_fn(p, x):
        h = x
        for w in p:
            h = jax.nn.gelu(h @ w)
        return jnp.mean(h.astype(jnp.float32) ** 2)

    @jax.jit
    def train_step(p, x):
        loss, g = jax.value_and_grad(loss_fn)(p, x)
        return [w - 1e-3 * gw for w, gw in zip(p, g)], loss

    return jax, train_step, params, x


def _jax_run(name: str, how: str, annotate: bool):
    jax, train_step, params, x = _jax_mlp()
    for _ in range(3):  # compile and warm up outside the window
        params, loss = train_step(params, x)
    jax.block_until_ready(params)
    jax.profiler.start_trace(f"{ROOT}/{name}")
    t = time.perf_counter()
    for i in range(STEPS):
        if annotate:
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                params, loss = train_step(params, x)
                _jax_wait(jax, how, params, loss)
        else:
            params, loss = train_step(params, x)
            _jax_wait(jax, how, params, loss)
    jax.block_until_ready(params)
    wall = time.perf_counter() - t
    jax.profiler.stop_trace()
    TRUTH[name] = {"kind": "training", "framework": "jax", "steps": STEPS, "gpu": jax.devices()[0].device_kind,
                   "wait": how, "annotated": annotate, "wall_ms_profiled": round(wall * 1000, 2),
                   "note": f"jitted 6-layer bf16 MLP train step (batch 1024, width 2048), {STEPS} steps, "
                           f"each followed by {how!r}" + (" inside StepTraceAnnotation" if annotate else
                                                          ", no step annotations")}


def _jax_wait(jax, how, params, loss):
    if how == "block_until_ready":
        jax.block_until_ready(params)
    elif how == "float(loss)":
        float(loss)
    elif how == "none":
        pass


def jax_all():
    guarded(lambda: _jax_run("jax_train_block_until_ready", "block_until_ready", False))()
    guarded(lambda: _jax_run("jax_train_block_until_ready_annotated", "block_until_ready", True))()
    guarded(lambda: _jax_run("jax_train_float_loss", "float(loss)", False))()
    guarded(lambda: _jax_run("jax_train_no_wait", "none", True))()


# ---------------------------------------------------------------- PyTorch

def _torch_mlp(torch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[m for _ in range(6) for m in (torch.nn.Linear(2048, 2048), torch.nn.GELU())])
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    return model, opt


def _torch_run(name: str, host_work: bool, read: str):
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    model, opt = _torch_mlp(torch)
    x_gpu = torch.randn(1024, 2048, device="cuda")

    def step():
        if host_work:
            a = _busy_numpy(HOST_WORK_MS)
            x = torch.from_numpy(a).repeat(4, 8).cuda()  # pageable 8 MiB H2D, blocks the host
        else:
            x = x_gpu
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if read == "numpy":
            loss.detach().cpu().numpy()
        elif read == "item":
            loss.item()
        elif read == "synchronize":
            torch.cuda.synchronize()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=STEPS),
                 on_trace_ready=tensorboard_trace_handler(f"{ROOT}/{name}")) as prof:
        t = time.perf_counter()
        for _ in range(STEPS + 2):
            step()
            prof.step()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t
    TRUTH[name] = {"kind": "training", "framework": "pytorch", "steps": STEPS, "gpu": torch.cuda.get_device_name(),
                   "host_work_ms_per_step": HOST_WORK_MS if host_work else 0.0, "read": read,
                   "wall_ms_profiled_incl_wait_warmup": round(wall * 1000, 2),
                   "note": "6 x Linear(2048)+GELU, batch 1024, bf16 autocast, SGD; " +
                           (f"each step first does ~{HOST_WORK_MS} ms of numpy work no profiler event covers and "
                            "copies the 8 MiB batch from pageable memory; " if host_work else "batch on the GPU; ") +
                           {"numpy": "reads the loss with .cpu().numpy() each step", "item": "reads the loss with "
                            ".item() each step", "synchronize": "calls torch.cuda.synchronize() each step"}.get(
                               read, "no read")}


def torch_all():
    guarded(lambda: _torch_run("torch_unrecorded_host_work", True, "none"))()
    guarded(lambda: _torch_run("torch_numpy_read", False, "numpy"))()
    guarded(lambda: _torch_run("torch_unrecorded_host_work_numpy_read", True, "numpy"))()
    guarded(lambda: _torch_run("torch_no_read", False, "none"))()  # the twin of torch_numpy_read
    guarded(lambda: _torch_run("torch_item_read", False, "item"))()
    guarded(lambda: _torch_run("torch_synchronize", False, "synchronize"))()


# ---------------------------------------------------------------- TensorFlow

def _tf_run(name: str, read: bool):
    """A TF 2 bf16 MLP train step under tf.function (6 x Dense(2048)+GELU, batch 1024, SGD), 12 steps inside
    ``tf.profiler.experimental.Trace('train', step_num=i, _r=1)``, the Python tracer on; ``read``: ``loss.numpy()``
    each step (``EagerTensor.numpy`` -> ``TFE_TensorHandleResolve``: the host waits for the GPU)."""
    import tensorflow as tf
    tf.random.set_seed(0)
    width, layers, batch = 2048, 6, 1024
    ws = [tf.Variable(tf.random.normal((width, width), stddev=0.02, dtype=tf.bfloat16)) for _ in range(layers)]
    x = tf.random.normal((batch, width), dtype=tf.bfloat16)

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            h = x
            for w in ws:
                h = tf.nn.gelu(h @ w)
            loss = tf.reduce_mean(tf.cast(h, tf.float32) ** 2)
        for w, g in zip(ws, tape.gradient(loss, ws)):
            w.assign_sub(1e-3 * g)
        return loss

    for _ in range(3):
        train_step(x).numpy()
    opts = tf.profiler.experimental.ProfilerOptions(host_tracer_level=2, python_tracer_level=1, device_tracer_level=1)
    tf.profiler.experimental.start(f"{ROOT}/{name}", options=opts)
    t = time.perf_counter()
    for i in range(STEPS):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            loss = train_step(x)
            if read:
                loss.numpy()
    loss.numpy()
    wall = time.perf_counter() - t
    tf.profiler.experimental.stop()
    TRUTH[name] = {"kind": "training", "framework": "tensorflow", "steps": STEPS,
                   "gpu": tf.config.experimental.get_device_details(tf.config.list_physical_devices("GPU")[0]).get(
                       "device_name", ""), "read": "numpy" if read else "none", "annotated": True,
                   "wall_ms_profiled": round(wall * 1000, 2),
                   "note": "tf.function bf16 MLP train step (batch 1024, width 2048), 12 steps in Trace('train'), "
                           "Python tracer on" + (", loss.numpy() each step" if read else ", no read (the twin)")}


def tf_all():
    guarded(lambda: _tf_run("tf_train_numpy_read", True))()
    guarded(lambda: _tf_run("tf_train_no_read", False))()


if __name__ == "__main__":
    mode = sys.argv[1]
    {"torch": torch_all, "jax": jax_all, "tf": tf_all}[mode]()
    write_truth(f"truth_waits_{mode}", TRUTH)
