"""Nsight exports of PyTorch jobs whose NVTX a framework wrote, not the user (issue #37 class 2, h37-fwnvtx).

Each form is the ranges exactly as its writer pushes them (facts from the writers' own source, tests/fixtures/wild/
SURVEY.md "h37-fwnvtx"), around GPU work simulated event by event, so the truth is known by construction:

* ``emit_nvtx`` -- ``torch.autograd.profiler.emit_nvtx()`` (``nsys --pytorch=autograd-nvtx``; NeMo's ``NsysCallback``
  and speechlm2 ``NsightProfiling``, Megatron-LM's ``--profile --record-shapes``, Lightning callbacks calling
  ``emit_nvtx().__enter__()`` at a start step): every ``RecordFunction`` as a range ``<name>[, seq = N], op_id = M[,
  sizes = [...]][, input_op_ids = [...]]`` (``torch/csrc/profiler/util.cpp``, ``getNvtxStr``), ``seq`` on an op
  dispatched through autograd in grad mode (``Dispatcher::runRecordFunction``: ``sequence_number::peek()``), the
  backward node (``AddmmBackward0``) carrying its forward's ``seq`` inside ``autograd::engine::evaluate_function:
  AddmmBackward0`` on **autograd's own device thread** (``pt_autograd_0``: the engine runs a CUDA graph's backward
  there, the main thread waiting inside ``loss.backward()`` with no range); the optimizer's
  ``Optimizer.step#AdamW.step`` and ``Optimizer.zero_grad#AdamW.zero_grad`` (``torch/optim/optimizer.py``'s
  ``record_function``), the DataLoader's ``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__``.  No range
  marks an iteration: the writers start it at a step boundary (``cudaProfilerStart``) and push none per step;
* ``record_shapes`` -- the same with ``emit_nvtx(record_shapes=True)`` (Megatron's ``--record-shapes``, NeMo's
  ``gen_shape``): ``, sizes = [[64, 1024], [1024, 1024]]`` and ``, input_op_ids = [...]`` after ``op_id``;
* ``no_grad`` -- ``emit_nvtx`` around a forward under ``torch.no_grad()``: no op carries a ``seq``, no backward, no
  optimizer; each batch's result read back (``.cpu()``);
* ``lightning`` -- Lightning's ``PyTorchProfiler(emit_nvtx=True)``: its actions as ``record_function("[pl][profile]" +
  action)`` (``run_training_batch``, ``[Strategy]SingleDeviceStrategy.training_step``,
  ``[Strategy]SingleDeviceStrategy.backward``, ``[LightningModule]Model.optimizer_step``), so under ``emit_nvtx``
  ``[pl][profile]run_training_batch, op_id = N``; its ``RegisterRecordFunction`` names each module's forward
  ``[pl][module]torch.nn.modules.linear.Linear: layers.0``.
* ``ddp`` -- ``emit_nvtx`` on a rank of ``DistributedDataParallel``: its ``DistributedDataParallel.forward``
  ``record_function``, and each gradient bucket's all-reduce from the autograd thread's hooks as
  ``nccl:all_reduce`` / ``record_param_comms`` with an NCCL kernel; ``ranks`` processes, one GPU each.
* ``megatron`` -- Megatron-LM's ``--profile --nvtx-ranges`` (``cudaProfilerStart`` at ``--profile-step-start``):
  Megatron-core's own ranges (:data:`MEGATRON_LAYER`), no op range (``emit_nvtx`` only with ``--record-shapes``), the
  optimizer's ``.item()`` of its grad norm / found-inf flag inside its step; ``megatron_shapes`` -- the same with
  ``--record-shapes``: ``emit_nvtx(record_shapes=True)`` ops besides.
* ``manual_update`` -- ``emit_nvtx`` on a loop that updates its parameters itself (``p.add_(p.grad, alpha=-lr)`` under
  ``torch.no_grad()``, ``p.grad = None``): no ``Optimizer.`` range, the update's ATen ops only.

:func:`write` returns the truth: the steps' count and length, the job's kind, the ops per step.
"""

from __future__ import annotations


from synthetic import sqlitefile
from synthetic.nsysexport import (
    _KERNEL_INSERT,
    A100_SXM4_80GB,
    DATALOADER,
    GPU_DDL,
    KERNEL_DDL,
    MEMCPY_DDL,
    NCCL_ALLREDUCE,
    NVTX_DDL,
    RUNTIME_DDL,
    SCHEMA,
    SESSION_START_NS,
    SYNC_DDL,
    finish_tables,
    _gid,
    _Strings,
)

