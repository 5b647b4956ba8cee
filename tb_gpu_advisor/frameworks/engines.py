"""Serving engines and generation loops: the programs on top of a framework whose captures are no training loop.

A worker of vLLM or SGLang runs one *engine step* at a time -- schedule the batch, prepare inputs, run the model
(often a CUDA graph), sample -- and Hugging Face ``generate`` runs one forward pass per token.  Each leaves names in
its traces that nothing else writes: Python spans from ``with_stack`` (``gpu_model_runner.py(…): execute_model``),
``record_function`` annotations, and kernels of its own (vLLM's paged-attention cache writes and custom all-reduce).
This module owns those names, the span that marks one engine step, and how its users profile and tune it; the job
stage (``job/``) asks it, and a rule asks the job for the engine's fixes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from tb_gpu_advisor.frameworks.base import action
from tb_gpu_advisor.model.schema import Action


@dataclass(frozen=True)
class Engine:
    """One serving engine (or generation loop), by the names its traces carry."""

    id: str
    name: str
    kind: str  # "serving" | "inference": what a capture of it is
    #: host span / annotation names (a regex searched in each distinct name)
    spans: re.Pattern
    #: kernel names only it launches (a regex), or None
    kernels: re.Pattern | None
    #: the spans that mark one engine step, most specific first (regexes on the span name): the step source
    step_span: tuple[re.Pattern, ...]
    #: how to profile it, as a capture-quality fix
    capture: tuple[Action, ...] = ()
    #: the capture formats whose window :attr:`capture` itself moves (``Framework.capture_formats``): an engine
    #: profiled from outside with Nsight; empty for one whose capture is its own profiler's (vLLM's routes write a
    #: Kineto trace: an Nsight window of it keeps Nsight's options)
    capture_formats: frozenset[str] = frozenset()
    #: rule id -> its fixes for this engine (they replace the framework's: ``Framework.for_job``)
    fixes: Mapping[str, tuple[Action, ...]] = field(default_factory=dict)
    #: the names it gives its own processes and threads (a regex on a host line's name): a capture that records
    #: only NVTX and CUDA calls -- an Nsight export under layer-wise NVTX, whose ranges name modules, not the
    #: engine -- still names its threads.  ``setproctitle`` sets the process title and, on Linux, the calling
    #: thread's name, which the kernel cuts to its first 15 bytes (``VLLM::EngineCore`` -> ``VLLM::EngineCor``)
    processes: re.Pattern | None = None
    #: the NVTX domains its own ranges are pushed in (``nvtxDomainCreate``), or none
    domains: frozenset[str] = frozenset()
    #: the code of its front-end process (a regex on Python span names): the process that takes requests, tokenises
    #: them and streams the outputs back, and hands the batch to the engine's own process, where the model runs.  A
    #: capture of it alone holds no GPU work by design: vLLM's profiler writes one trace per process, the front-end's
    #: (``async_llm``) beside the engine core's (``rank<N>``)
    frontend: re.Pattern | None = None
    #: its own kernels whose function names their work: (regex searched in the kernel's name, class), as
    #: ``Framework.named_kernel_kinds`` -- each pattern holds the engine's namespace or its own parameter types, so a
    #: kernel it matches ran the engine's code, whatever engine the capture was detected as
    kernel_kinds: tuple[tuple[str, str], ...] = ()


#: vLLM's own attention-side kernels (``namespace vllm``; truth from vllm csrc/pos_encoding_kernels.cu and
#: csrc/cache_kernels.cu): ``rotary_embedding_kernel`` rotates each pair of a token's query and key elements by its
#: position's angle (``x cos - y sin``, ``y cos + x sin``: a few products per element read, nothing summed across
#: elements); ``reshape_and_cache[_flash]_kernel`` (and ``concat_and_cache_mla_kernel``) copies each new token's key and
#: value into its slot of the paged KV cache, scaled to fp8 where the cache is fp8 -- element-wise traffic, the
#: memory's time.  They were "other" (h37-kernelfam3): 1.2-1.5% each of a vLLM engine step on a B200 and an MI300X,
#: half of a ROCm graph-capture window's kernel time.
_VLLM_KERNEL_KINDS = ((r"\bvllm::(?:rotary_embedding|reshape_and_cache(?:_flash)?|concat_and_cache_mla)_kernel\b",
                       "elementwise"),)
#: SGLang's own attention-side kernels (truth from sgl-project/sglang python/sglang/jit_kernel/csrc/elementwise/
#: kvcache.cuh and rope.cuh, in an unnamed namespace in older releases and ``namespace sglang`` since, each taking its
#: own parameter struct; sgl-kernel/csrc/elementwise/pos_enc.hip, vLLM's rotary kernel adapted, in no namespace, on
#: PyTorch's ``c10`` types): ``store_kvcache`` copies each token's key and value rows into its KV-cache slot;
#: ``fused_rope_kernel`` rotates query and key pairs by their positions' angles, and ``fused_rope_store_kernel`` writes
#: the rotated key and the value into the cache too; ``rotary_embedding_kernel`` is that rotation (ROCm) --
#: element-wise.  They were "other" (h37-kernelfam3): 1.8% of an SGLang decode step on a B300, 3.8% on an MI300X.
_SGL_KERNEL_KINDS = ((r"\bstore_kvcache<[^()]*>\((?:\(anonymous namespace\)::|sglang::)?StoreKVCacheParams\)",
                      "elementwise"),
                     (r"\bfused_rope(?:_store)?_kernel<[^()]*>\((?:const )?(?:\(anonymous namespace\)::|sglang::)?"
                      r"FusedRope(?:Store)?Params\b", "elementwise"),
                     (r"(?<![\w:])rotary_embedding_kernel<c10::", "elementwise"))


_VLLM_HOST = action(
    "The GPU waits while the engine's host side runs (scheduling, input preparation, sampling, detokenising): let "
    "vLLM overlap it with the GPU (async scheduling), keep CUDA graphs on (no --enforce-eager), and serve more "
    "sequences per step so each step's host cost is shared.",
    "vllm serve MODEL --async-scheduling --max-num-seqs 256   # and no --enforce-eager")
#: The host-bound fix where the host's time lies inside the model's own forward (``launch_bound:model_call``): the
#: Python of the model's call -- an eager forward op by op, or a compiled one's guard checks and the code between its
#: graph pieces -- which full-step CUDA graphs skip (vLLM's ``cudagraph_mode``: ``FULL_AND_PIECEWISE`` replays a
#: decode step as one graph), not the scheduler that async scheduling overlaps.
_VLLM_MODEL_HOST = action(
    "The GPU waits while the host runs the model's own forward in Python (an eager forward op by op, or a compiled "
    "one's guard checks and the code between its graph pieces), not the engine's scheduling: keep the model compiled "
    "with CUDA graphs (no --enforce-eager) and capture whole decode steps as one graph, so a step replays without "
    "running the forward's Python; serve more sequences per step so each step's host cost is shared.",
    "vllm serve MODEL --compilation-config '{\"cudagraph_mode\": \"FULL_AND_PIECEWISE\"}'   # and no --enforce-eager")
_VLLM_FULLER = action(
    "A serving step's kernels grow with the sequences it runs together: few running sequences leave most SMs idle. "
    "Send the server enough concurrent requests, and let it run more sequences per step.",
    "vllm serve MODEL --max-num-seqs 256")
_VLLM_CAPTURE = action(
    "Profile the running server under a steady load through its profiler routes, not its start-up or one request.",
    "VLLM_TORCH_PROFILER_DIR=LOGDIR/run1 vllm serve MODEL ...\n"
    "curl -X POST localhost:8000/start_profile   # during a steady load\n"
    "curl -X POST localhost:8000/stop_profile")
_VLLM_FRONTEND = action(
    "vLLM's profiler writes one trace per process, and this one is the front-end's (its API server or AsyncLLM: "
    "requests in, tokens out), which runs no GPU work by design. The model's engine steps are in the engine core's "
    "trace (one per worker, `rank<N>.<time>.pt.trace.json.gz`), written to the same profiler directory in the same "
    "session: analyse that one, or the whole directory.",
    "tb-gpu-advisor report VLLM_TORCH_PROFILER_DIR   # the directory: the engine core's rank0.*.pt.trace.json.gz too")
_VLLM_MEMORY = action(
    "Give the KV cache the memory the model leaves free, so more sequences run per step.",
    "vllm serve MODEL --gpu-memory-utilization 0.92 --max-num-seqs 256")
_VLLM_DTYPE = action(
    "Serve in bfloat16 (or a quantised fp8 checkpoint on Hopper and newer) instead of float32.",
    "vllm serve MODEL --dtype bfloat16      # or --quantization fp8")
_VLLM_COMM = action(
    "Tensor-parallel all-reduces sit on every layer's critical path: use the fewest GPUs the model fits on (or "
    "pipeline parallelism across nodes), and keep vLLM's custom all-reduce on (no --disable-custom-all-reduce).",
    "vllm serve MODEL --tensor-parallel-size 2   # fewer, fuller GPUs; --pipeline-parallel-size across nodes")

_SGL_HOST = action(
    "The GPU waits while the scheduler's host side runs: keep SGLang's overlap scheduler on (no "
    "--disable-overlap-schedule), keep CUDA graphs on (no --disable-cuda-graph), and run more requests per step.",
    "python -m sglang.launch_server --model-path MODEL --max-running-requests 256")
#: The host-bound fix where the host's time lies inside the model's own forward (``launch_bound:model_call``): CUDA
#: graphs for every batch size served (``--cuda-graph-max-bs``) replay the forward without its Python.
_SGL_MODEL_HOST = action(
    "The GPU waits while the host runs the model's own forward in Python, not the scheduler: keep CUDA graphs on (no "
    "--disable-cuda-graph) for every batch size it serves, so a step replays the forward without running its Python.",
    "python -m sglang.launch_server --model-path MODEL --cuda-graph-max-bs 256")
_SGL_FULLER = action(
    "A serving step's kernels grow with the requests it runs together: few running requests leave most SMs idle. "
    "Send the server enough concurrent requests, and let it run more at once.",
    "python -m sglang.launch_server --model-path MODEL --max-running-requests 256")
_SGL_CAPTURE = action(
    "Profile the running server under a steady load through its profiler routes.",
    "SGLANG_TORCH_PROFILER_DIR=LOGDIR/run1 python -m sglang.launch_server --model-path MODEL ...\n"
    "curl -X POST localhost:30000/start_profile   # during a steady load\n"
    "curl -X POST localhost:30000/stop_profile")
_SGL_FRONTEND = action(
    "This trace is SGLang's front-end process (its HTTP server and tokenizer manager: requests in, tokens out), which "
    "runs no GPU work by design. The model's steps run in the scheduler processes, one per tensor-parallel rank, which "
    "SGLang's profiler traces as `<time>-TP-<rank>*.trace.json.gz` in its profiler directory: analyse those.",
    "tb-gpu-advisor report SGLANG_TORCH_PROFILER_DIR   # the schedulers' <time>-TP-<rank>*.trace.json.gz")

#: Triton Inference Server is profiled from outside: its backends' per-batch ranges are NVTX (in a build with
#: ``--enable-nvtx``, triton-inference-server/server ``build.py``), which Nsight records; the server loads its models
#: and runs its first batches (each backend's warm-up, lazy module loading) before it serves, so a window from its
#: launch holds start-up.  Nsight's own ways to open the window later: ``--delay`` / ``--duration``, or a session
#: ``nsys launch`` holds open that ``nsys start`` / ``nsys stop`` record on demand.
_TRITON_CAPTURE = action(
    "Record the running server under a steady load, not its model loading or first batches: start the load "
    "(perf_analyzer at a fixed concurrency), then open Nsight's window on many batches. The backends' per-batch "
    "ranges (ProcessRequests <instance>) need a Triton build with NVTX on (build.py --enable-nvtx).",
    "nsys launch -t cuda,nvtx --session-new=triton tritonserver --model-repository=/models\n"
    "perf_analyzer -m MODEL --concurrency-range 8 --measurement-interval 30000 &   # a steady load\n"
    "nsys start --session=triton -o triton_run   # once the load is steady\n"
    "sleep 20; nsys stop --session=triton\n"
    "nsys export --type sqlite triton_run.nsys-rep")

_GENERATE_HOST = action(
    "generate() runs one forward pass per token and the host prepares each: use a static KV cache with a compiled "
    "forward, so each token is one CUDA-graph launch, and batch several prompts per call.",
    "model.generation_config.cache_implementation = 'static'\n"
    "model.forward = torch.compile(model.forward, mode='reduce-overhead')\n"
    "out = model.generate(**tokenizer(prompts, return_tensors='pt', padding=True).to('cuda'))")
_GENERATE_CAPTURE = action(
    "Profile a generate() call after a warm-up call, so compilation and the first allocations are not in the window.",
    "model.generate(**inputs, max_new_tokens=8)            # warm-up\n"
    "with torch.profiler.profile(on_trace_ready=torch.profiler.tensorboard_trace_handler('LOGDIR/run1')):\n"
    "    model.generate(**inputs, max_new_tokens=64)")

#: SGLang's scheduler under ``SGLANG_SCHEDULER_ENABLE_NVTX=1`` (sgl-project/sglang
#: ``python/sglang/srt/utils/nvtx_utils.py``: ``nvtx_range(debug_name)`` / ``@nvtx_annotated_method``, the ``nvtx``
#: package's ``annotate`` in the default domain): one range per phase of its event loop, named
#: ``scheduler.<method>`` after the scheduler's own methods (``scheduler.recv_requests``,
#: ``scheduler.get_next_batch_to_run``, ``scheduler.run_batch``, ``scheduler.process_batch_result``; the
#: disaggregated loops' ``scheduler.disagg_decode.<method>``) and ``tp_worker.batch_init_new``.  An Nsight export of
#: it holds these and CUDA calls only: no Python span, and SGLang's kernels only where the model uses them.  The
#: methods are SGLang's names (``get_next_batch_to_run`` is its scheduler's own), so the pair names the engine.
_SGL_SCHEDULER_NVTX = (r"^scheduler\.(?:recv_requests|process_input_requests|get_next_batch_to_run|run_batch|"
                       r"launch_batch_sample_if_needed|process_batch_result|prepare_mlp_sync_batch|disagg_\w+\.)|"
                       r"^tp_worker\.batch_init_new$")

ENGINES: tuple[Engine, ...] = (
    Engine("sglang", "SGLang", "serving",
           spans=re.compile(r"sglang[./:]|sglang_profiler::|forward_batch_generation|tp_worker\.py|"
                            + _SGL_SCHEDULER_NVTX),
           kernels=re.compile(r"sgl_kernel|sglang::"),
           step_span=(re.compile(r"^step\[(DECODE|EXTEND|PREFILL|MIXED|IDLE)"), re.compile(r"run_batch"),
                      re.compile(r"forward_batch_generation")),
           capture=(_SGL_CAPTURE,),
           # ``setproctitle``: ``sglang::scheduler_TP0``, ``sglang::detokenizer``, ``sglang::data_parallel_controller``
           processes=re.compile(r"^sglang::"),
           # the launcher's HTTP server and tokenizer manager (``sglang/srt/entrypoints/http_server.py``,
           # ``managers/tokenizer_manager.py``), which hand requests to the schedulers over ZMQ
           frontend=re.compile(r"sglang/srt/(?:entrypoints/|managers/tokenizer_manager\.py)"),
           fixes={"host_sync": (_SGL_HOST,), "step_gaps": (_SGL_HOST,), "launch_bound": (_SGL_HOST,),
                  "launch_bound:model_call": (_SGL_MODEL_HOST,),
                  "input_bound": (_SGL_HOST,), "capture_quality": (_SGL_CAPTURE,),
                  "capture_quality:frontend": (_SGL_FRONTEND,), "small_grid": (_SGL_FULLER,)},
           kernel_kinds=_SGL_KERNEL_KINDS),
    Engine("vllm", "vLLM", "serving",
           # a word of its own: verl's ``megatron_vllm.py`` (a trainer's bridge to vLLM) is not vLLM's code
           spans=re.compile(r"\bvllm[./:]|gpu_model_runner|EngineCore|execute_model"),
           kernels=re.compile(r"reshape_and_cache|paged_attention|cross_device_reduce|vllm::|_vllm_"),
           # ``execute_model`` where the profile records Python (with_stack); else the step's own range, named by
           # the batch it runs: ``execute_context_<n>(<tokens>)_generation_<m>(<tokens>)`` (a count first in some
           # builds: ``execute_32_context_0(...)``); else V1's model runner's scope of its step's model run, pushed once
           # an engine step between ``gpu_model_runner: preprocess`` and ``: postprocess`` (``VLLM_NVTX_SCOPES_FOR_
           # PROFILING=1``: ``vllm/v1/worker/gpu_model_runner.py``)
           step_span=(re.compile(r"execute_model"), re.compile(r"^execute_(?:\d+_)?context_\d+\("),
                      re.compile(r"^gpu_model_runner: forward$")),
           capture=(_VLLM_CAPTURE,),
           # ``set_process_title``: ``<VLLM_PROCESS_NAME_PREFIX, default VLLM>::<EngineCore|Worker_TP0|APIServer|
           # DPCoordinator...>`` (``vllm/utils/system_utils.py``)
           processes=re.compile(r"^VLLM::(?:EngineCor|Worker|APIServ|DPCoord)"),
           # V1's front-end: ``AsyncLLM`` and its client of the engine core (``v1/engine/async_llm.py``,
           # ``core_client.py``) under the OpenAI server (``entrypoints/``); the engine core runs in its own process
           frontend=re.compile(r"vllm/v1/engine/(?:async_llm|core_client)\.py|vllm/entrypoints/"),
           fixes={"host_sync": (_VLLM_HOST,), "step_gaps": (_VLLM_HOST,), "launch_bound": (_VLLM_HOST,),
                  "launch_bound:model_call": (_VLLM_MODEL_HOST,),
                  "input_bound": (_VLLM_HOST,), "batch_size_headroom": (_VLLM_MEMORY,),
                  "mixed_precision_off": (_VLLM_DTYPE,), "tensor_core_unused": (_VLLM_DTYPE,),
                  "comm_exposed": (_VLLM_COMM,), "capture_quality": (_VLLM_CAPTURE,),
                  "capture_quality:frontend": (_VLLM_FRONTEND,), "small_grid": (_VLLM_FULLER,)},
           kernel_kinds=_VLLM_KERNEL_KINDS),
    Engine("tgi", "Text Generation Inference", "serving", spans=re.compile(r"text_generation_server"), kernels=None,
           step_span=(re.compile(r"generate_token"),)),
    Engine("trtllm", "TensorRT-LLM", "serving", spans=re.compile(r"tensorrt_llm"),
           kernels=re.compile(r"tensorrt_llm::|trtllm"), step_span=(re.compile(r"_forward_step|forward_step"),),
           # ``tensorrt_llm._utils.nvtx_range`` (its executor's ``_forward_step``, ``_executor_loop``...) annotates
           # in a domain of its own
           domains=frozenset({"TensorRT-LLM"})),
    # Triton Inference Server's backends push a range per batch they execute, named by their model instance
    # (triton-inference-server/pytorch_backend ``src/libtorch.cc``: ``NVTX_RANGE(nvtx_, "ProcessRequests " + Name())``
    # around ``"Execute " + Name()`` and ``"ReadOutputTensors " + Name()``; the TensorRT, ONNX Runtime and Python
    # backends' ``ProcessRequests``; the Python backend's ``ModelInstanceExecute``) under ``TRITON_ENABLE_NVTX``
    Engine("triton_server", "Triton Inference Server", "serving",
           spans=re.compile(r"^(?:ProcessRequests|ModelInstanceExecute|ReadOutputTensors) \S"), kernels=None,
           step_span=(re.compile(r"^ProcessRequests "), re.compile(r"^ModelInstanceExecute ")),
           capture=(_TRITON_CAPTURE,), capture_formats=frozenset({"nsys"}), fixes={"capture_quality": (_TRITON_CAPTURE,)},
           processes=re.compile(r"^tritonserver")),
    Engine("hf_generate", "Hugging Face generate", "inference",
           spans=re.compile(r"generation/utils\.py\(\d+\): (generate|_sample|_greedy_search|_beam_search)"),
           # its step is one token's forward pass -- a model call -- which the generic span search finds; the
           # whole _sample loop is one span holding all of them
           kernels=None, step_span=(),
           capture=(_GENERATE_CAPTURE,),
           fixes={"launch_bound": (_GENERATE_HOST,), "step_gaps": (_GENERATE_HOST,), "host_sync": (_GENERATE_HOST,),
                  "capture_quality": (_GENERATE_CAPTURE,)}),
)


def find(host_names: list[str], kernel_names: list[str], lines: Iterable[str] = (),
         domains: Iterable[str] = ()) -> tuple[Engine, str, str] | None:
    """The engine whose names a capture carries, with the name that showed it and where it was: ``""`` a span or a
    kernel, ``"thread"`` the name of one of its processes' threads (``lines``: the host lines' names), ``"domain"``
    the NVTX domain of its ranges (``domains``); None for none."""
    lines, domains = list(lines), set(domains)
    for e in ENGINES:
        hit = next((n for n in host_names if e.spans.search(n)), None)
        if hit is None and e.kernels is not None:
            hit = next((n for n in kernel_names if e.kernels.search(n)), None)
        if hit is not None:
            return e, hit, ""
        hit = next((n for n in lines if e.processes is not None and e.processes.search(n)), None)
        if hit is not None:
            return e, hit, "thread"
        if e.domains & domains:
            return e, min(e.domains & domains), "domain"
    return None


def names_engine(name: str) -> bool:
    """Whether a span or range name is one a serving engine writes (its ``Engine.spans``), as :func:`find` reads a
    host name.  Module level, so ``HostEvents.per_name`` remembers it: a reading that asks of every range of a trace
    several times reads each name once (h37-readbacks2)."""
    return any(e.spans.search(name) for e in ENGINES)


def find_frontend(span_names: Iterable[str]) -> tuple[Engine, str] | None:
    """The serving engine whose front-end process's code the Python spans ``span_names`` run (``Engine.frontend``),
    with the span that showed it; None for none.  Asked only of a capture that holds no GPU work: the engine's own
    process runs the same client code around its model runner."""
    names = list(span_names)
    for e in ENGINES:
        hit = next((n for n in names if e.frontend is not None and e.frontend.search(n)), None)
        if hit is not None:
            return e, hit
    return None


#: A stack frame as a snapshot records it (``file.py:123 function``): read as the Python span ``with_stack`` writes
#: for it (``file.py(123): function``), which the engines' span patterns match.
_FRAME = re.compile(r"^(.*\.py):(\d+) (.*)$")


def frame_engine(frame: str) -> Engine | None:
    """The engine whose code a stack frame is in (a vLLM worker's ``cache_engine.py:83 _allocate_kv_cache``), by the
    engines' span patterns; None for any other frame."""
    m = _FRAME.match(frame.replace("\\", "/"))
    if m is None:
        return None
    span = f"{m.group(1)}({m.group(2)}): {m.group(3)}"
    return next((e for e in ENGINES if e.spans.search(span)), None)


def by_id(engine_id: str | None) -> Engine | None:
    return next((e for e in ENGINES if e.id == engine_id), None)
