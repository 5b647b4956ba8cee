"""A GPU program that names no ML framework: a CUDA C++, Fortran or Kokkos code profiled with Nsight Systems.

Nsight Systems profiles any CUDA program, not only training loops: an export of a CFD code or an MPI benchmark
shows kernels, copies, syncs and the user's NVTX ranges, but no framework's ops.  Its findings speak of what such a
program controls -- streams, copies, syncs, launches, CUDA graphs -- never of Keras callbacks or ``tf.function``.
The checks of a framework's own settings (mixed precision, op placement, eager execution, a compiler) do not apply:
a scientific code's precision is its algorithm's choice.  Nsight Systems runs on NVIDIA GPUs only, so the words are
CUDA's.
"""

from __future__ import annotations

import dataclasses
import re

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.memo import Memo
from tb_gpu_advisor.frameworks.base import Framework, action, names_batch
from tb_gpu_advisor.model.schema import Action

#: Why a framework check has nothing to say to such a program.
_NO_FRAMEWORK = "no ML framework in the capture: a GPU program's own code has no {} to check"

CAPTURE = (
    "# mark each iteration with an NVTX range and profile a steady window of a few dozen of them:\n"
    "#   nvtxRangePushA(\"iteration\"); ... ; nvtxRangePop();\n"
    "nsys profile --trace=cuda,nvtx,osrt --capture-range=cudaProfilerApi -o run ./app   # cudaProfilerStart/Stop\n"
    "nsys export --type sqlite run.nsys-rep"
)

_ITERATIONS = action("Profile a steady window of a few dozen iterations after start-up, each marked with an NVTX range "
                     "(the Advisor takes them as the steps).", CAPTURE, "shell")
_OVERLAP_COPIES = action(
    "Copy from pinned host memory (cudaMallocHost / cudaHostRegister) with cudaMemcpyAsync on a stream other than the "
    "kernels', so copies overlap computation; keep data that the next kernel needs on the GPU.")
_FEWER_SYNCS = action(
    "Take device-wide synchronizations (cudaDeviceSynchronize, cudaStreamSynchronize, a blocking cudaMemcpy of a "
    "result) out of the loop, or wait on events (cudaStreamWaitEvent) so the host keeps queueing work; to time "
    "kernels, record their events in the loop and read cudaEventElapsedTime once after it, not cudaEventSynchronize "
    "after each kernel.")
#: A loop of turns too small for their host cost that synchronizes in every iteration (``launch_bound:step_sync``):
#: each ``cudaDeviceSynchronize`` / ``cudaStreamSynchronize`` makes the host wait for the GPU and the GPU for the host's
#: next launch, so neither runs ahead; the loop's launches queue on a stream when the wait comes once, after it, and
#: events time the loop without a wait per turn.
_SYNC_AFTER_LOOP = action(
    "Synchronize once after the loop, not in every iteration: each cudaDeviceSynchronize or cudaStreamSynchronize "
    "inside it makes the host wait for the GPU and the GPU wait for the host's next launch. Let the launches queue on "
    "a stream and keep the results on the device, copying them back once after the loop (or every N iterations); to "
    "time the loop, record events around it and read cudaEventElapsedTime once.",
    "cudaEventRecord(start, stream);\n"
    "for (int i = 0; i < iters; ++i)\n"
    "    kernel<<<grid, block, 0, stream>>>(d_in, d_out);   // no cudaDeviceSynchronize() in the loop\n"
    "cudaEventRecord(stop, stream);\n"
    "cudaEventSynchronize(stop);                          // once, after the loop\n"
    "cudaEventElapsedTime(&ms, start, stop);", "cpp")
_GRAPHS = action(
    "Capture the iteration's launches as a CUDA graph once (cudaStreamBeginCapture ... cudaStreamEndCapture, "
    "cudaGraphInstantiate) and replay it with one cudaGraphLaunch per iteration; fuse very short kernels.")

#: The overlap fix less its pinning, where every upload is pinned and asynchronous already (``metrics.memcpy.applied``):
#: a stream of their own is what is left -- the copies' records say their memory and call, not their stream's being
#: the kernels' (h37-pinned32: a program whose batches are cudaHostAlloc'd and copied with cudaMemcpyAsync was told to
#: copy "from pinned host memory (cudaMallocHost / cudaHostRegister) with cudaMemcpyAsync"); its pageable copies
#: left, if any, are named by the ``:pageable`` fixes
_OVERLAP_REST = action(
    "Issue the copies on a stream other than the kernels' (a cudaStream_t of their own, the kernels waiting on an "
    "event recorded after them), so copies overlap computation; keep data that the next kernel needs on the GPU.")