FORMS = ("emit_nvtx", "record_shapes", "no_grad", "lightning", "ddp", "megatron", "megatron_shapes", "manual_update")
#: The forms whose ops ``emit_nvtx`` records (Megatron-LM's ``--profile`` alone records none: only with
#: ``--record-shapes`` does it enter ``emit_nvtx``).
OP_FORMS = ("emit_nvtx", "record_shapes", "no_grad", "lightning", "ddp", "megatron_shapes", "manual_update")
#: Megatron-core's ``--nvtx-ranges`` (``configure_nvtx_profiling``): ``nvtx_range_push(suffix=...)`` names a range
#: ``<module>.<calling function>.<suffix>`` (``megatron/core/utils.py``, ``_nvtx_range_get_func_path``), pushed in the
#: transformer layer's forward (``transformer_layer.py``: ``_forward_attention`` / ``_apply_self_attn_bda_step`` /
#: ``_run_mlp`` / ``_apply_mlp_bda_step``) and its MLP's (``mlp.py``: ``forward``'s ``linear_fc1`` / ``activation`` /
#: ``linear_fc2``); no range around an iteration, none in the backward (autograd runs it).
MEGATRON_LAYER = "megatron.core.transformer.transformer_layer"
MEGATRON_MLP = "megatron.core.transformer.mlp.forward"
GEMM = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"
GEMM_DGRAD = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nn"
GEMM_WGRAD = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nt"
RELU = ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar"
        "(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()"
        " const::{lambda()#7}::operator() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, "
        "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
        "at::native::detail::ClampLimits)::{lambda()#1}::operator() const::{lambda()#7}::operator() const::"
        "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)")
RELU_BWD = "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_backward_kernel, std::array<char*, 3ul> >"
LOSS = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>"
ADAM = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*>"
SHAPE = "[[64, 1024], [1024, 1024]]"


class _Thread:
    """One host thread's NVTX ranges and CUDA calls, with its own clock ``t`` (ns) and a shared correlation counter."""

    def __init__(self, gtid: int, shared: dict, strings: _Strings, form: str) -> None:
        self.gtid, self.shared, self.strings, self.form = gtid, shared, strings, form
        self.t = 0
        self.ranges: list[tuple[int, int, str]] = []
        self.calls: list[tuple[int, int, int, int]] = []

    def op_text(self, name: str, seq: int | None, inputs: int = 0) -> str | None:
        """None where the form records no ops; else ``name`` as ``emit_nvtx`` writes it: ``seq`` where autograd numbered it, ``op_id`` always, then the shapes
        and the ids of the ops that made its inputs under ``record_shapes``; None where the form records no ops."""
        if self.form not in OP_FORMS:
            return None
        self.shared["op_id"] += 1
        text = name if seq is None else f"{name}, seq = {seq}"
        text += f", op_id = {self.shared['op_id']}"
        if self.form in ("record_shapes", "megatron_shapes"):
            text += f", sizes = {SHAPE if inputs else '[]'}"
            if inputs:
                ids = ", ".join(f"({self.shared['op_id'] - 1 - k},0)" for k in range(inputs))  # (op id,output nr)
                text += f", input_op_ids = [{ids}]"
        return text

    def push(self, text: str | None, body, pause_ns: int = 1000) -> None:
        """A range named ``text`` around what ``body`` does on this thread (its clock's span), then a pause; no range
        where ``text`` is None (an op the form does not record)."""
        if text is None:
            body()
            return
        a = self.t
        self.t += 1000
        body()
        self.t += 1000
        self.ranges.append((a, self.t, text))
        self.t += pause_ns

    def call(self, name: str, dur_ns: int) -> int:
        self.shared["corr"] += 1
        c = self.shared["corr"]
        self.calls.append((self.t, self.t + dur_ns, c, self.strings(name)))
        self.t += dur_ns
        return c


class _Gpu:
    """One stream: a kernel starts when the stream is free and its launch has reached the GPU."""

    def __init__(self) -> None:
        self.free = 0
        self.kernels: list[tuple[int, int, int, int]] = []
        self.copies: list[tuple[int, int, int, int, int, int, int]] = []

    def kernel(self, launched: int, corr: int, name: int, dur_ns: int) -> None:
        s = max(launched + 3000, self.free)
        self.free = s + dur_ns
        self.kernels.append((s, self.free, corr, name))