FIX_REST = {"pinned_async_h2d": lambda a: _OVERLAP_REST if a.text == _OVERLAP_COPIES.text else None}

FIXES = {
    "step_gaps": (action("Find the host work between iterations (the NVTX ranges and OS runtime calls around the gap "
                         "show it) and overlap it with the GPU: queue the next iteration's kernels before the host's "
                         "bookkeeping, or move that work off the critical thread."), _FEWER_SYNCS),
    "host_sync": (_FEWER_SYNCS,),
    # the program's waits are polls (``job.waits.polls``): a loop of event or stream queries until the GPU is done
    "host_sync:poll": (action(
        "The loop polls cudaEventQuery / cudaStreamQuery until the GPU is done, queueing nothing meanwhile: wait "
        "once (cudaEventSynchronize, with cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) to free the CPU), or "
        "queue the next iteration's kernels and do host work that does not need the result before waiting, and "
        "wait less often."), _FEWER_SYNCS),
    # the gap holds no recorded host event: the program's own CPU code, which only the profiler's CPU sampling, the OS
    # runtime trace or the program's own NVTX ranges can show
    "step_gaps:unrecorded": (action(
        "Record what the host does between its GPU work: mark the CPU code with NVTX ranges (nvtxRangePushA / "
        "nvtxRangePop), and let Nsight Systems sample the CPU and trace the OS runtime; then read the ranges and "
        "samples that fill the gap -- or move that CPU work out of the profiled window, or onto the GPU.",
        "nsys profile -t cuda,nvtx,osrt --sample=process-tree --cpuctxsw=process-tree -o run ./app"),),
    # the launching thread was off the CPU in the gap: the program waits for its input (a camera, a file, a socket)
    "step_gaps:outside": (action(
        "Find what the host waits for between its GPU work -- the source that paces the loop (a camera's or sensor's "
        "frame rate, a file or socket reader, a timer, another thread's lock): the OS runtime trace names the call it "
        "waits in.  Where the GPU should work faster than the source delivers, read the next input on a thread of its "
        "own into a second (pinned) buffer while the GPU processes this one; where the source sets the pace, the "
        "GPU's idle is the program's budget per input, not a loss.",
        "nsys profile -t cuda,nvtx,osrt --cpuctxsw=process-tree -o run ./app"),),
    # the launching thread was off the CPU in its plain loads of managed memory the GPU had written (page faults)
    "unexplained_idle:managed_read": (action(
        "Read the flag (or count) the kernels write without a page fault: copy it with cudaMemcpyAsync into a pinned "
        "buffer (cudaMallocHost) and wait for that copy alone (cudaStreamSynchronize, or an event), or keep it in "
        "mapped pinned memory the kernels write directly (cudaHostAlloc with cudaHostAllocMapped, "
        "cudaHostGetDevicePointer), or cudaMemAdvise it cudaMemAdviseSetPreferredLocation to cudaCpuDeviceId -- a "
        "plain load of a __managed__ / cudaMallocManaged value the GPU last wrote stops the thread while the driver "
        "moves its page back (throttled when the page moves every turn), and the next kernel that touches it faults "
        "it back to the GPU.",
        "int *h_flag; cudaMallocHost(&h_flag, sizeof(int));   // once, outside the loop\n"
        "check<<<1, 1, 0, stream>>>(d_flag);\n"
        "cudaMemcpyAsync(h_flag, d_flag, sizeof(int), cudaMemcpyDeviceToHost, stream);\n"
        "cudaStreamSynchronize(stream);   // the flag's copy, no page fault\n"
        "if (*h_flag) { /* ... */ }", "text"),),
    "excessive_memcpy": (_OVERLAP_COPIES,),
    # uploads pinned and asynchronous already (``metrics.memcpy.applied``) that the GPU still waits for: on the kernels'
    # stream, a stream of their own (the overlap fix, told less its pinning: :data:`FIX_REST`) ...
    "excessive_memcpy:h2d_exposed": (_OVERLAP_COPIES,),
    # ... and where they already run on a stream of their own, issued too late, not on the wrong stream: each upload
    # ahead of the kernels that need it, double buffered, ordered by events (h37-copy62's Left 3: they were told the
    # generic "on a stream other than the kernels'", the stream they have)
    "excessive_memcpy:h2d_own_stream": (action(
        "The uploads already come from pinned memory, asynchronously, on a stream of their own, and the kernels still "
        "wait for each: issue each upload ahead of the kernels that need it -- two device buffers, the next "
        "iteration's upload into one while this iteration's kernels read the other; cudaEventRecord on the copies' "
        "stream after each upload and cudaStreamWaitEvent on the kernels' stream before its first use, and an event "
        "recorded after the kernels' last use before the copies' stream overwrites that buffer.",
        "cudaMemcpyAsync(d_in[0], h_in[0], bytes, cudaMemcpyHostToDevice, copy_stream);   // the first batch\n"
        "cudaEventRecord(uploaded[0], copy_stream);\n"
        "for (int i = 0; i < n; ++i) {\n"
        "  int b = i % 2, nb = (i + 1) % 2;\n"
        "  if (i + 1 < n) {   // the next batch's upload while this batch's kernels run\n"
        "    cudaStreamWaitEvent(copy_stream, consumed[nb], 0);   // its buffer's last reader is done\n"
        "    cudaMemcpyAsync(d_in[nb], h_in[i + 1], bytes, cudaMemcpyHostToDevice, copy_stream);\n"
        "    cudaEventRecord(uploaded[nb], copy_stream);\n"
        "  }\n"
        "  cudaStreamWaitEvent(stream, uploaded[b], 0);   // this batch's upload, not the next\n"
        "  kernel<<<grid, block, 0, stream>>>(d_in[b], d_out, n_elems);\n"
        "  cudaEventRecord(consumed[b], stream);\n"
        "}", "text"),),
    # ... and where they run on a stream of no kernel that the legacy default stream still holds in series with the
    # kernels (``MemcpyStat.legacy_stream_share``: the copies on CUDA's NULL stream beside kernels on streams made by
    # cudaStreamCreate, or the reverse): the side stream they need is one that does not synchronise with it
    # (h37-stream70; CUDA's stream semantics: cudaStreamNonBlocking, nvcc --default-stream per-thread)
    "excessive_memcpy:legacy_stream": (action(
        "The copies already run on a stream no kernel runs on, but the legacy default stream (stream 0, the NULL "
        "stream) holds them in series with the kernels: work on it waits for everything queued on the blocking "
        "streams (those made by cudaStreamCreate) and makes their later work wait for it.  Create the copies' and the "
        "kernels' streams with cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) and pass them to every "
        "cudaMemcpyAsync and launch (none on stream 0), or build with nvcc --default-stream per-thread; copy from "
        "pinned host memory (cudaMallocHost) and order each upload before its kernels with cudaEventRecord / "
        "cudaStreamWaitEvent.",
        "cudaStream_t copy_stream, stream;\n"
        "cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking);\n"
        "cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);\n"
        "cudaMemcpyAsync(d_in, h_in_pinned, bytes, cudaMemcpyHostToDevice, copy_stream);\n"
        "cudaEventRecord(uploaded, copy_stream);\n"
        "cudaStreamWaitEvent(stream, uploaded, 0);\n"
        "kernel<<<grid, block, 0, stream>>>(d_in, d_out, n);", "text"),),
    # the copies from or into pageable memory, named (the rule's ``{copies}``: direction, count, size a step): where
    # the program's other copies are pinned and asynchronous already, these are what the pinning fix is left with;
    # its opening "Copy from pinned host memory" is the overlap fix's lever, which is then not told again
    "excessive_memcpy:pageable": (action(
        "Copy from pinned host memory: pin the host buffers of {copies}, the copies from pageable memory "
        "(cudaMallocHost, or cudaHostRegister on an existing buffer), and copy with cudaMemcpyAsync on a stream other "
        "than the kernels' -- from pageable memory the driver stages each copy through a pinned buffer of its own, at "
        "a fraction of the bus bandwidth, while the host waits; keep data that the next kernel needs on the GPU."),),
    # -- the same copies already on a stream of their own (one that runs no kernel: ``MemcpyStat.own_stream_share``):
    # the stream they have is no fix to give them, and the kernels still wait for each copy -- issued ahead, double
    # buffered, they overlap the previous batch's kernels (h37-copystream61's Left 1, h37-copy62)
    "excessive_memcpy:pageable_own_stream": (action(
        "Copy from pinned host memory: pin the host buffers of {copies}, the copies from pageable memory "
        "(cudaMallocHost, or cudaHostRegister on an existing buffer), and make them cudaMemcpyAsync calls on the stream "
        "of their own they already run on -- from pageable memory the driver stages each copy through a pinned buffer "
        "of its own, at a fraction of the bus bandwidth, while the host waits; then issue each upload ahead of the "
        "kernels that need it (two buffers: the next batch's copy while this batch's kernels run, cudaEventRecord "
        "after it and cudaStreamWaitEvent on the kernels' stream before its first use)."),),
    "excessive_memcpy:pageable_d2h": (action(
        "Copy results back into pinned host memory ({copies}): allocate the destination once with cudaMallocHost, "
        "outside the loop, copy into it with cudaMemcpyAsync and wait on an event (or the stream) only before the "
        "host reads it -- a copy into pageable memory returns only once it has completed, at a fraction of the bus "
        "bandwidth."),),
    # the copies already come from pinned memory, asynchronously: what is left is the bytes themselves
    "excessive_memcpy:pinned": (action(
        "Move fewer bytes across the bus: keep the data resident on the GPU between kernels and iterations instead of "
        "copying it in and out each time, send compact types (and widen them on the GPU), and give each transfer "
        "more work; the H2D and D2H copies of different streams can run at once on the two copy engines."),),
    # the copies come from pinned memory already but are synchronous calls (cudaMemcpy of a cudaHostAlloc buffer):
    # each waits for the GPU and holds the next launch, so the copies run in series with the kernels
    "excessive_memcpy:pinned_sync": (action(
        "The host buffers are pinned already; the copies are synchronous calls, each run in series with the kernels. "
        "Issue them with cudaMemcpyAsync on streams other than the kernels' and split the data into chunks, so one "
        "chunk's upload (and the previous chunk's download) overlaps the kernel working on another; wait once, on an "
        "event or the stream, before the host reads the results.",
        "for (int c = 0; c < nchunks; ++c) {   // the work of one chunk needs only its own rows\n"
        "  cudaStream_t s = streams[c % nstreams];\n"
        "  cudaMemcpyAsync(d_in + c * n, h_in + c * n, n * sizeof(float), cudaMemcpyHostToDevice, s);\n"
        "  kernel<<<grid, block, 0, s>>>(d_in + c * n, d_out + c * n, n);\n"
        "  cudaMemcpyAsync(h_out + c * n, d_out + c * n, n * sizeof(float), cudaMemcpyDeviceToHost, s);\n"
        "}\n"
        "cudaDeviceSynchronize();   // once, after every chunk is queued", "text"),),
    # the copies are the driver's Unified Memory page migrations: the program made none, so pinning does not apply
    "excessive_memcpy:managed": (action(
        "Move managed memory before it is touched instead of page by page on demand: cudaMemPrefetchAsync(ptr, bytes, "
        "device, stream) before the kernels that read it, and to cudaCpuDeviceId before the host reads the results "
        "(cudaMemAdvise for data both sides read); or allocate it with cudaMalloc and copy it once.",
        "cudaMemPrefetchAsync(x, n * sizeof(float), device, stream);   // pages on the GPU before the launch\n"
        "add<<<blocks, threads, 0, stream>>>(n, x, y);\n"
        "cudaMemPrefetchAsync(y, n * sizeof(float), cudaCpuDeviceId, stream);   // and back before the host reads\n"
        "cudaStreamSynchronize(stream);", "text"),),
    # the GPU filling its own memory holds the copies' time: no transfer, so the fill itself is what to cut
    "excessive_memcpy:memset": (action(
        "Fill only the device memory a kernel reads before writing it, and only once: a cudaMemset runs at the GPU's "
        "memory bandwidth over every byte it is given, however few the program then uses -- size the buffer to the "
        "data or clear only its used part (a counter, the first rows), drop the fill where every element is written "
        "before it is read, and issue a fill that must stay with cudaMemsetAsync on a stream beside the kernels.",
        "cudaMemsetAsync(d_next, 0, sizeof(int), stream);   // the counter the kernel reads\n"
        "// not: cudaMemset(d_frontier, 0, MAX_ITEMS * sizeof(Item)) -- the whole buffer, of which the kernel writes "
        "what it uses", "text"),),
    "excessive_memcpy:d2d": (action(
        "Remove the copies on the device the computation does not need: have each kernel write its output in the "
        "layout and buffer the next kernel reads instead of staging it, and run a copy that must remain on a second "
        "stream, overlapped with compute."),),
    # the program marks fetching its batch (an NVTX range named for it, no kernel launched inside) and the GPU waits
    # through it: no framework's loader to tune -- the program's own fetch, overlapped with the step (h37-nvtxinput41)
    "input_bound": (action(
        "Fetch the next batch while the GPU computes the current one: read and prepare it on another thread (or "
        "process) into pinned host buffers, and copy it with cudaMemcpyAsync on a stream of its own, double-buffered, "
        "so each step waits on an event for its own batch's copy, not for the fetch.",
        "// two pinned buffers: the loader thread fills one while the step computes on the other\n"
        "cudaHostAlloc(&h_batch[0], bytes, cudaHostAllocDefault); cudaHostAlloc(&h_batch[1], bytes, cudaHostAllocDefault);\n"
        "cudaMemcpyAsync(d_batch[next], h_batch[next], bytes, cudaMemcpyHostToDevice, copy_stream);\n"
        "cudaEventRecord(copied[next], copy_stream);\n"
        "cudaStreamWaitEvent(compute_stream, copied[next], 0);   // the step waits for its batch's copy only", "text"),),
    "launch_bound": (_GRAPHS,),
    # a turn too small for its host cost that synchronizes in every iteration (``launch_bound.sync_fixes``): a CUDA
    # C++ benchmark's cudaDeviceSynchronize after each launch (h37-turn66 *Left* 3: PyTorch's words were the only ones)
    "launch_bound:step_sync": (_SYNC_AFTER_LOOP,),
    # most of the launch wait is the program's own code between its launches, which no call records (h37-launchwait):
    # a graph batches the calls, not that code -- see it first, then take it off the launch path
    "launch_bound:host_code": (action(
        "Find what the host computes between its launches: mark that code with NVTX ranges (nvtxRangePushA / "
        "nvtxRangePop) or let Nsight Systems sample the CPU, then take it off the launch path -- queue the next "
        "kernels before the host's bookkeeping, prepare their arguments ahead, or run that work on another thread or "
        "on the GPU.",
        "nsys profile -t cuda,nvtx,osrt --sample=process-tree -o run ./app"),),
    # the wait comes before graph replays: the host's preparation of each (h37-left60)
    "launch_bound:replay": (action(
        "The GPU waits while the host prepares each graph replay: update the graph's inputs (cudaGraphExecUpdate, "
        "or copies on the stream ahead of the launch) and do the host's own work for the next replay while the "
        "current one runs, so the next cudaGraphLaunch is queued before the GPU drains."),),
    "allocator_churn": (action("Allocate device buffers once, outside the loop, and reuse them (or use the stream-ordered "
                               "allocator: cudaMallocAsync / cudaFreeAsync with a memory pool): cudaFree synchronizes the "
                               "device."),),
    # most of the allocator's time is pinned host memory taken and given back (h37-hostalloc32)
    "allocator_churn:pinned": (action("Allocate the pinned host buffers once, before the loop or the first phase that "
                                      "needs them, and reuse them: page-locking memory (cudaHostAlloc / "
                                      "cudaMallocHost, cudaHostRegister) is slow, and so is giving it back "
                                      "(cudaFreeHost); size one buffer for the largest transfer.",
                                      "float* h_buf;   // pinned once, for the largest transfer\n"
                                      "cudaHostAlloc(&h_buf, max_bytes, cudaHostAllocDefault);\n"
                                      "for (...) { /* fill h_buf, cudaMemcpyAsync from it, kernels */ }\n"
                                      "cudaFreeHost(h_buf);   // once, at the end", "cpp"),),
    # the GEMMs in 16 bit, on every GPU with Tensor Cores; the TF32 switch only where the GPU has TF32 (the rule asks
    # ``devices.has_tf32``): a TITAN V's fp32 GEMMs (ECE408's MXNet forward, nvprof) were told to switch to TF32,
    # which Volta lacks (hunt70b)
    "tensor_core_unused": (action("Where the algorithm tolerates 16-bit inputs, run the GEMMs with fp16 inputs (bf16 "
                                  "from Ampere) and fp32 accumulation, which the Tensor Cores run at several times the "
                                  "fp32 rate: cublasGemmEx(..., CUDA_R_16F, ..., CUBLAS_COMPUTE_32F, "
                                  "CUBLAS_GEMM_DEFAULT), or cublasLtMatmul."),),
    "tensor_core_unused:tf32": (action("Where the algorithm tolerates a 10-bit mantissa, let cuBLAS run fp32 GEMMs on "
                                       "TF32 Tensor Cores (Ampere and newer): cublasSetMathMode(handle, "
                                       "CUBLAS_TF32_TENSOR_OP_MATH)."),),
    "comm_exposed": (action("Overlap communication with independent computation: post the transfers (NCCL, MPI with "
                            "CUDA-aware buffers) on their own stream while interior work runs, and wait on an event only "
                            "where the data is needed."),),
    "gpu_imbalance": (action("Give {gpu} less of the work, or the others more: split the domain by measured cost, not "
                             "by size."),),
    # one GPU's work starts each step last: its launching process or thread is late -- no framework's launch threads
    # or DDP buckets to tune (h37-randjobs: 4 processes of a native program, one GPU each, had a skew and no fix)
    "late_rank": (action("Find what {gpu}'s process does on the host before its collectives that the others' do not "
                         "(extra I/O, logging, slower dispatch on shared cores), and give each process its own CPU "
                         "cores near its GPU (numactl --cpunodebind, taskset)."),),
    "launch_skew": (action("Find what delays the last GPU's launches: give each process (or launching thread) its own "
                           "CPU cores near its GPU (numactl --cpunodebind, taskset), keep other work off them, and move "
                           "host work done before each step's first launch (input preparation, I/O) ahead of the "
                           "step."),),
    "capture_quality": (_ITERATIONS,),
    # the handoffs between streams that the legacy default stream orders (``metrics.types.Handoff.legacy``: kernels on
    # stream 0 beside kernels on a stream made by cudaStreamCreate, no event wait recorded): streams that do not
    # synchronise with it, the dependencies made explicit (h37-copy71; CUDA's stream semantics)
    "capture_quality:legacy_stream": (action(
        "Take the kernels off the legacy default stream (stream 0, the NULL stream): it waits for everything queued "
        "on the blocking streams (those made by cudaStreamCreate) and makes their later work wait for it, so the two "
        "streams take turns.  Create every stream with cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) and pass "
        "one to every launch and cudaMemcpyAsync (none on stream 0), or build with nvcc --default-stream per-thread; "
        "order only the work that depends on another stream's with cudaEventRecord / cudaStreamWaitEvent.",
        "cudaStream_t a, b;\n"
        "cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);\n"
        "cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);\n"
        "kernel_a<<<grid, block, 0, a>>>(...);\n"
        "cudaEventRecord(done_a, a);          // only where b's kernel needs a's result\n"
        "cudaStreamWaitEvent(b, done_a, 0);\n"
        "kernel_b<<<grid, block, 0, b>>>(...);", "text"),),
    "capture_quality:collectives_only": (action(
        "Read the trace this file was filtered from, not its collectives alone: each process's work before each "
        "collective, its steps and why one enters them late are there."),),
    # the steps are runs of one kernel at block sizes of their own (a benchmark of launch configurations)
    "capture_quality:sweep": (action(
        "Time each configuration on its own: run it a few times after one warm-up run, time the kernel alone between "
        "two events (cudaEventRecord before and after the launch, cudaEventElapsedTime) and compare the medians; then "
        "profile the one chosen in a loop."),),
    "capture_quality:no_gpu": (action("Check that the program ran its GPU work inside the profiled window (nsys "
                                      "--trace=cuda), and that the export holds the CUDA tables."),),
    # the program's GPU work ran (a sync waited on it, or launches were recorded) with no kernel record: the tracing,
    # not the window, is what to change
    "capture_quality:lost_records": (action(
        "Record the kernels: trace CUDA (nsys --trace=cuda) with a Nsight Systems release recent enough for the "
        "installed driver (its release notes list the drivers it supports), and let the GPU finish "
        "(cudaDeviceSynchronize, or cudaProfilerStop) before the program exits so its records are flushed.",
        "nsys --version; nvidia-smi   # the profiler's release against the driver's\n"
        "nsys profile --trace=cuda,nvtx -o run ./app && nsys export --type sqlite run.nsys-rep"),),
}