def _rank(form: str, rank: int, steps: int, layers: int, strings: _Strings, t0: int, host_us: int = 0,
          user_range: str | None = None, readback: bool = True, step_range: str | None = None,
          loader: bool = True) -> dict:
    """One rank's steps from ``t0``: its threads' ranges and calls, its kernels and copies, and the steps' starts.
    ``host_us``: the host's own work in each Megatron layer's attention range before its launch (a host-bound layer);
    ``user_range``: the program's own NVTX range around its batch's loading (``nvtx_range_push("get_batch")``);
    ``readback``: each iteration reads its result back (``.item()`` / ``.cpu()``, a sync); without it the host never
    waits for the GPU."""
    pid = 4200 + rank
    shared = {"op_id": 0, "corr": 0}
    main = _Thread(_gid(pid, pid), shared, strings, form)
    back = _Thread(_gid(pid, pid + 1), shared, strings, form)  # pt_autograd_0: the engine's CUDA device thread
    gpu = _Gpu()
    us = 1000
    main.t = t0
    launch = 6 * us
    k = {n: strings(v) for n, v in (("f", GEMM), ("dg", GEMM_DGRAD), ("wg", GEMM_WGRAD), ("r", RELU),
                                     ("rb", RELU_BWD), ("l", LOSS), ("o", ADAM), ("n", NCCL_ALLREDUCE))}
    grad = form != "no_grad"
    lightning = form == "lightning"
    starts: list[int] = []

    def op(th: _Thread, name: str, seq: int | None, kernel: str | None, dur_us: float, inputs: int = 1) -> None:
        def body() -> None:
            if kernel is not None:
                gpu.kernel(th.t, th.call("cudaLaunchKernel_v7000", launch), k[kernel], int(dur_us * us))
        th.push(th.op_text(name, seq, inputs), body)

    def rf(th: _Thread, name: str, body) -> None:
        """A ``record_function`` (or Lightning action) under ``emit_nvtx``: its name, ``op_id``, no ``seq``."""
        th.push(th.op_text(name, None, 0), body)

    megatron = form.startswith("megatron")
    manual = form == "manual_update"

    def mrange(th: _Thread, name: str, body) -> None:
        """Megatron-core's own range (``--nvtx-ranges``): plain text, no ``op_id``."""
        th.push(name, body)

    def forward(seq0: int) -> None:
        seq = seq0
        if megatron:
            for _ in range(layers):
                def attn(seq=seq) -> None:
                    main.t += host_us * us  # the layer's own Python before its launch (the GPU drains meanwhile)
                    main.push(main.op_text("aten::linear", None, 3),
                              lambda: op(main, "aten::addmm", seq, "f", 110, 3))
                mrange(main, f"{MEGATRON_LAYER}._forward_attention.self_attention", attn)
                mrange(main, f"{MEGATRON_LAYER}._apply_self_attn_bda_step.self_attn_bda",
                       lambda seq=seq: op(main, "aten::relu", seq + 1, "r", 15))

                def mlp(seq=seq) -> None:
                    mrange(main, f"{MEGATRON_MLP}.linear_fc1",
                           lambda: main.push(main.op_text("aten::linear", None, 3),
                                             lambda: op(main, "aten::addmm", seq, "f", 110, 3)))
                    mrange(main, f"{MEGATRON_MLP}.activation", lambda: op(main, "aten::gelu", seq + 1, "r", 15))
                    mrange(main, f"{MEGATRON_MLP}.linear_fc2",
                           lambda: main.push(main.op_text("aten::linear", None, 3),
                                             lambda: op(main, "aten::addmm", seq, "f", 110, 3)))
                mrange(main, f"{MEGATRON_LAYER}._run_mlp.mlp", mlp)
                mrange(main, f"{MEGATRON_LAYER}._apply_mlp_bda_step.mlp_bda",
                       lambda seq=seq: op(main, "aten::relu", seq + 1, "r", 15))
                seq += 2
            op(main, "aten::cross_entropy_loss", seq, "l", 25, 2)
            return
        for i in range(layers):
            def layer(i=i, seq=seq) -> None:
                main.push(main.op_text("aten::linear", None, 3),
                          lambda: op(main, "aten::addmm", seq if grad else None, "f", 220, 3))
                op(main, "aten::relu", seq + 1 if grad else None, "r", 30)
            if lightning:
                rf(main, f"[pl][module]torch.nn.modules.linear.Linear: layers.{i}", layer)
            else:
                layer()
            seq += 2
        op(main, "aten::cross_entropy_loss", seq if grad else None, "l", 25, 2)

    def backward(seq0: int) -> None:
        """The autograd engine on its own thread, nodes in reverse; the main thread waits in ``backward()``."""
        back.t = main.t + 15 * us
        seq = seq0 + 2 * layers
        rf(back, "autograd::engine::evaluate_function: NllLossBackward0",
           lambda: op(back, "NllLossBackward0", seq, "l", 20))
        for _ in range(layers):
            seq -= 2
            rf(back, "autograd::engine::evaluate_function: ReluBackward0",
               lambda seq=seq: op(back, "ReluBackward0", seq + 1, "rb", 30))
            rf(back, "autograd::engine::evaluate_function: AddmmBackward0",
               lambda seq=seq: back.push(back.op_text("AddmmBackward0", seq, 3),
                                 lambda: (op(back, "aten::mm", None, "dg", 220, 2), op(back, "aten::mm", None, "wg", 220, 2))))
            rf(back, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
               lambda: rf(back, "torch::autograd::AccumulateGrad", lambda: None))
            if form == "ddp":  # the bucket's hook: the gradients' all-reduce, from the engine's thread
                rf(back, "nccl:all_reduce", lambda: rf(back, "record_param_comms",
                                                      lambda: gpu.kernel(back.t, back.call("cudaLaunchKernel_v7000", launch),
                                                                         k["n"], 180 * us)))
        main.t = back.t + 20 * us  # the engine's task done: ``backward()`` returns (no wait for the GPU)

    def optimizer() -> None:
        def step() -> None:
            if megatron:  # Megatron's optimizer reads its found-inf flag and grad norm (``.item()``) before the update
                item()
            for _ in range(4):
                op(main, "aten::add_" if manual else "aten::_fused_adam_", None, "o", 60, 2 if manual else 4)
        if manual:  # the loop's own update: ATen ops, no optimizer's range
            step()
            return
        rf(main, "Optimizer.step#FusedAdam.step" if megatron else "Optimizer.step#AdamW.step", step)

    def item() -> None:
        """``loss.item()`` (or ``.cpu()``): a 4-byte read-back whose call returns once the stream has drained."""
        def body() -> None:
            def dense() -> None:
                a = main.t
                c = main.call("cudaMemcpyAsync_v3020", launch)
                cs = max(a + 3 * us, gpu.free)
                gpu.free = cs + 2 * us
                gpu.copies.append((cs, gpu.free, c, 4, 2, 2, 0))
                main.calls[-1] = (a, gpu.free + 3 * us, c, main.calls[-1][3])
                main.t = gpu.free + 3 * us
                c = main.call("cudaStreamSynchronize_v3020", 2 * us)
            main.push(main.op_text("aten::_local_scalar_dense", None, 1), dense)
        main.push(main.op_text("aten::item", None, 1), body)

    seq = 0
    for step in range(steps):
        starts.append(main.t)

        def iteration(seq=seq) -> None:
            def batch() -> None:
                if not loader:  # the program reads its batch itself: 400 us of host work no event records
                    main.t += 400 * us
                    return
                rf(main, DATALOADER, lambda: setattr(main, "t", main.t + 400 * us))  # the batch: host work, no CUDA
            if user_range:
                main.push(user_range, batch)
            else:
                batch()

            def upload() -> None:
                def copy() -> None:
                    c = main.call("cudaMemcpyAsync_v3020", launch)
                    cs = max(main.t + 2 * us, gpu.free)
                    gpu.free = cs + 150 * us
                    gpu.copies.append((cs, gpu.free, c, 8 << 20, 1, 1, 2))
                main.push(main.op_text("aten::to", None, 1),
                          lambda: main.push(main.op_text("aten::_to_copy", None, 1),
                                            lambda: main.push(main.op_text("aten::copy_", None, 2), copy)))
            upload()
            if grad and not manual:
                rf(main, "Optimizer.zero_grad#AdamW.zero_grad", lambda: setattr(main, "t", main.t + 40 * us))

            def fwd() -> None:
                if form == "ddp":
                    rf(main, "DistributedDataParallel.forward", lambda: forward(seq))
                else:
                    forward(seq)
            if lightning:
                rf(main, "[pl][profile][Strategy]SingleDeviceStrategy.training_step", fwd)
                rf(main, "[pl][profile][Strategy]SingleDeviceStrategy.backward", lambda: backward(seq))
                rf(main, "[pl][profile][LightningModule]Model.optimizer_step", optimizer)
            else:
                fwd()
                if grad:
                    backward(seq)
                    optimizer()
            if not megatron and readback:
                item()
            main.t += 150 * us  # the loop's own Python before the next batch (logging, the loop's bookkeeping)
        if lightning:
            rf(main, "[pl][profile]run_training_batch", iteration)
        elif step_range:  # the program's own range around each iteration (``torch.cuda.nvtx.range_push``)
            main.push(step_range, iteration)
        else:
            iteration()
        seq += 2 * layers + 1
    return {"main": main, "back": back, "gpu": gpu, "starts": starts, "end": main.t, "pid": pid}