#: Kernels launched with fewer blocks than SMs (``small_grid``): the program chose the launch configuration itself,
#: and the fix is the GPU vendor's own (``devices.*.FIXES["more_blocks"]``, which the rule adds for every framework).
FIXES["small_grid"] = ()

#: Attention computed op by op (``unfused_attention``): the program's own kernels; the fix is a fused kernel of the
#: vendor's library, which the finding's words name.
FIXES["unfused_attention"] = (action(
    "Compute attention with one fused kernel of the vendor's library (cuDNN's fused attention graph), which keeps "
    "each tile of the score matrix on chip, instead of a matmul, a softmax and a matmul.", None),)

def is_step_call(name: str) -> bool:
    """A runtime or driver call of the program's that dispatches or waits for GPU work (any vendor's: a launch, a
    copy or fill, a graph launch, a sync): with no framework between, these calls are the program's dispatch."""
    return devices.is_work_call(name) or devices.is_sync_call(name)


def is_step_wait(name: str) -> bool:
    """A dispatch call that holds the host until the GPU is done (a sync, a synchronous copy or fill)."""
    return devices.is_sync_call(name) or devices.copy_call_sync(name) == 1


FRAMEWORK = Framework(
    id="native", name="a GPU program with no ML framework",
    labels={"op": "call", "ops": "calls", "ops_short": "calls", "gpu_user": "the program",
            "first_upload": "the program's first inputs uploaded once",
            "step_gaps:host_work": "host work between iterations",
            "compiled_step": "one CUDA graph",
            "dispatch_call": "runtime call",  # its launches, copies and syncs (``step_call_event``)
            # the host's time between its launches, outside every call: the program's own code (no framework
            # dispatches its ops), which a graph of its launches does not replay away (``launch_bound``)
            "launch_bound:host_code": "the program's own code between its launches"},
    not_applicable={rule: _NO_FRAMEWORK.format(what) for rule, what in (
        ("host_op_share", "op placement"), ("host_op_placement", "op placement"),
        ("eager_execution", "eager mode"), ("xla_not_used", "compiler setting"),
        ("mixed_precision_off", "precision setting (its precision is the algorithm's)"),
        ("loss_scaling_gaps", "loss scaling"), ("dtype_casts", "framework casts"),
        ("input_bound", "input pipeline"), ("input_wait_share", "input pipeline"))},
    # the program's own ranges named for fetching its batch (``get_batch``, ``load_batch``, llm.c's
    # ``dataloader_next_batch``) with no launch inside are its input pipeline: where the steps hold them, the input
    # checks read them as a framework's loader (h37-nvtxinput41); elsewhere a program with no framework has none
    input_range=names_batch,
    applies_with_own_input=frozenset(("input_bound", "input_wait_share")),
    fixes=FIXES,
    fix_rest=FIX_REST,
    capture_snippet=CAPTURE,
    capture_hint=("nsys profile --trace=cuda,nvtx -o run ./app && nsys export --type sqlite run.nsys-rep",),
    own_code_between_launches=True,
    step_call_event=is_step_call,
    step_call_wait=is_step_wait,
)