def write(path: str, form: str = "emit_nvtx", steps: int = 12, layers: int = 6, ranks: int = 1, host_us: int = 0,
          user_range: str | None = None, readback: bool = True, step_range: str | None = None,
          loader: bool = True) -> dict:
    """Write the export of ``form`` (one of :data:`FORMS`) to ``path``: ``steps`` iterations of a ``layers``-layer
    MLP, ``ranks`` processes (one GPU each; ``ddp`` forms default to two).  ``host_us``: host work in each Megatron
    layer's attention range before it launches; ``user_range``: the program's own range around each batch's loading;
    ``readback``: each iteration reads its result back (off: an inference loop that never syncs); ``step_range``: the
    program's own NVTX range around each iteration (``train_step``); ``loader``: the batch is the DataLoader's
    ``__next__`` (off: 400 us of the program's own loading that no event records).
    Return the truth: ``steps``, ``step_ms`` (the host's period: every iteration is alike), ``gpu_ms`` (the GPU's work
    an iteration), ``kind`` and ``ops`` (NVTX ranges a step)."""
    if form not in FORMS:
        raise ValueError(form)
    ranks = max(ranks, 2 if form == "ddp" else 1)
    strings = _Strings()
    con = sqlitefile.connect(path)
    con.executescript(f"{SCHEMA}{RUNTIME_DDL};{NVTX_DDL};{MEMCPY_DDL};{SYNC_DDL};{KERNEL_DDL};{GPU_DDL};")
    t0 = SESSION_START_NS + 5_000_000
    stop = t0
    truth: dict = {"form": form, "steps": steps, "kind": "inference" if form == "no_grad" else "training", "ranks": ranks}
    g = A100_SXM4_80GB
    for rank in range(ranks):
        r = _rank(form, rank, steps, layers, strings, t0 + rank * 40_000, host_us, user_range, readback, step_range,
                  loader)
        gpid = _gid(r["pid"])
        for th, name in ((r["main"], "pt_main_thread"), (r["back"], "pt_autograd_0")):
            con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,?,0,NULL)",
                            [(a, b, th.gtid, c, n) for a, b, c, n in th.calls])
            con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                            "VALUES (?,?,59,?,?,0)", [(a, b, text, th.gtid) for a, b, text in th.ranges])
            con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings(name), th.gtid))
        gpu = r["gpu"]
        con.executemany(_KERNEL_INSERT, [(a, b, rank, rank + 1, 7, c, gpid, n, n, 64, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0,
                                          j, None, None) for j, (a, b, c, n) in enumerate(gpu.kernels)])
        con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                        "correlationId, globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, dstDeviceId) "
                        "VALUES (?,?,?,?,7,?,?,?,?,?,?,?,?)",
                        [(a, b, rank, rank + 1, c, gpid, nb, kind, sk, dk, rank, rank) for a, b, c, nb, kind, sk, dk
                         in gpu.copies])
        con.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python')", (gpid, r["pid"]))
        con.execute("INSERT INTO TARGET_INFO_GPU VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (0, rank, g.name, g.bus, 1, g.l2_bytes, g.memory, g.bandwidth, g.clock_hz, g.sms, rank,
                     f"GPU-{rank:08d}", 0, g.chip, rank, g.nvml_id, *g.cc))
        s = r["starts"]
        truth["step_ms"] = (s[-1] - s[0]) / (len(s) - 1) / 1e6
        truth["ops"] = (len(r["main"].ranges) + len(r["back"].ranges)) // steps
        # the GPU's own work an iteration (its kernels and copies, one stream): a loop that never waits for the GPU
        # runs at the slower of this and the host's period
        truth["gpu_ms"] = sum(b - a for a, b, *_ in gpu.kernels + gpu.copies) / steps / 1e6
        stop = max(stop, r["end"], gpu.free)
    stop += 1_000_000
    finish_tables(con, strings, stop)
    con.commit()
    con.close()
    return truth