#: Fixes whose text and code name nothing of CUDA's but its runtime calls (``cudaMemsetAsync``): on another vendor's
#: GPUs they are the same text in its words (``devices.<vendor>.WORDS``: ``cudaMemset`` -> ``hipMemset``), so a
#: vendor's fill fix is one row of its words table, not a second copy of the fix (h37-fill30; h37-survey58's fill fix
#: was written twice, CUDA's here and HIP's in ``devices/amd.PROGRAM_FIXES``).
_RUNTIME_WORDED = ("excessive_memcpy:memset", "excessive_memcpy:pageable", "excessive_memcpy:pageable_own_stream",
                   "excessive_memcpy:h2d_own_stream",
                   "excessive_memcpy:pageable_d2h", "input_bound", "host_sync:poll")


def _in_words(actions: tuple[Action, ...], vendor) -> tuple[Action, ...]:  # noqa: ANN001 - a vendor module
    """``actions`` with their text and code in ``vendor``'s words (``devices.<vendor>.words``)."""
    return tuple(dataclasses.replace(a, text=vendor.words(a.text), snippet=a.snippet and vendor.words(a.snippet))
                 for a in actions)


def for_vendor(fw: Framework, vendor) -> Framework:  # noqa: ANN001 - a vendor module (``devices/amd.py``)
    """``fw`` (this module's, or a framework with no fixes of its own for a GPU program) talking to a program on
    ``vendor``'s GPUs: the vendor's own program fixes (``PROGRAM_FIXES``: its profiler, its range API, its runtime's
    calls) in place of the CUDA ones of the same keys, the fixes that name only runtime calls in its words
    (:data:`_RUNTIME_WORDED`), and its capture advice; ``fw`` itself where the vendor changes none (CUDA's are these).

    Why: the fixes here are Nsight's and CUDA's; a rocprof capture of a HIP program had its prose translated
    (``devices.words``: "NVTX range" -> "roctx range") but its code kept ``nvtxRangePushA`` and ``nsys profile``,
    which do not exist there, and a TF32 switch (``cublasSetMathMode``) its GPUs lack (h37-rocsteps).  A pure function
    of the two, made once per distinct pair (:data:`_SPOKEN`)."""
    if fw.id not in (FRAMEWORK.id, NOT_LOADED.id):
        return fw
    return _SPOKEN.of((fw, vendor), lambda: _for_vendor(fw, vendor))


#: :func:`for_vendor`'s answers by (framework, vendor) themselves (``Memo.of``): every rule of a non-NVIDIA native
#: program asks it again (``rules.base``, ``rules._job``); a Framework is frozen, so one answer is shared.
_SPOKEN: Memo = Memo(256)


def _for_vendor(fw: Framework, vendor) -> Framework:  # noqa: ANN001 - a vendor module
    """:func:`for_vendor` made anew."""
    own = getattr(vendor, "PROGRAM_FIXES", None) or {}
    worded = {k: _in_words(fw.fixes[k], vendor) for k in _RUNTIME_WORDED if k in fw.fixes}
    worded = {k: v for k, v in worded.items() if v != fw.fixes[k]}
    if not own and not worded:
        return fw
    return dataclasses.replace(fw, fixes={**fw.fixes, **worded, **own},
                               capture_snippet=getattr(vendor, "PROGRAM_CAPTURE", "") or fw.capture_snippet)


#: Why a framework check has nothing to say to a Python process whose window ended before it loaded a framework.
_NOT_LOADED = ("no framework loaded yet: the Python process ran no framework op before the window ended, so there "
               "is no {} to check -- record a later window")
#: The profiled process is a Python interpreter (``python``, ``python3``, ``python3.10``): a Python program reaches
#: its GPU through a framework it imports, so a window with no framework op is one that ended before the import.
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)*)?$")


def is_python_process(name: str) -> bool:
    """By the executable's name, wherever it lies (Nsight names a process ``python3`` or ``/usr/bin/python3``)."""
    return bool(_PYTHON.match(name.strip().rsplit("/", 1)[-1]))


def native_host(producer: dict) -> bool:
    """The capture names the processes that made its host events (Nsight's ``host_processes``) and none is a Python
    interpreter: a compiled program (a C++ binary linking libtorch), to which Python advice (``.item()``, a
    DataLoader) does not apply."""
    procs = [p for p in str(producer.get("host_processes", "")).split(",") if p]
    return bool(procs) and not any(is_python_process(p) for p in procs)


#: :data:`FRAMEWORK` for a Python process whose window holds no framework op and no GPU work: not "no ML framework"
#: (the issue #37 misreading of an 8 s window of a PyTorch script that had not imported torch yet).
NOT_LOADED = dataclasses.replace(
    FRAMEWORK, id="none_loaded", name="a Python program that had loaded no ML framework yet",
    not_applicable={rule: _NOT_LOADED.format(text.split("has no ", 1)[1].rsplit(" to check", 1)[0])
                    for rule, text in FRAMEWORK.not_applicable.items()})
