"""Synthetic PyTorch profiler (Kineto) traces whose problem is known by construction (issue #10).

Why: one H100 gives the real traces of ``../shared/profiles/real-h100-torch``, and they cannot show what needs
several GPUs -- DDP ranks with NCCL AllReduce every step, a straggler rank, ranks launching late -- nor traces
of a gigabyte.  This module simulates a training loop per rank and writes what ``torch.profiler`` writes for
it: the same top-level keys, categories, argument names and kernel names as the real traces
(``tests/synthetic/test_torchtrace.py`` holds it to them), ``<run>/<host>_<pid>.<time_ns>.pt.trace.json`` per rank, and
a ``TRUTH.json`` in the real sets' form.

The simulation is small and explicit: each rank has a host clock and a clock per CUDA stream.  Launching a
kernel costs the host ``launch_us`` inside its ATen op; the kernel starts when its stream is free and the
launch has reached the GPU.  An NCCL AllReduce ends, on every rank, when the last rank's has started plus the
transfer time -- so a slow or late rank makes the others wait inside their AllReduce, as NCCL does.

    python -m synthetic.torchtrace OUTDIR [--runs a,b] [--steps N] [--gzip]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import statistics
from functools import partial
from itertools import pairwise
from dataclasses import dataclass, field
from typing import Any, Callable

from synthetic.memsnapshot import GiB, MiB, Allocator

#: Kernel names as PyTorch 2.11 / CUDA 13 on H100 write them (from the real traces).
GEMM_FWD = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"
GEMM_BWD = ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NTT")
RELU_BF16 = ("void at::native::vectorized_elementwise_kernel<8, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
             "c10::BFloat16, at::native::(anonymous namespace)::threshold_kernel_impl<c10::BFloat16>(at::TensorIteratorBase&, "
             "c10::BFloat16, c10::BFloat16)::{lambda(c10::BFloat16, c10::BFloat16)#1}>, std::array<char*, 3ul> >(int, "
             "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::(anonymous namespace)::"
             "threshold_kernel_impl<c10::BFloat16>(at::TensorIteratorBase&, c10::BFloat16, c10::BFloat16)::{lambda(c10::BFloat16, "
             "c10::BFloat16)#1}>, std::array<char*, 3ul>)")
SUM_BF16 = ("void at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, "
            "at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
            "unsigned int, c10::BFloat16, 4, 8> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, "
            "at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
            "unsigned int, c10::BFloat16, 4, 8>)")
SGD_BF16 = ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, "
            "at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<c10::BFloat16, 2, 2, 0>, std::plus<float>, float>"
            "(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor"
            "<c10::BFloat16, 2, 2, 0>, std::plus<float>, float)")
TANH_F32 = ("void at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::"
            "operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, "
            "at::native::tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
            "const::{lambda(float)#1}, std::array<char*, 2ul>)")
#: NCCL >= 2.19 names its kernels ``ncclDevKernel_<op>_<redop>_<type>_<algo>_<proto>``.
NCCL_ALLREDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
NCCL_ALLGATHER = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
NCCL_REDUCESCATTER = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
DATALOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
H100 = {"name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85017493504, "computeMajor": 9, "computeMinor": 0,
        "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
        "sharedMemPerBlock": 49152, "numSms": 132, "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448,
        "sharedMemPerMultiprocessor": 233472}
H100_BYTES = H100["totalGlobalMem"]
#: An MI300X as Kineto on ROCm records it (``deviceProperties`` of the wild ``ddp_mi300x_actckpt`` trace): 304 CUs.
MI300X = {"name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992, "computeMajor": 9, "computeMinor": 4,
          "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 64,
          "sharedMemPerBlock": 65536, "numSms": 304, "maxSharedMemoryPerMultiProcessor": 65536}
BASE_NS = 1_790_857_026_000_000_000
T0_US = 4_523_358_283_992.405
#: The profiler's own span (``PyTorch Profiler (0)``, where Perfetto's timeline starts) opens this long before the
#: first op, as in the real H100 traces (0.11-0.33 ms; 0.05-0.25 ms in the wild V100 ones): windows count from the span.
TRACE_LEAD_US = 150.0
COMPUTE_STREAM, NCCL_STREAM = 7, 20
#: a stream of the program's own for its copies (``torch.cuda.Stream()``: a prefetcher's), running no kernel
COPY_STREAM = 24


@dataclass
class Rank:
    """One process's trace under construction: a host clock, a clock per stream, ids as Kineto counts them."""

    rank: int
    pid: int
    device: int  # the local rank: GPU index on its node
    node: int = 0
    host_us: float = T0_US + TRACE_LEAD_US
    streams: dict[int, float] = field(default_factory=dict)
    host: list[dict] = field(default_factory=list)
    gpu: list[dict] = field(default_factory=list)
    flows: list[dict] = field(default_factory=list)
    corr: int = 1000
    ext: int = 1
    step_kernels: list[tuple[float, float]] = field(default_factory=list)
    #: the GPU's caching allocator where the scenario profiles memory (``profile_memory=True``), else None
    mem: "MemSim | None" = None

    def malloc(self, nbytes: int, at: float) -> int:
        """An allocation of ``nbytes`` at host time ``at`` (inside the op that asks): a ``[memory]`` event."""
        addr = self.mem.alloc.malloc(nbytes)
        self.mem.event(self, addr, self.mem.alloc.size_of(addr), at)
        return addr

    def mfree(self, addr: int, at: float) -> None:
        size = self.mem.alloc.size_of(addr)
        self.mem.alloc.free(addr)
        self.mem.event(self, addr, -size, at)

    def cpu(self, name: str, dur: float, cat: str = "cpu_op", advance: bool = True) -> dict:
        """A host event starting now; the host clock moves past it when ``advance``."""
        self.ext += 1
        args = ({"Python parent id": 1, "Python id": self.ext, "Ev Idx": len(self.host)} if cat == "python_function"
                else {"External id": self.ext, "Record function id": 0, "Ev Idx": len(self.host)})
        e = {"ph": "X", "cat": cat, "name": name, "pid": self.pid, "tid": self.pid, "ts": round(self.host_us, 3),
             "dur": round(dur, 3), "args": args}
        self.host.append(e)
        if advance:
            self.host_us += dur
        return e

    def kernel(self, op: str | None, name: str, us: float, launch_us: float = 7.0, stream: int = COMPUTE_STREAM,
               not_before: float = 0.0, args: dict[str, Any] | None = None,
               grid: tuple[int, int, int] = (16384, 1, 1), block: tuple[int, int, int] = (128, 1, 1),
               launch_call: str = "cudaLaunchKernel") -> tuple[float, float]:
        """``op`` launches ``name`` (``us`` long on the GPU); returns the kernel's (start, end).  ``args``: what
        ``record_shapes`` adds to the op (``Input Dims``, ``Input type``...); ``grid``/``block``: its launch
        configuration, as the tracer records it (``launch_call`` ``hipExtModuleLaunchKernel``: ``grid`` in
        work-items, as ROCm's tracers copy that call's global work size)."""
        if op is None:  # launched by the enclosing op's own code, no child op (autocast's casts inside aten::linear)
            op_ev = {"args": {"External id": self.ext}}
        else:
            op_ev = self.cpu(op, launch_us + 6.0, advance=False)
            op_ev["args"].update(args or {})
        self.corr += 1
        launch_at = self.host_us + 3.0
        self.host.append({"ph": "X", "cat": "cuda_runtime", "name": launch_call, "pid": self.pid, "tid": self.pid,
                          "ts": round(launch_at, 3), "dur": round(launch_us, 3),
                          "args": {"External id": op_ev["args"]["External id"], "cbid": 211, "correlation": self.corr}})
        start = max(self.streams.get(stream, 0.0), launch_at + launch_us * 0.7, not_before)
        self.streams[stream] = start + us
        self.gpu.append({"ph": "X", "cat": "kernel", "name": name, "pid": self.device, "tid": stream,
                         "ts": round(start, 3), "dur": round(us, 3),
                         "args": {"External id": op_ev["args"]["External id"], "queued": 0, "device": self.device,
                                  "context": 1, "stream": stream, "correlation": self.corr, "registers per thread": 32,
                                  "shared memory": 0, "blocks per SM": 124.121216, "warps per SM": 496.484863,
                                  "grid": list(grid), "block": list(block), "est. achieved occupancy %": 100}})
        self._flow(launch_at, start, stream)
        self.host_us += launch_us + 6.0
        self.step_kernels.append((start, start + us))
        return start, start + us

    def _flow(self, launch_at: float, start: float, stream: int) -> None:
        """The ``ac2g`` arrow from the launching call to the GPU work of the current correlation id."""
        self.flows += [{"ph": "s", "id": self.corr, "pid": self.pid, "tid": self.pid, "ts": round(launch_at, 3),
                        "cat": "ac2g", "name": "ac2g"},
                       {"ph": "f", "id": self.corr, "pid": self.device, "tid": stream, "ts": round(start, 3),
                        "cat": "ac2g", "name": "ac2g", "bp": "e"}]

    def graph(self, kernels: list[tuple[str, float]], launch_us: float = 20.0,
              region: str | None = "Torch-Compiled Region: 0/0") -> None:
        """A CUDA graph replay (``torch.compile(mode="reduce-overhead")``): one ``cudaGraphLaunch`` inside the
        compiled region; every kernel of the graph carries that launch's correlation id and runs back to back.
        ``region`` None: the program's own ``torch.cuda.CUDAGraph.replay()``, inside no op (PyTorch's whole-network
        capture), its launch and kernels with no External id, as Kineto records a call outside every op."""
        ext = self.cpu(region, launch_us + 30.0, advance=False)["args"]["External id"] if region else None
        self.corr += 1
        launch_at = self.host_us + 10.0
        self.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": self.pid, "tid": self.pid,
                          "ts": round(launch_at, 3), "dur": round(launch_us, 3),
                          "args": {**({"External id": ext} if ext is not None else {}), "cbid": 311,
                                   "correlation": self.corr}})
        t = max(self.streams.get(COMPUTE_STREAM, 0.0), launch_at + launch_us * 0.7)
        first = t
        for name, us in kernels:
            self.gpu.append({"ph": "X", "cat": "kernel", "name": name, "pid": self.device, "tid": COMPUTE_STREAM,
                             "ts": round(t, 3), "dur": round(us, 3),
                             "args": {**({"External id": ext} if ext is not None else {}), "queued": 0,
                                      "device": self.device, "context": 1, "stream": COMPUTE_STREAM,
                                      "correlation": self.corr, "registers per thread": 32, "shared memory": 0,
                                      "blocks per SM": 0.5, "warps per SM": 2.0, "grid": [64, 1, 1],
                                      "block": [128, 1, 1], "est. achieved occupancy %": 3}})
            self.step_kernels.append((t, t + us))
            t += us + 0.8
        self.streams[COMPUTE_STREAM] = t
        self._flow(launch_at, first, COMPUTE_STREAM)
        self.host_us += launch_us + 30.0

    def record_graph(self, kernels: list[tuple[str, float]], python_us: float = 20_000.0,
                     capture_python_us: float = 2_000.0, instantiate_us: float = 1_000.0,
                     region: str = "Torch-Compiled Region: 0/0") -> None:
        """A call of ``torch.compile(mode="reduce-overhead")`` that records its CUDA graph (CUDAGraph Trees), as
        pytorch/ao's compiled ViT records it (``wild/compiled_vit_recapture_a100``): inside the compiled region, the
        graph's kernels run eagerly once (their launches' kernels recorded), ``python_us`` of the tree's own Python,
        then ``cudaStreamBeginCapture`` .. ``cudaStreamEndCapture`` around the same launches (recorded into the graph:
        no kernel record, ``capture_python_us`` of Python among them), ``cudaGraphInstantiateWithFlags``
        (``instantiate_us``) and the new graph's first replay (:meth:`graph`)."""
        outer = self.cpu(region, 0.0, advance=False)
        for name, us in kernels:
            self.kernel("aten::mm", name, us)
        self.host_us += python_us
        self._runtime("cudaStreamBeginCapture", 8.0)
        per = capture_python_us / max(len(kernels), 1)
        for _ in kernels:
            self.cpu("aten::mm", 10.0, advance=False)
            self._runtime("cudaLaunchKernel", 4.0)
            self.host_us += per
        self._runtime("cudaStreamEndCapture", 15.0)
        self._runtime("cudaGraphInstantiateWithFlags", instantiate_us)
        self.graph(kernels, region=None)
        outer["dur"] = round(self.host_us + 2.0 - outer["ts"], 3)
        self.host_us += 4.0

    def _runtime(self, call: str, us: float) -> None:
        """A runtime call of ``us`` with no GPU work of its own, now; the host clock moves past it."""
        self.corr += 1
        self.host.append({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": self.pid, "tid": self.pid,
                          "ts": round(self.host_us, 3), "dur": round(us, 3),
                          "args": {"External id": self.ext, "cbid": 0, "correlation": self.corr}})
        self.host_us += us + 1.0

    def copy_h2d(self, mb: float, us: float, pageable: bool = False, non_blocking: bool | None = None,
                 via: str | None = None, stream: int = COMPUTE_STREAM) -> None:
        """A pinned host-to-device copy of ``mb`` MB taking ``us`` on the GPU (``cudaMemcpyAsync``); ``pageable``: a
        copy of a pageable tensor, as ``x.to('cuda')`` makes one -- the copy waits for its stream in
        ``cudaStreamSynchronize`` inside the same ``aten::copy_``, so the host is blocked until the copy is done.
        ``non_blocking``: the op's inputs recorded (``record_shapes``), its ``non_blocking`` flag this; a pageable
        copy asked ``non_blocking=True`` makes no stream sync, but the driver stages it from pageable memory inside
        ``cudaMemcpyAsync``, which returns only once the copy is done -- the host is held all the same.
        ``via``: the op the program called around ``aten::_to_copy`` > ``aten::copy_`` (``x.to('cuda')`` and
        ``x.cuda()`` are recorded as ``aten::to``: aten/src/ATen/native/TensorConversions.cpp's ``to`` calls
        ``_to_copy``, which ``copy_``s into the new tensor); None: a bare ``aten::copy_`` (``dst.copy_(src)``).
        ``stream``: the stream the copy runs on (``with torch.cuda.stream(side):``), the compute stream's by default."""
        if via is not None:
            outer = (self.cpu(via, 0.0, advance=False), self.cpu("aten::_to_copy", 0.0, advance=False))
            self.copy_h2d(mb, us, pageable, non_blocking, stream=stream)
            for e, tail in zip(outer, (2.0, 1.0)):
                e["dur"] = round(self.host_us + tail - e["ts"], 3)
            self.host_us += 2.0
            return
        op = self.cpu("aten::copy_", 0.0 if pageable else 20.0, advance=False)
        if non_blocking is not None:
            dims = [1 << 18, int(mb * 4)]  # float32 elements, as Kineto writes a tensor's dims
            op["args"].update({"Input Dims": [dims, dims, []], "Input type": ["float", "float", "Scalar"],
                               "Concrete Inputs": ["", "", str(non_blocking)]})
        launch_at, start = self._h2d_copy(op, mb, us, "Pageable" if pageable else "Pinned", stream)
        if not pageable:
            self.host_us += 20.0
            self.step_kernels.append((start, start + us))
            return
        if non_blocking:
            call = self.host[-1]
            call["dur"] = round(start + us + 2.0 - launch_at, 3)
            op["dur"] = round(launch_at + call["dur"] + 4.0 - self.host_us, 3)
            self.host_us += op["dur"]
            self.step_kernels.append((start, start + us))
            return
        op["dur"] = round(self._stream_wait(op, launch_at, start + us) + 4.0 - self.host_us, 3)
        self.host_us += op["dur"]
        self.step_kernels.append((start, start + us))

    def _stream_wait(self, op: dict, launch_at: float, done: float) -> float:
        """The ``cudaStreamSynchronize`` a blocking copy of ``op`` (launched at ``launch_at``, done on the GPU at
        ``done``) makes inside its op, waiting for its stream; the wait's end.  Why one: a pageable upload and a read
        to the host wait alike (h37-review44's duplicates)."""
        sync_at = launch_at + 14.0
        wait = max(done - sync_at, 0.0) + 3.0
        self.corr += 1
        self.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": self.pid,
                          "tid": self.pid, "ts": round(sync_at, 3), "dur": round(wait, 3),
                          "args": {"External id": op["args"]["External id"], "cbid": 131, "correlation": self.corr}})
        return sync_at + wait

    def _h2d_copy(self, op: dict, mb: float, us: float, memory: str,
                  stream: int = COMPUTE_STREAM) -> tuple[float, float]:
        """The ``cudaMemcpyAsync`` of ``op`` and its copy on ``stream`` from ``memory`` ("Pinned", "Pageable") host
        memory; (launch time, copy start)."""
        return self.memcpy(op, f"Memcpy HtoD ({memory} -> Device)", int(mb * (1 << 20)), us, stream=stream)

    def memcpy(self, op: dict, name: str, nbytes: int, us: float, cat: str = "gpu_memcpy",
               call: tuple[str, int] = ("cudaMemcpyAsync", 41), stream: int = COMPUTE_STREAM) -> tuple[float, float]:
        """The ``cudaMemcpyAsync`` of ``op`` and its copy ``name`` (Kineto's: ``Memcpy DtoD (Device -> Device)``) of
        ``nbytes`` on ``stream`` (the compute stream's by default), ``us`` long; (launch time, copy start).
        ``cat``/``call``: a memset's (:meth:`memset`)."""
        self.corr += 1
        launch_at = self.host_us + 3.0
        self.host.append({"ph": "X", "cat": "cuda_runtime", "name": call[0], "pid": self.pid, "tid": self.pid,
                          "ts": round(launch_at, 3), "dur": 12.0,
                          "args": {"External id": op["args"]["External id"], "cbid": call[1], "correlation": self.corr}})
        start = max(self.streams.get(stream, 0.0), launch_at + 8.0)
        self.streams[stream] = start + us
        self.gpu.append({"ph": "X", "cat": cat, "name": name,
                         "pid": self.device, "tid": stream, "ts": round(start, 3), "dur": round(us, 3),
                         "args": {"External id": op["args"]["External id"], "device": self.device, "context": 1,
                                  "stream": stream, "correlation": self.corr, "bytes": nbytes,
                                  "memory bandwidth (GB/s)": nbytes / (us * 1e3)}})
        self._flow(launch_at, start, stream)
        return launch_at, start

    def memset(self, op: dict, nbytes: int, us: float) -> tuple[float, float]:
        """The ``cudaMemsetAsync`` of ``op`` (``aten::zero_``) and its fill of ``nbytes`` on the compute stream, ``us``
        long, as Kineto records one (``gpu_memset`` ``Memset (Device)``); (launch time, fill start)."""
        return self.memcpy(op, "Memset (Device)", nbytes, us, cat="gpu_memset", call=("cudaMemsetAsync", 51))

    def sync(self, op: str = "aten::item") -> None:
        """``.item()``: the host waits in ``cudaStreamSynchronize`` until every stream has drained."""
        done = max(self.streams.values(), default=self.host_us)
        wait = max(done - self.host_us, 0.0) + 4.0
        self.cpu(op, wait + 10.0, advance=False)
        self.cpu("aten::_local_scalar_dense", wait + 6.0, advance=False)
        self.corr += 1
        self.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": self.pid,
                          "tid": self.pid, "ts": round(self.host_us + 2.0, 3), "dur": round(wait, 3),
                          "args": {"External id": self.ext, "cbid": 131, "correlation": self.corr}})
        self.host_us += wait + 10.0

    def wait_unrecorded(self, wake_us: float = 30.0) -> None:
        """A wait for the GPU that no event records, as a JAX host's ``block_until_ready`` on its step's result (the
        real-h100-jax loops' python3 thread records nothing while it blocks, up to 300 ms) or a TensorFlow fetch: a
        future the runtime's callback thread sets once every stream drains, then the thread's wake-up, ``wake_us``.
        The host's clock moves there; nothing is written."""
        self.host_us = max(max(self.streams.values(), default=self.host_us) + wake_us, self.host_us)

    def read_to_host(self, op: str = "aten::to", nbytes: int = 4096, us: float = 3.0) -> None:
        """``.tolist()`` / ``.cpu()`` / ``.to('cpu')`` of a small tensor: ``op`` (what the program called) around
        ``aten::_to_copy`` > ``aten::copy_``, whose device-to-host copy into pageable memory waits for its stream in
        ``cudaStreamSynchronize`` (the copy is queued behind every kernel launched before it).  ``Tensor.tolist`` moves
        the tensor to the CPU first (torch/csrc/utils/tensor_list.cpp: ``data.toBackend(Backend::CPU)`` -- the
        dispatcher records ``aten::to``), as ``.cpu()`` does."""
        outer = self.cpu(op, 0.0, advance=False)
        to_copy = self.cpu("aten::_to_copy", 0.0, advance=False)
        copy = self.cpu("aten::copy_", 0.0, advance=False)
        launch_at, start = self.memcpy(copy, "Memcpy DtoH (Device -> Pageable)", nbytes, us)
        end = self._stream_wait(copy, launch_at, start + us) + 4.0
        for e, tail in ((outer, 2.0), (to_copy, 1.0), (copy, 0.0)):
            e["dur"] = round(end + tail - e["ts"], 3)
        self.host_us = end + 2.0
        self.step_kernels.append((start, start + us))

    def query(self, call: str = "cudaEventQuery", then_us: float = 10.0) -> None:
        """One ``ev.query()`` (1.5 us, no op around it) and ``then_us`` of the Python after it."""
        self.corr += 1
        self.host.append({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": self.pid, "tid": self.pid,
                          "ts": round(self.host_us, 3), "dur": 1.5, "args": {"cbid": 136, "correlation": self.corr}})
        self.host_us += 1.5 + then_us

    def poll(self, between_us: float = 10.0, call: str = "cudaEventQuery") -> None:
        """``ev.record(); while not ev.query(): ...`` (or ``stream.query()``, or a ``time.sleep`` poll with
        ``between_us`` the sleep): a ``cudaEventRecord``, then ``call`` every ``between_us`` of Python until the GPU has
        drained every stream -- no op around the queries (``torch.cuda.Event.query`` is no ATen op), no sync call."""
        done = max(self.streams.values(), default=self.host_us)
        self.corr += 1
        self.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": self.pid,
                          "tid": self.pid, "ts": round(self.host_us, 3), "dur": 3.0,
                          "args": {"cbid": 135, "correlation": self.corr}})
        self.host_us += 5.0
        while True:
            self.corr += 1
            self.host.append({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": self.pid, "tid": self.pid,
                              "ts": round(self.host_us, 3), "dur": 1.5,
                              "args": {"cbid": 136, "correlation": self.corr}})
            self.host_us += 1.5
            if self.host_us >= done:
                return
            self.host_us += between_us

    def step(self, n: int, body: Callable[["Rank"], None]) -> None:
        """One ``prof.step()`` iteration: the host ``ProfilerStep#n`` and its device-side span over its kernels."""
        start = self.host_us
        mark = self.cpu(f"ProfilerStep#{n}", 0.0, cat="user_annotation", advance=False)
        self.host_us += 5.0
        self.step_kernels = []
        body(self)
        self.host_us += 5.0
        mark["dur"] = round(self.host_us - start, 3)
        if self.step_kernels:
            s, e = min(k[0] for k in self.step_kernels), max(k[1] for k in self.step_kernels)
            self.gpu.append({"ph": "X", "cat": "gpu_user_annotation", "name": f"ProfilerStep#{n}", "pid": self.device,
                             "tid": COMPUTE_STREAM, "ts": round(s, 3), "dur": round(e - s, 3),
                             "args": {"External id": mark["args"]["External id"]}})


# ---------------------------------------------------------------------------------------------- step bodies

@dataclass
class MemSim:
    """A rank's GPU memory under ``profile_memory=True``: PyTorch's caching allocator (``synthetic.memsnapshot``'s
    model) for what the step allocates, on top of ``held`` bytes allocated before the capture (parameters, optimizer
    state), which every ``Total Allocated`` / ``Total Reserved`` includes.  Each allocation and free is a ``[memory]``
    instant event with the keys and category a real PyTorch 2.x trace writes (``tests/fixtures/wild/hf_qwen_h100``)."""

    held: int
    capacity: int = H100_BYTES
    events: list[dict] = field(default_factory=list)
    peak_allocated: int = 0
    peak_reserved: int = 0
    step: int = 2  # the profiled step being simulated (sizes may depend on it)
    kept: list[int] = field(default_factory=list)  # blocks a step keeps for later ones

    def __post_init__(self) -> None:
        self.alloc = Allocator(self.capacity - self.held)

    def event(self, r: "Rank", addr: int, nbytes: int, at: float) -> None:
        total, reserved = self.held + self.alloc.allocated, self.held + self.alloc.reserved
        self.peak_allocated, self.peak_reserved = max(self.peak_allocated, total), max(self.peak_reserved, reserved)
        self.events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": r.pid,
                            "tid": r.pid, "ts": round(at, 3),
                            "args": {"Total Reserved": reserved, "Total Allocated": total, "Bytes": nbytes,
                                     "Addr": addr, "Device Id": r.device, "Device Type": 1,
                                     "Ev Idx": len(r.host) + len(self.events)}})


def mm_args(op: str, m: int, k: int, n: int, dtype: str = "c10::BFloat16") -> dict[str, Any]:
    """``record_shapes`` arguments of a matmul op ``[m, k] x [k, n]``, keys and spellings as PyTorch 2.11 writes them
    (``torch_healthy_bf16``: ``addmm(bias, input, weight.t())``, ``mm(a, b)``)."""
    if op == "aten::addmm":
        return {"Concrete Inputs": ["", "", "", "1", "1"], "Input type": [dtype] * 3 + ["Scalar", "Scalar"],
                "Input Strides": [[1], [k, 1], [1, k], [], []], "Input Dims": [[n], [m, k], [k, n], [], []]}
    return {"Concrete Inputs": ["", ""], "Input type": [dtype, dtype], "Input Strides": [[k, 1], [n, 1]],
            "Input Dims": [[m, k], [k, n]]}


def linear_args(m: int, k: int, n: int, dtype: str = "c10::BFloat16") -> dict[str, Any]:
    """``record_shapes`` arguments of ``aten::linear(input [m, k], weight [n, k], bias [n])``."""
    return {"Concrete Inputs": ["", "", ""], "Input type": [dtype] * 3, "Input Strides": [[k, 1], [k, 1], [1]],
            "Input Dims": [[m, k], [n, k], [n]]}


#: The MLP's 4096 x 4096 layers on a batch of 4096 rows (``torch_healthy_bf16``'s shapes).
SHAPES_4096 = {op: mm_args(f"aten::{op}", 4096, 4096, 4096) for op in ("addmm", "mm")}

def forward_backward(r: Rank, slow: float = 1.0, first_call_us: float = 0.0) -> None:
    """A bf16 MLP (4 Linear + ReLU) forward and backward, as ``torch_healthy_bf16`` runs it; ``first_call_us``: the
    first GEMM call takes that much longer (one slow call: an autotuning, a module load, a clock dip)."""
    for k in range(4):
        r.kernel("aten::addmm", GEMM_FWD, 180.0 * slow + (first_call_us if k == 0 else 0.0), args=SHAPES_4096["addmm"])
        r.kernel("aten::clamp_min", RELU_BF16, 20.0 * slow)
    for _ in range(4):
        r.kernel("aten::threshold_backward", RELU_BF16, 35.0 * slow)
        r.kernel("aten::mm", GEMM_BWD[0], 170.0 * slow, args=SHAPES_4096["mm"])
        r.kernel("aten::mm", GEMM_BWD[1], 160.0 * slow, args=SHAPES_4096["mm"])
        r.kernel("aten::sum", SUM_BF16, 22.0 * slow)


def optimizer(r: Rank, not_before: float = 0.0) -> None:
    r.cpu("Optimizer.step#SGD.step", 30.0, cat="user_annotation", advance=False)
    r.kernel("aten::_foreach_add_", SGD_BF16, 42.0, not_before=not_before)


#: Elements of one rank's message (bf16), as PyTorch 2.x records them on ``record_param_comms``: the DDP gradient
#: all-reduce (32 MiB) and an FSDP shard (4 MiB).
AR_NELEMS, SHARD_NELEMS = 16 << 20, 2 << 20


def _message(r: Rank, collective: str, nelems: int, group: int, pg: int = 0,
             members: list[int] | None = None) -> dict:
    """``record_param_comms``, the op c10d records each collective's message on (keys and spellings as a real
    PyTorch 2.x rank writes them: tests/fixtures/wild/hta_v100); ``pg``: its process group's id (0: the default
    group every rank is in; tensor parallelism runs in a group of its own); ``members``: the group's global ranks
    (``Process Group Ranks``, as c10d writes them: ``"[0, 2]"``), ranks 0 to ``group - 1`` where not given.  Returns
    the event (8 us long)."""
    e = r.cpu("record_param_comms", 8.0, advance=False)
    ranks_ = list(range(group)) if members is None else sorted(members)
    e["args"].update({"Collective name": collective, "dtype": "BFloat16", "In msg nelems": nelems,
                      "Global rank start": 0, "Group size": group, "Process Group Ranks": str(ranks_),
                      "Out msg nelems": nelems, "Global rank stride": 1, "Process Group ID": pg})
    return e


#: The tensor-parallel process group's id (c10d numbers groups in creation order; 0 is the default group).
TP_GROUP = 1
#: FSDP / tensor-parallel shapes: layers per step, a layer's forward GEMM, its all-gather and all-reduce.
FSDP_LAYERS, LAYER_US, AG_US, RS_US, TP_AR_US = 8, 200.0, 150.0, 150.0, 120.0


def _collective(r: Rank, annotation: str, op: str, kernel: str, us: float, not_before: float = 0.0,
                nelems: int = SHARD_NELEMS, pg: int = 0) -> tuple[float, float]:
    """A NCCL kernel on the communication stream, under its ``nccl:*`` annotation (with its message: ``nelems``
    bf16 elements, 4 ranks); returns its (start, end)."""
    r.cpu(annotation, 12.0, cat="user_annotation", advance=False)
    _message(r, annotation.split(":", 1)[1].strip("_").replace("_base", ""), nelems, 4, pg)
    return r.kernel(op, kernel, us, stream=NCCL_STREAM, not_before=not_before)


def _fsdp(prefetch: bool) -> Callable[[Rank], None]:
    """An FSDP training step over ``FSDP_LAYERS`` layers: each layer's parameters are all-gathered before its forward,
    its gradients reduce-scattered after its backward node (``autograd::engine::evaluate_function: MmBackward0``, as
    every real PyTorch training trace records a backward: ``wild/ddp_mi300x_actckpt``), then the optimizer's step on
    the sharded gradients once the last reduce-scatter is done.  ``prefetch``: the next layer's all-gather is issued
    before this layer's compute, so it runs behind it (only the first is exposed); without, each layer waits for its
    own all-gather.  Reduce-scatters run behind the next layer's backward (the last one before the optimizer, which
    waits for it)."""
    def body(r: Rank) -> None:
        ag: list[tuple[float, float] | None] = [None] * FSDP_LAYERS
        done = [0.0]  # end of the latest forward GEMM: an all-gather reuses the buffer the layer before freed

        def gather(i: int, after: float) -> tuple[float, float]:
            return _collective(r, "nccl:_all_gather_base", "c10d::_allgather_base_", NCCL_ALLGATHER, AG_US,
                               not_before=after)

        if prefetch:
            ag[0] = gather(0, 0.0)
        for i in range(FSDP_LAYERS):
            if not prefetch:
                ag[i] = gather(i, done[0])  # issued when layer i starts: runs after layer i-1, nothing overlaps it
            elif i + 1 < FSDP_LAYERS:
                ag[i + 1] = gather(i + 1, done[0])  # runs during layer i's GEMM
            done[0] = r.kernel("aten::addmm", GEMM_FWD, LAYER_US, not_before=ag[i][1], args=SHAPES_4096["addmm"])[1]
        rs_end = 0.0
        for _ in range(FSDP_LAYERS):
            node = r.cpu("autograd::engine::evaluate_function: MmBackward0", 0.0, advance=False)
            t = r.host_us
            _, end = r.kernel("aten::mm", GEMM_BWD[0], LAYER_US, args=SHAPES_4096["mm"])
            node["dur"] = round(r.host_us - t, 3)
            rs_end = _collective(r, "nccl:_reduce_scatter_base", "c10d::_reduce_scatter_base_", NCCL_REDUCESCATTER,
                                 RS_US, not_before=end)[1]
        optimizer(r, not_before=rs_end)  # the sharded gradients are the optimizer's input: it waits for the last
        r.sync()
    return body


#: A gradient all-reduce per parameter (h37-buckets, as HTA's compiled V100 trace runs it: ``wild/
#: compiled_v100_param_allreduce``): PARAMS small calls a step after the backward, each PARAM_AR_US on the GPU, the
#: host's Python loop PARAM_HOST_US between two calls past the op's own launch; the bucketed twin moves the same
#: bytes in BUCKETS calls, each issued as a quarter of the backward is done and running behind the rest of it.
PARAMS, PARAM_AR_US, PARAM_HOST_US, BUCKETS = 96, 6.0, 25.0, 4
#: the host's time from one per-parameter call's launch to the next: the op's launch and bookkeeping
#: (``Rank.kernel``: launch_us 7 + 6) and the loop's own Python
PARAM_PERIOD_US = 7.0 + 6.0 + PARAM_HOST_US


def _param_allreduce(bucketed: bool) -> Callable[[Rank], None]:
    """A DDP-less data-parallel step on 2 ranks: the bf16 MLP's forward and backward, the gradients all-reduced --
    one call per parameter after the backward (``bucketed`` False: the GPU idles between the calls while the host
    launches the next, ``PARAMS - 1`` gaps of ``PARAM_PERIOD_US - PARAM_AR_US``), or ``BUCKETS`` calls of the same
    bytes behind the backward (DDP's buckets) --, then the optimizer and ``.item()``."""
    def body(r: Rank) -> None:
        for _ in range(4):
            r.kernel("aten::addmm", GEMM_FWD, 180.0, args=SHAPES_4096["addmm"])
            r.kernel("aten::clamp_min", RELU_BF16, 20.0)
        end = 0.0
        for i in range(4):
            node = r.cpu("autograd::engine::evaluate_function: MmBackward0", 0.0, advance=False)
            t = r.host_us
            r.kernel("aten::threshold_backward", RELU_BF16, 35.0)
            r.kernel("aten::mm", GEMM_BWD[0], 170.0, args=SHAPES_4096["mm"])
            end = r.kernel("aten::mm", GEMM_BWD[1], 160.0, args=SHAPES_4096["mm"])[1]
            node["dur"] = round(r.host_us - t, 3)
            if bucketed:  # a bucket is full: its all-reduce runs behind the rest of the backward
                r.cpu("nccl:all_reduce", 12.0, cat="user_annotation", advance=False)
                _message(r, "allreduce", PARAMS // BUCKETS * (1 << 16), 2)
                end = r.kernel("c10d::allreduce_", NCCL_ALLREDUCE, PARAMS // BUCKETS * PARAM_AR_US,
                               stream=NCCL_STREAM, not_before=end)[1]
        if not bucketed:
            r.host_us = max(r.host_us, end)  # the loop starts once the backward is done (autograd returns the grads)
            for _ in range(PARAMS):  # for p in model.parameters(): dist.all_reduce(p.grad)
                r.cpu("nccl:all_reduce", 12.0, cat="user_annotation", advance=False)
                _message(r, "allreduce", 1 << 16, 2)
                end = r.kernel("c10d::allreduce_", NCCL_ALLREDUCE, PARAM_AR_US, stream=NCCL_STREAM, not_before=end)[1]
                r.host_us += PARAM_HOST_US
        optimizer(r, not_before=end)
        r.sync()
    return body


def _tensor_parallel(r: Rank) -> None:
    """Megatron-style tensor parallelism: each layer's row-parallel GEMM output is all-reduced before the next layer
    can start -- in the forward pass, on the critical path: every all-reduce is exposed by construction."""
    for _ in range(FSDP_LAYERS):
        _, end = r.kernel("aten::mm", GEMM_FWD, LAYER_US, args=SHAPES_4096["mm"])
        _, ar_end = _collective(r, "nccl:all_reduce", "c10d::allreduce_", NCCL_ALLREDUCE, TP_AR_US, not_before=end,
                                pg=TP_GROUP)
        r.kernel("aten::add", RELU_BF16, 10.0, not_before=ar_end)
    r.sync()


#: Mixture of experts: the hot expert's rank sends MOE_HOT x the others' tokens in each all-to-all.
MOE_BASE_NELEMS, MOE_HOT, MOE_A2A_US = 2 << 20, 4, 2000.0
NCCL_SENDRECV = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"


def moe(ranks: list[Rank], n: int) -> None:
    """Expert-parallel MoE on 8 ranks: attention, then an all-to-all dispatching tokens to the experts, whose splits
    are skewed (rank 0 hosts the hot expert and moves ``MOE_HOT`` x the others' bytes); every rank's all-to-all
    ends when rank 0's is done (``MOE_A2A_US`` after the last rank is ready); then the experts' GEMMs -- dense GEMMs
    by name, so nothing beside the exchange says what it moves (``job.exchange``: no kind)."""
    _skewed_all_to_all(ranks, n, GEMM_FWD, GEMM_BWD[0])


def skewed_all_to_all(before: str, after: str) -> Callable[[list[Rank], int], None]:
    """:func:`moe`'s step with the kernels ``before`` and ``after`` the exchange named as the caller's work names them:
    the same skewed all-to-all beside a router's top-k and the experts' grouped GEMM, or beside embedding lookups (the
    work the job stage reads the exchange's kind from, ``devices.collectives.EXCHANGES``)."""
    return lambda ranks, n: _skewed_all_to_all(ranks, n, before, after)


def _skewed_all_to_all(ranks: list[Rank], n: int, before: str, after: str) -> None:
    start = max(r.host_us for r in ranks)
    ready: dict[int, float] = {}
    for r in ranks:
        r.host_us = start

        def before_exchange(rr: Rank) -> None:
            for _ in range(4):
                rr.kernel("aten::mm", before, LAYER_US, args=SHAPES_4096["mm"])
            ready[rr.rank] = max(rr.streams.get(COMPUTE_STREAM, 0.0), rr.host_us)
        r.step(n, before_exchange)
    end = max(ready.values()) + MOE_A2A_US
    for r in ranks:
        r.step_kernels = []
        r.cpu("nccl:all_to_all", 12.0, cat="user_annotation", advance=False)
        _message(r, "all_to_all", MOE_BASE_NELEMS * (MOE_HOT if r.rank == 0 else 1), len(ranks))
        r.kernel("c10d::alltoall_base_", NCCL_SENDRECV, end - ready[r.rank], stream=NCCL_STREAM,
                 not_before=ready[r.rank])
        for _ in range(4):
            r.kernel("aten::mm", after, LAYER_US, not_before=end, args=SHAPES_4096["mm"])
        r.sync()
        _extend_step_span(r, n)


def _each(step_body: Callable[[Rank], None]) -> Callable[[list[Rank], int], None]:
    """Every rank runs the same step on its own (symmetric ranks: no waiting for each other)."""
    def body(ranks: list[Rank], n: int) -> None:
        for r in ranks:
            r.step(n, step_body)
    return body


@dataclass
class Scenario:
    """A run: its ranks' loop, and what the Advisor must find in it."""

    ranks: int
    body: Callable[[list[Rank], int], None]
    expect_top: list[str]
    expect_not: list[str]
    note: str
    dtype: str | None = "bfloat16"
    extra: dict[str, Any] = field(default_factory=dict)
    nodes: int = 1  # machines the ranks are spread over, evenly (file names node<k>_<pid>)
    #: profile_memory=True: bytes held on each GPU before the capture (parameters, optimizer state); None: off
    memory_held: int | None = None


def _single(step_body: Callable[[Rank], None]) -> Callable[[list[Rank], int], None]:
    return lambda ranks, n: ranks[0].step(n, step_body)


def _healthy(r: Rank) -> None:
    forward_backward(r)
    optimizer(r)
    r.sync()


def _tiny(r: Rank) -> None:
    for _ in range(300):
        r.kernel("aten::tanh", TANH_F32, 2.5, launch_us=14.0)
    r.sync()


#: ATen's element-wise kernels of an eager loop over a large float tensor, in turn (tanh, mul, add, sub).
EAGER_CHAIN_KERNELS = (TANH_F32,
                       "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
                       "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, ...)",
                       "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, "
                       "std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul>)",
                       "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, "
                       "std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul>) ")
EAGER_CHAIN_OPS = ("aten::tanh", "aten::mul", "aten::add", "aten::sub")
EAGER_CHAIN_US = 50.0  # a float32 [4096, 4096] tensor read and written once on an H100


def _eager_chain(r: Rank) -> None:
    """40 element-wise ops on one large tensor per step, Python between them: kernels of 50 us, not small; the GPU
    waits ~30 us for each dispatch, and torch.compile would fuse the 40 kernels into about one."""
    for i in range(40):
        r.kernel(EAGER_CHAIN_OPS[i % 4], EAGER_CHAIN_KERNELS[i % 4], EAGER_CHAIN_US, launch_us=14.0)
        r.cpu("aten::view", 60.0)  # the Python and ATen work between two ops
    r.sync()


#: Inductor's fused element-wise kernel of the tiny-ops loop, as ``torch.compile`` names its Triton kernels.
TRITON_TANH = "triton_poi_fused_add_mul_tanh_0"


def _graph_tiny(r: Rank) -> None:
    """The tiny-ops loop compiled with ``mode="reduce-overhead"``: the same 300 small kernels, one graph launch."""
    r.graph([(TRITON_TANH, 2.5)] * 300)
    r.sync()


#: A small MLP on a batch of 64 rows: [64, 1024] x [1024, 1024] bf16 GEMMs of 40 us each -- 3.4 TFLOP/s where its
#: roofline (57 FLOP/byte x 3.35 TB/s) allows ~190: the matrix units starve on the shape, not on launches.
SMALL_GEMM = (64, 1024, 1024)
SMALL_GEMM_US, SMALL_GEMMS = 40.0, 48


def _small_gemms(r: Rank) -> None:
    for _ in range(SMALL_GEMMS):
        r.kernel("aten::mm", GEMM_FWD, SMALL_GEMM_US, args=mm_args("aten::mm", *SMALL_GEMM))
        r.kernel("aten::clamp_min", RELU_BF16, 3.0)
    optimizer(r)
    r.sync()


def _input(r: Rank, pageable: bool = False, non_blocking: bool | None = None) -> None:
    r.cpu(DATALOADER, 10_000.0)
    r.copy_h2d(32.0, 1_300.0, pageable=pageable, non_blocking=non_blocking)
    _healthy(r)


#: A custom CUDA extension's kernel launched with 4 blocks of 256 threads (a sequential scan written per block) on the
#: H100's 132 SMs: 128 of them idle for its whole time.
SMALL_GRID_KERNEL = "scan_kernel(float const*, float*, int)"
SMALL_GRID = (4, 1, 1)
SMALL_GRID_US = 1_500.0
#: What no grid takes off a kernel (the Advisor's ``small_grid.floor_us``, restated: the generator imports nothing of it).
SMALL_GRID_FLOOR_US = 3.0


def _small_grid(r: Rank) -> None:
    """The healthy bf16 step plus one custom kernel of 4 blocks a step: at most 4 of the 132 SMs work while it runs."""
    forward_backward(r)
    r.kernel("my_ext::scan", SMALL_GRID_KERNEL, SMALL_GRID_US, grid=SMALL_GRID, block=(256, 1, 1))
    optimizer(r)
    r.sync()


#: A library's kernel of 4 blocks: cuBLAS's matrix x vector product (``gemv2T_kernel_val``, as cuBLAS names it) on the
#: H100's 132 SMs -- the grid cuBLAS chose for the call's shapes, which the program does not launch itself
#: (h37-words32: ``small_grid``'s "For a kernel of your own" fix was told beside such kernels).
LIBRARY_SMALL_GRID_KERNEL = ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
                             "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, "
                             "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >"
                             "(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, "
                             "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, "
                             "float, float)")


def _small_grid_library(r: Rank) -> None:
    """The ``small_grid`` step with its 4-block kernel cuBLAS's (an ``aten::mv``), not the program's own."""
    forward_backward(r)
    r.kernel("aten::mv", LIBRARY_SMALL_GRID_KERNEL, SMALL_GRID_US, grid=SMALL_GRID, block=(128, 1, 1))
    optimizer(r)
    r.sync()


#: A kernel of another stream that runs beside the small one (DeepEP's all-to-all beside a GEMM, h37-survey35): the SMs
#: the small kernel leaves are this one's while both run.
SIDE_KERNEL, SIDE_US, SIDE_GRID = "void my_ext::exchange_kernel<8>(int4*, int)", 600.0, (20, 1, 1)


def _small_grid_beside(r: Rank) -> None:
    """The ``small_grid`` step with a kernel of another stream, itself of 20 blocks, started with the small one and
    running the first ``SIDE_US`` of its ``SMALL_GRID_US``: only the rest of the small one leaves SMs idle, the side
    one never runs alone, and the two are ``SMALL_GRID_US`` of the GPU's time, not their sum."""
    forward_backward(r)
    free = r.streams.get(COMPUTE_STREAM, 0.0)
    r.kernel("my_ext::exchange", SIDE_KERNEL, SIDE_US, stream=NCCL_STREAM, grid=SIDE_GRID, not_before=free)
    r.kernel("my_ext::scan", SMALL_GRID_KERNEL, SMALL_GRID_US, grid=SMALL_GRID, block=(256, 1, 1), not_before=free)
    optimizer(r)
    r.sync()


#: A batch-1 decode's weight reads: ``aten::mm`` of one token [1, 8192] by a bf16 weight [8192, 8192] (134 MB of
#: operands and result), launched as one cuBLASLt kernel of 64 thread blocks on the H100's 132 SMs, ``DECODE_GEMVS`` a step.
DECODE_GEMV = (1, 8192, 8192)
DECODE_GEMVS = 60
DECODE_GEMV_GRID = (64, 1, 1)
#: cuBLASLt's kernel for it as an H100 names one (a GEMM of one row: cuBLAS's own gemv kernels are no matmul class)
DECODE_GEMV_KERNEL = "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNN"
#: the H100 SXM's memory bandwidth (bytes/s: NVIDIA's datasheet, restated -- the generator imports nothing of the Advisor)
H100_BANDWIDTH = 3.35e12


def decode_gemv_floor_us() -> float:
    """The least time one decode GEMV takes on the H100: its operands' and result's bytes, each read or written once,
    at the memory bandwidth (its 2 x 8192 x 8192 FLOPs take 0.14 us at the bf16 peak: the bytes bind)."""
    m, k, n = DECODE_GEMV
    return 2.0 * (m * k + k * n + m * n) / H100_BANDWIDTH * 1e6


def _decode_at(share: float) -> Callable[[Rank], None]:
    """A batch-1 decode step whose GEMVs each run at ``share`` of the H100's memory bandwidth (their floor over the
    share), with a 64-block grid: at 0.97 they are near the bandwidth and no grid can take more than the 3% above
    their floor off them; at 0.30 filling the SMs may save the grid bound."""
    def body(r: Rank) -> None:
        for _ in range(DECODE_GEMVS):
            r.kernel("aten::mm", DECODE_GEMV_KERNEL, decode_gemv_floor_us() / share, args=mm_args("aten::mm", *DECODE_GEMV),
                     grid=DECODE_GEMV_GRID, block=(128, 1, 1))
        r.sync()
    return body


def _decode_and_chain(r: Rank) -> None:
    """The decode_near_peak_bw step's GEMVs, then the eager chain's element-wise ops: two fixes on two pools of kernel
    time (filling the SMs of the GEMVs, fusing the chain), each within the kernel time above the GEMVs' floor, whose
    sum is not."""
    _decode_at(0.97)(r)
    _eager_chain(r)


def _sync_item(r: Rank) -> None:
    """``loss.item()`` after every layer: the host drains the GPU six times a step, then launches anew."""
    for _ in range(6):
        r.kernel("aten::addmm", GEMM_FWD, 180.0, args=SHAPES_4096["addmm"])
        r.kernel("aten::clamp_min", RELU_BF16, 20.0)
        r.sync()
        r.cpu("aten::add", 120.0)  # the Python that uses the value before the next launch
    optimizer(r)


#: :func:`write_one_marked_step`: the host's first launch of a kernel between the backward and the gradient's
#: accumulation (its module's load, us), as a real 2-rank MoE step's ``AccumulateGrad`` paid it (12.0 ms,
#: ykcai-daniel/torch-compile-moe, h37-wild55k), and the host's backward start before its kernels (us).
MARKED_STEP_LOAD_US, MARKED_STEP_BACKWARD_HOST_US = 12_000.0, 2_500.0


def _one_marked_step_body(r: Rank) -> None:
    """One training step as a program that profiles a single step runs it: the forward's kernels, the backward's host
    start, its kernels, then the first launch of the gradient's accumulation (a module load) and the step's sync."""
    for _ in range(4):
        r.kernel("aten::addmm", GEMM_FWD, 180.0, args=SHAPES_4096["addmm"])
        r.kernel("aten::clamp_min", RELU_BF16, 20.0)
    r.cpu("autograd::engine::evaluate_function: SumBackward0", MARKED_STEP_BACKWARD_HOST_US)
    for _ in range(4):
        r.kernel("aten::threshold_backward", RELU_BF16, 35.0)
        r.kernel("aten::mm", GEMM_BWD[0], 170.0, args=SHAPES_4096["mm"])
        r.kernel("aten::mm", GEMM_BWD[1], 160.0, args=SHAPES_4096["mm"])
    r.kernel("aten::add_", SUM_BF16, 3.0, launch_us=MARKED_STEP_LOAD_US)
    r.sync()


def write_one_marked_step(out: str, step_name: str | None = "moe_train_step", ranks: int = 1,
                          run: str = "one_marked_step") -> list[str]:
    """Write a capture of ONE training step (``ranks`` ranks, one file each) as ``with profile(): with
    record_function(step_name): ...`` writes it -- no schedule, so no ``ProfilerStep#N``: the step's only mark is the
    program's own range, ``step_name`` (host ``user_annotation`` and its GPU-side span).  ``step_name=None`` keeps
    Kineto's ``ProfilerStep#2`` instead: the truth's reading.

    Truth by construction: one step, the forward's and the backward's GPU bursts with the backward's host start
    between them and a one-time module load (``MARKED_STEP_LOAD_US``) before the step's last kernel; the same steps
    and findings as the ``ProfilerStep#2`` build."""
    sc = Scenario(ranks, _each(_one_marked_step_body), ["cold_start"],
                  [], "one training step marked by the program's record_function")
    paths = write_run(out, sc, steps=1, run=run)
    if step_name is not None:
        for path in paths:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            for e in doc["traceEvents"]:
                if e.get("name") == "ProfilerStep#2":
                    e["name"] = step_name
            write_doc(path, doc)
    return paths


def write_scoped_iteration_ranges(out: str, prefix: str = "jax", mode: str = "sync_item", steps: int = 8,
                                  run: str = "scoped_iterations") -> list[str]:
    """Write scenario ``mode`` as a benchmark that marks each turn of its loop itself, with no profiler schedule:
    ``with profile(): for i in range(n): with record_function(f"{prefix}/iteration_{i}"): ...`` (lutetjeff/cs521-mp2's
    ``profile_myconv.py``, its variant's name before the turn's number).  Each ``ProfilerStep#k`` (its host
    ``user_annotation`` and its GPU-side span) is renamed ``{prefix}/iteration_{k}``: the program's own range is the
    step's only mark.

    Truth by construction: the steps are those ranges, ``steps`` of them, as the ``ProfilerStep#N`` build reads them."""
    paths = write_run(out, mode, steps=steps, run=run)
    return _steps_named(paths, prefix + "/iteration_{k}")


#: :func:`write_tiny_turns`: the extension's own kernel (a CUDA extension's ``gemm_gpu_o4_kernel``, lutetjeff/cs521-mp2)
#: and ``aten::zeros``' fill, as a tiny turn of a benchmark runs them.
TURN_KERNEL = "gemm_gpu_o4_kernel(float const*, float const*, float*, int, int, int, int, int, int, int, int, int)"
FILL_F32 = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
            "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")


def _tiny_turn(before_us: float, after_us: float, tail_us: float, kernel_us: float = 8.5,
               tail_op: str | None = None, sync_every: int = 1) -> Callable[[Rank], None]:
    """One turn of ``for i in range(n): with record_function(...): out = ext.conv(x, w); torch.cuda.synchronize()``
    around a CUDA extension: ``before_us`` of Python no event records (the call into the extension), ``aten::zeros``
    (its fill, 1.6 us on the GPU, launched in 22 us: a first allocation's and the fill's dispatch), the extension's own bare launch (8.5 us of GPU, no op around
    it), ``after_us`` of unrecorded Python (the return, the call of ``torch.cuda.synchronize``), the
    ``cudaDeviceSynchronize`` (no ATen op: ``torch.cuda.synchronize`` is none) and ``tail_us`` of unrecorded loop
    (``tail_op``: recorded instead, as that CPU op -- host work of its own between the turns).  ``kernel_us``: the
    extension kernel's length; ``sync_every``: the sync closes only every that many turns (the others go on at once)."""
    turns = [0]

    def body(r: Rank) -> None:
        r.host_us += before_us
        r.kernel("aten::zeros", FILL_F32, 1.6, launch_us=22.0)
        r.kernel(None, TURN_KERNEL, kernel_us, launch_us=4.3, grid=(64, 1, 1), block=(16, 16, 1))
        for e in (r.host[-1], r.gpu[-1]):  # the extension's launch: no op, so no External id (as the real trace)
            e["args"].pop("External id", None)
        r.host_us += after_us
        turns[0] += 1
        if turns[0] % sync_every == 0:
            done = max(r.streams.values(), default=r.host_us)
            wait = max(done - r.host_us, 0.0) + 4.0
            r.corr += 1
            r.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": r.pid,
                           "tid": r.pid, "ts": round(r.host_us, 3), "dur": round(wait, 3),
                           "args": {"cbid": 165, "correlation": r.corr}})
            r.host_us += wait
        if tail_op is not None:
            r.cpu(tail_op, tail_us)
        else:
            r.host_us += tail_us
    return body


def write_tiny_turns(out: str, steps: int = 8, before_us: float = 25.0, after_us: float = 20.0, tail_us: float = 15.0,
                     prefix: str = "cuda", run: str = "tiny_turns", kernel_us: float = 8.5,
                     tail_op: str | None = None, sync_every: int = 1) -> list[str]:
    """Write a benchmark loop whose every turn is too small for its host cost: ``steps`` turns, each marked by the
    program's ``record_function(f"{prefix}/iteration_{i}")`` (no profiler schedule), each a ~10 us GPU turn of two
    kernels (:func:`_tiny_turn`) run from Python with a sync closing it -- lutetjeff/cs521-mp2's ``cuda.json`` loop.

    Truth by construction: per turn the GPU computes 10.1 us; the host spends ~37 us dispatching its two calls
    (``aten::zeros`` 20 us with its launch, the bare launch 10.3 us, their launch latencies) and
    ``before_us + after_us + tail_us`` plus the range's 10 us and the sync's 4 us in code no event records (the
    Python calling the extension, the sync, the loop) -- the turn is host-bound, too small for its dispatch: one
    cause, the host's cost per turn; the unrecorded part lies between the turns' GPU work (the gap between steps).
    Controls: ``kernel_us`` large (a turn whose GPU work outlasts its dispatch: no step too small for it), ``tail_op``
    (the loop's tail recorded as a CPU op: host work between the turns, a cause of its own), ``sync_every`` (the
    sync closes only every that many turns: no sync in every turn, so no "sync once after the loop" fix).
    Every microsecond of the turn's unrecorded host time -- between the turns, between its two calls, a last turn's
    tail after its sync -- is the same per-turn cost (the ledger's ``other``, all of it by construction)."""
    sc = Scenario(1, _single(_tiny_turn(before_us, after_us, tail_us, kernel_us, tail_op, sync_every)), ["launch_bound"], [],
                  "a tiny CUDA-extension turn per step, run from Python with a sync per turn", dtype=None)
    paths = write_run(out, sc, steps=steps, run=run)
    return _steps_named(paths, prefix + "/iteration_{k}")


def _steps_named(paths: list[str], name: str, per_outer: int = 4) -> list[str]:
    """``paths`` with each ``ProfilerStep#k`` (host range and GPU-side span) renamed ``name`` (``{k}``: its number,
    ``jax/iteration_{k}``; ``{e}`` / ``{b}``: an outer loop's counter and the inner one's, ``per_outer`` inner turns
    to an outer one -- ``epoch {e} batch {b}``): the program's own range the step's only mark, as a benchmark that
    marks its turns itself writes it."""
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for e in doc["traceEvents"]:
            k = pytorch_step_number(e.get("name", ""))
            if k is not None:
                e["name"] = name.format(k=k, e=k // per_outer, b=k % per_outer)
        write_doc(path, doc)
    return paths


def write_named_turns(out: str, mode: str, name: str = "inference_step_{k}", steps: int = 8,
                      run: str = "named_turns", per_outer: int = 4) -> list[str]:
    """Write scenario ``mode`` as a loop that marks each turn with its own ``record_function(name)`` and no profiler
    schedule (``{k}``: the turn's number): ``for step in range(n): with record_function(f"inference_step_{step}"):
    model.generate(...)`` (public inference benchmarks, SURVEY h37-nvtx69).  Truth by construction: the steps are those
    ranges, as the ``ProfilerStep#N`` build reads them."""
    return _steps_named(write_run(out, mode, steps=steps, run=run), name, per_outer)


#: :func:`write_xla_work`: one turn of a jitted JAX function as XLA:GPU runs it -- its fusions launched through the driver
#: (``cuLaunchKernel``, XLA's own launches; names as lutetjeff/cs521-mp2's ``jax.json``), its fp32 GEMM a cuBLAS call
#: through the runtime (``cudaLaunchKernel``, as cuBLAS launches) -- (name, us on the GPU, the launch call).
XLA_TURN = (("wrapped_broadcast", 2.0, "cuLaunchKernel"), ("loop_transpose_fusion", 4.0, "cuLaunchKernel"),
            ("ampere_sgemm_128x64_tn", 240.0, "cudaLaunchKernel"), ("loop_add_fusion", 6.0, "cuLaunchKernel"),
            ("ampere_sgemm_128x64_tn", 240.0, "cudaLaunchKernel"))


#: :func:`write_xla_work`'s ``front_end`` -> the Python frame of its package ``torch.profiler(with_stack=True)`` records
#: around each call of the compiled function (the program's call into its framework), and the turns' range prefix.
XLA_FRONT_ENDS = {
    "jax": ("/usr/lib/python3/site-packages/jax/_src/pjit.py(337): cache_miss", "jax"),
    "tensorflow": ("/usr/lib/python3/site-packages/tensorflow/python/eager/polymorphic_function/"
                   "polymorphic_function.py(833): __call__", "tf"),
}


def _xla_turn(aten_op: str | None, frame: str | None = None) -> Callable[[Rank], None]:
    """One turn of ``for i in range(n): with record_function(f"jax/iteration_{i}"): y = f(x); torch.cuda.synchronize()``
    around a jitted JAX function ``f``: XLA's runtime dispatches (10 us of host no event records before each launch), the
    kernels of :data:`XLA_TURN` each launched with no op around it, then the ``cudaDeviceSynchronize``.  ``aten_op``:
    the control -- one ATen op (its own host work, no kernel) in the turn, a PyTorch program's own op beside them.
    ``frame``: a Python frame (``python_function``) recorded at the turn's start, the call into the front end."""
    def body(r: Rank) -> None:
        if frame is not None:
            r.cpu(frame, 3.0, cat="python_function")
        if aten_op is not None:
            r.cpu(aten_op, 12.0)
        for name, us, call in XLA_TURN:
            r.host_us += 10.0
            if call == "cuLaunchKernel":
                _driver_launch(r, name, us, call, call_us=5.0)
                continue
            r.kernel(None, name, us, launch_us=5.0, grid=(144, 1, 1), block=(256, 1, 1))
            for e in (r.host[-1], r.gpu[-1]):  # no op launched it: no External id
                e["args"].pop("External id", None)
        wait = max(max(r.streams.values(), default=r.host_us) - r.host_us, 0.0) + 4.0
        r.corr += 1
        r.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": r.pid, "tid": r.pid,
                       "ts": round(r.host_us, 3), "dur": round(wait, 3), "args": {"cbid": 165, "correlation": r.corr}})
        r.host_us += wait + 15.0
    return body


def write_xla_work(out: str, steps: int = 4, aten_op: str | None = None, run: str = "xla_work",
                   front_end: str | None = None) -> list[str]:
    """Write an XLA-compiled program profiled by ``torch.profiler`` (lutetjeff/cs521-mp2's ``jax.json``): ``steps`` turns, each
    marked by the program's ``record_function(f"jax/iteration_{i}")``, each a jitted function's XLA kernels
    (:func:`_xla_turn`: fusions through ``cuLaunchKernel``, two fp32 cuBLAS GEMMs of 240 us) and no ATen op at all.

    Truth by construction: the capture is PyTorch's profiler's (a Kineto trace: ``record_function``, ``schedule``
    record it); the work is XLA's -- every kernel XLA's or the cuBLAS call XLA made, no op of PyTorch's -- and its fp32
    GEMMs are 480 of the turn's 492 us of kernel time (their fix is JAX's, a bf16 policy, never ``torch.autocast``).
    Control: ``aten_op`` -- one ATen op a turn: a PyTorch program's own work, PyTorch's words as before.
    ``front_end`` (:data:`XLA_FRONT_ENDS`): recorded with ``with_stack=True``, each turn's call into ``jax`` or
    ``tensorflow`` (TensorFlow's ``jit_compile=True`` runs the same XLA kernels, its turns ``tf/iteration_{k}``); None:
    no frame -- XLA's kernels alone, which do not say which front end compiled them (h37-vendor66)."""
    frame, prefix = XLA_FRONT_ENDS[front_end] if front_end else (None, "jax")
    sc = Scenario(1, _single(_xla_turn(aten_op, frame)), [], [],
                  "a jitted function's XLA kernels under torch.profiler", dtype="float32")
    return _steps_named(write_run(out, sc, steps=steps, run=run), prefix + "/iteration_{k}")


def pytorch_step_number(name: str) -> int | None:
    """The k of Kineto's ``ProfilerStep#k``; None for any other name."""
    head, _, k = name.partition("#")
    return int(k) if head == "ProfilerStep" and k.isdigit() else None


def _load_through_exchange(ranks: list[Rank], n: int, peers_load: bool = True) -> None:
    """One marked training step of ranks that each pay a first launch's module load (``MARKED_STEP_LOAD_US``) at the
    same moment, around an all-to-all: rank 0 enters its load first and launches its side of the exchange after it;
    every other rank launched its side just before its own load, so its ``SendRecv`` runs through that load, waiting
    for rank 0 (the exchange itself takes ``EXCHANGE_US`` once both are there).  ``peers_load`` False: only rank 0
    loads (the module already loaded elsewhere), and the others' ``SendRecv`` waits through rank 0's load alone."""
    start = max(r.host_us for r in ranks)
    meet: list[float] = []  # rank 0's side of the exchange starts here: every peer's wait ends with it

    def forward(r: Rank) -> None:
        for _ in range(4):
            r.kernel("aten::addmm", GEMM_FWD, 180.0, args=SHAPES_4096["addmm"])
            r.kernel("aten::clamp_min", RELU_BF16, 20.0)

    def exchange(r: Rank, us: float) -> None:
        r.cpu("nccl:all_to_all", 12.0, cat="user_annotation", advance=False)
        r.kernel("c10d::alltoall_base_", NCCL_SENDRECV, us, stream=NCCL_STREAM,
                 not_before=r.streams.get(COMPUTE_STREAM, 0.0))

    def backward(r: Rank) -> None:
        after = r.streams.get(NCCL_STREAM, 0.0)
        r.cpu("autograd::engine::evaluate_function: SumBackward0", 50.0)
        for _ in range(4):
            r.kernel("aten::mm", GEMM_BWD[0], 170.0, not_before=after, args=SHAPES_4096["mm"])
        r.sync()

    def first(r: Rank) -> None:
        forward(r)
        r.kernel("aten::add_", SUM_BF16, 3.0, launch_us=MARKED_STEP_LOAD_US)
        exchange(r, EXCHANGE_US)
        meet.append(r.gpu[-1]["ts"])
        backward(r)

    def peer(r: Rank) -> None:
        forward(r)
        ready = max(r.streams.get(COMPUTE_STREAM, 0.0), r.host_us + 8.0)
        exchange(r, meet[0] + EXCHANGE_US - ready)
        r.kernel("aten::add_", SUM_BF16, 3.0, launch_us=MARKED_STEP_LOAD_US if peers_load else 7.0)
        backward(r)

    for r in ranks:
        r.host_us = start
        r.step(n, first if r.rank == 0 else peer)


EXCHANGE_US = 15.0


def _one_marked_step(out: str, sc: Scenario, run: str) -> list[str]:
    """Write one profiled step of ``sc`` whose mark is the program's ``record_function("moe_train_step")``, not
    ``prof.step()``'s (ykcai-daniel/torch-compile-moe's capture); the paths."""
    paths = write_run(out, sc, steps=1, run=run)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for e in doc["traceEvents"]:
            if e.get("name") == "ProfilerStep#2":
                e["name"] = "moe_train_step"
        write_doc(path, doc)
    return paths


def write_load_through_exchange(out: str, ranks: int = 2, rank_folders: bool = False,
                                run: str = "load_through_exchange", peers_load: bool = True,
                                nodes: int = 1) -> list[str]:
    """Write one training step (marked ``moe_train_step``) of ``ranks`` ranks that each load a module in a 12 ms first
    launch at the same moment, every rank but 0 with its all-to-all's ``SendRecv`` running through its load, waiting
    for rank 0 (:func:`_load_through_exchange`; ykcai-daniel/torch-compile-moe's 2-rank capture, h37-wild56r).
    ``rank_folders``: each rank's file in ``<run>/rank<r>/`` (``tensorboard_trace_handler(f"{logdir}/rank{rank}")``),
    else all in ``<run>/``.

    Truth by construction: every rank's step holds a one-time module load of ``MARKED_STEP_LOAD_US``; the collective
    through a peer's load is that peer waiting for rank 0, no work that fills its launch queue -- a cold start on
    every rank.  ``peers_load`` False: rank 0 alone loads; every other rank's exchange waits through rank 0's load --
    rank 0's start-up, no communication of theirs (h37-ranks58).

    ``nodes`` > 1: the ranks spread evenly over that many machines (files ``node<k>_<pid>``, each machine's GPUs from
    0), and ``rank_folders`` names each folder by the LOCAL rank (``rank{LOCAL_RANK}``, as a launcher's per-node
    script writes it): ``rank0/`` holds every machine's first rank, each folder one host per machine (h37-ranks60)."""
    sc = Scenario(ranks, lambda rs, n: _load_through_exchange(rs, n, peers_load), ["cold_start"], [],
                  "ranks loading a module through an exchange" + ("" if peers_load else ", rank 0 alone loading"),
                  nodes=nodes)
    paths = _one_marked_step(out, sc, run)
    return into_rank_folders(paths, ranks // nodes if nodes > 1 else None) if rank_folders else paths


def _late_peer_through_load(ranks: list[Rank], n: int, extra_gemms: tuple[int, ...]) -> None:
    """One marked training step in which rank ``r`` runs ``extra_gemms[r]`` more forward GEMMs (180 us each) before
    the all-to-all, so the ranks ENTER it in that order: rank 0 first, then launches a first-launch module load
    (``MARKED_STEP_LOAD_US``) while its side waits on the GPU; the others enter during that load, the last (most
    GEMMs) last.  Each rank's exchange ends ``EXCHANGE_US`` after the last one enters."""
    start = max(r.host_us for r in ranks)
    extra = {r.rank: extra_gemms[r.rank] if r.rank < len(extra_gemms) else 0 for r in ranks}
    meet: list[float] = []  # the last rank's entry: every exchange ends EXCHANGE_US after it

    def body(r: Rank) -> None:
        for _ in range(4 + extra[r.rank]):
            r.kernel("aten::addmm", GEMM_FWD, 180.0, args=SHAPES_4096["addmm"])
        entry = max(r.streams.get(COMPUTE_STREAM, 0.0), r.host_us + 8.0)
        if not meet:
            meet.append(entry)
        r.cpu("nccl:all_to_all", 12.0, cat="user_annotation", advance=False)
        r.kernel("c10d::alltoall_base_", NCCL_SENDRECV, meet[0] + EXCHANGE_US - entry, stream=NCCL_STREAM,
                 not_before=entry)
        r.kernel("aten::add_", SUM_BF16, 3.0, launch_us=MARKED_STEP_LOAD_US if r.rank == 0 else 7.0)
        after = r.streams.get(NCCL_STREAM, 0.0)
        r.cpu("autograd::engine::evaluate_function: SumBackward0", 50.0)
        for _ in range(4):
            r.kernel("aten::mm", GEMM_BWD[0], 170.0, not_before=after, args=SHAPES_4096["mm"])
        r.sync()

    for r in sorted(ranks, key=lambda r: -extra[r.rank]):  # the last to enter first: its entry is the meeting
        r.host_us = start
        r.step(n, body)


def write_late_peer_through_load(out: str, rank_folders: bool = False, extra_gemms: tuple[int, ...] = (0, 10, 25),
                                 run: str = "late_peer_through_load") -> dict:
    """Write one training step (marked ``moe_train_step``) of ``len(extra_gemms)`` ranks on one machine in which rank
    0 enters the all-to-all first and THEN loads a module in a 12 ms first launch; rank 1 enters during that load,
    rank 2 (the most forward GEMMs) last (:func:`_late_peer_through_load`).  ``rank_folders``: one folder per rank.

    Truth by construction: rank 1 waits in its all-to-all from its entry until rank 2 enters -- ``(extra_gemms[2] -
    extra_gemms[1]) * 180`` us for a LATE PEER's compute, communication a straggler holds, though it runs inside
    rank 0's load: rank 0 was already in the exchange, so nobody waits for its start-up there (h37-ranks60)."""
    sc = Scenario(len(extra_gemms), lambda rs, n: _late_peer_through_load(rs, n, extra_gemms), [], [],
                  "ranks entering an all-to-all one after another, the first loading a module after it entered")
    paths = _one_marked_step(out, sc, run)
    return {"paths": into_rank_folders(paths) if rank_folders else paths,
            "wait_ms": (extra_gemms[2] - extra_gemms[1]) * 180.0 / 1000.0}


def write_one_slow_call(out: str, extra_us: float = 8000.0, slow: float = 1.0, steps: int = 8,
                        run: str = "one_slow_call") -> dict:
    """Write a DDP job of 4 ranks on 2 nodes (one 150 us AllReduce a step) in which rank 2's first GEMM of step 4 takes
    ``extra_us`` longer -- one slow call (autotuning, a module load, a clock dip) -- and, with ``slow`` > 1, rank 2
    computes ``slow`` x longer every step too (a straggler).  Truth by construction: no straggler where ``slow`` is 1,
    the others' wait is that one call; with ``slow`` > 1 a straggler (rank 2) beside the call (h37-ranks57)."""
    sc = Scenario(4, ddp(comm_us=150.0, slow_rank=2 if slow != 1.0 else None, slow=slow, one_call=(2, 4, extra_us)),
                  ["rank_straggler"] if slow != 1.0 else [], [] if slow != 1.0 else ["rank_straggler"],
                  "4 ranks on 2 nodes, one slow GEMM call on rank 2" + (f", rank 2 {slow}x slower" if slow != 1.0 else ""),
                  nodes=2)
    return {"paths": write_run(out, sc, steps=steps, run=run), "rank": 2, "extra_ms": extra_us / 1000.0,
            "straggler": slow != 1.0}


def write_one_gpu_apart(out: str, gpus: int = 8, gpu: int = 3, pace: float = 1.4, extra_us: float = 0.0,
                        steps: int = 8, run: str = "one_gpu_apart") -> dict:
    """Write a DDP job of ``gpus`` ranks on one machine (one file per rank, one 150 us AllReduce a step) in which GPU
    ``gpu`` computes ``pace`` x the others' time every step (> 1: a straggler; < 1: one fast GPU, which waits for
    the others and delays nobody) and, with ``extra_us``, its first GEMM of step 4 takes that much longer (one slow
    call).  Truth by construction: every other GPU computes the same, so the median of a GPU's peers is the others'
    pace; the imbalance is ``gpu``'s excess over it where ``pace`` > 1 (``1 - 1/pace`` of its compute), none where
    ``pace`` <= 1 and no call is slow (h37-ranks58)."""
    if not 0 <= gpu < gpus:
        raise ValueError(f"GPU {gpu} is not one of the job's {gpus}")
    sc = Scenario(gpus, ddp(comm_us=150.0, slow_rank=gpu if pace != 1.0 else None, slow=pace,
                            one_call=(gpu, 4, extra_us) if extra_us else None),
                  ["gpu_imbalance"] if pace > 1.0 else [], [] if pace > 1.0 else ["gpu_imbalance"],
                  f"{gpus} ranks on one machine, GPU{gpu} at {pace}x the others' compute"
                  + (f", one GEMM call {extra_us:g} us longer" if extra_us else ""))
    return {"paths": write_run(out, sc, steps=steps, run=run), "gpu": gpu, "pace": pace,
            "imbalance": max(0.0, 1.0 - 1.0 / pace), "extra_ms": extra_us / 1000.0}


def into_rank_folders(paths: list[str], per_node: int | None = None) -> list[str]:
    """Move each written rank's file into ``rank<r>/`` beside it (``tensorboard_trace_handler(f"{logdir}/rank{rank}")``:
    one folder per rank, each a run of its own); ``per_node``: ``r`` is the local rank (``rank % per_node``), so one
    folder holds a rank of each machine.  The new paths."""
    moved = []
    for path in paths:
        rank = doc_rank(path) % (per_node or 1 << 30)
        folder = os.path.join(os.path.dirname(path), f"rank{rank}")
        os.makedirs(folder, exist_ok=True)
        moved.append(os.path.join(folder, os.path.basename(path)))
        os.replace(path, moved[-1])
    return moved


def doc_rank(path: str) -> int:
    """The rank a written trace states (``distributedInfo.rank``)."""
    with open(path, encoding="utf-8") as f:
        return int(json.load(f)["distributedInfo"]["rank"])


def write_sync_then_host_work(out: str, steps: int = 12, kernels: int = 8, kernel_us: float = 50.0,
                              host_us: float = 500.0, run: str = "sync_then_host_work") -> dict:
    """Write a forward loop (one rank, ``prof.step()`` each step) whose step launches ``kernels`` GEMMs of
    ``kernel_us`` (13 us of host each), reads ``.item()`` (``cudaStreamSynchronize``), then runs ``host_us`` of its
    own bookkeeping in a ``record_function("update_stats")`` range, the GPU idle, before the next step's launches.

    Truth: the sync's wait (the GPU's work less the launches it queued behind: ~``kernels * kernel_us`` less
    ``kernels * 13`` us) and ``update_stats`` (``host_us``) are two disjoint stretches of the host's serial path, and
    the GPU idles only in the second.  Reading the value every N steps takes the wait off the path; moving the
    bookkeeping out of the step takes ``host_us``; with both, the step is the GPU's own work, ``kernels *
    kernel_us`` (the launches run under it) -- the truth's ``both_fixes_ms``."""
    paths = _write_gemms_then(out, kernels, kernel_us, Rank.sync,
                              lambda r: r.cpu("update_stats", host_us, cat="user_annotation"), steps, run)
    return {"paths": paths, "gpu_ms_per_step": kernels * kernel_us / 1000.0, "host_work_ms": host_us / 1000.0,
            "both_fixes_ms": kernels * kernel_us / 1000.0}


def write_read_to_host(out: str, op: str = "aten::to", steps: int = 12, kernels: int = 8, kernel_us: float = 200.0,
                       host_us: float = 300.0, run: str = "read_to_host") -> dict:
    """Write a forward loop (one rank, ``prof.step()`` each step) whose step launches ``kernels`` GEMMs of
    ``kernel_us``, reads a small result back (``preds.tolist()``: :meth:`Rank.read_to_host`, ``op`` the call the
    program made, ``aten::to``), then runs ``host_us`` of recorded host ops on the values (``aten::add``), the GPU
    idle, before the next step's launches.

    Truth: the program made one read a step, by calling ``op`` -- the ``aten::copy_`` inside it is the read's
    mechanism, never called by the program; the GPU idles after the read while the host works on the values
    (~``host_us`` plus the next launches' lead), the host_sync finding's time."""
    paths = _write_gemms_then(out, kernels, kernel_us, lambda r: r.read_to_host(op),
                              lambda r: r.cpu("aten::add", host_us), steps, run)
    return {"paths": paths, "op": op, "reads_per_step": 1}


def _write_gemms_then(out: str, kernels: int, kernel_us: float, wait: Callable[[Rank], None],
                      after: Callable[[Rank], None], steps: int, run: str) -> list[str]:
    """Write a one-rank forward loop (``prof.step()`` each step) whose step launches ``kernels`` GEMMs of
    ``kernel_us``, waits for the GPU by ``wait`` (a sync, a read to the host), then runs ``after`` on the host, the
    GPU idle; the paths written.  Why one writer: the sync and read probes (h37-probe44s) differ only in the wait and
    the host work after it (h37-review44's duplicates)."""
    def body(r: Rank) -> None:
        for _ in range(kernels):
            r.kernel("aten::mm", GEMM_FWD, kernel_us)
        wait(r)
        after(r)

    return write_run(out, Scenario(1, _each(body), [], [], run), steps=steps, run=run)


def write_pageable_to_device(out: str, via: str = "aten::to", steps: int = 12, kernels: int = 8, kernel_us: float = 200.0,
                             mb: float = 16.0, copy_us: float = 1_400.0, run: str = "pageable_to_device") -> dict:
    """Write a forward loop (one rank, ``prof.step()`` each step) whose step copies its batch of ``mb`` MB from
    pageable memory (``x.to('cuda')``: :meth:`Rank.copy_h2d` with ``via`` the op the program called, ``aten::to``,
    around ``aten::_to_copy`` > ``aten::copy_``; ``cudaMemcpyAsync`` then ``cudaStreamSynchronize`` in the last),
    then launches ``kernels`` GEMMs of ``kernel_us`` and reads nothing back.

    Truth: one blocking copy a step, made by calling ``via`` -- the copy's wait is the copy's cost (pinned memory,
    ``non_blocking``), named by the call the program made, as a sync is since h37-probe44s; the ``aten::copy_`` inside
    is its mechanism (h37-probe44p: main named it "aten::copy_ ×1")."""
    def body(r: Rank) -> None:
        r.copy_h2d(mb, copy_us, pageable=True, via=via)
        for _ in range(kernels):
            r.kernel("aten::mm", GEMM_FWD, kernel_us)

    paths = write_run(out, Scenario(1, _each(body), [], [], run), steps=steps, run=run)
    return {"paths": paths, "op": via, "copies_per_step": 1}


#: The training loop's own Python frame as ``with_stack=True`` records it: open around every step of the window.
LOOP_FRAME = "train.py(40): main"


def write_pageable_upload_bound(out: str, bound: str = "gpu", steps: int = 12, copy_us: float = 400.0,
                                mb: float = 5.0, run: str | None = None, fix: str | None = None,
                                after_copy_us: float = 0.0, loop_frame: bool = False, drained: bool | str = False) -> dict:
    """Write a loop (one rank, ``prof.step()`` each step) whose step uploads its batch of ``mb`` MB from pageable
    memory (``x.to('cuda')``: ``cudaMemcpyAsync`` then ``cudaStreamSynchronize``, the copy ``copy_us`` on the compute
    stream), then, ``bound`` "gpu": 8 GEMMs of 500 us launched in 13 us each (the GPU paces the loop); "host": 3 ms of
    recorded host ops (``aten::add``) and 4 GEMMs of 100 us (the host paces it).

    Truth by construction (issue #37 deliverable 3, each wait to its cause): pinned memory with ``non_blocking=True``
    frees the host, but the copy stays on the kernels' stream: the step becomes max(host's own time, GPU's busy time
    with the copy).  In the GPU-bound loop that returns only the idle after the copy (the copy stays on the critical
    path); in the host-bound one the host's hold in the copy (its wait for the stream to drain, then the copy) -- not
    the copy's time besides, which the GPU runs in idle time either way.  A copy on a stream of its own (a prefetch of
    the next batch) overlaps the kernels: max(host's own, compute, copy) -- the GPU-bound loop's whole claim.
    ``fix``: the same loop with a fix made, whose step time is each fix's truth -- "pin" (pinned, ``non_blocking``:
    the copy on the kernels' stream, the host free), "stream" (the pinned, ``non_blocking`` copy on a stream of its
    own, :data:`COPY_STREAM`, that no kernel waits for -- the next batch prefetched while the step runs: under the
    kernels where the GPU paces the loop, in the GPU's idle while the host works where the host paces it), "waited"
    (the copy on :data:`COPY_STREAM` as "stream", but of this step's batch: its first kernel waits for it,
    ``wait_stream`` before use, and the copy stream for the kernels before it reuses the buffer -- on a stream of its
    own and still in series with the kernels where the GPU paces the loop, as "pin": its fix is the copy issued a
    step ahead, "stream", not a stream it has), "waited_pageable" ("waited" with the copy from pageable memory: the
    host held in it besides), "none" (no copy, the host's 22 us to issue one kept).

    Truth for a copy already made so (h37-copystream61): the host-bound "pin" and "stream" loops' copies run while the
    GPU waits for the host anyway -- off the step's critical path, they cost it nothing (3.084 ms each, as the loop with
    no copy, ``fix="none"``); the GPU-bound "stream" loop's copy runs under the kernels (4.000 ms, as "none"), its
    "waited" loop's in series (4.400, as "pin").

    ``after_copy_us``: host time no event records right after the copy returns (the host freeing the loader's batch
    in its own code, no call traced: the real RTX 3080 loop of h37-huntkin63, ~2 ms after each 8.5 MB upload);
    ``loop_frame``: the loop's own Python frame (``with_stack=True``'s ``train.py(40): main``) recorded around every
    step.  Truth by construction: the frame says that the loop runs, not what the host does in it -- the report is
    the same with and without it; the untraced time is neither the copy's nor Python work the trace shows.

    ``drained`` (the "host" loop): its host ops run after the GEMMs, which end under them, so each upload's call
    finds the GPU idle -- nothing queued to drain (the real RTX 3080 batch-2056 loop of h37-huntkin63: its uploads
    begin long after the GPU's last work).  Truth by construction: the host is held in each upload for the copy's own
    transfer (``copy_us``), no drain -- a blocking copy, not a wait for earlier work.  ``drain_ms`` (returned): the
    work still queued on the GPU when the last step's upload op began, by construction (the stream's end less the
    host's clock then; 0 where ``drained``) -- the part of each upload's hold that is a wait for earlier work.
    ``drained="alternate"``: every other step's host ops run after its GEMMs, so every other upload finds the GPU
    idle (the real resnet_rtx2080ti_slow_workers loop: about half its uploads wait); ``drained_steps`` (returned): per
    step, whether its upload found work queued."""
    gemms, gemm_us, host_us = (8, 500.0, 0.0) if bound == "gpu" else (4, 100.0, 3_000.0)
    frame: list[dict] = []
    drains: list[float] = []  # per step, the GPU's queued work (us) when the upload op begins

    def body(r: Rank) -> None:
        if loop_frame:
            if not frame:  # opened before the first step's marker, as the loop's frame is
                frame.append(r.cpu(LOOP_FRAME, 0.0, cat="python_function", advance=False))
                frame[0]["ts"] = round(frame[0]["ts"] - 50.0, 3)
        drains.append(max(max(r.streams.values(), default=0.0) - r.host_us, 0.0))
        if fix == "none":  # no copy at all: the host's 22 us to issue one kept
            r.cpu("aten::to", 22.0)
        else:
            waited = fix in ("waited", "waited_pageable")
            if waited:  # the copy stream waits for the kernels before it reuses their input's buffer
                r.streams[COPY_STREAM] = max(r.streams.get(COPY_STREAM, 0.0), r.streams.get(COMPUTE_STREAM, 0.0))
            r.copy_h2d(mb, copy_us, pageable=fix in (None, "waited_pageable"), via="aten::to",
                       stream=COPY_STREAM if waited or fix == "stream" else COMPUTE_STREAM)
        r.host_us += after_copy_us  # the host's own code, no event recorded
        late = drained is True or (drained == "alternate" and len(drains) % 2 == 0)
        if host_us and not late:
            r.cpu("aten::add", host_us)
        for i in range(gemms):  # "waited": the first kernel waits for this step's own copy (``wait_stream``)
            r.kernel("aten::mm", GEMM_FWD, gemm_us,
                     not_before=r.streams.get(COPY_STREAM, 0.0) if fix in ("waited", "waited_pageable") and not i
                     else 0.0)
        if host_us and late:  # the GEMMs end under the host's own work: the next upload finds the GPU idle
            r.cpu("aten::add", host_us)
        if frame:
            frame[0]["dur"] = round(r.host_us + 40.0 - frame[0]["ts"], 3)

    name = run or f"pageable_upload_{bound}_bound" + (f"_{fix}" if fix else "") + ({True: "_drained", "alternate": "_half_drained"}.get(drained, ""))
    paths = write_run(out, Scenario(1, _each(body), [], [], name), steps=steps, run=name)
    compute = gemms * gemm_us / 1000.0
    return {"paths": paths, "copy_ms": copy_us / 1000.0, "compute_ms": compute, "host_ms": host_us / 1000.0,
            "bound": bound, "untraced_ms": after_copy_us / 1000.0, "drain_ms": drains[-1] / 1000.0, "drained_steps": [d > 0 for d in drains]}


def write_paced_fp32_gemms(out: str, bound: str = "host", steps: int = 12, gemms: int = 6, gemm_us: float = 200.0,
                           host_us: float = 3_000.0, run: str | None = None) -> dict:
    """Write a loop (one rank, ``prof.step()`` each step) whose step runs ``host_us`` of recorded host ops
    (``aten::add``, the GPU idle) then launches ``gemms`` fp32 GEMMs of ``gemm_us`` in 13 us each: they queue back to
    back, each one's successor ready before it ends.  ``bound`` "host": nothing waits for them -- the chain runs under
    the next step's host work (the host recorded at its own work through every GPU idle); "gpu": the step ends in
    ``.item()`` (a sync), ``host_us`` 0: the host waits for the chain every step.  ``"host_sync"``: the host-paced
    loop with the sync -- the host waits for its GEMMs after its work.  ``"unrecorded"``: the host-paced loop whose
    host waits for its GEMMs in a wait no event records (:meth:`Rank.wait_unrecorded`: JAX's ``block_until_ready``,
    a TensorFlow fetch) -- its next launch comes after the GPU idled, as in the "host" loop, yet follows the drain.
    ``"callback"``: the host launches its GEMMs first and then runs its ``host_us`` of recorded ops (a logging hook,
    ``on_train_batch_end``) through the chain's drain, then ``prof.step()``: the step's range spans the drain and ends
    after it, yet the host's recorded work ran through the drain, released by nothing (h37-rev64a).

    Truth by construction (issue #37 class 4, h37-idle63, h37-idle64): faster GEMMs save ``gemm_saving_ms(speedup)``
    a step -- in the "host" and "callback" loops nothing: the step is the host's ``host_us`` plus its launches while
    the chain (shorter than the host's work) ends in idle either way; where the host waits for the chain ("gpu",
    "host_sync", "unrecorded") each GEMM's time less its fast time, ``gemms * gemm_us * (1 - 1/speedup)``."""
    waits = bound in ("gpu", "host_sync", "unrecorded")
    own = 0.0 if bound == "gpu" else host_us

    def body(r: Rank) -> None:
        if own and bound != "callback":
            r.cpu("aten::add", own)
        for _ in range(gemms):
            r.kernel("aten::mm", FP32_GEMM, gemm_us, launch_us=7.0)
        if bound == "callback":
            r.cpu("aten::add", own)
        elif bound == "unrecorded":
            r.wait_unrecorded()
        elif waits:
            r.sync()

    name = run or f"paced_fp32_gemms_{bound}"
    paths = write_run(out, Scenario(1, _each(body), [], [], name, dtype="float32"), steps=steps, run=name)
    gemm_ms = gemms * gemm_us / 1000.0
    return {"paths": paths, "gemm_ms": gemm_ms, "host_ms": own / 1000.0,
            "gemm_saving_ms": (lambda sp: gemm_ms * (1.0 - 1.0 / sp)) if waits else (lambda sp: 0.0)}


def write_poll_then_host_work(out: str, steps: int = 12, kernels: int = 8, kernel_us: float = 200.0,
                              host_us: float = 300.0, between_us: float = 10.0, run: str = "poll_then_host_work",
                              call: str = "cudaEventQuery") -> dict:
    """Write a forward loop (one rank, ``prof.step()`` each step) whose step launches ``kernels`` GEMMs of
    ``kernel_us``, then polls an event until the GPU is done (:meth:`Rank.poll`: ``while not ev.query()``, a query
    every ``between_us``; ``call`` ``cudaStreamQuery``: ``torch.cuda.current_stream().query()``), then runs ``host_us`` of recorded host ops on the result (``aten::add``), the GPU idle.

    Truth: the poll is the program's wait for the GPU, a sync by another call: the queue drains because the host
    waits for it, and the GPU's idle after it (``host_us`` and the next launches' lead) is that wait's, as after
    ``.item()`` (:func:`write_sync_then_host_work`) -- not launch overhead a CUDA graph would remove (the 8 launches
    ran under the GEMMs).  h37-probe44s: main read this "Launch-bound ... torch.compile reduce-overhead", 308 us."""
    def body(r: Rank) -> None:
        for _ in range(kernels):
            r.kernel("aten::mm", GEMM_FWD, kernel_us)
        r.poll(between_us, call)
        r.cpu("aten::add", host_us)

    paths = write_run(out, Scenario(1, _each(body), [], [], run), steps=steps, run=run)
    return {"paths": paths, "gpu_ms_per_step": kernels * kernel_us / 1000.0, "host_work_ms": host_us / 1000.0}


def write_launches_while_polling(out: str, steps: int = 12, kernels: int = 8, kernel_us: float = 200.0,
                                 host_us: float = 300.0, between_us: float = 10.0,
                                 run: str = "launches_while_polling") -> dict:
    """Write a forward loop (one rank, ``prof.step()`` each step) whose host launches while it polls: before each of
    ``kernels`` GEMMs of ``kernel_us`` it asks ``ev.query()`` once (:meth:`Rank.query`: query, launch, query, launch
    ...), then, with nothing left to queue, polls until the GPU is done (:meth:`Rank.poll`, a query every
    ``between_us``), then runs ``host_us`` of recorded host ops on the result (``aten::add``), the GPU idle; the next
    step opens with its first query, no runtime call since the last one.

    Truth: the launching part is no wait (the host queued work, the GPU busy); the poll is the queries after the last
    launch, from the first of them to the one that returned after the GPU drained (``wait_ms``), and the GPU's idle
    after it (``host_us`` and the next launches' lead) is that wait's, not launch overhead."""
    info: dict = {}

    def body(r: Rank) -> None:
        for _ in range(kernels):
            r.query(then_us=between_us)
            r.kernel("aten::mm", GEMM_FWD, kernel_us)
        start = r.host_us + 5.0  # the poll's first query, after its event's record
        r.poll(between_us)
        info["wait_ms"] = (r.host_us - start) / 1000.0
        r.cpu("aten::add", host_us)

    paths = write_run(out, Scenario(1, _each(body), [], [], run), steps=steps, run=run)
    return {"paths": paths, "gpu_ms_per_step": kernels * kernel_us / 1000.0, "host_work_ms": host_us / 1000.0,
            "wait_ms": info["wait_ms"]}


def write_cpu_index(out: str, steps: int = 12, layers: int = 4, kernel_us: float = 200.0, host_us: float = 100.0,
                    run: str = "cpu_index") -> dict:
    """Write a forward loop (one rank, ``prof.step()`` each step) whose every layer runs a GEMM of ``kernel_us``, then
    ``x[idx]`` with ``idx`` a CPU tensor: ``aten::index`` around ``aten::to`` > ``aten::_to_copy`` > ``aten::copy_``
    (the index's pageable upload, ``cudaMemcpyAsync`` then ``cudaStreamSynchronize``: the host waits for the GEMM),
    then its gather kernel, then ``host_us`` of recorded host ops before the next layer.

    Truth: ``layers`` blocking copies a step, each the index's upload made by ``aten::index`` -- the program's fix is
    an index kept on the device (made there, or moved once before the loop), not pinning a batch."""
    def body(r: Rank) -> None:
        for _ in range(layers):
            r.kernel("aten::mm", GEMM_FWD, kernel_us)
            idx = r.cpu("aten::index", 0.0, advance=False)
            r.host_us += 2.0
            r.copy_h2d(0.01, 3.0, pageable=True, via="aten::to")
            r.kernel(None, IMPLICIT_SYNC_OPS["mask_index"][2], 20.0)
            idx["dur"] = round(r.host_us + 1.0 - idx["ts"], 3)
            r.host_us += 2.0
            r.cpu("aten::add", host_us)

    paths = write_run(out, Scenario(1, _each(body), [], [], run), steps=steps, run=run)
    return {"paths": paths, "op": "aten::index", "copies_per_step": layers}


#: A step that copies its batch from pageable memory (issue #37 item 3): two ``x.to('cuda')`` of a ~17 MB and a small
#: tensor, each waiting for its stream; then host code the profiler does not record (no op, no Python span) before the
#: forward pass; a small MLP; ``loss.item()`` at the end.  By construction the copies block the host and the GPU, the
#: unrecorded host time follows them, and the program's one sync costs almost nothing.
PAGEABLE_COPIES = ((16.0, 1_400.0), (0.5, 45.0))  # (MB, us on the GPU): ~12 GB/s, a pageable copy's rate
PAGEABLE_UNRECORDED_US = 2_000.0
FP32_GEMM = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize256x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"
RELU_F32 = ("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::"
            "(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}>, "
            "std::array<char*, 3ul> >(int, at::native::BinaryFunctor<float, float, float, at::native::(anonymous namespace)::"
            "threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}>, std::array<char*, 3ul>)")
SGD_F32 = SGD_BF16.replace("c10::BFloat16", "float")


def _mlp_fp32(r: Rank, layers: int, gemm_us: float, launch_us: float = 14.0) -> None:
    """A small fp32 MLP's forward, backward and SGD step: per layer a GEMM and a ReLU forward, two GEMMs backward."""
    for _ in range(layers):
        r.kernel("aten::addmm", FP32_GEMM, gemm_us, launch_us=launch_us)
        r.kernel("aten::relu", RELU_F32, 2.0, launch_us=launch_us)
    for _ in range(layers):
        r.kernel("aten::mm", FP32_GEMM, gemm_us, launch_us=launch_us)
        r.kernel("aten::mm", FP32_GEMM, gemm_us, launch_us=launch_us)
    r.kernel("aten::_foreach_add_", SGD_F32, 3.0, launch_us=launch_us)


def _pageable_copy(r: Rank) -> None:
    for mb, us in PAGEABLE_COPIES:
        r.copy_h2d(mb, us, pageable=True)
    r.host_us += PAGEABLE_UNRECORDED_US  # the host runs code the profiler does not record
    _mlp_fp32(r, 3, 30.0)
    r.sync()


#: A tiny MLP's host-bound step (issue #37 item 4): the DataLoader's own ``__next__``, then Python before the first op
#: that is not the loader's, then 3 fp32 layers whose GEMMs are under 2% of the ~1.45 ms step, each op dispatched
#: from Python.  By construction: the input wait is the loader's time alone, the other host time before the first op
#: is named apart, and mixed precision saves too little to be a problem.
TINY_LOADER_US, TINY_PRE_OP_US, TINY_GEMM_US = 65.0, 45.0, 3.0


def _tiny_mlp(r: Rank) -> None:
    r.cpu(DATALOADER, TINY_LOADER_US, cat="user_annotation")
    r.host_us += TINY_PRE_OP_US  # Python between the loader and the first op (unpacking, a logger)
    for _ in range(3):
        r.kernel("aten::addmm", FP32_GEMM, TINY_GEMM_US, launch_us=14.0)
        r.cpu("aten::view", 30.0)  # Python between ops
        r.kernel("aten::relu", RELU_F32, 2.0, launch_us=14.0)
        r.cpu("aten::view", 30.0)
    for _ in range(3):
        for _ in range(2):
            r.kernel("aten::mm", FP32_GEMM, TINY_GEMM_US, launch_us=14.0)
            r.cpu("aten::view", 30.0)
        r.kernel("aten::threshold_backward", RELU_F32, 2.0, launch_us=14.0)
        r.cpu("aten::view", 30.0)
    for _ in range(12):  # SGD's per-parameter updates, no foreach
        r.kernel("aten::add_", SGD_F32, 2.0, launch_us=14.0)
        r.cpu("aten::view", 25.0)
    r.sync()


def ddp(comm_us: float, slow_rank: int | None = None, slow: float = 1.0,
        late_us: float = 0.0, slow_node: int | None = None, alternate: bool = False,
        one_call: tuple[int, int, float] | None = None) -> Callable[[list[Rank], int], None]:
    """DDP: forward/backward per rank, one NCCL AllReduce of the gradients, the optimizer, ``.item()``.

    ``slow_rank`` (or every rank of ``slow_node``) computes ``slow`` x longer (a straggler: thermal throttling, a
    bigger shard); ``alternate``: the slow rank is step ``n``'s ``n % ranks`` instead (a straggler that moves call by
    call: data-dependent work); ``late_us``: rank k
    starts each step ``k * late_us`` after rank 0 (host contention delaying its launches); ``one_call`` (rank, step,
    us): that rank's first GEMM call of that step takes ``us`` longer -- one slow call, no straggler (h37-ranks57)."""
    def body(ranks: list[Rank], n: int) -> None:
        start = max(r.host_us for r in ranks)
        ready: dict[int, float] = {}
        for r in ranks:
            r.host_us = start + r.rank * late_us
        late = n % len(ranks) if alternate else slow_rank
        for r in ranks:
            def before_allreduce(rr: Rank) -> None:
                once = one_call[2] if one_call is not None and (rr.rank, n) == one_call[:2] else 0.0
                forward_backward(rr, slow if rr.rank == late or rr.node == slow_node else 1.0, once)
                ready[rr.rank] = max(rr.streams.get(COMPUTE_STREAM, 0.0), rr.host_us)
            r.step(n, before_allreduce)
        end = max(ready.values()) + comm_us
        for r in ranks:
            r.step_kernels = []
            _allreduce(r, ready[r.rank], end, group=len(ranks))
            optimizer(r, not_before=end)
            r.sync()
            _extend_step_span(r, n)
    return body


def _allreduce(r: Rank, ready: float, end: float, group: int = 4) -> None:
    """The rank's NCCL kernel: it starts once the gradients are ready and ends when the last rank's data is in."""
    r.cpu("nccl:all_reduce", 12.0, cat="user_annotation", advance=False)
    _message(r, "allreduce", AR_NELEMS, group)
    r.kernel("c10d::allreduce_", NCCL_ALLREDUCE, end - ready, stream=NCCL_STREAM, not_before=ready)


def _compute_together(ranks: list[Rank], n: int, slow_of: Callable[[int], float]) -> dict[int, float]:
    """Step ``n``'s forward and backward on every rank, all starting together, rank k at ``slow_of(k)`` x the
    compute; returns when each rank's gradients are ready (its compute stream and host both done), us."""
    start = max(r.host_us for r in ranks)
    ready: dict[int, float] = {}
    for r in ranks:
        r.host_us = start

        def compute(rr: Rank) -> None:
            forward_backward(rr, slow_of(rr.rank))
            ready[rr.rank] = max(rr.streams.get(COMPUTE_STREAM, 0.0), rr.host_us)
        r.step(n, compute)
    return ready


#: Tensor x data parallelism on 2 ranks: each rank's two AllReduce calls per step -- its tensor-parallel group's and its
#: data-parallel group's, each group on its own NCCL stream -- and their transfers.
TPDP_TP_US, TPDP_DP_US, TPDP_GAP_US, DP_STREAM = 120.0, 400.0, 100.0, 21


def tp_dp_alternating(slow: float = 1.3) -> Scenario:
    """2 ranks of one machine, one AllReduce type in two process groups (tensor-parallel ``TP_GROUP``, data-parallel
    0) whose calls interleave differently per rank: rank 0 enters its TP call when its backward is done and its DP call
    ``TPDP_GAP_US`` later, rank 1 the other way round.  The late rank alternates step by step (``slow`` x the compute
    on rank ``n % 2``).  Each call ends on both ranks ``TPDP_TP_US`` / ``TPDP_DP_US`` after the last rank entered it
    (NCCL's wait): the truth is a transfer of ``TPDP_TP_US + TPDP_DP_US`` per step, the rest of each call's time is
    waiting for the late rank."""
    def body(ranks: list[Rank], n: int) -> None:
        ready = _compute_together(ranks, n, lambda k: slow if k == n % 2 else 1.0)
        enter = {(r.rank, pg): ready[r.rank] + (TPDP_GAP_US if (pg == TP_GROUP) == (r.rank == 1) else 0.0)
                 for r in ranks for pg in (TP_GROUP, 0)}
        end = {pg: max(enter[(r.rank, pg)] for r in ranks) + us for pg, us in ((TP_GROUP, TPDP_TP_US), (0, TPDP_DP_US))}
        for r in ranks:
            r.step_kernels = []
            for pg in sorted((TP_GROUP, 0), key=lambda p: enter[(r.rank, p)]):  # the rank's own issue order
                r.cpu("nccl:all_reduce", 12.0, cat="user_annotation", advance=False)
                _message(r, "allreduce", AR_NELEMS, len(ranks), pg)
                r.kernel("c10d::allreduce_", NCCL_ALLREDUCE, end[pg] - enter[(r.rank, pg)],
                         stream=NCCL_STREAM if pg == TP_GROUP else DP_STREAM, not_before=enter[(r.rank, pg)])
            optimizer(r, not_before=max(end.values()))
            r.sync()
            _extend_step_span(r, n)
    return Scenario(2, body, [], [], "TP + DP on 2 GPUs, the late rank alternating, groups interleaved per rank",
                    extra={"transfer_ms": (TPDP_TP_US + TPDP_DP_US) / 1000.0})


#: Tensor x data parallelism on 4 ranks in 2 x 2 groups (:func:`tp_dp_groups`): the tensor-parallel AllReduce's and
#: the data-parallel AllGather's transfers, us.
GROUPS_TP_US, GROUPS_DP_US = 150.0, 300.0


def tp_dp_groups(slow_rank: int = 2, slow: float = 1.5) -> Scenario:
    """4 ranks of one machine in two kinds of process group, as c10d's ``new_group`` makes them: tensor-parallel
    pairs [0, 1] and [2, 3] (groups 1 and 2) run one AllReduce a step, data-parallel pairs [0, 2] and [1, 3] (groups 3
    and 4) one AllGather after it.  Rank ``slow_rank`` computes ``slow`` x longer.  Each call ends on both ranks of its
    group ``GROUPS_TP_US`` / ``GROUPS_DP_US`` after its group's last rank entered it (NCCL's wait) -- so a call waits
    only for the ranks of its own group, truth by construction: the ranks of a pair without the slow rank spend the
    transfer alone in it, the others the transfer and their wait for the slow rank."""
    def tp(rank: int) -> list[int]:
        return [rank // 2 * 2, rank // 2 * 2 + 1]

    def dp(rank: int) -> list[int]:
        return [rank % 2, rank % 2 + 2]

    def body(ranks: list[Rank], n: int) -> None:
        ready = _compute_together(ranks, n, lambda k: slow if k == slow_rank else 1.0)
        tp_end = {r.rank: max(ready[k] for k in tp(r.rank)) + GROUPS_TP_US for r in ranks}
        dp_end = {r.rank: max(tp_end[k] for k in dp(r.rank)) + GROUPS_DP_US for r in ranks}
        for r in ranks:
            r.step_kernels = []
            r.cpu("nccl:all_reduce", 12.0, cat="user_annotation", advance=False)
            _message(r, "allreduce", AR_NELEMS, 2, 1 + r.rank // 2, tp(r.rank))
            r.kernel("c10d::allreduce_", NCCL_ALLREDUCE, tp_end[r.rank] - ready[r.rank], stream=NCCL_STREAM,
                     not_before=ready[r.rank])
            r.cpu("nccl:_all_gather_base", 12.0, cat="user_annotation", advance=False)
            _message(r, "_allgather_base", SHARD_NELEMS, 2, 3 + r.rank % 2, dp(r.rank))
            r.kernel("c10d::_allgather_base_", NCCL_ALLGATHER, dp_end[r.rank] - tp_end[r.rank], stream=NCCL_STREAM,
                     not_before=tp_end[r.rank])
            optimizer(r, not_before=dp_end[r.rank])
            r.sync()
            _extend_step_span(r, n)
    return Scenario(4, body, [], [], "TP pairs [0, 1], [2, 3] and DP pairs [0, 2], [1, 3] on 4 GPUs, a slow rank",
                    extra={"tp_transfer_ms": GROUPS_TP_US / 1000.0, "dp_transfer_ms": GROUPS_DP_US / 1000.0})


def _extend_step_span(r: Rank, n: int) -> None:
    """The step's host mark and device span cover the AllReduce, optimizer and sync added after ``Rank.step``."""
    mark = next(e for e in reversed(r.host) if e["name"] == f"ProfilerStep#{n}" and e["cat"] == "user_annotation")
    mark["dur"] = round(r.host_us - mark["ts"], 3)
    span = next((e for e in reversed(r.gpu) if e["name"] == f"ProfilerStep#{n}"), None)
    if span is not None and r.step_kernels:
        span["dur"] = round(max(k[1] for k in r.step_kernels) - span["ts"], 3)


# ---------------------------------------------------------------------------------------------- jobs that are no training loop

#: vLLM's own kernels, as its ROCm and CUDA builds name them: the custom all-reduce of tensor parallelism and the
#: paged KV-cache write.
VLLM_ALLREDUCE = ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, "
                  "vllm::Signal*, __nv_bfloat16*, int, int)")
VLLM_CACHE = "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>()"
#: What one decode step of the simulated worker runs on the GPU: per layer a cache write, the attention and MLP GEMMs,
#: and the tensor-parallel all-reduce -- replayed from one CUDA graph.
SERVE_LAYERS, SERVE_AR_US, SERVE_GEMM_US, SERVE_HOST_US = 16, 40.0, 120.0, 9_000.0
EXECUTE_MODEL = "vllm/v1/worker/gpu_model_runner.py(1456): execute_model"


def _graph_step(r: Rank, kernels: list[tuple[str, float]]) -> None:
    """A CUDA graph replay outside ``torch.compile`` (vLLM captures its own graphs): one ``cudaGraphLaunch``."""
    r.graph(kernels)


def serving(ranks: list[Rank], n: int) -> None:
    """A vLLM tensor-parallel worker (rank 0 of TP 2 written): no ``prof.step()``; each engine step is an
    ``execute_model`` Python span around the host's input preparation (~9 ms of Python), one CUDA-graph replay of
    the decode step (with vLLM's custom all-reduce after each layer's MLP) and a ``.tolist()`` of the sampled tokens."""
    _engine_step(ranks[0], EXECUTE_MODEL, "python_function", "vllm/v1/worker/gpu_model_runner.py(980): _prepare_inputs")


#: The model's compiled call as vLLM's worker records it under ``with_stack`` (survey h37-survey62: the MI300X decode of
#: hyukjlee/traceMap), and the leaf calls recorded inside it before its first graph launch (the compiled code's guard
#: checks: 1,207 dict lookups ~22 us apart there).
MODEL_FORWARD = "vllm/model_executor/models/llama.py(374): forward"
GUARD_LOOKUP = "<built-in method __getitem__ of dict object at 0x7fac6affda00>"
SERVE_GUARD_CALLS = 60


#: ``nn.Module.__call__`` as ``with_stack`` records it around every module's ``forward`` (PyTorch 2.x): the frame the
#: framework reads as the model's own call (``frameworks.pytorch.is_model_call``).
MODULE_CALL_IMPL = "torch/nn/modules/module.py(1779): _call_impl"
#: The engine's own host code inside an engine step after its inputs' upload: vLLM's model runner building the
#: attention metadata -- Python that is no module's call.
RUNNER_METADATA = "vllm/v1/worker/gpu_model_runner.py(1203): _build_attention_metadata"


def serving_in_model_call(ranks: list[Rank], n: int) -> None:
    """``serving``'s worker whose host time is not its input preparation (300 us here, 100 short calls back to back
    in it) but lies inside the model's
    compiled call: ``SERVE_HOST_US`` of host work in ``MODEL_FORWARD`` (called through ``MODULE_CALL_IMPL``, 1 us
    longer each side) before its CUDA-graph replay, the only calls recorded there ``SERVE_GUARD_CALLS`` dict lookups
    spread over it.  Truth by construction: the host-bound time lies inside ``MODEL_FORWARD``, ``SERVE_HOST_US`` a
    step, in no deeper call, and all of it inside the model's own call."""
    _serving_host_inside(ranks[0], MODEL_FORWARD, model=True)


def serving_in_runner_code(ranks: list[Rank], n: int) -> None:
    """:func:`serving_in_model_call`'s twin whose ``SERVE_HOST_US`` of host work a step lie in the engine's own code
    (``RUNNER_METADATA``, no module's call) before the model's graph replay.  Truth by construction: the host-bound
    time lies inside ``RUNNER_METADATA``, none of it inside the model's call."""
    _serving_host_inside(ranks[0], RUNNER_METADATA, model=False)


def _serving_host_inside(r: Rank, call: str, model: bool) -> None:
    """One engine step whose ``SERVE_HOST_US`` of host work lie inside the Python ``call`` after the inputs' upload,
    ``call`` inside ``MODULE_CALL_IMPL`` where ``model`` (the model's forward), then the decode's graph replay inside
    the model's call."""
    span = r.cpu(EXECUTE_MODEL, 0.0, cat="python_function", advance=False)
    start = r.host_us
    prep = r.cpu("vllm/v1/worker/gpu_model_runner.py(980): _prepare_inputs", 300.0, cat="python_function",
                 advance=False)
    for _ in range(100):  # the traced Python's own calls back to back: what the file's least call period is read from
        r.cpu("<built-in method append of list object at 0x7fac6b000000>", 0.2, cat="python_function", advance=False)
        r.host_us += 0.3
    r.host_us = prep["ts"] + prep["dur"]
    r.copy_h2d(0.5, 20.0)
    if not model:  # the runner's own code first, then the model's call (its graph replay)
        own = r.cpu(call, 0.0, cat="python_function", advance=False)
        _guard_like_calls(r)
        own["dur"] = round(r.host_us - own["ts"], 3)
        r.host_us += 1.0
    impl = r.cpu(MODULE_CALL_IMPL, 0.0, cat="python_function", advance=False)
    r.host_us += 1.0
    fwd = r.cpu(MODEL_FORWARD, 0.0, cat="python_function", advance=False)
    if model:
        _guard_like_calls(r)
    kernels: list[tuple[str, float]] = []
    for _ in range(SERVE_LAYERS):
        kernels += [(VLLM_CACHE, 4.0), (GEMM_FWD, SERVE_GEMM_US), (VLLM_ALLREDUCE, SERVE_AR_US),
                    (GEMM_FWD, SERVE_GEMM_US), (VLLM_ALLREDUCE, SERVE_AR_US)]
    _graph_step(r, kernels)
    fwd["dur"] = round(r.host_us - fwd["ts"], 3)
    r.host_us += 1.0
    impl["dur"] = round(r.host_us - impl["ts"], 3)
    r.kernel("aten::argmax", SUM_BF16, 15.0)
    r.sync("aten::to")  # sampled tokens to the host (.tolist())
    span["dur"] = round(r.host_us - start, 3)
    span["ts"] = round(start, 3)
    r.host_us += 300.0  # the scheduler between engine steps


def _guard_like_calls(r: Rank) -> None:
    """``SERVE_HOST_US`` of host work with ``SERVE_GUARD_CALLS`` short leaf calls spread over it (dict lookups)."""
    for _ in range(SERVE_GUARD_CALLS):
        r.cpu(GUARD_LOOKUP, 0.2, cat="python_function", advance=False)
        r.host_us += SERVE_HOST_US / SERVE_GUARD_CALLS


#: The range vLLM's model runner opens around each engine step, named after the batch it runs (survey h37-survey15:
#: a 4-rank GH200 decode profile, ``execute_context_0(0)_generation_1(1)``: no request in prefill, one decoding).
VLLM_STEP_RANGE = "execute_context_0(0)_generation_1(1)"


def serving_ranges(ranks: list[Rank], n: int) -> None:
    """``serving``'s worker profiled as vLLM's profiler does by default, without ``with_stack``: no Python span, so
    no ``execute_model``; each engine step is the ``record_function`` range named after its batch (``VLLM_STEP_RANGE``),
    its input preparation untraced Python."""
    _engine_step(ranks[0], VLLM_STEP_RANGE, "user_annotation", None)


def _engine_step(r: Rank, span_name: str, span_cat: str, prepare: str | None) -> None:
    """One decode step of the worker inside the span ``span_name``: the input preparation (a Python span named
    ``prepare``, or untraced), the CUDA-graph replay, the sampled tokens' copy to the host."""
    span = r.cpu(span_name, 0.0, cat=span_cat, advance=False)
    start = r.host_us
    if prepare is None:
        r.host_us += SERVE_HOST_US
    else:
        r.cpu(prepare, SERVE_HOST_US, cat="python_function")
    r.copy_h2d(0.5, 20.0)
    kernels: list[tuple[str, float]] = []
    for _ in range(SERVE_LAYERS):
        kernels += [(VLLM_CACHE, 4.0), (GEMM_FWD, SERVE_GEMM_US), (VLLM_ALLREDUCE, SERVE_AR_US),
                    (GEMM_FWD, SERVE_GEMM_US), (VLLM_ALLREDUCE, SERVE_AR_US)]
    _graph_step(r, kernels)
    r.kernel("aten::argmax", SUM_BF16, 15.0)
    r.sync("aten::to")  # sampled tokens to the host (.tolist())
    span["dur"] = round(r.host_us - start, 3)
    span["ts"] = round(start, 3)
    r.host_us += 300.0  # the scheduler between engine steps


#: A first forward pass: each kernel's first launch loads its module (CUDA's lazy loading), the GPU idle meanwhile.
COLD_LAUNCH_US = (18_000.0, 9_000.0, 6_000.0, 4_000.0)
#: Four distinct GEMM kernels (tile configurations), one per layer: a module loads on its kernel's first launch only,
#: so each slow first launch is of a kernel not launched before.
COLD_GEMMS = tuple(GEMM_FWD.replace("256x128", tile) for tile in ("256x128", "128x128", "128x256", "64x128"))


def cold_forward(ranks: list[Rank], n: int) -> None:
    """Inference forward passes with ``prof.step()``, the first one of the process: its first launch of each of
    four kernels takes milliseconds (module loading), the later passes launch in microseconds."""
    r = ranks[0]

    def body(rr: Rank) -> None:
        for i in range(4):
            lazy = n == 2 and i < len(COLD_LAUNCH_US)
            rr.kernel("aten::linear", COLD_GEMMS[i], 300.0, launch_us=COLD_LAUNCH_US[i] if lazy else 7.0,
                      args=mm_args("aten::linear", 4096, 4096, 4096))
            rr.kernel("aten::gelu", RELU_BF16, 40.0)
        rr.sync("aten::to")
    r.step(n, body)


#: torch.compile's first call: its compile spans nest as dynamo's ``(dynamo_timed)`` ones do in a real trace
#: (``_compile.compile_inner`` around ``compile_fx_inner`` around ``async_compile``), in ms.
COMPILE_NEST_MS = (("_compile.compile_inner (dynamo_timed)", 600.0), ("compile_fx_inner (dynamo_timed)", 400.0),
                   ("async_compile.wait", 150.0))


#: nvFuser's first call of a fusion (Lightning Thunder's executor): its NVTX ranges nest the new kernel runtime's
#: build around each kernel's compile around NVRTC's, in ms (a real H200 capture: 220-574 ms each).
NVFUSER_NEST_MS = (("FusionExecutorCache::getKernelRuntimeFor::compileNewKRT", 500.0), ("KernelExecutor::compile", 450.0),
                   ("executor_utils::Nvrtc::CompileProgram", 400.0))


def _first_call(nest: tuple[tuple[str, float], ...]):
    """Forward passes of a compiled model, the first of which compiles it: the ``nest`` of compile spans on the
    host (each inside the one before, all starting together: the time they cover is the first's), then the same
    kernels in every pass."""
    def scenario(ranks: list[Rank], n: int) -> None:
        r = ranks[0]

        def body(rr: Rank) -> None:
            if n == 2:
                start = rr.host_us
                for name, ms_ in nest:
                    rr.cpu(name, ms_ * 1000, advance=False)
                    rr.host_us += 1.0
                rr.host_us = start + nest[0][1] * 1000
            for _ in range(4):
                rr.kernel("aten::linear", GEMM_FWD, 300.0, args=mm_args("aten::linear", 4096, 4096, 4096))
                rr.kernel("aten::gelu", RELU_BF16, 40.0)
            rr.sync("aten::to")
        r.step(n, body)
    return scenario


#: torch.compile's: nested compile spans whose durations sum to 1.15 s and cover 0.6 s.
#: A process's first calls: CUDA context creation in the first cudaMalloc (ms), then each of its first kernels after
#: the host loads its module and runs the first call's Python (us), as in a real CuPy start-up window (survey
#: h37-survey3: recon-stream, cudaMalloc 292 ms, 7 kernels of 2-3 us 0.3-1.1 ms apart).
STARTUP_CONTEXT_MS, STARTUP_LOAD_US, STARTUP_PY_US = 300.0, 150.0, 500.0
#: The first kernels: two of them run twice (a repeat inside the window does not make it steady).
STARTUP_KERNELS = (RELU_BF16, SUM_BF16, RELU_BF16, SUM_BF16.replace("128, 4", "256, 2"), RELU_BF16.replace("<8,", "<4,"))


def startup_pass(ranks: list[Rank], n: int) -> None:
    """One pass of a process's start-up and nothing else, no ``prof.step()``: the context's creation, then five small
    first kernels, each after its module's load and the first call's Python.  The host time between them is the
    first calls' (one-time) cost: there is no steady step to judge launch overhead on.  Only the first call does
    anything (one pass, whatever ``steps``)."""
    if n == 2:
        _start_up(ranks[0], STARTUP_LOAD_US, STARTUP_PY_US, framework=True)


#: :func:`paused_loop`: each step's kernels and the host pause that two of its steps hold (an unrecorded wait: a
#: checkpoint write, a log flush), in us, and the steps (``ProfilerStep#N``) that hold it.
PAUSED_KERNEL_US, PAUSED_KERNELS, PAUSE_US, PAUSED_STEPS = 400.0, 8, 90_000.0, (5, 9)


def paused_loop(ranks: list[Rank], n: int) -> None:
    """A steady loop of ``PAUSED_KERNELS`` kernels of ``PAUSED_KERNEL_US`` a step whose steps ``PAUSED_STEPS`` also
    hold a host pause of ``PAUSE_US`` no event records, before their kernels; each step ends reading its result back, so
    no step's GPU work queues into the next.  Truth by construction: the median step is a steady one's (the kernels'
    ``PAUSED_KERNELS * PAUSED_KERNEL_US`` and their launches), and the two paused steps, ``PAUSE_US`` longer, lift the
    mean far above it."""
    def body(r: Rank) -> None:
        if n in PAUSED_STEPS:
            r.host_us += PAUSE_US
        for _ in range(PAUSED_KERNELS):
            r.kernel("aten::mm", GEMM_FWD, PAUSED_KERNEL_US)
        r.sync("aten::item")  # the step's result read back: the host never runs ahead of the GPU
    ranks[0].step(n, body)


def uneven_loop(ranks: list[Rank], n: int) -> None:
    """:func:`paused_loop`'s control: steps alternating 1 and 9 kernels of ``PAUSED_KERNEL_US``, each ending on a
    read-back.  Truth by construction: the step times vary by ~80% (stddev / mean) but evenly around the mean -- with
    an even count of kept steps the median is the mean -- so no minority of long steps sets it."""
    def body(r: Rank) -> None:
        for _ in range(1 if n % 2 else 9):
            r.kernel("aten::mm", GEMM_FWD, PAUSED_KERNEL_US)
        r.sync("aten::item")
    ranks[0].step(n, body)


def _start_up(r: Rank, load_us: float, py_us: float, framework: bool) -> None:
    """:func:`startup_pass`'s calls on ``r``: the context's creation in a ``cudaMalloc``, then each first kernel after
    its module's load (``load_us``) and ``py_us`` of the first call's host work -- an ATen op launching it
    (``framework``), else a program of no framework's ops (CuPy's): Python frames (``with_stack``) and bare launches."""
    def call(name: str, cbid: int, us: float) -> None:  # a runtime call of no device work, as CUPTI records it
        r.corr += 1
        r.host.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": r.pid, "tid": r.pid,
                       "ts": round(r.host_us, 3), "dur": round(us, 3), "args": {"cbid": cbid, "correlation": r.corr}})
        r.host_us += us

    call("cudaMalloc", 20, STARTUP_CONTEXT_MS * 1000)
    for name in STARTUP_KERNELS:
        if name not in {e["name"] for e in r.gpu}:
            call("cuModuleLoadData", 0, load_us)
        if framework:
            r.cpu("aten::empty", py_us)  # the first call's own host work (allocation, caches filled)
            r.kernel("aten::fill_", name, 3.0)
        else:
            r.cpu("first_call (cupy/_core/_kernel.py:120)", py_us, cat="python_function")
            r.kernel(None, name, 3.0)


compile_first_call = _first_call(COMPILE_NEST_MS)
#: nvFuser's: its own compile ranges around NVRTC's, covering 0.5 s.
fuser_first_call = _first_call(NVFUSER_NEST_MS)


#: A step whose input is made on the CPU: ``torch.randn`` of a CPU tensor (a real T4 trace: 10 ms a step), its copy
#: to the GPU, then one long kernel.
CPU_INPUT_MS, CPU_INPUT_KERNEL_US = 10.0, 7000.0


def cpu_input(ranks: list[Rank], n: int) -> None:
    """Forward passes whose input is generated on the host each step: an ATen op that runs 10 ms with no GPU runtime
    call (``aten::randn`` > ``aten::normal_``), a copy to the GPU, one 7 ms kernel.  The GPU's idle 10 ms is the host
    computing, never a launch wait: one launch a step."""
    ranks[0].step(n, _cpu_input_body)


def _cpu_input_body(rr: Rank) -> None:
    start = rr.host_us
    rr.cpu("aten::randn", CPU_INPUT_MS * 1000, advance=False)
    rr.host_us += 2.0
    rr.cpu("aten::normal_", CPU_INPUT_MS * 1000 - 4.0)
    rr.host_us = start + CPU_INPUT_MS * 1000
    rr.copy_h2d(4.0, 700.0)
    rr.kernel("aten::mm", GEMM_FWD, CPU_INPUT_KERNEL_US, args=mm_args("aten::mm", 1024, 1024, 1024))
    rr.sync("aten::to")


#: The program's own range around each step's body, as CUDA MODE's lecture-1 profiler script writes it
#: (``with record_function("model_inference"):`` inside the ``prof.step()`` loop).
STEP_BODY_RANGE = "model_inference"


#: CUDA MODE lecture 1's loop, scaled down: ``torch.square(torch.randn(N, N).cuda())`` under a
#: ``record_function``: the CPU ``randn``, a pageable copy the host waits for, Python freeing the CPU tensor, one kernel.
RANDN_CPU_MS, RANDN_COPY_US, RANDN_FREE_US, RANDN_KERNEL_US = 30.0, 3000.0, 800.0, 60.0


def randn_on_host(ranks: list[Rank], n: int, after_us: float = 0.0) -> None:
    """Each step makes a tensor with a CPU ``aten::randn`` (``RANDN_CPU_MS``, no runtime call) inside one
    ``record_function`` range over the step body, copies it from pageable memory (the host blocked until the copy
    is done), frees the CPU tensor and squares it on the GPU: the GPU idles through the randn between steps.
    ``after_us``: an op inside the ``randn`` after its ``normal_`` returned (:func:`_randn_and_copy`)."""

    def body(rr: Rank) -> None:
        start = rr.host_us
        mark = rr.cpu(STEP_BODY_RANGE, 0.0, cat="user_annotation", advance=False)
        _randn_and_copy(rr, after_us)
        rr.host_us += RANDN_FREE_US
        rr.kernel("aten::square", TANH_F32, RANDN_KERNEL_US)
        mark["dur"] = round(rr.host_us - start, 3)
    ranks[0].step(n, body)


def randn_inner_op_after(after_us: float = 300.0) -> Scenario:
    """``randn_on_host`` whose ``randn`` runs one more inner op after its ``normal_`` returned, ``after_us`` before
    the ``randn`` ends: the host computes the input for the whole ``randn`` as before (``host_compute_ms``)."""
    base = SCENARIOS["randn_on_host"]
    return Scenario(1, partial(randn_on_host, after_us=after_us), base.expect_top, base.expect_not,
                    base.note + f"; an inner aten::empty {after_us:g} us before the randn's end, after its normal_",
                    dtype=base.dtype, extra=base.extra)


def _randn_and_copy(rr: Rank, after_us: float = 0.0) -> None:
    """A CPU ``aten::randn`` (the CPU tensor's ``aten::empty`` inside it, as PyTorch records one), then its pageable
    copy to the GPU, the host blocked until the copy is done.  ``after_us`` > 0: the ``normal_`` returns that long
    (less 2 us) before the ``randn`` ends and a 20-us ``aten::empty`` runs inside the ``randn`` after it -- ops nest
    inside a computing op as well as before its long inner one."""
    start = rr.host_us
    rr.cpu("aten::randn", RANDN_CPU_MS * 1000, advance=False)
    rr.host_us += 2.0
    rr.cpu("aten::empty", 20.0)
    rr.cpu("aten::normal_", RANDN_CPU_MS * 1000 - 24.0 - after_us)
    if after_us > 0:
        rr.host_us += 2.0
        rr.cpu("aten::empty", 20.0)
    rr.host_us = start + RANDN_CPU_MS * 1000
    rr.copy_h2d(400.0, RANDN_COPY_US, pageable=True)


def randn_next_input(ranks: list[Rank], n: int) -> None:
    """``randn_on_host`` turned around: each step first squares the tensor the step before made, then makes and
    copies the next one -- the CPU ``randn`` now sits after the step's first launch, between the GPU's bursts: host
    work between steps, not input wait before the first launch."""

    def body(rr: Rank) -> None:
        rr.kernel("aten::square", TANH_F32, RANDN_KERNEL_US)
        rr.host_us += RANDN_FREE_US
        _randn_and_copy(rr)
    ranks[0].step(n, body)


def cpu_input_annotated(ranks: list[Rank], n: int) -> None:
    """``cpu_input`` with the whole step body inside one ``record_function`` range: the range is outermost over the
    ``aten::randn`` that fills the GPU's idle, and spans the step, so it says nothing of where the time goes
    (survey h37-survey11: CranberryYan/CUDA-Optimization's RTX 3080 trace, a 654 ms CPU ``randn`` a step)."""

    def body(rr: Rank) -> None:
        start = rr.host_us
        mark = rr.cpu(STEP_BODY_RANGE, 0.0, cat="user_annotation", advance=False)
        _cpu_input_body(rr)
        mark["dur"] = round(rr.host_us - start, 3)
    ranks[0].step(n, body)


#: Lightning's own ranges (``PyTorchProfiler``, 2.x names), as ``wild/lightning_cpu_fit`` records them: one around each
#: iteration, the strategy's phases inside it, and the loop's fetch of the next batch between two iterations.
PL_ITERATION = "[pl][profile]run_training_batch"
PL_TRAINING_STEP = "[pl][profile][Strategy]SingleDeviceStrategy.training_step"
PL_BACKWARD = "[pl][profile][Strategy]SingleDeviceStrategy.backward"
PL_NEXT_BATCH = "[pl][profile][_TrainingEpochLoop].train_dataloader_next"
PL_FETCH_US = 2_000.0


def lightning_fit(ranks: list[Rank], n: int) -> None:
    """Lightning's fit loop under its ``PyTorchProfiler``, on a GPU, in the shape of ``wild/lightning_cpu_fit``: each
    iteration is one ``run_training_batch`` range around the strategy's ``training_step`` (the forward), its
    ``backward`` and the optimizer's step, the loss read back (``.item()``, the progress bar); Lightning calls
    ``prof.step()`` as ``training_step`` returns, so ``ProfilerStep#n`` opens between a forward and its backward and
    closes as the next forward ends; the loop fetches the next batch between two ranges.  Truth by construction: an
    iteration is its range's start to the next range's start, holding its own forward, backward and update."""
    r = ranks[0]
    batch = r.cpu(PL_ITERATION, 0.0, cat="user_annotation", advance=False)
    r.host_us += 5.0
    r.step_kernels = []
    phase = r.cpu(PL_TRAINING_STEP, 0.0, cat="user_annotation", advance=False)
    for _ in range(4):
        r.kernel("aten::addmm", GEMM_FWD, 180.0, args=SHAPES_4096["addmm"])
        r.kernel("aten::clamp_min", RELU_BF16, 20.0)
    phase["dur"] = round(r.host_us - phase["ts"], 3)
    _pl_profiler_step(r, n)
    r.host_us += 5.0
    phase = r.cpu(PL_BACKWARD, 0.0, cat="user_annotation", advance=False)
    for _ in range(4):
        r.kernel("aten::threshold_backward", RELU_BF16, 35.0)
        r.kernel("aten::mm", GEMM_BWD[0], 170.0, args=SHAPES_4096["mm"])
        r.kernel("aten::mm", GEMM_BWD[1], 160.0, args=SHAPES_4096["mm"])
        r.kernel("aten::sum", SUM_BF16, 22.0)
    phase["dur"] = round(r.host_us - phase["ts"], 3)
    optimizer(r)
    r.sync()
    batch["dur"] = round(r.host_us - batch["ts"], 3)
    r.cpu(PL_NEXT_BATCH, PL_FETCH_US, cat="user_annotation")


#: the user's ``record_function`` around an evaluation pass (``with torch.profiler.record_function("evaluate")``)
EVALUATE_RANGE = "evaluate"


def evaluation_loop(every: int = 4, batches: int = 2, words: str = "record_function"
                    ) -> Callable[[list[Rank], int], None]:
    """A training loop under ``torch.profiler`` that evaluates every ``every`` training steps: each ``prof.step()``
    iteration is ``torch_healthy_bf16``'s training step (the MLP's forward and backward, the SGD update, ``.item()``);
    after every ``every``-th, inside the same ``ProfilerStep#n`` (``prof.step()`` is the training loop's: its mark runs
    from one call to the next, so it holds what the loop ran after the update), ``model.eval()`` and ``with
    torch.no_grad():`` around ``batches`` forwards on held-out data (the 4 Linear + ReLU forward, its loss read back),
    then ``model.train()``.  ``words``: ``"record_function"`` -- the evaluation inside the user's
    ``record_function("evaluate")`` (:data:`EVALUATE_RANGE`, a ``user_annotation``); ``"none"`` -- nothing names it:
    ``model.eval()``, ``model.train()`` and ``torch.no_grad`` are Python that launches nothing and records no op, so
    the trace holds the forwards' ops and kernels alone (a stack trace, ``with_stack=True``, is not written here).

    Truth: the training step is ``torch_healthy_bf16``'s; each evaluation batch is its forward's 8 kernels (800 us on
    the GPU) and a read-back, no backward and no update."""
    def body(ranks: list[Rank], n: int) -> None:
        r = ranks[0]
        evaluating = (n - 1) % every == 0  # the loop's every-th training step (the first profiled one is n=2)

        def turn(rr: Rank) -> None:
            _healthy(rr)
            if evaluating:
                _evaluate(rr, batches, words)
        r.step(n, turn)
    return body


def _evaluate(r: Rank, batches: int, words: str) -> None:
    """``batches`` forwards of the MLP under ``torch.no_grad()``, each read back, in ``record_function("evaluate")``
    where ``words`` says so."""
    mark = r.cpu(EVALUATE_RANGE, 0.0, cat="user_annotation", advance=False) if words == "record_function" else None
    r.host_us += 5.0
    for _ in range(batches):
        for _ in range(4):
            r.kernel("aten::addmm", GEMM_FWD, 180.0, args=SHAPES_4096["addmm"])
            r.kernel("aten::clamp_min", RELU_BF16, 20.0)
        r.sync()
    if mark is not None:
        mark["dur"] = round(r.host_us - mark["ts"], 3)
    r.host_us += 5.0


def _pl_profiler_step(r: Rank, n: int) -> None:
    """``prof.step()`` as Lightning calls it: the open ``ProfilerStep`` mark closes here and ``ProfilerStep#n`` opens
    (the marks cover the interval between two calls, not an iteration)."""
    for e in reversed(r.host):
        if e["name"].startswith("ProfilerStep#"):
            e["dur"] = round(r.host_us - e["ts"], 3)
            break
    r.cpu(f"ProfilerStep#{n}", 0.0, cat="user_annotation", advance=False)


#: ``lightning_fit`` as a run (kept out of ``SCENARIOS``: its truth is the steps' bounds, not a finding).
LIGHTNING_FIT = Scenario(1, lightning_fit, [], ["input_bound", "step_gaps"], "Lightning's fit loop: ProfilerStep marks "
                         "opened as each training_step returns, iterations bounded by run_training_batch")


#: ATen's kernels of eager attention in bf16 (``softmax(q @ k.transpose(-2, -1) * scale) @ v``, PyTorch 2.x on CUDA):
#: the batched matmuls, the scale's multiply, the softmax and its gradient.
BMM_BF16 = "nvjet_sm90_tst_128x128_64x4_1x2_h_bz_coopA_NNN"
SCALE_BF16 = ("void at::native::vectorized_elementwise_kernel<8, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, "
              "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, ...)")
SOFTMAX_FWD_BF16 = ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, "
                    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)")
SOFTMAX_BWD_BF16 = ("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<8, c10::BFloat16, float, c10::BFloat16, "
                    "at::native::(anonymous namespace)::SoftMaxBackwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, "
                    "c10::BFloat16 const*, int)")
#: Layers of the eager-attention training step, and its kernels' times (us): a projection, a bmm, the scale, the
#: softmax forward and backward.
ATTN_LAYERS = 6
ATTN_US = {"proj": 120.0, "bmm": 90.0, "scale": 40.0, "softmax": 150.0, "softmax_bwd": 180.0}


def _attention_forward(r: Rank) -> None:
    """One layer's eager attention forward: the QKV projection, ``q @ k^T``, the scale, the softmax, ``p @ v``, the
    output projection."""
    r.kernel("aten::addmm", GEMM_FWD, ATTN_US["proj"])
    r.kernel("aten::bmm", BMM_BF16, ATTN_US["bmm"])
    r.kernel("aten::mul", SCALE_BF16, ATTN_US["scale"])
    r.kernel("aten::_softmax", SOFTMAX_FWD_BF16, ATTN_US["softmax"])
    r.kernel("aten::bmm", BMM_BF16, ATTN_US["bmm"])
    r.kernel("aten::addmm", GEMM_FWD, ATTN_US["proj"])


def _attention_backward(r: Rank) -> None:
    """One layer's backward, as autograd runs it: the output projection's two GEMMs, ``BmmBackward0`` of ``p @ v``
    (the probabilities' gradient, then v's), the softmax's gradient, the scale's, ``BmmBackward0`` of ``q @ k^T``
    (q's, then k's), the QKV projection's two GEMMs."""
    for k in GEMM_BWD:
        r.kernel("aten::mm", k, ATTN_US["proj"])
    for _ in range(2):
        r.kernel("aten::bmm", BMM_BF16, ATTN_US["bmm"])
    r.kernel("aten::_softmax_backward_data", SOFTMAX_BWD_BF16, ATTN_US["softmax_bwd"])
    r.kernel("aten::mul", SCALE_BF16, ATTN_US["scale"])
    for _ in range(2):
        r.kernel("aten::bmm", BMM_BF16, ATTN_US["bmm"])
    for k in GEMM_BWD:
        r.kernel("aten::mm", k, ATTN_US["proj"])


def eager_attention_train(r: Rank) -> None:
    """A training step of ``ATTN_LAYERS`` layers of attention written op by op (no SDPA): each layer's forward runs
    matmul -> scale -> softmax -> matmul, its backward matmul -> softmax backward -> scale -> matmul; then the
    optimizer and ``.item()``.  Truth: ``ATTN_LAYERS`` layers, each run twice; the kernels a fused attention does
    not run are the scale and softmax kernels of both passes."""
    for _ in range(ATTN_LAYERS):
        _attention_forward(r)
    for _ in range(ATTN_LAYERS):
        _attention_backward(r)
    optimizer(r)
    r.sync()



#: autocast's dtype cast of an fp32 weight to bf16 before each GEMM, and the bias add after it.
CAST_TO_BF16 = ("void at::native::vectorized_elementwise_kernel<4, at::native::bfloat16_copy_kernel_cuda("
                "at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(int, ...)")
BIAS_ADD_BF16 = ("void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
                 "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)")
AUTOCAST_GEMM_US, AUTOCAST_CAST_US, AUTOCAST_BIAS_US, AUTOCAST_LAYERS = 60.0, 90.0, 30.0, 24
#: [2048, 4096] x [4096, 1024]: 17.2 GFLOP in 60 us, 286 TFLOP/s -- a rate an H100 reaches (989 dense bf16)
AUTOCAST_SHAPE = (2048, 4096, 1024)


def _autocast_linear(r: Rank) -> None:
    """One ``aten::linear`` under autocast: it launches the weight's cast, the GEMM and the bias add itself (no
    child op records them), so the op's kernels are more than its GEMM."""
    t0 = r.host_us
    op = r.cpu("aten::linear", 0.0, advance=False)
    op["args"].update(linear_args(*AUTOCAST_SHAPE))
    r.host_us += 1.0
    for name, us in ((CAST_TO_BF16, AUTOCAST_CAST_US), (GEMM_FWD, AUTOCAST_GEMM_US), (BIAS_ADD_BF16, AUTOCAST_BIAS_US)):
        r.kernel(None, name, us)
    op["ts"], op["dur"] = round(t0, 3), round(r.host_us - t0 + 1.0, 3)
    r.host_us += 2.0


def autocast_forward(ranks: list[Rank], n: int) -> None:
    """An eager bf16 autocast forward pass per ``prof.step()``: no backward, no optimizer."""
    def body(rr: Rank) -> None:
        for _ in range(AUTOCAST_LAYERS):
            _autocast_linear(rr)
        rr.sync("aten::to")
    ranks[0].step(n, body)


#: A generate() loop as the real H200 capture shows it (tests/fixtures/h200_jobs/hf_generate_llama): per token, each
#: layer's GEMMs and element-wise kernels, then the logits' argmax and a sync reading the stop flag.
DECODE_LAYERS, DECODE_GEMM_US, DECODE_ELT_US = 8, 3.0, 2.5


def decode_unmarked(ranks: list[Rank], n: int) -> None:
    """One token of a Hugging Face ``generate()``-style decode loop, no ``prof.step()`` and no span: the prefill
    (call 1, a longer first forward with other kernels) then one forward pass per token, each ending with the host
    waiting for the GPU (``.item()`` on the stop flag).  Only the launch sequence's period says where a step is."""
    r = ranks[0]
    prefill = n == 2  # the first call (the handler numbers steps from 2)
    for _ in range(DECODE_LAYERS):
        r.kernel("aten::linear", GEMM_FWD, DECODE_GEMM_US * (8 if prefill else 1),
                 args=mm_args("aten::linear", 512 if prefill else 4, 1024, 1024))
        r.kernel("aten::gelu", RELU_BF16, DECODE_ELT_US)
        if prefill:
            r.kernel("aten::tanh", TANH_F32, DECODE_ELT_US)  # the prefill's own kernels: not in the period
        r.kernel("aten::linear", GEMM_FWD, DECODE_GEMM_US * (8 if prefill else 1),
                 args=mm_args("aten::linear", 512 if prefill else 4, 1024, 1024))
    r.kernel("aten::argmax", SUM_BF16, DECODE_ELT_US)
    r.sync("aten::item")
    r.host_us += 150.0  # logits processing and stopping criteria in Python


#: CUPTI's activity buffer request as Kineto writes it (``overhead``, on a process of its own): the launch after it waits
#: for it (pytorch/kineto#1020); SURVEY h37-survey45 read 0.33-0.45 ms ones in TraceLens' B300 MoE benchmarks.
BUFFER_REQUEST_US = 450.0


def buffer_request(r: Rank, us: float = BUFFER_REQUEST_US) -> None:
    """The profiler requests an activity buffer now; the program's next launch waits until it returns."""
    r.host.append({"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": 0,
                   "ts": round(r.host_us + 2.0, 3), "dur": round(us, 3)})
    r.host_us += us + 5.0


def requested_iteration(r: Rank, request: bool, turn_us: float) -> None:
    """One short host-bound iteration (12 small GEMMs, then a sync): the profiler's buffer request before its first
    launch where ``request``, and ``turn_us`` of the loop's own Python before that launch, which nothing records --
    the GPU idles from the last sync to this first kernel.  Truth by construction: every iteration's work is the
    same, so a kept iteration beside left-out ones holds the idle before and after it."""
    if request:
        buffer_request(r)
    r.host_us += turn_us
    for _ in range(12):
        r.kernel("aten::mm", GEMM_FWD, 6.0, launch_us=12.0)
    r.sync()


def requests_in(steps: tuple[int, ...], turn_us: float) -> Callable[[list[Rank], int], None]:
    """``prof.step()`` iterations (:func:`requested_iteration`), the profiler's buffer request in those numbered
    ``steps`` (the handler numbers them from 2)."""
    return lambda ranks, n: ranks[0].step(n, lambda r: requested_iteration(r, n in steps, turn_us))


def ranks_requests(steps: dict[int, tuple[int, ...]], late_us: float, turn_us: float
                   ) -> Callable[[list[Rank], int], None]:
    """Each rank's ``prof.step()`` iterations (:func:`requested_iteration`), its own profiler's buffer request in the
    steps ``steps[rank]`` numbers, rank k starting ``k * late_us`` after rank 0 (no collective ties them).  Truth by
    construction: each rank's iterations are alike but for its own requests, and each file holds its own (Kineto
    writes them on pid -1 in every rank's file)."""
    def body(ranks: list[Rank], n: int) -> None:
        for r in ranks:
            if n == 2:
                r.host_us += r.rank * late_us
            r.step(n, lambda x: requested_iteration(x, n in steps.get(x.rank, ()), turn_us))
    return body


def spanned_requests(first_request: bool, turn_us: float) -> Callable[[list[Rank], int], None]:
    """A benchmark's iterations each in a ``record_function`` span and no ``prof.step()`` (TraceLens' MoE benchmarks:
    ``MoE[...]`` x3, a sync inside each), the profiler's buffer request in the first where ``first_request``; the
    span ends at the sync, the loop's turn lies between spans."""
    def body(ranks: list[Rank], n: int) -> None:
        r = ranks[0]
        start = r.host_us
        mark = r.cpu("MoE[experts=64, tokens=16]", 0.0, cat="user_annotation", advance=False)
        requested_iteration(r, first_request and n == 2, 0.0)
        mark["dur"] = round(r.host_us - start, 3)
        r.host_us += turn_us
    return body


#: :func:`requested_pass`: its layers, each layer's own host work (a module's Python, recorded) and GEMM, in us.
PASS_LAYERS, PASS_HOST_US, PASS_GEMM_US = 24, 120.0, 20.0


def requested_pass(request_us: float, where: str = "python", fetch_us: float = 0.0) -> Callable[[list[Rank], int], None]:
    """One eager forward pass and no ``prof.step()`` (a script that profiles one batch): ``PASS_LAYERS`` layers, each
    ``PASS_HOST_US`` of its module's recorded Python and then one ``PASS_GEMM_US`` GEMM -- the host is far slower than
    the GPU.  Where ``request_us``, the profiler's activity buffer request (:func:`buffer_request`) lies in the middle
    layer: inside its module's Python (``where`` "python"), inside the op that launches its GEMM, before the launch
    (``"launch"``: the launch waits for it, as torchprof-XDU's ResNet-50 pass on an RTX 5070 Ti Laptop GPU records one
    inside its input's ``aten::copy_``), or between the two, no event of the program's around it (``"between"``).
    ``fetch_us``: the pass first fetches its batch from a single-process DataLoader (its ``__next__``, the GPU idle);
    ``where`` "fetch" puts the request inside that fetch instead (the loader's thread waits for it: h37-ledger59).
    Only the first call does anything (one pass, whatever ``steps``).

    Truth by construction: the host's own work and launches the GPU waits for are the same with or without the
    request and the fetch; the request is the profiler's, ``request_us`` of idle a run without the profiler never has,
    and the fetch the input pipeline's own time."""
    def body(ranks: list[Rank], n: int) -> None:
        if n != 2:
            return
        r = ranks[0]
        if fetch_us and where == "fetch" and request_us > 0:  # the fetch's own time, the request in its middle
            fetch = r.cpu(DATALOADER, 0.0, cat="user_annotation", advance=False)
            start = r.host_us
            r.host_us += fetch_us / 2
            buffer_request(r, request_us)
            r.host_us += fetch_us / 2 - 5.0
            fetch["dur"] = round(r.host_us - start, 3)
        elif fetch_us:
            r.cpu(DATALOADER, fetch_us, cat="user_annotation")
        for i in range(PASS_LAYERS):
            asked = request_us > 0 and i == PASS_LAYERS // 2 and where != "fetch"
            frame = r.cpu(f"nn.Module: Linear_{i}", PASS_HOST_US, cat="python_function", advance=False)
            r.host_us += PASS_HOST_US
            if asked and where == "python":
                buffer_request(r, request_us)
                frame["dur"] = round(PASS_HOST_US + request_us + 5.0, 3)
            elif asked and where == "between":
                buffer_request(r, request_us)
            if asked and where == "launch":
                op = r.cpu("aten::mm", 0.0, advance=False)
                start = r.host_us
                buffer_request(r, request_us)
                r.kernel(None, GEMM_FWD, PASS_GEMM_US)
                op["dur"] = round(r.host_us - start, 3)
            else:
                r.kernel("aten::mm", GEMM_FWD, PASS_GEMM_US)
        r.sync("aten::item")
    return body


#: One call of an unmarked loop whose kernels are all different (no layer repeats inside it): a small model's
#: forward of distinct ops, or a solver's step -- the launch sequence repeats once a call and nowhere inside one.
SYNCED_CALL = (("aten::linear", GEMM_FWD, 6.0), ("aten::tanh", TANH_F32, 2.5), ("aten::mul", SCALE_BF16, 2.0),
               ("aten::_softmax", SOFTMAX_FWD_BF16, 3.0), ("aten::matmul", BMM_BF16, 5.0),
               ("aten::to", CAST_TO_BF16, 2.0), ("aten::add", BIAS_ADD_BF16, 2.0), ("aten::relu", RELU_BF16, 2.0),
               ("aten::sum", SUM_BF16, 2.5))


def synced_calls(ranks: list[Rank], n: int, reads: tuple[int, ...] = (3, 9), turn_us: float = 10.0,
                 kernels: tuple[tuple[str, str, float], ...] = SYNCED_CALL) -> None:
    """One call of an unmarked loop (no ``prof.step()``, no span): ``kernels`` launched in order, the host reading a
    value back (``.item()``: a router's counts mid-call, the stop flag at its end) after each count of launches in
    ``reads``, and its Python turn (``turn_us``) after each read -- so the loop's boundary pauses no longer than a read
    inside the call.  Truth by construction: one call, ``len(kernels)`` launches, a step, beginning at its first
    launch; ``reads=(len(kernels),)`` is the loop that syncs once a call."""
    r = ranks[0]
    for k, (op, name, us) in enumerate(kernels, 1):
        r.kernel(op, name, us)
        if k in reads:
            r.sync("aten::item")
            r.host_us += turn_us


def synced_layers(ranks: list[Rank], n: int) -> None:
    """One forward pass of a model whose every block ends with the host waiting for the GPU (a mixture-of-experts
    router reading its counts back: a real MoE forward synced twice a block), recorded with ``with_modules``: the
    whole pass is one ``nn.Module: Net_0`` call.  The blocks repeat with the waits a loop's calls have; the model call
    around them says they are one pass, never steps.  Only the first call does anything (one pass, whatever
    ``steps``)."""
    if n != 2:
        return
    r = ranks[0]
    call = r.cpu("nn.Module: Net_0", 0.0, cat="user_annotation", advance=False)
    start = r.host_us
    r.host_us += 5.0
    for _ in range(DECODE_LAYERS):
        r.kernel("aten::linear", GEMM_FWD, DECODE_GEMM_US, args=mm_args("aten::linear", 4, 1024, 1024))
        r.kernel("aten::gelu", RELU_BF16, DECODE_ELT_US)
        r.kernel("aten::linear", GEMM_FWD, DECODE_GEMM_US, args=mm_args("aten::linear", 4, 1024, 1024))
        r.sync("aten::item")
        r.host_us += 150.0
    call["dur"] = round(r.host_us - start + 5.0, 3)
    r.host_us += 5.0


# ---- memory (issue #29): profile_memory=True, a training step's allocations as PyTorch's caching allocator makes them

def _alloc_op(r: Rank, op: str, kernel: str, us: float, nbytes: int, args: dict[str, Any] | None = None) -> int:
    """``op`` launches ``kernel`` and allocates its ``nbytes`` output inside itself; the block's address."""
    t = r.host_us
    r.kernel(op, kernel, us, args=args)
    return r.malloc(nbytes, at=t + 1.0)


def _backward_node(r: Rank, node: str, frees: list[int], grad_bytes: int) -> int:
    """One autograd node (``autograd::engine::evaluate_function: <node>``): its weight gradient's GEMM, the gradient
    allocated inside it, and the activations it saved released at its end."""
    t = r.host_us
    ev = r.cpu(f"autograd::engine::evaluate_function: {node}", 0.0, advance=False)
    r.host_us += 1.0
    r.kernel("aten::mm", GEMM_BWD[0], 170.0, args=SHAPES_4096["mm"])
    g = r.malloc(grad_bytes, at=t + 2.0)
    for a in frees:
        r.mfree(a, at=r.host_us - 0.5)
    r.host_us += 1.0
    ev["dur"] = round(r.host_us - t, 3)
    return g


def memory_training(act_bytes: Callable[[int, int], int], layers: int, grad_bytes: int,
                    pin_bytes: int = 0, trial_bytes: int = 0, trial_step: int = 2,
                    closure: bool = False) -> Callable[[Rank], None]:
    """A training step whose memory the allocator sees: ``layers`` forward GEMMs each keeping an activation of
    ``act_bytes(step, layer)`` for the backward, a backward that frees them and makes each layer's gradient, the
    optimizer's step, ``zero_grad(set_to_none=True)``.  ``pin_bytes``: every other backward node also keeps a small
    buffer for the next step (a running statistic): it lands in a freed activation's segment and pins it there.
    ``trial_bytes``: the first profiled step's last forward op also makes and frees a one-time buffer of that size
    while every activation is live (an autotuner's trial workspace): that step's peak is ``trial_bytes`` above every
    later step's (``trial_step``: the profiled step that makes it, the first by default).  ``closure``: the step is
    ``optimizer.step(closure)``'s, as PyTorch Lightning's automatic optimization runs it under its profiler: the
    forward (inside Lightning's ``[pl][module]`` annotation) and the backward run inside ``Optimizer.step#AdamW.step``,
    the optimizer's own update at its end (a real Lightning trace's nesting: tests/fixtures/wild/lightning_cpu_fit)."""
    def body(r: Rank) -> None:
        n, pins = r.mem.step, r.mem.kept
        step = module = None
        if closure:
            step = r.cpu("Optimizer.step#AdamW.step", 0.0, cat="user_annotation", advance=False)
            r.host_us += 1.0
            module = r.cpu("[pl][module]model.MLP: model", 0.0, cat="user_annotation", advance=False)
            r.host_us += 1.0
        acts = [_alloc_op(r, "aten::addmm", GEMM_FWD, 180.0, act_bytes(n, i), args=SHAPES_4096["addmm"])
                for i in range(layers)]
        if module is not None:
            module["dur"] = round(r.host_us - module["ts"], 3)
        if trial_bytes and n == trial_step:  # ProfilerStep#2: the first step the handler records
            r.mfree(r.malloc(trial_bytes, at=r.host_us - 0.4), at=r.host_us - 0.2)
        grads = []
        for k, a in enumerate(reversed(acts)):
            grads.append(_backward_node(r, "AddmmBackward0", [a], grad_bytes))
            if pin_bytes and k % 2 == 0:
                pins.append(r.malloc(pin_bytes, at=r.host_us - 0.2))
        while len(pins) > layers:
            r.mfree(pins.pop(0), at=r.host_us)
        if step is None:
            r.cpu("Optimizer.step#AdamW.step", 60.0, cat="user_annotation", advance=False)
        r.kernel("aten::_foreach_add_", SGD_BF16, 42.0)
        r.host_us += 10.0
        if step is not None:
            step["dur"] = round(r.host_us - step["ts"], 3)
        for g in grads:  # zero_grad(set_to_none=True)
            r.mfree(g, at=r.host_us)
        r.host_us += 2.0
        r.sync()
        r.mem.step += 1
    return body


#: Activation-heavy: 12 GiB held (4 GiB of bf16 weights, Adam's 8 GiB), 24 layers keeping 2.2 GiB each: the forward's
#: end holds 52.8 of 64.8 GiB allocated, 82% of an H100.
ACT_HEAVY = (12 * GiB, 24, int(2.2 * GiB), 4 * GiB // 24)
#: Fragmented: 24 GiB held; 8 layers whose activations change size every step (sequence buckets of 0.7-1.9 GiB, as
#: variable-length batches make them), and a 200 MiB buffer kept from every other backward node: reserved climbs to
#: 62 GiB while at most 42 GiB are ever allocated at once.
FRAG_SIZES = (1.0, 1.6, 0.7, 1.9, 1.2, 0.9, 1.5, 1.1, 1.8, 1.0, 1.3, 0.8)
FRAGMENTED = (24 * GiB, 8, 200 * MiB)
#: Near OOM: 70 GiB held (a large model's weights and optimizer state), 8 layers of 0.6 GiB: 94.5% of the GPU.
NEAR_OOM = (70 * GiB, 8, int(0.6 * GiB), 200 * MiB)


#: An fp32 MLP whose host paces the GPU (issue #37, "small steps judged by what they save"): each GEMM runs
#: HOST_BOUND_GEMM_US, then the GPU idles while Python runs HOST_BOUND_PY_US before the next launch.  By construction no
#: next kernel ever waits for a GEMM, so a faster GEMM (16 bit, Tensor Cores) only lengthens the idle: the step
#: shortens by ~0 until the host's own work is gone.
HOST_BOUND_GEMM_US, HOST_BOUND_PY_US = 300.0, 900.0


def _host_bound_fp32(r: Rank) -> None:
    for _ in range(9):  # 3 layers: a GEMM forward, two backward
        r.kernel("aten::mm", FP32_GEMM, HOST_BOUND_GEMM_US, launch_us=14.0)
        r.cpu("aten::view", HOST_BOUND_PY_US)  # the Python and framework work before the next op
    r.sync()


#: One unmarked training iteration's bursts (no ``prof.step()``): each layer's forward, each layer's backward and the
#: optimizer's update run as a burst of short kernels, the host pausing ``BURST_PAUSE_US`` between them (Python with no
#: launch, as a cold iteration's first calls or an eager framework's dispatch: HPMLProj's cold Trainer step read as 23
#: bursts, casio's NeRF iteration as 83).
BURST_LAYERS, BURST_PAUSE_US, BURST_KERNEL_US = 4, 3_000.0, 5.0


def bursty_iterations(iterations: int) -> Callable[[list[Rank], int], None]:
    """A scenario body: ``iterations`` training iterations and nothing else (whatever ``steps``), each
    ``2 * BURST_LAYERS + 1`` GPU bursts -- the forward's layers, the backward's, one ``Optimizer.step`` -- of the same
    kernels in every iteration.  Truth by construction: ``iterations`` iterations, one optimizer step each."""
    def scenario(ranks: list[Rank], n: int) -> None:
        if n != 2:
            return
        r = ranks[0]
        for _ in range(iterations):
            for _ in range(BURST_LAYERS):
                r.kernel("aten::addmm", GEMM_FWD, BURST_KERNEL_US)
                r.kernel("aten::clamp_min", RELU_BF16, BURST_KERNEL_US)
                r.host_us += BURST_PAUSE_US
            for _ in range(BURST_LAYERS):
                r.kernel("aten::threshold_backward", RELU_BF16, BURST_KERNEL_US)
                r.kernel("aten::mm", GEMM_BWD[0], BURST_KERNEL_US)
                r.kernel("aten::mm", GEMM_BWD[1], BURST_KERNEL_US)
                r.kernel("aten::sum", SUM_BF16, BURST_KERNEL_US)
                r.host_us += BURST_PAUSE_US
            r.cpu("Optimizer.step#SGD.step", 30.0, cat="user_annotation", advance=False)
            r.kernel("aten::_foreach_add_", SGD_BF16, BURST_KERNEL_US)
            r.host_us += BURST_PAUSE_US
    return scenario


def back_to_back_updates(updates: int, update_us: float = 30.0, nested: bool = False
                         ) -> Callable[[list[Rank], int], None]:
    """A scenario body: a benchmark of the optimizer alone (HPMLProj @08e10fd5 profiles only ``optimizer.step()``):
    ``updates`` calls of ``Optimizer.step#SGD.step``, each of ``update_us`` on the host, back to back -- each begins
    where the one before ended -- each with its update kernel.  Truth by construction: ``updates`` updates, so
    ``updates`` iterations: calls that only touch are two calls, not one nested call.  With ``nested`` each update
    holds a second ``Optimizer.step`` event inside it (one call recorded twice: still ``updates`` updates)."""
    def scenario(ranks: list[Rank], n: int) -> None:
        if n != 2:
            return
        r = ranks[0]
        for _ in range(updates):  # the kernel's op and launch fill the update: the host clock ends where it ends
            r.cpu("Optimizer.step#SGD.step", update_us, cat="user_annotation", advance=False)
            if nested:
                r.cpu("Optimizer.step#SGD.step", update_us - 10.0, cat="user_annotation", advance=False)
            r.kernel("aten::_foreach_add_", SGD_BF16, BURST_KERNEL_US, launch_us=update_us - 6.0)
    return scenario

#: ``input_bound``'s loop copying its batch from pageable memory, the host held in the copy's sync: the control of
#: the checks that read the pinned loop's uploads as in use (kept out of ``SCENARIOS``: a control, not a finding of
#: its own).
PAGEABLE_INPUT = Scenario(1, _single(lambda r: _input(r, pageable=True)), ["input_bound"], [],
                          "the batch copied pageable")
#: The same loop recorded with ``record_shapes``, its batch copied from pageable memory by ``x.to('cuda',
#: non_blocking=True)``: the copy's ``aten::copy_`` records ``non_blocking`` True, the copy still holds the host in
#: its ``cudaMemcpyAsync`` (h37-nonblock33).  By construction the flag is in use and the pinning is not.
PAGEABLE_NON_BLOCKING_INPUT = Scenario(1, _single(lambda r: _input(r, pageable=True, non_blocking=True)),
                                       ["input_bound"], [], "the batch copied pageable, non_blocking=True")
#: Its control: the same shapes recorded, the copy called without ``non_blocking`` (the flag False, the stream sync)
PAGEABLE_BLOCKING_INPUT = Scenario(1, _single(lambda r: _input(r, pageable=True, non_blocking=False)),
                                   ["input_bound"], [], "the batch copied pageable, non_blocking=False")


SCENARIOS: dict[str, Scenario] = {
    "healthy_bf16": Scenario(1, _single(_healthy), [], ["input_bound", "launch_bound", "tensor_core_unused",
                                                         "mixed_precision_off", "host_sync"],
                             "bf16 MLP, GPU-bound; healthy"),
    "small_grid": Scenario(1, _single(_small_grid), ["small_grid"], ["launch_bound", "input_bound", "mfu_low"],
                           f"the bf16 MLP step plus a custom kernel of {SMALL_GRID[0]} blocks ({SMALL_GRID_US:g} us) "
                           f"on 132 SMs: (kernel time - the {SMALL_GRID_FLOOR_US:g} us floor) x (1 - 4/132) = "
                           f"{(SMALL_GRID_US - SMALL_GRID_FLOOR_US) * (1 - SMALL_GRID[0] / 132):g} us a step that "
                           "filling the SMs could save",
                           extra={"underfilled_ms": SMALL_GRID_US / 1000,
                                  "idle_sm_ms": (SMALL_GRID_US - SMALL_GRID_FLOOR_US) * (1 - SMALL_GRID[0] / 132) / 1000}),
    "small_grid_library": Scenario(1, _single(_small_grid_library), ["small_grid"],
                                   ["launch_bound", "input_bound", "mfu_low"],
                                   f"the small_grid step with its {SMALL_GRID[0]}-block kernel cuBLAS's gemv: the same "
                                   "bound, and a fix through the calls that reach the library, not the grid of a "
                                   "kernel of the program's own",
                                   extra={"underfilled_ms": SMALL_GRID_US / 1000,
                                          "idle_sm_ms": (SMALL_GRID_US - SMALL_GRID_FLOOR_US) * (1 - SMALL_GRID[0] / 132) / 1000}),
    "small_grid_beside": Scenario(1, _single(_small_grid_beside), ["small_grid"], ["launch_bound", "input_bound", "mfu_low"],
                                  f"the small_grid step with a {SIDE_US:g} us kernel of another stream started with "
                                  f"the 4-block one: only its other {SMALL_GRID_US - SIDE_US:g} us leave SMs idle, "
                                  f"so the bound is ({SMALL_GRID_US:g} - {SIDE_US:g}) us x (1 - 4/132) a step",
                                  extra={"underfilled_ms": SMALL_GRID_US / 1000,
                                         "idle_sm_ms": (SMALL_GRID_US - SIDE_US) * (1 - SMALL_GRID[0] / 132) / 1000}),
    "decode_near_peak_bw": Scenario(1, _single(_decode_at(0.97)), [], ["launch_bound"],
                                    f"a batch-1 bf16 decode step of {DECODE_GEMVS} GEMVs [1, 8192] x [8192, 8192] of "
                                    f"{DECODE_GEMV_GRID[0]} thread blocks, each at 97% of the H100's memory bandwidth: "
                                    "no grid takes more than the 3% above their bytes' time off them",
                                    extra={"floor_ms": DECODE_GEMVS * decode_gemv_floor_us() / 1000,
                                           "compute_ms": DECODE_GEMVS * decode_gemv_floor_us() / 0.97 / 1000}),
    "decode_far_from_peak_bw": Scenario(1, _single(_decode_at(0.30)), ["small_grid"], ["launch_bound"],
                                        "the decode_near_peak_bw step with each GEMV at 30% of the memory bandwidth: "
                                        "(kernel time - the 3 us floor) x (1 - 64/132) a GEMV, below the 70% above "
                                        "its bytes' time, so the grid bound stands",
                                        extra={"floor_ms": DECODE_GEMVS * decode_gemv_floor_us() / 1000,
                                               "compute_ms": DECODE_GEMVS * decode_gemv_floor_us() / 0.30 / 1000,
                                               "idle_sm_ms": DECODE_GEMVS * (decode_gemv_floor_us() / 0.30 - 3.0)
                                               * (1 - DECODE_GEMV_GRID[0] / 132) / 1000}),
    "decode_near_peak_and_chain": Scenario(1, _single(_decode_and_chain), ["xla_not_used"], ["small_grid"],
                                           f"the decode_near_peak_bw step's {DECODE_GEMVS} GEMVs, then the eager_chain "
                                           "step's 40 element-wise ops: fusing the chain is the fix; filling the GEMVs' "
                                           "SMs takes no more than the 3% above their bytes' time off them, and both "
                                           "together no more than the kernel time above the GEMVs' bytes' time",
                                           extra={"floor_ms": DECODE_GEMVS * decode_gemv_floor_us() / 1000,
                                                  "compute_ms": (DECODE_GEMVS * decode_gemv_floor_us() / 0.97
                                                                 + 40 * EAGER_CHAIN_US) / 1000}),
    "tiny_ops": Scenario(1, _single(_tiny), ["launch_bound"], [],
                         "300 tanh kernels of 2.5 us per step, each after a 14 us launch", dtype=None),
    "cuda_graph_tiny": Scenario(1, _single(_graph_tiny), [], ["launch_bound", "xla_not_used"],
                                "tiny_ops under torch.compile(mode=\"reduce-overhead\"): 300 kernels of 2.5 us "
                                "replayed by one cudaGraphLaunch per step; the step's closing read (.item()) drains the "
                                "queue and the next replay is prepared only after it: about 5% of the step, the sync "
                                "warning's line (host_sync allowed, h37-tiny69)", dtype=None,
                                extra={"allow": ["host_sync"]}),
    "eager_chain": Scenario(1, _single(_eager_chain), ["xla_not_used"], [],
                            "40 element-wise ops of 50 us on one float32 tensor per step, Python between them: "
                            "torch.compile would fuse them into about one kernel", dtype="float32",
                            extra={"fused_saving_ms": 39 * EAGER_CHAIN_US / 1000}),
    "small_gemms": Scenario(1, _single(_small_gemms), ["mfu_low"], ["launch_bound", "input_bound"],
                            f"{SMALL_GEMMS} bf16 GEMMs [{SMALL_GEMM[0]},{SMALL_GEMM[1]}]x[{SMALL_GEMM[1]},{SMALL_GEMM[2]}] "
                            f"of {SMALL_GEMM_US:g} us per step: 2% of their roofline",
                            extra={"gemm_ms": SMALL_GEMMS * SMALL_GEMM_US / 1000,
                                   "flops_per_step": SMALL_GEMMS * 2.0 * SMALL_GEMM[0] * SMALL_GEMM[1] * SMALL_GEMM[2]}),
    # the step's closing sync idles the GPU only until the next launch would come: the 10 ms after it are the
    # DataLoader's (input_bound), not the sync's
    "input_bound": Scenario(1, _single(_input), ["input_bound"], ["launch_bound", "host_sync"],
                            "10 ms DataLoader wait + 32 MB pinned H2D copy per step, GPU idle meanwhile",
                            extra={"injected_sleep_ms": 10.0}),
    "sync_item": Scenario(1, _single(_sync_item), ["host_sync"], ["input_bound"],
                          "loss.item() after each of 6 layers: 6 cudaStreamSynchronize per step drain the GPU"),
    "ddp_balanced": Scenario(4, ddp(comm_us=150.0), [], ["gpu_imbalance", "launch_skew", "allreduce_slow",
                                                        "sequential_gpus", "input_bound"],
                             "4 DDP ranks, one 150 us NCCL AllReduce per step; healthy"),
    "ddp_straggler": Scenario(4, ddp(comm_us=150.0, slow_rank=2, slow=1.5), ["gpu_imbalance"], ["launch_skew", "allreduce_slow"],
                              "rank 2 computes 1.5x longer; the others wait for it inside their AllReduce",
                              extra={"straggler_rank": 2, "slowdown": 1.5}),
    "ddp_launch_skew": Scenario(4, ddp(comm_us=150.0, late_us=400.0), ["launch_skew"], ["gpu_imbalance", "allreduce_slow"],
                                "rank k starts each step k x 0.4 ms after rank 0 (1.2 ms spread)",
                                extra={"skew_ms": 1.2}),
    "fsdp_prefetch": Scenario(4, _each(_fsdp(prefetch=True)), [], ["comm_exposed", "rank_straggler"],
                              f"FSDP, {FSDP_LAYERS} layers, each all-gather prefetched behind the previous layer's "
                              f"compute: only the first ({AG_US:g} us) is exposed; healthy"),
    "fsdp_no_prefetch": Scenario(4, _each(_fsdp(prefetch=False)), ["comm_exposed"], [],
                                 f"FSDP without prefetch: every layer waits for its own {AG_US:g} us all-gather",
                                 extra={"exposed_ms": FSDP_LAYERS * AG_US / 1000, "collective": "AllGather"}),
    "tp_allreduce": Scenario(4, _each(_tensor_parallel), ["comm_exposed"], [],
                             f"tensor parallel: a {TP_AR_US:g} us all-reduce after each of {FSDP_LAYERS} forward "
                             f"GEMMs, on the critical path",
                             extra={"exposed_ms": FSDP_LAYERS * TP_AR_US / 1000, "collective": "AllReduce"}),
    "moe_alltoall_skew": Scenario(8, moe, ["alltoall_imbalance"], ["rank_straggler", "gpu_imbalance"],
                                  f"MoE on 8 GPUs: rank 0's all-to-all moves {MOE_HOT}x the others' tokens, and the "
                                  f"{MOE_A2A_US / 1000:g} ms exchange waits for it every step",
                                  extra={"hot_rank": "rank 0 (node0/GPU0)", "skew": float(MOE_HOT),
                                         "saving_ms": MOE_A2A_US / 1000 * (1 - 1 / MOE_HOT)}),
    "ddp_2x8_slow_node": Scenario(16, ddp(comm_us=150.0, slow_node=1, slow=1.3), ["node_straggler"],
                                  ["rank_straggler", "launch_skew", "allreduce_slow"],
                                  "2 nodes x 8 GPUs DDP; every rank of node1 computes 1.3x longer (a throttled node); "
                                  "node0's ranks wait for it inside their AllReduce", nodes=2,
                                  extra={"straggler_node": "node1", "slowdown": 1.3}),
    "ddp_2x8_slow_link": Scenario(16, ddp(comm_us=12_000.0), ["comm_bandwidth_low"], ["rank_straggler", "node_straggler"],
                                  "2 nodes x 8 GPUs DDP; the 32 MiB gradient all-reduce takes 12 ms: a slow network "
                                  "between the nodes", nodes=2,
                                  extra={"bus_GBps": 2 * 15 / 16 * AR_NELEMS * 2 / 12e-3 / 1e9}),
    "ddp_2x8_slow_rank": Scenario(16, ddp(comm_us=150.0, slow_rank=11, slow=1.4), ["rank_straggler"],
                                  ["node_straggler", "launch_skew", "allreduce_slow"],
                                  "2 nodes x 8 GPUs DDP; rank 11 (node1 GPU 3) computes 1.4x longer", nodes=2,
                                  extra={"straggler": "rank 11 (node1/GPU3)", "slowdown": 1.4}),
    # issued after the last compute kernel, the AllReduce is all exposed: without --params its speed cannot be
    # judged, and what the trace shows first is 2.5 ms per step of communication no compute hides (comm_exposed)
    "serving_decode": Scenario(1, serving, ["step_gaps", "host_sync"], ["input_bound", "loss_scaling_gaps"],
                               f"a vLLM TP worker: no ProfilerStep; each engine step an execute_model span: "
                               f"{SERVE_HOST_US / 1000:g} ms of Python input preparation, one CUDA-graph decode step "
                               f"with {2 * SERVE_LAYERS} custom all-reduces of {SERVE_AR_US:g} us (vLLM's "
                               f"cross_device_reduce), a .tolist()",
                               extra={"kind": "serving", "engine": "vLLM", "step_source": "engine_steps",
                                      "allreduce_ms": 2 * SERVE_LAYERS * SERVE_AR_US / 1000}),
    "cold_forward": Scenario(1, cold_forward, ["cold_start"], ["launch_bound"],
                             "inference forward passes, the first of the process: four launches of 4-18 ms load "
                             "their modules with the GPU idle",
                             extra={"kind": "inference", "phase": "warm-up",
                                    "one_time_ms": sum(COLD_LAUNCH_US) / 1000}),
    "compile_first_call": Scenario(1, compile_first_call, ["cold_start"], ["launch_bound"],
                                   "compiled forward passes, the first of which compiles the model: nested compile "
                                   "spans covering 600 ms (their durations sum to 1150 ms)",
                                   extra={"kind": "inference", "phase": "warm-up",
                                          "one_time_ms": COMPILE_NEST_MS[0][1]}),
    "fuser_first_call": Scenario(1, fuser_first_call, ["cold_start"], ["launch_bound"],
                                 "forward passes through nvFuser, the first of which builds its kernels: nvFuser's "
                                 "compile ranges around NVRTC's, covering 500 ms",
                                 extra={"kind": "inference", "phase": "warm-up",
                                        "one_time_ms": NVFUSER_NEST_MS[0][1]}),
    "startup_pass": Scenario(1, startup_pass, ["cold_start"], ["launch_bound", "host_sync", "unexplained_idle"],
                             f"a process's start-up only: context creation ({STARTUP_CONTEXT_MS:g} ms), then "
                             f"{len(STARTUP_KERNELS)} first kernels each after its module's load and "
                             f"{STARTUP_PY_US:g} us of first-call Python: no steady step, so no launch overhead",
                             extra={"phase": "warm-up"}),
    "pageable_copy": Scenario(1, _single(_pageable_copy), ["excessive_memcpy"], ["host_sync"],
                              f"a small fp32 MLP step copying its batch from pageable memory "
                              f"({sum(mb for mb, _ in PAGEABLE_COPIES):g} MB in {len(PAGEABLE_COPIES)} x.to('cuda'), each "
                              f"waiting for its stream), then {PAGEABLE_UNRECORDED_US / 1000:g} ms of host code the "
                              f"profiler does not record, then loss.item()", dtype="float32",
                              extra={"copy_waits_per_step": len(PAGEABLE_COPIES), "program_syncs_per_step": 1,
                                     "copy_ms": sum(us for _, us in PAGEABLE_COPIES) / 1000,
                                     "unrecorded_ms": PAGEABLE_UNRECORDED_US / 1000}),
    "tiny_mlp": Scenario(1, _single(_tiny_mlp), ["launch_bound"], ["mixed_precision_off", "tensor_core_unused", "input_bound"],
                         f"a tiny fp32 MLP, host-bound: the DataLoader's __next__ ({TINY_LOADER_US:g} us), "
                         f"{TINY_PRE_OP_US:g} us of other Python before the first op, 3 layers of {TINY_GEMM_US:g} us "
                         f"fp32 GEMMs dispatched one by one", dtype="float32",
                         extra={"loader_ms": TINY_LOADER_US / 1000, "pre_op_ms": TINY_PRE_OP_US / 1000,
                                "gemm_ms": 9 * TINY_GEMM_US / 1000}),
    "host_bound_fp32": Scenario(1, _single(_host_bound_fp32), ["launch_bound"],
                                ["mixed_precision_off", "tensor_core_unused", "mfu_low"],
                                f"an fp32 MLP paced by its host: 9 GEMMs of {HOST_BOUND_GEMM_US:g} us, each followed by "
                                f"{HOST_BOUND_PY_US:g} us of Python before the next launch: a faster GEMM saves ~0",
                                dtype="float32", extra={"gemm_ms": 9 * HOST_BOUND_GEMM_US / 1000}),
    "cpu_input": Scenario(1, cpu_input, ["input_bound", "mfu_low"], ["launch_bound"],
                          f"forward passes whose input is made on the CPU: a {CPU_INPUT_MS:g} ms aten::randn with no "
                          f"runtime call, a copy, one {CPU_INPUT_KERNEL_US / 1000:g} ms kernel a step",
                          extra={"kind": "inference", "host_compute_ms": CPU_INPUT_MS}),
    "randn_next_input": Scenario(1, randn_next_input, ["step_gaps"], ["launch_bound", "input_bound"],
                                 f"randn_on_host's step turned around: the kernel first, then the next input's "
                                 f"{RANDN_CPU_MS:g} ms CPU aten::randn and its pageable copy, between the GPU's "
                                 f"bursts", dtype="float32",
                                 extra={"kind": "inference", "host_compute_ms": RANDN_CPU_MS}),
    "randn_on_host": Scenario(1, randn_on_host, ["input_bound"], ["launch_bound"],
                              f"CUDA MODE lecture 1's loop: torch.square(torch.randn(N, N).cuda()) under a "
                              f"record_function, a {RANDN_CPU_MS:g} ms CPU aten::randn (an aten::empty inside it), a "
                              f"pageable copy the host waits for, one {RANDN_KERNEL_US:g} us kernel: the GPU waits "
                              f"for the host making its input", dtype="float32",
                              extra={"kind": "inference", "host_compute_ms": RANDN_CPU_MS}),
    "cpu_input_annotated": Scenario(1, cpu_input_annotated, ["input_bound", "mfu_low"], ["launch_bound"],
                                    f"cpu_input with each step's body inside one record_function range "
                                    f"({STEP_BODY_RANGE}): the {CPU_INPUT_MS:g} ms aten::randn is still what the "
                                    f"GPU waits for",
                                    extra={"kind": "inference", "host_compute_ms": CPU_INPUT_MS}),
    "autocast_forward": Scenario(1, autocast_forward, ["dtype_casts"], ["tensor_core_unused", "mixed_precision_off"],
                                 f"eager bf16 autocast forward: {AUTOCAST_LAYERS} aten::linear a pass, each a weight "
                                 f"cast ({AUTOCAST_CAST_US:g} us), a GEMM ({AUTOCAST_GEMM_US:g} us) and a bias add "
                                 f"({AUTOCAST_BIAS_US:g} us)",
                                 extra={"kind": "inference", "gemm_ms": AUTOCAST_LAYERS * AUTOCAST_GEMM_US / 1000,
                                        "other_ms": AUTOCAST_LAYERS * (AUTOCAST_CAST_US + AUTOCAST_BIAS_US) / 1000}),
    "synced_layers": Scenario(1, synced_layers, ["unexplained_idle"], [],
                              f"one forward pass of {DECODE_LAYERS} blocks, the host waiting for the GPU after each, "
                              "inside one nn.Module call: one pass, not steps; each sync blocks the host a few us "
                              "(8 us of kernels queued), then its own 150 us of Python keep the GPU idle with or "
                              "without the sync: host-bound, not the syncs' cost",
                              extra={"kind": "inference", "step_source": "single_pass"}),
    "decode_unmarked": Scenario(1, decode_unmarked, ["launch_bound"], ["input_bound", "capture_quality",
                                                                       "mixed_precision_off", "tensor_core_unused"],
                                f"a generate() decode loop with no markers: a prefill, then per token {DECODE_LAYERS} "
                                f"layers of small GEMMs, an argmax and a sync on the stop flag",
                                extra={"kind": "inference", "step_source": "repeated_launches",
                                       "period_kernels": 3 * DECODE_LAYERS + 1}),
    "memory_activation_heavy": Scenario(
        1, _single(memory_training(lambda n, i: ACT_HEAVY[2], ACT_HEAVY[1], ACT_HEAVY[3])), ["activation_memory"],
        ["memory_fragmentation", "memory_near_capacity"],
        "profile_memory=True: 12 GiB held, 24 layers keeping 2.2 GiB of activations each for the backward: 82% of "
        "the H100 at the forward's end, 81% of it activations", memory_held=ACT_HEAVY[0],
        extra={"activation_bytes": ACT_HEAVY[1] * ACT_HEAVY[2], "held_bytes": ACT_HEAVY[0]}),
    "memory_fragmented": Scenario(
        1, _single(memory_training(lambda n, i: int(FRAG_SIZES[(n - 2) % len(FRAG_SIZES)] * GiB * (1 + 0.07 * (i % 3))),
                                   FRAGMENTED[1], 160 * MiB, pin_bytes=FRAGMENTED[2])),
        ["memory_fragmentation"], ["activation_memory", "memory_near_capacity"],
        "profile_memory=True: activations change size every step (0.7-1.9 GiB buckets) and small buffers outlive "
        "their step: the caching allocator's segments split, reserved climbs ~20 GiB above the allocated peak",
        memory_held=FRAGMENTED[0]),
    "memory_near_oom": Scenario(
        1, _single(memory_training(lambda n, i: NEAR_OOM[2], NEAR_OOM[1], NEAR_OOM[3])), ["memory_near_capacity"],
        ["activation_memory", "memory_fragmentation"],
        "profile_memory=True: 70 GiB held (weights and optimizer state), 8 layers of 0.6 GiB activations: 94.5% of "
        "the H100 at the forward's end", memory_held=NEAR_OOM[0],
        extra={"held_bytes": NEAR_OOM[0]}),
    "param_allreduce": Scenario(2, _each(_param_allreduce(bucketed=False)), ["comm_exposed"], ["launch_bound"],
                                f"2 ranks, {PARAMS} gradient all-reduces of {PARAM_AR_US:g} us a step, one per "
                                f"parameter, launched one by one after the backward: the GPU idles "
                                f"{PARAM_PERIOD_US - PARAM_AR_US:g} us between two while the host's loop launches the "
                                f"next",
                                extra={"paced_ms": (PARAMS - 1) * (PARAM_PERIOD_US - PARAM_AR_US) / 1000,
                                       "calls": PARAMS}),
    "bucketed_allreduce": Scenario(2, _each(_param_allreduce(bucketed=True)), [], ["comm_exposed", "launch_bound"],
                                   f"the twin of param_allreduce: the same bytes in {BUCKETS} all-reduces, each "
                                   f"behind the rest of the backward (DDP's buckets); healthy",
                                   extra={"calls": BUCKETS}),
    "eager_attention_train": Scenario(1, _single(eager_attention_train), ["unfused_attention"], ["launch_bound"],
                                      f"training {ATTN_LAYERS} layers of attention written op by op: per layer a "
                                      f"forward matmul -> scale -> softmax -> matmul and a backward matmul -> softmax "
                                      f"backward -> scale -> matmul",
                                      extra={"layers": ATTN_LAYERS,
                                             "between_ms": ATTN_LAYERS * (2 * ATTN_US["scale"] + ATTN_US["softmax"]
                                                                          + ATTN_US["softmax_bwd"]) / 1000}),
    "ddp_slow_allreduce": Scenario(4, ddp(comm_us=2_500.0), ["allreduce_slow", "comm_exposed"],
                                   ["gpu_imbalance", "launch_skew"],
                                   "one 2.5 ms NCCL AllReduce per step, after the last compute kernel, on a ~2.6 ms "
                                   "compute step"),
}


# ---------------------------------------------------------------------------------------------- writing

def simulate(name: str | Scenario, steps: int = 12) -> list[Rank]:
    """Run scenario ``name`` (or a Scenario) for ``steps`` profiled steps (``ProfilerStep#2`` on, as the handler
    numbers them)."""
    sc = SCENARIOS[name] if isinstance(name, str) else name
    per_node = sc.ranks // sc.nodes
    ranks = [Rank(rank=k, pid=4100 + k, device=k % per_node, node=k // per_node) for k in range(sc.ranks)]
    if sc.memory_held is not None:
        for r in ranks:
            r.mem = MemSim(sc.memory_held)
    for n in range(2, 2 + steps):
        sc.body(ranks, n)
    return ranks


def trace_doc(r: Rank, world: int, props: dict[str, Any] = H100) -> dict[str, Any]:
    """The file's JSON, in Kineto's key order; ``props``: the GPU's ``deviceProperties``."""
    span_end = max([r.host_us] + list(r.streams.values()))
    meta = [{"name": "process_name", "ph": "M", "ts": T0_US, "pid": r.pid, "tid": 0, "args": {"name": "python3"}},
            {"name": "process_labels", "ph": "M", "ts": T0_US, "pid": r.device, "tid": 0,
             "args": {"labels": f"GPU {r.device}"}},
            {"name": "process_sort_index", "ph": "M", "ts": T0_US, "pid": r.device, "tid": 0,
             "args": {"sort_index": 5000000 + r.device}},
            {"name": "thread_name", "ph": "M", "ts": T0_US, "pid": r.pid, "tid": r.pid,
             "args": {"name": f"thread {r.pid} (python3)"}},
            {"name": "thread_sort_index", "ph": "M", "ts": T0_US, "pid": r.pid, "tid": r.pid,
             "args": {"sort_index": r.pid}}]
    trace_span = {"ph": "X", "cat": "Trace", "ts": T0_US, "dur": round(span_end - T0_US, 3), "pid": "Spans",
                  "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}
    doc: dict[str, Any] = {"schemaVersion": 1, "deviceProperties": [{"id": r.device, **props}]}
    mem_events = r.mem.events if r.mem is not None else []
    if world > 1:
        doc["distributedInfo"] = {"backend": "nccl", "rank": r.rank, "world_size": world, "pg_count": 1,
                                  "pg_config": [], "nccl_version": "2.27.5"}
    if r.mem is not None:
        doc["profile_memory"] = 1
    doc.update({"trace_id": f"{r.pid:032X}", "record_shapes": 1, "cuda_driver_version": 13000,
                "cuda_runtime_version": 13000, "cupti_version": 130001, "displayTimeUnit": "ms",
                "baseTimeNanoseconds": BASE_NS,
                "traceEvents": r.host + mem_events + r.gpu + r.flows + meta + [trace_span],
                "traceName": f"{_worker(r)}.pt.trace.json"})
    return doc


#: An Intel Data Center GPU Max 1550 as Kineto's ``xpupti`` plugin records it (``deviceProperties`` fields of
#: pytorch/kineto libkineto/include/MetadataFieldCatalog.h, ``DevicePropertyMetadataFields``: SYCL's, no compute
#: capability, no SM count).
XPU_MAX_1550 = {"name": "Intel(R) Data Center GPU Max 1550", "vendor": "Intel(R) Corporation", "driverVersion": "1.3.27642",
                "totalGlobalMem": 137438953472, "maxComputeUnits": 448, "maxWorkGroupSize": 1024, "maxClockFrequency": 1600,
                "maxMemAllocSize": 68719476736, "localMemSize": 131072}
#: CUDA's calls -> the Unified Runtime calls SYCL makes for the same work (pytorch/kineto test/xpupti/XpuptiProfilerTest.cpp
#: lists ``urEnqueueKernelLaunch``, ``urEnqueueMemBufferWrite``; ``urQueueFinish`` is SYCL's ``queue::wait``).
_XPU_CALLS = {"cudaLaunchKernel": "urEnqueueKernelLaunch", "cudaMemcpyAsync": "urEnqueueUSMMemcpy",
              "cudaStreamSynchronize": "urQueueFinish", "cudaDeviceSynchronize": "urQueueFinish"}
#: The same work's other calls as the Unified Runtime names them (``ur_api.h``): a Triton kernel's launch, its module's
#: load, the device queries, USM allocations and fills, an event's wait and a recorded graph's launch; CUDA's lazy
#: loading query has none and is not written (h37-words63: an Intel trace holding CUDA's names read "4 CUDA calls").
_XPU_CALLS.update({"cuLaunchKernel": "urEnqueueKernelLaunch", "cuModuleLoadData": "urProgramCreateWithIL",
                   "cudaGetDeviceCount": "urDeviceGet", "cudaGetDeviceProperties_v2": "urDeviceGetInfo",
                   "cudaMalloc": "urUSMDeviceAlloc", "cudaFree": "urUSMFree", "cudaMemsetAsync": "urEnqueueUSMFill",
                   "cudaEventRecord": "urEnqueueEventsWaitWithBarrier", "cudaEventSynchronize": "urEventWait",
                   "cudaStreamWaitEvent": "urEnqueueEventsWaitWithBarrier", "cudaGraphLaunch": "urCommandBufferEnqueueExp"})
_XPU_DROPPED = ("cuModuleGetLoadingMode",)
#: CUPTI's copy memories -> PTI's letters: pageable is system memory (``M``), pinned is USM host memory (``H``).
_XPU_COPY = {"Pageable": ("M", "MEMORY"), "Pinned": ("H", "HOST"), "Device": ("D", "DEVICE")}


def as_xpu(doc: dict[str, Any], plugin_names: bool = True) -> dict[str, Any]:
    """``doc`` (a :func:`trace_doc`) as PyTorch writes the same job on an Intel GPU (``xpupti``, PyTorch 2.4 on), in
    place: calls ``xpu_runtime`` named as SYCL's Unified Runtime names them, kernels and copies with ``sycl queue``
    (no ``stream``), copies named ``Memcpy M2D (MEMORY -> DEVICE)`` (``plugin_names=False``: ``Memcpy M2D``, as the
    plugin's first versions wrote them), the device's SYCL properties, no CUDA versions in the header
    (XpuptiActivityHandlers.cpp: ``memcpyName``, ``XpuMetadataFields``), ``[memory]`` events of ``Device Type`` 12
    (c10's ``DeviceType::XPU``)."""
    doc["deviceProperties"] = [{"id": p.get("id", 0), **XPU_MAX_1550} for p in doc.get("deviceProperties", [{}])]
    for k in ("cuda_driver_version", "cuda_runtime_version", "cupti_version"):
        doc.pop(k, None)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("name") not in _XPU_DROPPED]
    for e in doc["traceEvents"]:
        a = e.get("args") or {}
        if e.get("name") == "[memory]" and a.get("Device Type") == 1:
            a["Device Type"] = 12  # c10::DeviceType::XPU
        if e.get("cat") == "cuda_runtime":
            e["cat"], e["name"] = "xpu_runtime", _XPU_CALLS.get(e["name"], e["name"])
            a.pop("cbid", None)
        elif e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            for k in ("queued", "registers per thread", "shared memory", "blocks per SM", "warps per SM",
                      "est. achieved occupancy %"):
                a.pop(k, None)
            a["sycl queue"], a["context"], a["l0 queue"] = a.pop("stream", e["tid"]), "0x55c0d1a0", "0x55c0d1b8"
            if e["cat"] == "gpu_memcpy" and e["name"].startswith("Memcpy HtoD ("):
                src = e["name"][len("Memcpy HtoD ("):].split(" ")[0]
                (sl, sw), (dl, dw) = _XPU_COPY.get(src, ("M", "MEMORY")), _XPU_COPY["Device"]
                e["name"] = f"Memcpy {sl}2{dl}" + (f" ({sw} -> {dw})" if plugin_names else "")
                a["l0 call"] = "zeCommandListAppendMemoryCopy"
    doc["traceEvents"].append({"name": "process_name", "ph": "M", "ts": T0_US, "pid": 0, "tid": 0,
                               "args": {"name": "XPU 0"}})
    return doc


#: Today's categories -> PyTorch 1.8-1.9's (``wild-torch/resnet50_*``, PyTorch 1.8.1: ``record_function`` ranges and
#: ``ProfilerStep#N`` are ``Operator`` events like any op; no ``gpu_user_annotation``; flows ``async``/``launch``).
_OLD_CATS = {"cpu_op": "Operator", "user_annotation": "Operator", "cuda_runtime": "Runtime", "cuda_driver": "Runtime",
             "kernel": "Kernel", "gpu_memcpy": "Memcpy", "gpu_memset": "Memset", "python_function": "Python"}


#: The header keys each old writer wrote (besides ``traceEvents``): ``distributedInfo`` is ``torch.profiler``'s own
#: addition (pytorch/pytorch#58011, May 2021: ``_KinetoProfile._start_trace``, when ``torch.distributed`` is
#: initialised), so PyTorch 1.8's ranks -- and any rank exported through ``torch.autograd.profiler`` -- wrote none;
#: the Kineto plugin's samples of January 2021 (pytorch/kineto d3fb4076) have no ``deviceProperties`` either, those of
#: June 2021 (``wild-torch``) have them.
HEADER_1_10 = ("schemaVersion", "deviceProperties", "distributedInfo")
HEADER_NO_RANK = ("schemaVersion", "deviceProperties")
HEADER_1_8 = ("schemaVersion",)


def as_old_schema(doc: dict[str, Any], header: tuple[str, ...] = HEADER_1_10) -> dict[str, Any]:
    """``doc`` (a :func:`trace_doc`) as PyTorch 1.8-1.9's Kineto writes the same job, in place (the layout of
    ``wild-torch/resnet50_num_workers_0``): the old categories (:data:`_OLD_CATS`), ``external id`` in lower case on
    calls and GPU events, thread ids as strings (a GPU's ``stream N``), ``async`` ``launch`` flows, no
    ``baseTimeNanoseconds`` -- ``ts`` the wall clock's whole microseconds since 1970 -- and none of 2.x's header keys.
    The job is the same; ``header``: the header keys kept (:data:`HEADER_1_10`, :data:`HEADER_NO_RANK`,
    :data:`HEADER_1_8`)."""
    base_us = BASE_NS // 1000
    keep = {*header, "traceEvents"}
    for k in [k for k in doc if k not in keep]:
        del doc[k]
    events = []
    for e in doc["traceEvents"]:
        cat = e.get("cat")
        if cat == "gpu_user_annotation":
            continue  # 1.10's own
        a = e.get("args")
        if isinstance(a, dict):
            a.pop("Record function id", None)
            a.pop("Ev Idx", None)
        if cat in _OLD_CATS:
            gpu = cat in ("kernel", "gpu_memcpy", "gpu_memset")
            e["cat"] = _OLD_CATS[cat]
            if (gpu or cat in ("cuda_runtime", "cuda_driver")) and isinstance(a, dict) and "External id" in a:
                a["external id"] = a.pop("External id")
            e["tid"] = f"stream {e['tid']}" if gpu else str(e["tid"])
        elif cat == "ac2g":
            e["cat"], e["name"] = "async", "launch"
            if e["ph"] == "f":
                e["tid"] = f"stream {e['tid']}"
        elif cat == "Trace":
            e["pid"] = "Traces"
        if "ts" in e:  # whole microseconds, each end cut as the profiler cut it (never past the next start)
            start_ns, end_ns = round(e["ts"] * 1000), round((e["ts"] + e.get("dur", 0.0)) * 1000)
            e["ts"] = base_us + start_ns // 1000
            if "dur" in e:
                e["dur"] = base_us + end_ns // 1000 - e["ts"]
        events.append(e)
    doc["traceEvents"] = events
    return doc


def rewrite_as_old_schema(folder: str, header: tuple[str, ...] = HEADER_1_10) -> list[str]:
    """Every ``*.pt.trace.json`` under ``folder`` rewritten as PyTorch 1.8-1.9 writes it (:func:`as_old_schema`),
    named as its profiler names it (``<worker>.<ms since 1970 at its export>.pt.trace.json``: :func:`_export_ms`);
    returns the new paths."""
    out = []
    for root, _, files in os.walk(folder):
        for name in sorted(f for f in files if f.endswith(".pt.trace.json")):
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                doc = as_old_schema(json.load(f), header)
            os.remove(path)
            out.append(write_doc(os.path.join(root, f"{name.partition('.')[0]}.{_export_ms(doc)}.pt.trace.json"),
                                 doc))
    return out


#: The handler runs when the profiler's window stops: its stamp follows the window's last event by this much.
EXPORT_AFTER_MS = 100


def _export_ms(doc: dict[str, Any]) -> int:
    """The time PyTorch 1.8-1.9's ``tensorboard_trace_handler`` stamps into the file's name: ``int(time.time() *
    1000)`` when it exports, after the window's last event (the old schema's ``ts`` is the wall clock's microseconds),
    not the capture's start."""
    ends = [e["ts"] + e.get("dur", 0) for e in doc["traceEvents"] if isinstance(e.get("ts"), (int, float))]
    return (max(ends) if ends else BASE_NS // 1000) // 1000 + EXPORT_AFTER_MS


#: An AMD Instinct MI300X as ROCm's Kineto records it (``deviceProperties`` of the kept ``wild/sglang_mi300x_*``:
#: HIP's properties, ``computeMajor``/``Minor`` gfx942's 9.4, no ``regsPerMultiprocessor``).
MI300X = {"name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992, "computeMajor": 9, "computeMinor": 4,
          "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 131072, "warpSize": 64,
          "sharedMemPerBlock": 65536, "numSms": 304, "maxSharedMemoryPerMultiProcessor": 65536}
#: CUDA's runtime calls -> HIP's for the same work, as ROCm's PyTorch makes them.
#: A CUDA driver call (``cu...``) absent here has no HIP twin (``cuModuleGetLoadingMode``: CUDA's lazy loading) and is
#: not written (h37-words63: a ROCm trace holding it read as two runtimes' calls, no vendor).
_HIP_CALLS = {"cudaLaunchKernel": "hipLaunchKernel", "cuLaunchKernel": "hipModuleLaunchKernel",
              "cuModuleLoadData": "hipModuleLoadData",
              "cudaMemcpyAsync": "hipMemcpyAsync", "cudaMemsetAsync": "hipMemsetAsync",
              "cudaStreamSynchronize": "hipStreamSynchronize", "cudaDeviceSynchronize": "hipDeviceSynchronize"}
#: Kineto's copy direction -> the sides ROCm's Kineto names (``getMemcpySrcDstString``: ``Host``/``Device``).
_HIP_SIDES = {"HtoD": ("Host", "Device"), "DtoH": ("Device", "Host"), "DtoD": ("Device", "Device"),
              "HtoH": ("Host", "Host")}


#: NVIDIA's library kernels (cuBLAS, CUTLASS, cuBLASLt's ``nvjet``; cuDNN's convolutions by direction; FlashAttention)
#: -> the family ROCm's libraries run for the same work, as the kept MI300X traces name them (wild ``amd_mi300x``,
#: ``ddp_mi300x_actckpt``, ``ddp_mi300x_nopool``): Tensile's ``Cijk_<A>_<B>_<types>_MT<tile>_MI<mfma>_...`` GEMMs
#: (rocBLAS/hipBLASLt), MIOpen's ``igemm_<fwd|bwd|wrw>_gtcx3_...`` convolutions, aotriton's ``attn_fwd``.  ATen's,
#: Triton's and RCCL's kernels keep their names on ROCm (hipified sources, the same Triton names, RCCL's
#: ``ncclDevKernel_*``), and ROCm's Kineto records copies and fills as ``Memcpy``/``Memset`` activities, not as
#: ROCclr's ``__amd_rocclr_*`` blits (which rocprof's kernel trace shows): both left as they are.
_NV_GEMM = re.compile(r"^(?:ampere|volta|turing|sm\d+)_\w*gemm|^cutlass\w*gemm|^nvjet_|xmma_gemm|^gemmSN|gemv2")
_NV_CONV = re.compile(r"(?:xmma|cudnn|implicit)\w*?(fprop|dgrad|wgrad|convolve)")
_TENSILE_LAYOUT = {"nn": "Ailk_Bljk", "nt": "Ailk_Bjlk", "tn": "Alik_Bljk", "tt": "Alik_Bjlk"}


def _rocm_kernel(name: str) -> str:
    """The kernel ROCm's libraries run for NVIDIA's library kernel ``name`` (:data:`_NV_GEMM`, :data:`_NV_CONV`), in
    the same input type (``bf16``, ``fp16``/``h``, else fp32: an MFMA tile of that type, ``MI16x16x16x1`` for 16-bit
    inputs, ``MI16x16x4x1`` for fp32) and tile; ``name`` itself for any other kernel."""
    low = name.lower()
    kind = "B" if "bf16" in low else "H" if ("fp16" in low or "f16" in low or re.search(r"(?:^|_)h(?:\d|_)|hgemm", low)) else "S"
    if name.startswith(("flash_fwd", "flash_attn_fwd")):
        return "attn_fwd"
    conv = _NV_CONV.search(low)
    if conv:
        way = {"fprop": "fwd", "convolve": "fwd", "dgrad": "bwd", "wgrad": "wrw"}[conv.group(1)]
        dtype = {"B": "bf16", "H": "fp16", "S": "fp32"}[kind]
        return f"igemm_{way}_gtcx3_nhwc_{dtype}_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2"
    if not _NV_GEMM.search(low):
        return name
    tile = re.search(r"(\d+)x(\d+)", name)
    m, n = tile.groups() if tile else ("64", "64")
    layout = re.search(r"_(nn|nt|tn|tt)(?:_|$)", low)
    types, mfma = ("SB", "MI16x16x4x1") if kind == "S" else (f"{kind}{kind}S_BH", "MI16x16x16x1")
    return (f"Cijk_{_TENSILE_LAYOUT[layout.group(1) if layout else 'nn']}_{types}_MT{m}x{n}x16_{mfma}_SN_LDSB0_"
            f"AFC1_AFEM1_ASEM1_CLR1_CADS0")


#: PyTorch's cuDNN ops (``aten::cudnn_convolution``, ``aten::_cudnn_rnn``): a CUDA build's; ROCm's build runs MIOpen's
#: ops for the same layers (``aten::miopen_convolution``, ``aten::miopen_rnn``: the kept MI300X traces), a build for
#: a GPU of no known vendor PyTorch's overridable or native ops (:data:`_UNKNOWN_OPS`).
_CUDNN_OP = re.compile(r"^aten::_?cudnn_")


def as_rocm(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` (a :func:`trace_doc`) as ROCm's PyTorch writes the same job (roctracer, PyTorch 2.4-2.7, and
    rocprofiler-sdk after it: pytorch/kineto ``libkineto/src/RocprofActivity_inl.h``), in place: HIP's calls in
    ``cuda_runtime`` (``hipLaunchKernel``, ``cid`` for ``cbid``), ``roctracer_version``/``hip_runtime_version`` for
    the CUDA versions, an MI300X's properties, and copies named by their *sides*, ``Memcpy HtoD (Host -> Device)``
    with ``kind`` -- the host memory's kind (pinned or pageable) is nowhere in the name; NVIDIA's library kernels as
    ROCm's libraries name the same work (:func:`_rocm_kernel`: Tensile GEMMs, MIOpen convolutions; h37-inuse63 --
    ``ampere_sgemm_*`` on an MI300X before), its cuDNN ops as MIOpen's (:data:`_CUDNN_OP`).  The job is the same."""
    doc["deviceProperties"] = [{"id": p.get("id", 0), **MI300X} for p in doc.get("deviceProperties", [{}])]
    for k in ("cuda_driver_version", "cuda_runtime_version", "cupti_version"):
        doc.pop(k, None)
    doc.update({"roctracer_version": 4.1, "hip_runtime_version": 70253211, "hip_driver_version": 70253211})
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not (e.get("cat") in ("cuda_runtime", "cuda_driver")
                          and e["name"].startswith("cu") and not e["name"].startswith("cuda")
                          and e["name"] not in _HIP_CALLS)]
    for e in doc["traceEvents"]:
        a = e.get("args") or {}
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            e["cat"], e["name"] = "cuda_runtime", _HIP_CALLS.get(e["name"], e["name"].replace("cuda", "hip", 1))
            if "cbid" in a:
                a["cid"] = a.pop("cbid")
        elif e.get("cat") == "kernel":
            e["name"] = _rocm_kernel(e["name"])
        elif e.get("cat") == "cpu_op":
            e["name"] = _CUDNN_OP.sub("aten::miopen_", e["name"])
        elif e.get("cat") == "gpu_memcpy" and e["name"][len("Memcpy "):][:4] in _HIP_SIDES:
            kind = e["name"][len("Memcpy "):][:4]
            e["name"] = "Memcpy {} ({} -> {})".format(kind, *_HIP_SIDES[kind])
            a.pop("context", None)
            a["kind"] = kind
    return doc


def as_rocm_scalar_reads(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` after :func:`as_rocm`, its ``.item()`` reads as ROCm's PyTorch makes them, in place: each
    ``hipStreamSynchronize`` (CUDA's ``aten::_local_scalar_dense`` copy-and-wait, :meth:`Rank.sync`) becomes the one
    ``hipMemcpyWithStream`` of ``at::cuda::memcpy_and_sync`` on ROCm (``kind`` 2, ``hipMemcpyDeviceToHost``; 1 byte),
    its copy recorded on the compute stream as ROCm's Kineto records it, ``Memcpy DtoD (Device -> Device)`` of 1 byte,
    2.4 us, ending 3 us before the call returns, with its ``ac2g`` flow -- the layout of the kept MI300X traces
    (``wild/amd_mi300x`` ``bert_small``: ``aten::item`` > ``aten::_local_scalar_dense`` > ``hipMemcpyWithStream``,
    correlation 810).  The job is the same: one read of a device value a step, the host waiting through it."""
    ev = doc["traceEvents"]
    gpu = next(e for e in ev if e.get("cat") == "kernel")
    added = []
    for e in ev:
        if e.get("cat") != "cuda_runtime" or e["name"] != "hipStreamSynchronize":
            continue
        a = e["args"]
        e["name"] = "hipMemcpyWithStream"
        a.update({"stream": "0x0", "bytes": "1", "kind": "2", "src": "0x7f03643e9e00", "dst": "0x7f03be8de000"})
        at = round(e["ts"] + e["dur"] - 5.4, 3)
        added += [{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": gpu["pid"],
                   "tid": gpu["tid"], "ts": at, "dur": 2.4,
                   "args": {"External id": a.get("External id"), "device": gpu["args"]["device"], "stream": gpu["tid"],
                            "correlation": a["correlation"], "kind": "DtoD", "bytes": 1,
                            "memory bandwidth (GB/s)": 1 / 2400}},
                  {"ph": "s", "id": a["correlation"], "pid": e["pid"], "tid": e["tid"], "ts": e["ts"], "cat": "ac2g",
                   "name": "ac2g"},
                  {"ph": "f", "id": a["correlation"], "pid": gpu["pid"], "tid": gpu["tid"], "ts": at, "cat": "ac2g",
                   "name": "ac2g", "bp": "e"}]
    ev.extend(added)
    return doc


#: The graph id :func:`with_graph_ids` gives the kernels a graph replay launched (CUPTI numbers graphs from 1).
REPLAYED_GRAPH_ID = 7


def with_graph_ids(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as Kineto writes it since 2026 (pytorch/kineto #1276, CUDA 12+): every kernel's ``args`` carry CUPTI's
    ``"graph id"`` and ``"graph node id"`` -- 0 and 0 for a kernel launched outside a graph, the graph's id (here
    :data:`REPLAYED_GRAPH_ID`) and the node's for one a ``cudaGraphLaunch`` replayed (its correlation id that launch's).
    Truth by construction: the same run, the same kernels in the same graphs (lutetjeff/cs521-mp2's CUDA 13 traces
    write ``"graph id": 0, "graph node id": 0`` on each kernel of a plain loop)."""
    replays = {e["args"]["correlation"] for e in doc["traceEvents"]
               if e.get("name") == "cudaGraphLaunch" and "correlation" in e.get("args", {})}
    node = 0
    for e in doc["traceEvents"]:
        if e.get("cat") != "kernel":
            continue
        a = e.setdefault("args", {})
        if a.get("correlation") in replays:
            node += 1
            a["graph id"], a["graph node id"] = REPLAYED_GRAPH_ID, node
        else:
            a["graph id"], a["graph node id"] = 0, 0
    return doc


def write_doc(path: str, doc: dict[str, Any]) -> str:
    """``doc`` written in Kineto's layout to ``path``."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(_dumps(doc))
    return path


def _worker(r: Rank) -> str:
    return f"node{r.node}_{r.pid}"


def ddp_job(nodes: int, per_node: int = 8, slow_node: int | None = None, slow: float = 1.3) -> Scenario:
    """A DDP job of ``nodes`` x ``per_node`` ranks (one 150 us AllReduce per step), optionally a slow node: the
    shape of the large jobs the sharded precompute is measured on (benchmarks/shard_job.py)."""
    return Scenario(nodes * per_node, ddp(comm_us=150.0, slow_node=slow_node, slow=slow),
                    ["node_straggler"] if slow_node is not None else [], [],
                    f"{nodes} nodes x {per_node} GPUs DDP" + (f", node{slow_node} {slow}x slower" if slow_node is not None
                                                              else ""), nodes=nodes)


def write_run(out: str, name: str | Scenario, steps: int = 12, gz: bool = False, run: str | None = None,
              xpu: bool = False) -> list[str]:
    """Write scenario ``name`` (or a Scenario, then ``run`` names its folder) into ``out/<run or name>/`` (one file
    per rank; ``xpu``: the job on an Intel GPU, :func:`as_xpu`); returns the paths."""
    ranks = simulate(name, steps)
    folder = os.path.join(out, run or str(name))
    os.makedirs(folder, exist_ok=True)
    paths = []
    for r in ranks:
        stamp = BASE_NS + int(T0_US * 1000) + r.rank * 1_000_000
        path = os.path.join(folder, f"{_worker(r)}.{stamp}.pt.trace.json" + (".gz" if gz else ""))
        doc = trace_doc(r, len(ranks))
        text = _dumps(as_xpu(doc) if xpu else doc)
        with (gzip.open(path, "wt", encoding="utf-8") if gz else open(path, "w", encoding="utf-8")) as f:
            f.write(text)
        paths.append(path)
    return paths


def _dumps(doc: dict[str, Any]) -> str:
    """Kineto's layout: the head's keys one per line, then one event per line inside ``traceEvents``."""
    events = doc.pop("traceEvents")
    name = doc.pop("traceName", None)  # (PyTorch 1.8-1.9 wrote none: :func:`as_old_schema`)
    head = json.dumps(doc, indent=2)[:-2]
    body = ",\n  ".join(json.dumps(e) for e in events)
    tail = f',\n  "traceName": {json.dumps(name)}' if name is not None else ""
    return f'{head},\n  "traceEvents": [\n  {body}\n  ]{tail}\n}}\n'


def truth(name: str, paths: list[str], steps: int) -> dict[str, Any]:
    """The run's truth, its numbers measured from the written file (rank 0): the device step time is the mean
    spacing of its device-side ``ProfilerStep`` spans over the steps a report keeps (first and last dropped)."""
    sc = SCENARIOS[name]
    with (gzip.open(paths[0], "rt") if paths[0].endswith(".gz") else open(paths[0])) as f:
        ev = json.load(f)["traceEvents"]
    starts = sorted(e["ts"] for e in ev if e.get("cat") == "gpu_user_annotation")
    spans = [b - a for a, b in zip(starts[1:-1], starts[2:])]
    out = {"kind": "torch-synthetic", "mode": name, "steps": steps, "ranks": sc.ranks, "expect_top": sc.expect_top,
           "expect_not": sc.expect_not, "note": sc.note, "dtype": sc.dtype, **sc.extra}
    if spans and "injected_sleep_ms" not in sc.extra:
        out["device_step_ms"] = round(sum(spans) / len(spans) / 1000.0, 4)
    elif spans:
        out["device_step_ms"] = round((sum(spans) / len(spans)) / 1000.0 - sc.extra["injected_sleep_ms"], 4)
    return out


def write_set(out: str, runs: list[str] | None = None, steps: int = 12, gz: bool = False) -> dict[str, Any]:
    """Every scenario (or ``runs``) into ``out``, with ``out/TRUTH.json``."""
    truths = {}
    for name in runs or list(SCENARIOS):
        truths[name] = truth(name, write_run(out, name, steps, gz), steps)
    with open(os.path.join(out, "TRUTH.json"), "w", encoding="utf-8") as f:
        json.dump(truths, f, indent=1)
    return truths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--runs", default="", help=f"comma-separated, of: {', '.join(SCENARIOS)} (default: all)")
    ap.add_argument("--steps", type=int, default=12, help="profiled steps per run (default 12; ~1 GB: 20000)")
    ap.add_argument("--gzip", action="store_true", help="write .pt.trace.json.gz (use_gzip=True)")
    a = ap.parse_args(argv)
    runs = [r for r in a.runs.split(",") if r] or None
    for r in runs or []:
        if r not in SCENARIOS:
            ap.error(f"unknown run {r!r} (known: {', '.join(SCENARIOS)})")
    for name, t in write_set(a.out, runs, a.steps, a.gzip).items():
        print(f"{name}: {t['ranks']} rank(s), expect {t['expect_top'] or 'healthy'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


#: The thread autograd's engine runs a backward pass on: another than the loop's (the real compiled traces' layout).
AUTOGRAD_TID = 4199


def write_compiled_loop_unmarked(path: str, iterations: int = 6, fwd_kernels: int = 6, bwd_kernels: int = 14,
                                 kernel_us: float = 40.0, loss_pause_us: float = 1500.0, loop_pause_us: float = 2500.0,
                                 regions: int = 1, backward: bool = True) -> dict[str, Any]:
    """A ``torch.compile``d forward + backward loop profiled without a schedule, so ``prof.step()`` writes no
    ``ProfilerStep#N`` (Wings236/model_inference's ``trace.json``, h37-survey16): each iteration the loop's thread runs
    the compiled forward (``regions`` ``Torch-Compiled Region: N/0`` spans one after another -- graph breaks --
    ``fwd_kernels`` launches in all), pauses ``loss_pause_us`` in its own unrecorded Python (the loss), then autograd's
    thread runs ``CompiledFunctionBackward`` (``bwd_kernels`` launches: more than the forward's, so the forward's span
    alone holds under half the GPU work), and the loop pauses ``loop_pause_us`` before the next iteration.  Both pauses
    idle the GPU, so each iteration is two GPU bursts.  ``backward=False``: the same loop forward only (its backward's
    ops run on the loop's thread as plain ATen work).  Truth by construction: ``iterations`` iterations, each
    ``iteration_ms`` long (the spacing of the first region's starts)."""
    r = Rank(rank=0, pid=4100, device=0)
    starts: list[float] = []
    per_region = max(fwd_kernels // regions, 1)
    for _ in range(iterations):
        starts.append(r.host_us)
        for g in range(regions):
            region = r.cpu(f"Torch-Compiled Region: {g}/0", 0.0, advance=False)
            r.host_us += 12.0
            for k in range(per_region):
                r.kernel(f"triton_poi_fused_{g}_{k}", f"triton_poi_fused_{g}_{k}", kernel_us, launch_call="cuLaunchKernel")
            region["dur"] = round(r.host_us + 8.0 - region["ts"], 3)
            r.host_us += 10.0
        r.host_us += loss_pause_us
        first_host, first_flow = len(r.host), len(r.flows)
        node = r.cpu("autograd::engine::evaluate_function: CompiledFunctionBackward" if backward else "aten::mul",
                     0.0, advance=False)
        r.host_us += 15.0
        for k in range(bwd_kernels):
            name = f"triton_poi_fused_backward_{k}" if backward else f"triton_poi_fused_mul_{k}"
            r.kernel(name, name, kernel_us, launch_call="cuLaunchKernel")
        node["dur"] = round(r.host_us + 5.0 - node["ts"], 3)
        if backward:
            for e in r.host[first_host:] + [f for f in r.flows[first_flow:] if f["ph"] == "s"]:
                e["tid"] = AUTOGRAD_TID
        r.host_us = max(r.host_us, r.streams.get(COMPUTE_STREAM, 0.0)) + loop_pause_us
    doc = trace_doc(r, 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(_dumps(doc))
    spacing = [b - a for a, b in zip(starts, starts[1:])]
    return {"iterations": iterations, "iteration_ms": round(sum(spacing) / len(spacing) / 1000.0, 4),
            "forward_share": fwd_kernels / (fwd_kernels + bwd_kernels)}


def _driver_launch(r: Rank, name: str, kernel_us: float, call: str, call_us: float = 8.0) -> None:
    """A kernel a Python launcher starts straight through the driver (Triton's ``JITFunction.run`` outside
    ``torch.compile``): one ``call`` (``cuLaunchKernel``; ``hipModuleLaunchKernel`` on ROCm) in Kineto's
    ``cuda_driver`` category, starting now, with no op or range around it; its kernel on the compute stream."""
    r.corr += 1
    r.host.append({"ph": "X", "cat": "cuda_driver", "name": call, "pid": r.pid, "tid": r.pid,
                   "ts": round(r.host_us, 3), "dur": round(call_us, 3),
                   "args": {"cbid": 307, "correlation": r.corr}})
    start = max(r.streams.get(COMPUTE_STREAM, 0.0), r.host_us + call_us * 0.7)
    r.streams[COMPUTE_STREAM] = start + kernel_us
    r.gpu.append({"ph": "X", "cat": "kernel", "name": name, "pid": r.device, "tid": COMPUTE_STREAM,
                  "ts": round(start, 3), "dur": round(kernel_us, 3),
                  "args": {"queued": 0, "device": r.device, "context": 1, "stream": COMPUTE_STREAM,
                           "correlation": r.corr, "registers per thread": 32, "shared memory": 0,
                           "blocks per SM": 1.0, "warps per SM": 4.0, "grid": [128, 1, 1], "block": [128, 1, 1],
                           "est. achieved occupancy %": 6}})
    r._flow(r.host_us, start, COMPUTE_STREAM)
    r.host_us += call_us
    r.step_kernels.append((start, start + kernel_us))


def write_python_launcher(path: str, steps: int = 8, launches: int = 4, launcher_us: float = 40.0,
                          between_us: float = 60.0, kernel_us: float = 2.0, marked: bool = True,
                          call: str = "cuLaunchKernel", compiled: bool = False,
                          props: dict[str, Any] | None = None, opening: bool = False,
                          ranged: bool = False) -> dict[str, Any]:
    """A Triton kernel microbenchmark outside ``torch.compile`` (survey h37-survey44's A10G capture, JerryLiang49's
    ``_qk_draft_hist_kernel``): each step builds an input with one ATen op (its kernel launched inside the op through
    the runtime), runs ``between_us`` of its own unrecorded Python, then ``launches`` times allocates the output
    (``aten::empty``, no kernel), spends ``launcher_us`` in the Python launcher -- nothing recorded -- and launches
    the kernel through the driver (:func:`_driver_launch`).  ``marked``: each step a ``ProfilerStep#N``, else one
    unmarked pass of them all.  ``compiled``: the control -- the same silences, but each launch inside its Inductor
    ``triton_*`` op (a compiled function's launch), so no launch is a bare launcher's.  Truth by construction: the
    launcher's time, ``launches * launcher_us`` a step, right before as many bare launches (0 and 0 where
    ``compiled``): ``bare_ms_per_step`` and ``bare_launches_per_step``, whatever ``call`` launches them.

    ``opening``: the between-steps case -- the launches open each step, the ATen op and the ``between_us`` of Python
    close it, so the GPU idles from the step's last kernel through the Python, the first ``aten::empty`` and the
    first launch's launcher time: that one silence a step lies in the gap between steps, the other launches' inside
    the step (``gap_launcher_ms_per_step``, ``gap_launches_per_step``; 0 unless ``opening`` and marked)."""
    r = Rank(rank=0, pid=4100, device=0)
    kname = "_qk_draft_hist_kernel"

    def build(rr: Rank) -> None:
        rr.kernel("aten::normal_", "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_"
                  "kernel<float, 4>", kernel_us)
        rr.host_us += between_us

    def launch(rr: Rank) -> None:
        for _ in range(launches):
            outer = rr.cpu("my_triton_op", 0.0, cat="user_annotation", advance=False) if ranged else None
            rr.cpu("aten::empty", 8.0)
            rr.host_us += launcher_us
            if outer is not None:
                _driver_launch(rr, kname, kernel_us, call)
                rr.host_us += 1.0
                outer["dur"] = round(rr.host_us - outer["ts"], 3)
            elif compiled:
                rr.kernel(f"triton_poi_fused_{kname}", f"triton_poi_fused_{kname}", kernel_us, launch_call=call)
            else:
                _driver_launch(rr, kname, kernel_us, call)

    def body(rr: Rank) -> None:
        for part in ((launch, build) if opening else (build, launch)):
            part(rr)

    for n in range(2, 2 + steps):
        if marked:
            r.step(n, body)
        else:
            body(r)
    doc = trace_doc(r, 1, props or H100)
    with open(path, "w", encoding="utf-8") as f:
        f.write(_dumps(doc))
    bare = 0 if compiled or ranged else launches
    per = 1 if marked else steps  # one unmarked pass holds every iteration
    gap = 1 if bare and opening and marked else 0  # the first launch's silence a step, in the gap before it
    return {"steps": steps if marked else 1, "bare_ms_per_step": bare * launcher_us / 1000.0 * per,
            "bare_launches_per_step": bare * per, "gap_launcher_ms_per_step": gap * launcher_us / 1000.0,
            "gap_launches_per_step": gap}


#: The backward nodes AOTAutograd's joint-graph trace runs on fake tensors inside ``create_aot_dispatcher_function``
#: (the A10G conv of survey h37-survey40 recorded these, 22 in all), each (node, ms).
TRACED_BACKWARD = (("ViewBackward0", 1.8), ("PermuteBackward0", 1.7), ("AddBackward0", 3.0), ("ViewBackward0", 1.6))


def write_compiled_first_call(path: str, backward_after: bool = False, kernel_us: float = 40.0) -> dict[str, Any]:
    """The first call of a ``torch.compile``d model whose parameters require grad, profiled with CPU and CUDA activity:
    Dynamo's compile spans (``_compile.compile_inner`` around ``create_aot_dispatcher_function``, ``(dynamo_timed)``),
    inside which AOTAutograd traces the joint forward + backward graph -- autograd's engine runs its backward nodes
    (:data:`TRACED_BACKWARD`) on fake tensors, launching nothing -- then the compiled forward's ``Torch-Compiled
    Region`` launching three Triton kernels and a GEMM.  ``backward_after``: the caller then runs the backward too
    (``CompiledFunctionBackward`` on autograd's thread, its own kernels): a training step.  Truth by construction: the
    job is a forward pass unless ``backward_after``; every backward node of the trace lies inside the compile spans
    but the real one."""
    r = Rank(rank=0, pid=4200, device=0)
    compile_ = r.cpu("_compile.compile_inner (dynamo_timed)", 0.0, advance=False)
    r.host_us += 20.0
    aot = r.cpu("create_aot_dispatcher_function (dynamo_timed)", 0.0, advance=False)
    r.host_us += 500.0
    for node, ms_ in TRACED_BACKWARD:
        outer = r.cpu(f"autograd::engine::evaluate_function: {node}", ms_ * 1000, advance=False)
        r.host_us += 2.0
        r.cpu(node, ms_ * 1000 - 10.0, advance=False)
        r.host_us = outer["ts"] + outer["dur"] + 200.0
    aot["dur"] = round(r.host_us + 300_000.0 - aot["ts"], 3)
    r.host_us = aot["ts"] + aot["dur"] + 50.0
    compile_["dur"] = round(r.host_us + 200_000.0 - compile_["ts"], 3)
    r.host_us = compile_["ts"] + compile_["dur"] + 100.0
    region = r.cpu("Torch-Compiled Region: 0/0", 0.0, advance=False)
    r.host_us += 12.0
    for k in range(3):
        r.kernel(f"triton_poi_fused_{k}", f"triton_poi_fused_{k}", kernel_us, launch_call="cuLaunchKernel")
    r.kernel("aten::mm", "ampere_sgemm_128x32_tn", kernel_us * 2, args=mm_args("aten::mm", 2048, 64, 8, "float"))
    region["dur"] = round(r.host_us + 8.0 - region["ts"], 3)
    r.host_us += 30.0
    if backward_after:
        first_host, first_flow = len(r.host), len(r.flows)
        node = r.cpu("autograd::engine::evaluate_function: CompiledFunctionBackward", 0.0, advance=False)
        r.host_us += 15.0
        for k in range(4):
            r.kernel(f"triton_poi_fused_backward_{k}", f"triton_poi_fused_backward_{k}", kernel_us,
                     launch_call="cuLaunchKernel")
        node["dur"] = round(r.host_us + 5.0 - node["ts"], 3)
        for e in r.host[first_host:] + [f for f in r.flows[first_flow:] if f["ph"] == "s"]:
            e["tid"] = AUTOGRAD_TID
    r.sync("aten::to")
    write_doc(path, trace_doc(r, 1))
    return {"kind": "training" if backward_after else "inference", "traced_backward_nodes": len(TRACED_BACKWARD)}


#: A ``torch.compile``d model's first call as a CUDA-only capture records it, burst by burst (the course's A10G
#: ``induction_trace.json``, read in place: no licence): the inputs' 4-byte pageable uploads and device copies (25
#: pairs in two bursts), a fill and its read-back twice, the compiled call's three Triton kernels, then cuBLAS's first
#: GEMM -- each burst after the host's compiling (seconds, unrecorded: CPU activity off).  (pause before it, ms; what
#: it runs: ("copies", pairs) | ("fill", 1) | ("triton", 3) | ("gemm", 1))
FIRST_CALL_BURSTS = ((0.0, "copies", 11), (46.0, "copies", 14), (390.0, "fill", 1), (24.0, "fill", 1),
                     (2650.0, "triton", 3), (60.0, "gemm", 1))
#: An A100-SXM4-40GB as PyTorch 1.10's Kineto records it (``wild/loop_ended_backlog_a100_gnn``'s ``deviceProperties``).
A100_40GB = {"name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42505273344, "computeMajor": 8, "computeMinor": 0,
             "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
             "sharedMemPerBlock": 49152, "numSms": 108}
#: An RTX 2080 Ti as PyTorch 2.x's Kineto records it (h37-survey70's Abenich7 captures' ``deviceProperties``).
RTX_2080_TI = {"name": "NVIDIA GeForce RTX 2080 Ti", "totalGlobalMem": 11347623936, "computeMajor": 7,
               "computeMinor": 5, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 1024,
               "regsPerBlock": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 68,
               "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 65536, "sharedMemPerMultiprocessor": 65536}
A10G = {"name": "NVIDIA A10G", "totalGlobalMem": 23696375808, "computeMajor": 8, "computeMinor": 6,
        "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 1536, "regsPerBlock": 65536, "warpSize": 32,
        "sharedMemPerBlock": 49152, "numSms": 80}


def _first_call_burst(r: Rank, what: str, n: int) -> None:
    """One burst of :data:`FIRST_CALL_BURSTS` launched from the host's clock now."""
    for k in range(n):
        if what == "copies":
            r.copy_h2d(4 / (1 << 20), 0.42, pageable=True)
            r.memcpy(r.cpu("aten::copy_", 20.0, advance=False), "Memcpy DtoD (Device -> Device)", 4, 1.2)
            r.host_us += 500.0
        elif what == "fill":
            r.kernel("aten::fill_", "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
                     1.2)
            r.memcpy(r.cpu("aten::copy_", 20.0, advance=False), "Memcpy DtoH (Device -> Pinned)", 4, 2.0)
        elif what == "triton":
            r.kernel(None, f"triton_poi_fused_copy_{k}", (5.5, 4.6, 1.4)[k % 3], launch_call="cuLaunchKernel")
        else:
            r.kernel("aten::mm", "ampere_sgemm_32x32_sliced1x4_tn", 4.3, args=mm_args("aten::mm", 64, 27, 8, "float"))


def write_cuda_only_first_call(path: str, calls_after: int = 0, pause_ms: float = 50.0) -> dict[str, Any]:
    """A ``torch.compile``d model's first call profiled with CUDA activity only (``activities=[ProfilerActivity.CUDA]``:
    no op, no Python span): :data:`FIRST_CALL_BURSTS` on an A10G, the host's compile between them unrecorded.
    ``calls_after``: that many more calls of the compiled model follow, each its three Triton kernels and its GEMM,
    ``pause_ms`` of the host's own time apart -- a loop on a GPU as idle, whose iterations repeat their kernels.
    Truth by construction: with no call after, the window is one first call (GPU work ~0.1 ms in ~3.2 s, most of its
    kernel time in kernels one burst runs); with calls after, those calls are iterations."""
    r = Rank(rank=0, pid=12386, device=0)
    for pause, what, n in FIRST_CALL_BURSTS:
        r.host_us += pause * 1000.0
        _first_call_burst(r, what, n)
    for _ in range(calls_after):
        r.host_us += pause_ms * 1000.0
        _first_call_burst(r, "triton", 3)
        _first_call_burst(r, "gemm", 1)
    r.sync("aten::to")
    r.host = [e for e in r.host if e["cat"] != "cpu_op"]  # CUDA activity only: the runtime's calls, no op
    write_doc(path, trace_doc(r, 1, A10G))
    return {"bursts": len(FIRST_CALL_BURSTS) + 2 * calls_after, "iterations": calls_after}


#: One iteration of a shifted-window block's test loop, as the RTX A4000 capture of
#: willding123/Shift-Equivariant-Vision-Transformers runs it (names shortened from the real file's): the input's
#: pageable upload, then these kernels with their time on the GPU (us).
WARMING_LOOP_KERNELS = (
    ("void at::native::(anonymous namespace)::grid_sampler_2d_kernel<float, int>", 77.0),
    ("void at::native::roll_cuda_kernel<float>", 15.0),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>", 29.0),
    ("ampere_sgemm_128x64_tn", 120.0),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 6, false, false>", 18.0),
    ("ampere_sgemm_128x128_nn", 68.0),
)


def write_cuda_only_warming_loop(path: str, cold: int = 4, warm: int = 12, per_burst: int = 3,
                                 cold_pause_ms: float = 30.0, warm_pause_ms: float = 20.0, op_us: float = 150.0
                                 ) -> dict[str, Any]:
    """A test loop profiled with CUDA activity only (no op, no step mark) on an A10G-class GPU: ``cold + warm``
    iterations of the same work (an upload and :data:`WARMING_LOOP_KERNELS`).  In the ``cold`` first iterations the
    host pauses ``cold_pause_ms`` after each launch (each kernel's first launches loading its module), so each of
    their copies and kernels is a GPU burst of its own; the ``warm`` later ones run back to back, ``per_burst`` to a
    burst, ``warm_pause_ms`` apart (the loop's own host work between groups), the host's Python taking ``op_us``
    between launches (longer than most kernels: each kernel is a busy interval of its own, as in the real file).  An iteration whose random shift is 0
    (seeded) launches no roll (the real loop's iterations vary from 25 to 65 GPU events), so no launch sequence repeats
    exactly.
    Truth by construction: ``cold + warm`` iterations, ``period_ms`` from each one's upload on the GPU to the next's
    (the upload runs once in each, first); with ``cold`` > 0 and ``per_burst`` > 1 the GPU's bursts are
    pieces of iterations (one burst per copy or kernel of the cold ones) and groups of them, not iterations; with
    ``cold=0, per_burst=1`` every burst is one iteration (the control)."""
    r = Rank(rank=0, pid=1312450, device=0)
    draw = random.Random(5)  # the test's torch.randint(5, (1,)) shifts, seeded: 0 in about a fifth of the iterations
    shifts = [draw.randrange(5) for _ in range(cold + warm)]

    opens: list[float] = []  # each iteration's upload on the GPU (us): the first of its work, once an iteration

    def iteration(k: int, pause_us: float) -> None:
        r.copy_h2d(0.27, 20.0, pageable=True)
        opens.append(float(r.gpu[-1]["ts"]))
        r.host_us += pause_us
        for name, us in WARMING_LOOP_KERNELS:
            if "roll" in name and not shifts[k]:
                continue  # the random shift drawn was 0: torch.roll launches nothing, so the iterations' launches vary
            r.kernel(None, name, us)
            r.host_us += pause_us

    for k in range(cold):
        iteration(k, cold_pause_ms * 1000.0)
    for k in range(cold, cold + warm):
        if (k - cold) % per_burst == 0:
            r.host_us += warm_pause_ms * 1000.0
        iteration(k, op_us)
    r.sync("aten::to")
    r.host = [e for e in r.host if e["cat"] != "cpu_op"]  # CUDA activity only: the runtime's calls, no op
    write_doc(path, trace_doc(r, 1, A10G))
    rolls = sum(1 for k in range(cold) if not shifts[k])  # the cold iterations whose roll launched nothing
    return {"iterations": cold + warm,
            "bursts": cold * (1 + len(WARMING_LOOP_KERNELS)) - rolls + -(-warm // per_burst),
            "period_ms": [(b - a) / 1000.0 for a, b in pairwise(opens)]}


def _runtime_call(r: Rank, name: str, us: float, cbid: int) -> None:
    """A CUDA runtime call of no op (CUDA activity only) from the host's clock now, which moves past it."""
    r.corr += 1
    r.host.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": r.pid, "tid": r.pid,
                   "ts": round(r.host_us, 3), "dur": round(us, 3), "args": {"cbid": cbid, "correlation": r.corr}})
    r.host_us += us


def write_profiler_calls_only(path: str, program_call: str | None = None, runtime_start: bool = False,
                              sync_us: float = 115_864.5) -> dict[str, Any]:
    """A window of a model left on the CPU, profiled with CUDA activity only (the course's A10G ``baseline_trace.json``
    v1, read in place: no licence): the profiler's own CUDA calls -- ``cudaGetDeviceCount`` twice and
    ``cudaGetDeviceProperties_v2`` as it starts, then, as it stops, ``torch.cuda.synchronize()``'s
    ``cudaDeviceSynchronize`` (``sync_us``, 115.9 ms: it created the context) ending 0.05 ms before the window's end.
    ``program_call``: the program makes that CUDA call first (``cudaMalloc``: a model moved to the GPU, cut before its
    first kernel) -- the control.  ``runtime_start``: the window also records the runtime's own initialisation
    (``cuModuleGetLoadingMode``, as an Nsight export does; torch.profiler records none) before the first query.
    Truth by construction: without ``program_call``, nothing the program called touched the GPU."""
    r = Rank(rank=0, pid=12365, device=0)
    call = partial(_runtime_call, r)
    r.host_us += 17_000.0
    if runtime_start:
        call("cuModuleGetLoadingMode", 0.5, 0)
        r.host_us += 10.0
    call("cudaGetDeviceCount", 0.22, 3)
    r.host_us += 1_700.0
    call("cudaGetDeviceCount", 0.07, 3)
    r.host_us += 15_300.0
    call("cudaGetDeviceProperties_v2", 3_173.3, 440)
    r.host_us += 700.0
    if program_call is not None:
        call(program_call, 110_000.0, 20)
        r.host_us += 5_000.0
    call("cudaDeviceSynchronize", sync_us if program_call is None else 12.0, 165)
    r.host_us += 47.0
    write_doc(path, trace_doc(r, 1, A10G))
    return {"cpu_only": program_call is None}


#: :func:`write_loop_ended`'s queue: the element-wise kernels of a step's backward and optimizer, as the GNN's warm-up
#: step left them (``wild/loop_ended_backlog_a100_gnn``: 964 of them, most a few us, a few GEMMs of 80 us).
BACKLOG_KERNEL = ("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, "
                  "at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)")
BACKLOG_KERNEL_US = 50.0


def _queued_before_window(r: Rank, backlog: int) -> float:
    """``backlog`` kernels launched before the window opened (now, on ``r``'s clock) and still queued: the GPU runs
    them from the window's start, back to back, with their correlation ids and no launch call in the file (CUPTI
    records the launch when it happens, before the window) -- only the flow's end.  Returns where the last ends."""
    window_at = r.host_us
    for _ in range(backlog):
        r.corr += 1
        start = max(r.streams.get(COMPUTE_STREAM, window_at + 20.0), window_at + 20.0)
        r.streams[COMPUTE_STREAM] = start + BACKLOG_KERNEL_US
        r.gpu.append({"ph": "X", "cat": "kernel", "name": BACKLOG_KERNEL, "pid": r.device, "tid": COMPUTE_STREAM,
                      "ts": round(start, 3), "dur": BACKLOG_KERNEL_US,
                      "args": {"queued": 0, "device": r.device, "context": 1, "stream": COMPUTE_STREAM,
                               "correlation": r.corr, "grid": [245, 1, 1], "block": [64, 1, 1]}})
        r.flows.append({"ph": "f", "id": r.corr, "pid": r.device, "tid": COMPUTE_STREAM, "ts": round(start, 3),
                        "cat": "ac2g", "name": "ac2g", "bp": "e"})
        r.corr += 6  # the step's other calls between two launches (its ops' allocations, its copies' calls)
    return r.streams.get(COMPUTE_STREAM, window_at)


def write_loop_ended(path: str, backlog: int = 0, launch_in_step: bool = False, step: int = 2) -> dict[str, Any]:
    """A ``torch.profiler`` window opened after the loop's last batch, as ``schedule(wait=1, warmup=1, active=3)``
    over a loader of ``step`` batches records it: one ``ProfilerStep#{step}`` holding the DataLoader's ``__next__``
    that found the loader exhausted, nothing after it, then the profiler's exit ``cudaDeviceSynchronize``.
    ``backlog``: that many kernels the last batch's step launched before the window, still queued when it opened:
    the GPU runs them from the window's start, back to back, with their correlation ids and no launch call in the
    file (CUPTI records the launch when it happens, before the window), and the exit sync waits for the last.
    ``launch_in_step``: the control -- the step launches one kernel after its fetch (a step of its own: the loop's
    body ran), from the fetch's own code (no op of its own, so only the launch tells it from the loop's end).
    Truth by construction: the window holds the job's step only where ``launch_in_step``; its GPU work otherwise is
    all queued before it (``queued``: the kernels, their summed time in ms)."""
    r = Rank(rank=0, pid=3884292, device=0)
    _queued_before_window(r, backlog)

    def body(rr: Rank) -> None:
        rr.cpu(DATALOADER, 42.0)
        if launch_in_step:
            rr.kernel(None, BACKLOG_KERNEL, BACKLOG_KERNEL_US)

    r.host_us += 260.0
    r.step(step, body)
    r.host_us += 60.0
    drained = max(r.streams.values(), default=r.host_us)
    _runtime_call(r, "cudaDeviceSynchronize", max(drained - r.host_us, 0.0) + 7.0, 165)
    r.host_us += 47.0
    write_doc(path, trace_doc(r, 1, A100_40GB))
    return {"window": "" if launch_in_step else "loop_ended", "loop_steps": step, "queued": backlog,
            "queued_ms": backlog * BACKLOG_KERNEL_US / 1000 if not launch_in_step else 0.0}


#: :func:`write_loop_opened`'s step: ``LOOP_OPENED_KERNELS`` matmuls of ``LOOP_OPENED_KERNEL_US`` each.
LOOP_OPENED_KERNELS, LOOP_OPENED_KERNEL_US = 6, 400.0


def write_loop_opened(path: str, backlog: int = 0, steps: int = 4, sync_first: bool = True,
                      first: int = 6) -> dict[str, Any]:
    """:func:`write_loop_ended`'s twin, mid-loop: a ``torch.profiler`` window that opens while the GPU still runs
    ``backlog`` kernels the step before it launched (queued as :func:`_queued_before_window` has them), then
    ``steps`` training steps ``ProfilerStep#{first}``..., each ``LOOP_OPENED_KERNELS`` launches ended by
    ``loss.item()`` (the host waits for its GPU work, so the steps' host windows hold it).  ``sync_first``: each step
    opens with ``torch.cuda.synchronize()`` (``hf_qwen_h100``'s first call), which in the first step waits for the
    queue; else the first step's launches queue behind it.
    Truth by construction: ``queued``/``queued_ms`` the work queued before the window, ``inherited`` whether it still
    runs as the first step opens (a queue of 1 kernel has drained by then); ``first_step_ms`` the first step's GPU time
    without it -- from where the queue ends to the next step's start, as every other step runs from its start to the
    next's (``step_ms``: the second step's, where a third follows); main booked the queue in the first step (``first_step_ms`` plus the
    queue's span from the step's start)."""
    if steps < 2:
        raise ValueError("the first step's truth is its start to the next step's: two steps or more")
    r = Rank(rank=0, pid=1016005, device=0)
    queue_end = _queued_before_window(r, backlog)
    r.host_us += 100.0
    starts: list[float] = []

    def body(rr: Rank) -> None:
        if sync_first:
            _runtime_call(rr, "cudaDeviceSynchronize", max(max(rr.streams.values(), default=0.0) - rr.host_us, 0.0)
                          + 3.0, 165)
        for _ in range(LOOP_OPENED_KERNELS):
            rr.kernel("aten::mm", "ampere_sgemm_128x64_nn", LOOP_OPENED_KERNEL_US)
        rr.sync("aten::item")

    for k in range(steps):
        starts.append(r.host_us)
        r.step(first + k, body)
        r.host_us += 30.0
    write_doc(path, trace_doc(r, 1, A100_40GB))
    opens = starts[0] if not backlog else max(queue_end, starts[0])
    return {"queued": backlog, "queued_ms": backlog * BACKLOG_KERNEL_US / 1000, "steps": steps,
            "inherited": opens > starts[0],
            "first_step_ms": (starts[1] - opens) / 1000,
            "step_ms": (starts[2] - starts[1]) / 1000 if steps > 2 else None}


#: :func:`write_step_in_flight`'s step: ``IN_FLIGHT_KERNELS`` matmuls of ``IN_FLIGHT_KERNEL_US`` each on the compute
#: stream, after one lookup kernel on a side stream (``IN_FLIGHT_SIDE_STREAM``) of ``IN_FLIGHT_SIDE_US``.
IN_FLIGHT_KERNELS, IN_FLIGHT_KERNEL_US = 8, 500.0
IN_FLIGHT_SIDE_STREAM, IN_FLIGHT_SIDE_US = 25, 120.0


#: :func:`write_step_in_flight`'s collectives (``collectives=True``): NCCL before 2.19 runs both as its one point-to-point
#: kernel on one stream, told apart only by their grids (``torchrec_a100_stalls``: 2-3 blocks and 16)
IN_FLIGHT_NCCL = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"
IN_FLIGHT_A2A_US, IN_FLIGHT_ALLREDUCE_US = 150.0, 900.0
IN_FLIGHT_A2A_GRID, IN_FLIGHT_ALLREDUCE_GRID, IN_FLIGHT_NCCL_BLOCK = (2, 1, 1), (16, 1, 1), (512, 1, 1)


def _queued_collective(r: Rank, us: float) -> None:
    """The step before's all-reduce, launched before the window and still queued on the NCCL stream when it opened
    (as :func:`_queued_before_window`'s kernels: its correlation id and no launch call in the file)."""
    r.corr += 1
    start = r.host_us + 20.0
    r.streams[NCCL_STREAM] = start + us
    r.gpu.append({"ph": "X", "cat": "kernel", "name": IN_FLIGHT_NCCL, "pid": r.device, "tid": NCCL_STREAM,
                  "ts": round(start, 3), "dur": us,
                  "args": {"queued": 0, "device": r.device, "context": 1, "stream": NCCL_STREAM, "correlation": r.corr,
                           "grid": list(IN_FLIGHT_ALLREDUCE_GRID), "block": list(IN_FLIGHT_NCCL_BLOCK)}})
    r.flows.append({"ph": "f", "id": r.corr, "pid": r.device, "tid": NCCL_STREAM, "ts": round(start, 3),
                    "cat": "ac2g", "name": "ac2g", "bp": "e"})
    r.corr += 6


def write_step_in_flight(path: str, steps: int = 5, first: int = 550, collectives: bool = False) -> dict[str, Any]:
    """A ``torch.profiler`` window on a loop that keeps one step's work in flight (``torchrec_a100_stalls``' shape):
    each step launches a lookup kernel on a side stream (it runs at once: that stream is idle) and its matmuls on the
    compute stream, then waits (``cudaEventSynchronize``) for the step before's compute work -- so the compute stream
    runs a step behind the host, and every step's work runs on past the next step's first kernel.  The window opens
    mid-loop on the step before's compute work (queued before it, as :func:`_queued_before_window` has it), which the
    first step waits for.  GPU-bound: the compute stream is never idle, so the loop's period is one step's compute work.
    ``collectives``: each step also runs an all-to-all (its lookup's exchange) and, after its matmuls, an all-reduce,
    both as NCCL's one point-to-point kernel on one stream (:data:`IN_FLIGHT_NCCL`, told apart by grid), and the
    window opens on the step before's all-reduce queued there too: every kept step holds one call of each type
    (``truth["calls"]``), the first's all-reduce the inherited one, which only its peers can type.
    Truth by construction: ``step_ms`` the period (``IN_FLIGHT_KERNELS`` x ``IN_FLIGHT_KERNEL_US``), every step from
    the second one's (the last included: its window holds the step before's spill as every other does, not its own
    too); ``first_step_ms`` the first's, its first kernel to the next one's (it holds the queue it opened on, as
    every other step holds its predecessor's spill); ``spill_ms`` how far each step's work runs past the next step's
    first kernel (main read the last step ``step_ms`` + ``spill_ms``)."""
    if steps < 3:
        raise ValueError("a period between two steps and a last one after it: three steps or more")
    r = Rank(rank=0, pid=4515, device=0)
    step_us = IN_FLIGHT_KERNELS * IN_FLIGHT_KERNEL_US
    ends = [_queued_before_window(r, round(step_us / BACKLOG_KERNEL_US))]  # the step before's compute work
    if collectives:
        _queued_collective(r, IN_FLIGHT_ALLREDUCE_US)
    r.host_us += 100.0
    side: list[float] = []

    def body(rr: Rank) -> None:
        side.append(rr.kernel("aten::embedding_bag", "void fbgemm_gpu::embedding_forward_kernel", IN_FLIGHT_SIDE_US,
                              stream=IN_FLIGHT_SIDE_STREAM)[0])
        if collectives:
            rr.kernel("c10d::alltoall_base_", IN_FLIGHT_NCCL, IN_FLIGHT_A2A_US, stream=NCCL_STREAM,
                      grid=IN_FLIGHT_A2A_GRID, block=IN_FLIGHT_NCCL_BLOCK)
        for _ in range(IN_FLIGHT_KERNELS):
            rr.kernel("aten::mm", "ampere_sgemm_128x64_nn", IN_FLIGHT_KERNEL_US)
        if collectives:
            rr.kernel("c10d::allreduce_", IN_FLIGHT_NCCL, IN_FLIGHT_ALLREDUCE_US, stream=NCCL_STREAM,
                      grid=IN_FLIGHT_ALLREDUCE_GRID, block=IN_FLIGHT_NCCL_BLOCK)
        _runtime_call(rr, "cudaEventRecord", 3.0, 135)
        _runtime_call(rr, "cudaEventSynchronize", max(ends[-1] - rr.host_us, 0.0) + 3.0, 126)
        ends.append(rr.streams[COMPUTE_STREAM])

    for k in range(steps):
        r.step(first + k, body)
        r.host_us += 30.0
    write_doc(path, trace_doc(r, 1, A100_40GB))
    return {"steps": steps, "step_ms": step_us / 1000, "first_step_ms": (side[1] - side[0]) / 1000,
            "spill_ms": (ends[2] - side[2]) / 1000,
            "calls": {"AllToAll": 1, "AllReduce": 1} if collectives else {}}


#: :func:`write_start_up_of_no_framework`'s first calls: module loads long enough that the GPU idles in start-up for
#: over a quarter of the pass (a critical cold start), Python long enough that the host's own work is over half the
#: GPU's idle (a critical host-bound pass, before the first-call rule).
BARE_START_UP_LOAD_US, BARE_START_UP_PY_US = 4000.0, 5000.0


def write_start_up_of_no_framework(path: str, load_us: float = BARE_START_UP_LOAD_US,
                                   py_us: float = BARE_START_UP_PY_US) -> dict[str, Any]:
    """:func:`startup_pass` of a program of no framework's ops, traced with Python frames: nothing names the job's
    kind (no ATen op, no backward), so the window is read whole as one pass of low confidence -- where a critical
    per-pass finding says why it stays critical ("Critical though the capture marks no step") -- and it is mostly
    start-up, so the first-call rule makes its host time a note.  The shape h37-survey39's mmagic forward had under
    PyProf before h37-nsysos read its context and its kind.  Truth by construction: the start-up's idle (module loads)
    and the first calls' Python (host work), per pass."""
    r = Rank(rank=0, pid=4300, device=0)
    _start_up(r, load_us, py_us, framework=False)
    write_doc(path, trace_doc(r, 1))
    # the pass runs from its first kernel: the first module's load and first call lie before it, the others inside it
    return {"kind": "unknown", "phase": "warm-up", "startup_in_pass_ms": (len(set(STARTUP_KERNELS)) - 1) * load_us / 1000,
            "host_work_in_pass_ms": (len(STARTUP_KERNELS) - 1) * py_us / 1000}


def write_framed_inference(path: str, warmup: int = 3, measured: int = 5, kernels: int = 8, kernel_us: float = 500.0,
                           frame: str = "inference", ranged_passes: bool = False, vary: bool = True,
                           last_extra: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    """A Kineto trace of an inference benchmark without ``prof.step()``: ``warmup`` passes launched back to back and
    synchronized once, then one ``record_function(frame)`` around ``measured`` passes, each ended by ``.item()`` (the
    host waits for the GPU).  A pass is ``kernels`` launches of ``kernel_us``; ``vary``: its first kernel named after
    the pass (a kernel that differs per call), so that the launch sequence never repeats and only the GPU's bursts
    show the passes.  ``ranged_passes``: each measured pass in a ``pass`` range of its own as well (the control).
    ``last_extra``: (op, kernel) launches the last measured pass alone runs before its sync (the optimizer step after
    gradient accumulation's last micro-step, a logging reduction every N steps): iterations still, whose last one runs
    more.  Truth by construction: the measured passes' count and their spacing (a pass's start to the next's), the
    warm-ups' count."""
    r = Rank(rank=0, pid=4200, device=0)
    passes, starts = 0, []

    def one_pass() -> None:
        nonlocal passes
        for k in range(kernels):
            name = f"conv_fwd_kernel_p{passes}" if vary and k == 0 else f"conv_fwd_kernel_{k}"
            r.kernel("aten::conv2d", name, kernel_us)
        passes += 1

    for _ in range(warmup):
        one_pass()
    r.sync("aten::item")
    r.host_us += 2000.0
    outer = r.cpu(frame, 0.0, cat="user_annotation", advance=False)
    r.host_us += 5.0
    for _ in range(measured):
        inner = r.cpu("pass", 0.0, cat="user_annotation", advance=False) if ranged_passes else None
        starts.append(r.host_us)
        one_pass()
        for op, name in last_extra if len(starts) == measured else ():
            r.kernel(op, name, kernel_us)
        r.sync("aten::item")
        if inner is not None:
            inner["dur"] = round(r.host_us - inner["ts"], 3)
        r.host_us += 200.0  # the timing loop's own host work
    outer["dur"] = round(r.host_us - outer["ts"], 3)
    with open(path, "w", encoding="utf-8") as f:
        f.write(_dumps(trace_doc(r, 1)))
    spacing = [b - a for a, b in zip(starts, starts[1:])] or [0.0]
    return {"measured": measured, "pass_ms": round(sum(spacing) / len(spacing) / 1000.0, 4), "warmup": warmup}


def write_framed_layer_syncs(path: str, warmup: int = 2, layers: int = 6, kernel_us: float = 300.0,
                             frame: str = "measure") -> dict[str, Any]:
    """A Kineto trace of one eager prefill timed inside ``record_function(frame)``, after ``warmup`` decode passes of
    the same model launched back to back and synchronized once: the pass embeds, runs ``layers`` layers of four kernels
    (a hybrid model's: every fourth layer full attention, the others linear), each ended by ``.item()`` (the host
    reads a value back per layer), then the head and the sampler and a last ``.item()``; a decode pass runs the same
    kernels but a decode's attention.  Truth by construction: one pass, the range's span (ms), and the layers the syncs cut it into."""
    r = Rank(rank=0, pid=4300, device=0)

    def one_pass(synced: bool) -> None:
        r.kernel("aten::embedding", "indexSelectLargeIndex", kernel_us / 3)
        for layer in range(layers):
            attention = "flash_fwd_kernel" if layer % 4 == 3 else "chunk_gated_delta_rule_fwd_kernel"
            attention = attention if synced else "flash_fwd_splitkv_kernel"  # a decode's attention
            for op, name in (("aten::rms_norm", "rms_norm_kernel"), ("aten::mm", "sm90_xmma_gemm_bf16"),
                             ("aten::_flash_attention_forward", attention), ("aten::mm", "gemm_mlp_bf16")):
                r.kernel(op, name, kernel_us)
            if synced:
                r.sync("aten::item")
        r.kernel("aten::mm", "lm_head_gemv_bf16", kernel_us)
        r.kernel("aten::argmax", "argmax_sampler_kernel", kernel_us / 3)

    for _ in range(warmup):
        one_pass(False)
    r.sync("aten::item")
    r.host_us += 2000.0
    outer = r.cpu(frame, 0.0, cat="user_annotation", advance=False)
    r.host_us += 5.0
    one_pass(True)
    r.sync("aten::item")
    r.host_us += 50.0
    outer["dur"] = round(r.host_us - outer["ts"], 3)
    with open(path, "w", encoding="utf-8") as f:
        f.write(_dumps(trace_doc(r, 1)))
    return {"pass_ms": round(outer["dur"] / 1000.0, 4), "layers": layers, "warmup": warmup}


#: Kineto's own log lines about GPU records it lost (libkineto ``CuptiActivityApi.cpp``), as a non-glog build kept
#: them in the trace's top-level ``WARNING`` list (Kineto 2021-11 to 2026-07, ``ChromeTraceLogger::finalizeTrace``).
KINETO_BUFFER_LIMIT = ("WARNING:2026-03-02 10:14:07 4100:4188 CuptiActivityApi.cpp:153] Exceeded max GPU buffer count "
                       "(33 >= 33) - terminating tracing")


def write_lost_gpu_records(path: str, steps: int = 12, lost_from: int | None = 6, kernels: int = 6,
                           kernel_us: float = 400.0, log: tuple[str, ...] = (KINETO_BUFFER_LIMIT,),
                           final_mark_us: float | None = None, last_kernels: int | None = None,
                           poll: str = "", side_us: float = 0.0) -> dict[str, Any]:
    """A ``torch.profiler`` trace of ``steps`` ``ProfilerStep#N`` steps, each ``kernels`` launches of ``kernel_us``
    and an ``.item()`` (a ``cudaStreamSynchronize`` that drains the GPU), whose kernel records stop at step
    ``lost_from`` -- the launches and syncs recorded, their kernels not: Kineto's CUPTI buffers reached their limit
    and it stopped tracing the GPU -- with Kineto's own ``log`` lines kept as the trace's top-level ``WARNING`` list
    (empty: none kept).  ``lost_from`` None: every kernel recorded (the control); 0: none.  ``last_kernels``: the
    last step's launches where it runs fewer (a last, smaller batch: a real short step).  ``final_mark_us``: after the
    loop, the ``ProfilerStep#{steps}`` mark a last ``prof.step()`` opens, that long and holding nothing, then the
    profiler's stop -- its ``cudaDeviceSynchronize`` -- after the mark's end.  ``poll`` (a query call,
    ``cudaStreamQuery``): each step's wait is that query asked every 10 us until the GPU is done (``Rank.poll``), no
    sync call.  ``side_us``: a second thread of the process launches one kernel of that long in each step of the lost
    stretch, 20 us after the main thread's wait, and waits for it as the main thread does (``poll`` or ``.item()``) --
    a line whose every launch was lost (``synthetic.nsysexport.write_lost_kernel_records``' ``side_us``, in Kineto's
    form).  Truth by construction: the lost launches, the launches in all, and the steps and their host spans (ms; the
    final mark is no step)."""
    r = Rank(rank=0, pid=4100, device=0)
    cut = None
    spans: list[float] = []
    sides = 0

    def wait(rr: Rank) -> None:
        if poll:
            rr.poll(call=poll)
        else:
            rr.sync()

    def body(rr: Rank, count: int) -> None:
        for k in range(count):
            rr.kernel("aten::mm", f"ampere_sgemm_128x64_nn_{k}", kernel_us)
        wait(rr)

    for n in range(steps):
        if lost_from is not None and n == lost_from:
            cut = r.host_us
        count = last_kernels if last_kernels is not None and n == steps - 1 else kernels
        start = r.host_us
        r.step(n, lambda rr, c=count: body(rr, c))
        spans.append((r.host_us - start) / 1000.0)
        if side_us and cut is not None:  # the side thread's launch and wait, on its own line, beside the next step
            _side_thread(r, side_us, wait)
            sides += 1
    if final_mark_us is not None:
        _profiler_stop(r, steps, final_mark_us)
    lost = 0
    if cut is not None:
        lost = sum(1 for e in r.gpu if e["cat"] == "kernel" and e["ts"] >= cut)
        r.gpu = [e for e in r.gpu if e["ts"] < cut]
        r.flows = [f for f in r.flows if f["ph"] == "s" or f["ts"] < cut]
    doc = trace_doc(r, 1)
    if log:  # Kineto writes its log after the events, before ``traceName``
        name = doc.pop("traceName")
        doc["WARNING"] = list(log)
        doc["traceName"] = name
    write_doc(path, doc)
    launches = (steps - 1) * kernels + (kernels if last_kernels is None else last_kernels) + sides
    return {"lost": lost, "launches": launches, "steps": steps, "step_ms": spans}


#: :func:`write_lost_gpu_records`' side thread: its line and the stream its kernel runs on.
SIDE_TID_OFFSET, SIDE_STREAM = 1, 13


def _side_thread(r: Rank, us: float, wait: Callable[[Rank], None]) -> None:
    """A second thread's ``aten::mul`` of one ``us``-long kernel on its own stream, 20 us after the main thread's
    clock, then its wait (``wait``: a poll or ``.item()``), written on the thread's own line; the main thread's clock
    is left where it was (the threads run side by side)."""
    main, n_host, n_flows = r.host_us, len(r.host), len(r.flows)
    r.host_us += 20.0
    r.kernel("aten::mul", "void at::native::vectorized_elementwise_kernel<4, mul>", us, stream=SIDE_STREAM)
    wait(r)
    for e in r.host[n_host:]:
        e["tid"] = r.pid + SIDE_TID_OFFSET
    for f in r.flows[n_flows:]:
        if f["ph"] == "s":
            f["tid"] = r.pid + SIDE_TID_OFFSET
    r.host_us = main


def _profiler_stop(r: Rank, n: int, mark_us: float) -> None:
    """The ``ProfilerStep#{n}`` a last ``prof.step()`` opens after the loop (``mark_us`` long, nothing in it), then the
    profiler's stop: a ``cudaDeviceSynchronize`` 35 us after the mark, as PyTorch's profiler waits for the GPU before
    it collects (Abenich7's 2080 Ti ``trace0.json``: a 32 us mark, the sync 34 us after it)."""
    r.cpu(f"ProfilerStep#{n}", mark_us, cat="user_annotation")
    r.host_us += 35.0
    r.corr += 1
    r.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": r.pid, "tid": r.pid,
                   "ts": round(r.host_us, 3), "dur": 20.0, "args": {"cbid": 165, "correlation": r.corr}})
    r.host_us += 20.0


def write_synced_unrecorded(path: str, steps: int = 4, kernels: int = 6, kernel_us: float = 400.0,
                            final_sync: bool = True, held_bytes: int = 0, step_bytes: int = 0,
                            hip: bool = False) -> dict[str, Any]:
    """A ``torch.profiler`` trace of ``steps`` ``ProfilerStep#N`` steps, each ``kernels`` launches of ``kernel_us``
    with no sync among them, then -- where ``final_sync`` -- the program's ``torch.cuda.synchronize()`` (a
    ``cudaDeviceSynchronize`` that waits until every stream has drained) before the profiler stops; the CUDA calls
    are recorded and **no** kernel record (CUPTI dropped them all).  ``final_sync`` False: the window ends with the
    kernels still queued (the control, whose fix is to wait for the GPU).  Truth by construction: the launches, and
    the final sync's wait (ms; 0.0 where none).  ``held_bytes`` / ``step_bytes``: with ``profile_memory=True`` -- the
    allocator holds ``held_bytes`` from before the capture and each step allocates ``step_bytes`` and frees it (the
    ``[memory]`` events are recorded, the kernels are not); the truth adds the allocator's peak and the GPU's memory.
    ``hip``: ROCm's PyTorch, whose runtime calls are HIP's (``hipLaunchKernel`` ... ``hipDeviceSynchronize``) in the
    same ``cuda_runtime`` category."""
    r = Rank(rank=0, pid=4300, device=0)
    if held_bytes or step_bytes:
        r.mem = MemSim(held_bytes)

    def body(rr: Rank) -> None:
        block = rr.malloc(step_bytes, at=rr.host_us + 0.5) if step_bytes else None
        for k in range(kernels):
            rr.kernel("aten::mm", f"ampere_sgemm_128x64_nn_{k}", kernel_us)
        if block is not None:
            rr.mfree(block, at=rr.host_us - 0.5)

    for n in range(steps):
        r.step(n, body)
    wait = 0.0
    if final_sync:
        wait = max(max(r.streams.values(), default=r.host_us) - r.host_us, 0.0) + 4.0
        r.corr += 1
        r.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": r.pid, "tid": r.pid,
                       "ts": round(r.host_us + 2.0, 3), "dur": round(wait, 3),
                       "args": {"External id": r.ext, "cbid": 165, "correlation": r.corr}})
        r.host_us += wait + 10.0
    r.gpu = []
    r.flows = [fl for fl in r.flows if fl["ph"] == "s"]
    if hip:
        for ev in r.host:
            if ev.get("cat") == "cuda_runtime" and ev["name"].startswith("cuda"):
                ev["name"] = "hip" + ev["name"][4:]
    write_doc(path, trace_doc(r, 1))
    return {"launches": steps * kernels, "wait_ms": wait / 1000.0,
            **({"peak_allocated_bytes": r.mem.peak_allocated, "device_bytes": H100_BYTES} if r.mem else {})}


#: :func:`write_unrecorded_gpu_steps`' host ops of one data-parallel training iteration (name, us), in order: the
#: gradient all-reduce names work only a GPU does (``nccl:all_reduce``), so the capture shows a GPU job whose GPU side
#: was not recorded
UNRECORDED_STEP_OPS = (("Optimizer.zero_grad#Adam.zero_grad", 35.0), ("aten::embedding", 80.0),
                       ("aten::linear", 110.0), ("aten::cross_entropy_loss", 80.0), ("aten::ones_like", 30.0),
                       ("autograd::engine::evaluate_function: AddmmBackward0", 200.0),
                       ("c10d::allreduce_", 70.0), ("nccl:all_reduce", 60.0), ("aten::div_", 14.0),
                       ("Optimizer.step#Adam.step", 900.0))


def write_unrecorded_gpu_steps(path: str, steps: int = 3, final_mark_us: float | None = 17.0,
                               gap_us: float = 800.0) -> dict[str, Any]:
    """A ``torch.profiler`` trace of ``steps`` ``ProfilerStep#N`` training iterations whose GPU side was not recorded
    (no runtime call, kernel or copy: CUDA activity off, or a build whose profiler records the host alone), each the
    host ops of :data:`UNRECORDED_STEP_OPS` with ``gap_us`` of untraced host time (the Python between ops), then, where
    ``final_mark_us`` is not None, the ``ProfilerStep#{steps}`` a last ``prof.step()`` opens after the loop's last
    iteration, holding nothing but itself (``final_mark_us`` long: the profiler's stop).  Truth by construction:
    every ``ProfilerStep#n`` of ``n < steps`` is one iteration of ``step_ms``; the final mark is no step."""
    r = Rank(rank=0, pid=598906, device=0)

    def body(rr: Rank) -> None:
        for name, us in UNRECORDED_STEP_OPS:
            rr.cpu(name, us)
        rr.host_us += gap_us

    for n in range(steps):
        r.step(n, body)
    if final_mark_us is not None:
        r.cpu(f"ProfilerStep#{steps}", final_mark_us, cat="user_annotation")
    write_doc(path, trace_doc(r, 1))
    step_us = sum(us for _, us in UNRECORDED_STEP_OPS) + gap_us + 10.0  # ``Rank.step``'s 5 us either side
    return {"steps": steps, "step_ms": step_us / 1000.0}


def write_cuda_activity_off(path: str, steps: int = 8, layers: int = 3, gemm_us: float = 300.0,
                            cuda: bool = False, rocm: bool = False) -> dict[str, Any]:
    """A ``torch.profiler`` trace of ``steps`` ``ProfilerStep#N`` training steps of a small fp32 MLP on a GPU
    (:func:`_mlp_fp32`: ``layers`` GEMMs of ``gemm_us`` forward, two each backward, an SGD step), each ending in
    ``loss.item()``, profiled with ``activities=[ProfilerActivity.CPU]``: the host's ops are recorded -- the
    ``.item()`` still waits for the GPU's queue -- and no CUDA call, kernel, copy or launch arrow, while the header
    keeps ``deviceProperties`` (Kineto writes it whatever the activities).  ``cuda`` True: the same steps with
    ``ProfilerActivity.CUDA`` too (the control).  ``rocm``: the job on ROCm's PyTorch and an MI300X (:func:`as_rocm`:
    its header lists the AMD GPU, roctracer's and HIP's versions).  Truth by construction: the GPU's work per step
    (ms), the steps, and whether CUDA activity was recorded."""
    r = Rank(rank=0, pid=4500, device=0)

    def body(rr: Rank) -> None:
        _mlp_fp32(rr, layers, gemm_us)
        rr.sync()

    for n in range(steps):
        r.step(n, body)
    if not cuda:  # what the CPU activity alone records: the ops, not the runtime's calls or the GPU's work
        r.host = [e for e in r.host if e["cat"] not in ("cuda_runtime", "cuda_driver")]
        r.gpu, r.flows = [], []
    doc = trace_doc(r, 1)
    write_doc(path, as_rocm(doc) if rocm else doc)
    return {"steps": steps, "gpu_ms_per_step": (3 * layers * gemm_us + 2.0 * layers + 3.0) / 1000.0,
            "cuda_recorded": cuda, "gpu": MI300X["name"] if rocm else ""}


#: The loader of :func:`write_exposed_pinned_upload`: batches made in worker processes, handed over in ``__next__``.
MULTI_DATALOADER = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"


def write_exposed_pinned_upload(path: str, steps: int = 10, fetch_us: float = 200.0, mb: float = 16.0,
                                copy_us: float = 700.0) -> dict[str, Any]:
    """A bf16 training loop's steps (:func:`_healthy`: forward, backward, optimizer, ``.item()``), each fetching its
    batch from a multi-process DataLoader in ``fetch_us`` and uploading it pinned with ``non_blocking=True`` (``mb`` MB,
    ``copy_us`` on the GPU) on the kernels' stream before the forward pass: the host is not held, but the GPU runs
    the copy between the previous step's kernels and this one's, idle for it.  Truth by construction: the copy's
    exposed time and the input wait per step (ms), and which fix hides the larger: the side-stream copy of the next
    batch (``"side_stream"``) where the copy is exposed longer than the fetch, else the loader's workers
    (``"loader"``)."""
    r = Rank(rank=0, pid=4700, device=0)

    def body(rr: Rank) -> None:
        rr.cpu(MULTI_DATALOADER, fetch_us)
        rr.copy_h2d(mb, copy_us, non_blocking=True)
        _healthy(rr)

    for n in range(steps):
        r.step(n, body)
    write_doc(path, trace_doc(r, 1))
    return {"exposed_copy_ms": copy_us / 1000.0, "input_wait_ms": fetch_us / 1000.0,
            "first_fix": "side_stream" if copy_us > fetch_us else "loader"}


def write_ranged_loader(path: str, steps: int = 8, fetch_us: float = 8000.0, own_us: float = 40.0,
                        workers: bool = True, own_op: tuple[str, float] | None = None,
                        busy_us: float = 0.0) -> dict[str, Any]:
    """A bf16 training loop (:func:`_healthy`) that fetches each batch inside a range of its own,
    ``record_function("data_loader")`` around ``next(it)``, as a profiling lab marks its loop's phases: the range
    holds the DataLoader's ``__next__`` (``fetch_us``: the workers' batch not ready yet) and ``own_us`` of the
    loop's own code around it; then a pinned ``non_blocking`` upload.  ``workers``: the iterator is the one PyTorch
    names with worker processes (``_MultiProcessingDataLoaderIter``), else the in-process one.  Truth by
    construction: the input wait per step (ms, the range's whole), whether the pipeline's batches are made by workers
    (``workers``: the workers' iterator, whatever range the program wraps it in), and whether the wait is theirs
    (``parallel``: workers, and their fetch at least the range's own code, so it holds most of the wait).  ``own_op`` (name, us):
    one op the loop's own code runs in the range after the fetch, inside ``own_us`` (the profiler records it; the
    rest of ``own_us`` is Python it does not) -- truth ``own_ms`` (the range's time outside the fetch, ms per step)
    and ``own_ops`` (name -> calls per step).  ``busy_us``: the step first launches a kernel that long, which the
    GPU still runs while the range opens (a loop that fetches its next batch before it syncs): the wait is the range's
    time after it ends -- truth ``input_wait_ms``, and ``own_ops_wait_ms`` (name -> ms per step) the op's part of it,
    its wall time past the kernel's end."""
    r = Rank(rank=0, pid=4800, device=0)
    loader = MULTI_DATALOADER if workers else DATALOADER

    def body(rr: Rank) -> None:
        busy_end = rr.kernel("aten::tanh", TANH_F32, busy_us, launch_us=5.0)[1] if busy_us else 0.0
        mark = rr.cpu("data_loader", 0.0, cat="user_annotation", advance=False)
        rr.host_us += own_us / 2
        rr.cpu(loader, fetch_us)
        if own_op:
            op = rr.cpu(own_op[0], own_op[1], advance=False)
            op_waits.append(max(op["ts"] + op["dur"] - max(op["ts"], busy_end), 0.0))
        rr.host_us += own_us / 2
        mark["dur"] = round(rr.host_us - mark["ts"], 3)
        waits.append(rr.host_us - max(mark["ts"], busy_end))
        rr.copy_h2d(4.0, 150.0, non_blocking=True, via="aten::to")
        _healthy(rr)

    waits: list[float] = []
    op_waits: list[float] = []
    for n in range(steps):
        r.step(n, body)
    write_doc(path, trace_doc(r, 1))
    return {"input_wait_ms": sum(waits) / len(waits) / 1000.0, "workers": workers,
            "parallel": workers and fetch_us >= own_us and not busy_us, "own_ms": own_us / 1000.0,
            "fetch_ms": fetch_us / 1000.0, "own_ops": {own_op[0]: 1.0} if own_op else {},
            "own_ops_wait_ms": {own_op[0]: sum(op_waits) / len(op_waits) / 1000.0} if own_op else {}}


def write_ranged_phases(path: str, steps: int = 8, upload_host_us: float = 600.0,
                        tail_host_us: float = 2300.0) -> dict[str, Any]:
    """A bf16 training loop that marks its phases with ranges of its own, as a profiling lab does
    (``record_function("h2d")``): each step fetches its batch from a DataLoader with workers (60 us), then opens an
    ``h2d`` range whose host time is ``upload_host_us`` (the loop's Python and the ``.to('cuda', non_blocking=True)``
    of a pinned batch); then forward, backward and the optimizer (:func:`forward_backward`, :func:`optimizer`),
    ``tail_host_us`` of the loop's Python the profiler does not record, and ``torch.cuda.synchronize()``, which finds
    the GPU done: a host-bound loop.  Truth by construction: the ``h2d`` range's host time per step (ms), the GPU
    idle for it between the steps, and no read of a device value and no sync that waits anywhere near the gaps."""
    r = Rank(rank=0, pid=4900, device=0)

    def body(rr: Rank) -> None:
        rr.cpu(MULTI_DATALOADER, 60.0)
        mark = rr.cpu("h2d", 0.0, cat="user_annotation", advance=False)
        rr.host_us += upload_host_us - 20.0
        rr.copy_h2d(4.0, 150.0, non_blocking=True)
        mark["dur"] = round(rr.host_us - mark["ts"], 3)
        forward_backward(rr)
        optimizer(rr)
        rr.host_us += tail_host_us
        _device_synchronize(rr)

    for n in range(steps):
        r.step(n, body)
    write_doc(path, trace_doc(r, 1))
    return {"range_ms": upload_host_us / 1000.0, "sync_wait_ms": 0.0}


def _device_synchronize(r: Rank) -> None:
    """``torch.cuda.synchronize()``: no ATen op, one ``cudaDeviceSynchronize`` that returns once every stream has
    drained (a few microseconds where the GPU is already idle)."""
    done = max(r.streams.values(), default=r.host_us)
    wait = max(done - r.host_us, 0.0) + 3.0
    r.corr += 1
    r.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": r.pid, "tid": r.pid,
                   "ts": round(r.host_us, 3), "dur": round(wait, 3), "args": {"cbid": 165, "correlation": r.corr}})
    r.host_us += wait + 2.0


def write_filled_steps(path: str, steps: int = 8, fill_us: float = 300.0, copy_us: float = 0.0,
                       nbytes: int = 64 << 20) -> dict[str, Any]:
    """A bf16 MLP's training steps that each zero a ``nbytes`` buffer with ``aten::zero_`` (one ``cudaMemsetAsync``:
    a ``Memset (Device)`` fill of ``fill_us``) and, where ``copy_us``, copy it with ``aten::copy_`` (a ``Memcpy DtoD``
    of ``copy_us``), both between the backward and the optimizer on the compute stream: no kernel runs beside them.
    The Kineto twin of ``nsysexport.write_filled_frontier`` (h37-fill30).  Truth by construction: each step's GPU
    time of fills and of device copies (ms), none overlapping any other work."""
    r = Rank(rank=0, pid=4100, device=0)

    def body(rr: Rank) -> None:
        forward_backward(rr)
        op = rr.cpu("aten::zero_", 20.0, advance=False)
        _, start = rr.memset(op, nbytes, fill_us)
        rr.host_us += 20.0
        rr.step_kernels.append((start, start + fill_us))
        if copy_us:
            op = rr.cpu("aten::copy_", 20.0, advance=False)
            _, start = rr.memcpy(op, "Memcpy DtoD (Device -> Device)", nbytes, copy_us)
            rr.host_us += 20.0
            rr.step_kernels.append((start, start + copy_us))
        optimizer(rr)
        rr.sync()

    for n in range(2, 2 + steps):
        r.step(n, body)
    write_doc(path, trace_doc(r, 1))
    return {"steps": steps, "fill_ms": fill_us / 1000.0, "copy_ms": copy_us / 1000.0}


def write_legacy_list(path: str, steps: int = 4, marks: bool = True, cuda_functions: bool = False,
                      gap_us: float = 800.0, first_calls: dict[str, float] | None = None) -> dict[str, Any]:
    """The legacy profiler's chrome trace (a bare JSON list, host ops under the process ``"CPU functions"``, no
    category) of ``steps`` iterations of :data:`UNRECORDED_STEP_OPS` -- GPU work (``nccl:all_reduce``) whose GPU side
    the profiler cannot record.  ``marks``: each iteration inside the ``ProfilerStep#N`` that ``torch.profiler``'s
    ``prof.step()`` writes (what ``torch.profiler`` writes on a build without Kineto); without them, what
    ``torch.autograd.profiler`` writes; ``cuda_functions``: each op's GPU time under ``"CUDA functions"`` too
    (``use_cuda=True``: CUDA events around the op, no kernel).  ``first_calls``: op name -> its first call's time
    (us) in the first iteration, in place of its usual one (a first ``aten::linear`` creating its cuBLAS handle and
    searching its algorithm: a one-time cost).  Truth by construction: the call that wrote it (``"no_kineto"`` with
    marks, else ``"legacy_profiler"``), ``steps`` iterations of ``step_ms``, the first longer by what its first calls
    add (``first_extra_ms``), and the first calls themselves (``first_calls_us``)."""
    ev: list[dict[str, Any]] = []
    t = 1000.0
    first = dict(first_calls or {})
    usual = dict(UNRECORDED_STEP_OPS)
    step_us = sum(usual.values()) + gap_us
    extra = sum(us - usual[name] for name, us in first.items())
    for n in range(steps):
        took = step_us + (extra if n == 0 else 0.0)
        if marks:
            ev.append({"name": f"ProfilerStep#{n}", "ph": "X", "ts": t, "dur": took, "tid": 1,
                       "pid": "CPU functions", "args": {}})
        at = t
        for name, us in UNRECORDED_STEP_OPS:
            us = first.get(name, us) if n == 0 else us
            ev.append({"name": name, "ph": "X", "ts": at, "dur": us, "tid": 1, "pid": "CPU functions", "args": {}})
            if cuda_functions:
                ev.append({"name": name, "ph": "X", "ts": at + 5.0, "dur": us / 2, "tid": 0,
                           "pid": "CUDA functions", "args": {}})
            at += us
        t += took
    with open(path, "w") as f:
        json.dump(ev, f)
    return {"steps": steps, "step_ms": step_us / 1000.0, "fix": "no_kineto" if marks else "legacy_profiler",
            "first_extra_ms": extra / 1000.0, "first_calls_us": first}


#: :func:`write_stream_handoff`'s step, after h37-survey66's GRU forward (HDAI cuDNN profiling, an RTX 5070 Ti Laptop
#: GPU): cuDNN's persistent RNN kernel on a side stream of its own, the compute stream's next kernel held ~28 us after
#: it ends.  The side kernel runs long enough that the next launch returns over ``LAUNCH_START_PS`` (50 us) before it
#: ends, as the GRU's did (74 us).
HANDOFF_SIDE_STREAM = 13
HANDOFF_SIDE_US, HANDOFF_US = 120.0, 28.0
#: The longest idle a handoff between streams takes once the work waited on has ended (the driver's submission, 50 us:
#: h37-handoff32 measured every handoff-shaped idle of the kept Kineto traces); a hold of ``handoff_us`` past it is
#: not the handoff's (torchrec_a100_stalls' 12.5 ms after NCCL's SendRecv).
HANDOFF_MAX_US = 50.0


def write_stream_handoff(path: str, steps: int = 10, handoff_us: float = HANDOFF_US,
                         side_stream: int = HANDOFF_SIDE_STREAM, event_wait: bool = True,
                         wait_call: str = "cudaStreamWaitEvent") -> dict[str, Any]:
    """A ``torch.profiler`` window of an inference loop whose every step hands work between two streams: a small
    kernel on the compute stream, a library's kernel (``HANDOFF_SIDE_US``) on ``side_stream``, an event recorded
    and waited on (``cudaEventRecord``, ``cudaStreamWaitEvent``), then the compute stream's next kernel -- launched
    while the side kernel runs, started ``handoff_us`` after it ends -- and ``torch.cuda.synchronize()``.
    ``side_stream=COMPUTE_STREAM`` (the control): the library's kernel on the compute stream too and the same hold
    after it, so no handoff between streams: the GPU held queued work on one stream, for a cause the capture lacks.
    ``event_wait=False``: no event call recorded on the launching thread (what orders the streams is not in the
    capture); ``wait_call``: the call that records the wait (the runtime's ``cudaStreamWaitEvent``, or the driver's
    ``cuStreamWaitEvent``, which XLA calls).  Truth by construction, per step: the held idle (``held_ms``) and the part of it at handoffs between streams
    (``handoff_ms``: all of it where the side kernel is on another stream and the hold is within ``HANDOFF_MAX_US``,
    else none)."""
    r = Rank(rank=0, pid=4616, device=0)

    def body(rr: Rank) -> None:
        rr.kernel("aten::zeros", "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
                  2.0, grid=(8, 1, 1))
        _, side_end = rr.kernel("aten::_cudnn_rnn", "void RNN_blockPersist_fp_GRU<float, float, float, 128>",
                                HANDOFF_SIDE_US, stream=side_stream, grid=(32, 1, 1), block=(384, 1, 1))
        if event_wait:  # else the ordering is made where the capture does not show it (another thread's wait)
            _runtime_call(rr, "cudaEventRecord", 1.0, 135)
            _runtime_call(rr, wait_call, 1.0, 147)
        else:
            rr.host_us += 2.0
        rr.kernel("aten::addmm", "cutlass_80_simt_sgemm_32x128_8x5_tn_align1", 3.0, grid=(1, 1, 4),
                  not_before=side_end + handoff_us)
        _runtime_call(rr, "cudaDeviceSynchronize", max(rr.streams[COMPUTE_STREAM] - rr.host_us, 0.0) + 5.0, 165)

    for k in range(steps):
        r.step(3 + k, body)
        r.host_us += 30.0
    write_doc(path, trace_doc(r, 1))
    held = handoff_us / 1000
    # a handoff takes at most the driver's submission once the waited-on work ends (HANDOFF_MAX_US): a longer hold
    # after another stream's work waited on something else, which this window does not hold
    handoff = side_stream != COMPUTE_STREAM and handoff_us <= HANDOFF_MAX_US
    return {"steps": steps, "held_ms": held, "handoff_ms": held if handoff else 0.0}


#: :func:`write_decode_spans`' Python calls, after h37-survey66's Mamba-3 decode loop (michaelYZh/mamba3-fused-triton-kernel,
#: an A100): the decoder's step (the span its steps are read from) and the Triton path's step function inside it.
DECODE_STEP_SPAN = "src/models/inference.py(117): step"
DECODE_INNER_CALL = "src/models/inference.py(239): _step_triton"
#: per decode step: kernels, each after ``DECODE_HOST_US`` of the host's own Python inside the inner call
DECODE_KERNELS, DECODE_HOST_US, DECODE_KERNEL_US = 12, 60.0, 4.0
#: the loop's own code between two decode steps: short enough (under 1% of a step) that the last step, ending at its
#: span, is kept as the Mamba-3 capture's was
DECODE_LOOP_US = 5.0


def write_decode_spans(path: str, steps: int = 5) -> dict[str, Any]:
    """A ``torch.profiler`` window (``with_stack=True``, no ``prof.step()``) of a decode loop: each step is one call of
    :data:`DECODE_STEP_SPAN` holding one of :data:`DECODE_INNER_CALL`, whose ``DECODE_KERNELS`` small kernels each
    follow ``DECODE_HOST_US`` of the host's own Python (recorded calls of no op); the loop's own code
    (``DECODE_LOOP_US``) lies between the spans.  The steps are read from the spans (the program's repeated spans),
    each running to the next one's start and the last to its span's end, so only the last span encloses its window.
    Truth by construction: the host-bound time lies inside :data:`DECODE_INNER_CALL`, which is no step of its own."""
    r = Rank(rank=0, pid=4717, device=0)
    for _ in range(steps):
        span = r.cpu(DECODE_STEP_SPAN, 0.0, cat="python_function", advance=False)
        r.host_us += 3.0
        inner = r.cpu(DECODE_INNER_CALL, 0.0, cat="python_function", advance=False)
        for _ in range(DECODE_KERNELS):
            r.cpu("<built-in method append of list object at 0x7fac6b000000>", 0.2, cat="python_function",
                  advance=False)
            r.host_us += DECODE_HOST_US
            r.kernel("aten::mul", "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float>>",
                     DECODE_KERNEL_US, grid=(16, 1, 1))
        inner["dur"] = round(r.host_us - inner["ts"], 3)
        r.host_us += 2.0
        span["dur"] = round(r.host_us - span["ts"], 3)
        r.host_us += DECODE_LOOP_US
    write_doc(path, trace_doc(r, 1, A100_40GB))
    return {"steps": steps, "host_call": DECODE_INNER_CALL, "step_span": DECODE_STEP_SPAN,
            "host_work_ms": DECODE_KERNELS * DECODE_HOST_US / 1000}


def write_marked_decode(path: str, steps: int = 5) -> dict[str, Any]:
    """:func:`write_decode_spans`' loop marked with ``prof.step()``: each ``ProfilerStep#n`` opens with the call of
    :data:`DECODE_INNER_CALL`, recorded at the mark's own microsecond (a PyTorch 1.x trace's whole-us clock, which
    the call after ``prof.step()`` shares), holding the step's host work.  The steps are read from the marks, not from
    any call; truth by construction: the host-bound time lies inside :data:`DECODE_INNER_CALL`, which ends before its
    step does and is no step."""
    def body(rr: Rank) -> None:
        rr.host_us -= 5.0  # the call starts where the mark does
        inner = rr.cpu(DECODE_INNER_CALL, 0.0, cat="python_function", advance=False)
        for _ in range(DECODE_KERNELS):
            rr.host_us += DECODE_HOST_US
            rr.kernel("aten::mul", "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float>>",
                      DECODE_KERNEL_US, grid=(16, 1, 1))
        inner["dur"] = round(rr.host_us - inner["ts"], 3)
        rr.host_us += 2.0

    r = Rank(rank=0, pid=4718, device=0)
    for k in range(steps):
        r.step(3 + k, body)
        r.host_us += DECODE_LOOP_US
    write_doc(path, trace_doc(r, 1, A100_40GB))
    return {"steps": steps, "host_call": DECODE_INNER_CALL, "host_work_ms": DECODE_KERNELS * DECODE_HOST_US / 1000}


#: :func:`write_upload_elsewhere`'s step, after h37-survey70's pinned-memory recipe on an RTX 2080 Ti host with four
#: GPUs (Abenich7/CPU-GPU-inference-2024---V2): a 21 MB pageable ``x.to('cuda')`` whose ``cudaMemcpyAsync`` holds the
#: host for its whole transfer, then two multiplies of the copied tensor.
UPLOAD_MB, UPLOAD_US, UPLOAD_KERNELS_US = 20.0, 4000.0, (80.0, 115.0)


def write_upload_elsewhere(path: str, steps: int = 6, copy_gpu: int = 2, staging_us: float = 0.0) -> dict[str, Any]:
    """A ``torch.profiler`` window of a loop whose every step uploads a pageable tensor (``aten::to`` >
    ``aten::copy_`` > a ``cudaMemcpyAsync`` that returns only once its ``UPLOAD_US`` transfer is done, as a pageable
    copy's does) and multiplies it twice on GPU 0, on a machine of four GPUs.  The copy's record names ``copy_gpu``:
    the GPU its tracer wrote (2: a GPU on which the process ran nothing else, as the 2080 Ti capture's record did; 0,
    the control: the kernels' GPU).  ``staging_us``: the call's time before its transfer begins (the driver staging
    the pageable buffer: 246 us on the 2080 Ti).  Truth by construction, per step: the transfer's time (``copy_ms``)
    and the staging before it (``staging_ms``), all of it while the call held the thread that launches GPU 0's
    kernels -- GPU 0 idles then, waiting on the copy."""
    r = Rank(rank=0, pid=14198, device=0)

    def body(rr: Rank) -> None:
        to = rr.cpu("aten::to", 0.0, advance=False)
        op = rr.cpu("aten::copy_", 0.0, advance=False)
        launch_at, start = rr.memcpy(op, "Memcpy HtoD (Pageable -> Device)", int(UPLOAD_MB * (1 << 20)), UPLOAD_US)
        call = rr.host[-1]
        copy, flow = rr.gpu[-1], rr.flows[-1]
        start += staging_us
        copy["ts"] = flow["ts"] = round(start, 3)
        call["dur"] = round(start + UPLOAD_US + 3.0 - launch_at, 3)  # held until the transfer is done
        copy["pid"] = flow["pid"] = copy["args"]["device"] = copy_gpu
        rr.streams[COMPUTE_STREAM] = rr.streams.get(COMPUTE_STREAM, 0.0) if copy_gpu != rr.device else start + UPLOAD_US
        rr.host_us = launch_at + call["dur"] + 4.0
        op["dur"] = to["dur"] = round(rr.host_us - to["ts"], 3)
        if copy_gpu == rr.device:
            rr.step_kernels.append((start, start + UPLOAD_US))
        for us in UPLOAD_KERNELS_US:
            rr.kernel("aten::mul", "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, "
                      "float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >",
                      us, grid=(5120, 1, 1))
        _runtime_call(rr, "cudaDeviceSynchronize", max(rr.streams[COMPUTE_STREAM] - rr.host_us, 0.0) + 5.0, 165)

    for k in range(steps):
        r.step(3 + k, body)
        r.host_us += 30.0
    doc = trace_doc(r, 1, RTX_2080_TI)
    doc["deviceProperties"] = [{"id": i, **RTX_2080_TI} for i in range(4)]
    if copy_gpu != r.device:
        doc["traceEvents"] += [{"name": "process_labels", "ph": "M", "ts": T0_US, "pid": copy_gpu, "tid": 0,
                                "args": {"labels": f"GPU {copy_gpu}"}}]
    write_doc(path, doc)
    return {"steps": steps, "copy_ms": UPLOAD_US / 1000.0, "staging_ms": staging_us / 1000.0, "copy_gpu": copy_gpu}


#: :func:`write_concurrent_streams`' kernels: one GEMM on the compute stream beside element-wise kernels on streams of
#: their own, all of one length, started together
CONCURRENT_GEMM = "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4"
CONCURRENT_ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float>>"


def write_concurrent_streams(path: str, steps: int = 6, streams: int = 4, kernel_us: float = 2000.0) -> dict[str, Any]:
    """A ``torch.profiler`` window of a loop whose every step runs ``streams`` kernels at once, one a stream: a GEMM
    on the compute stream and ``streams - 1`` element-wise kernels on side streams, each ``kernel_us`` long and all
    started together (each launch waits for the last one's start: ``not_before``), then ``torch.cuda.synchronize()``.
    Truth by construction, per step and GPU: the kernels run ``kernel_us`` of the step's wall time, each instant
    shared by all ``streams`` of them -- the GEMM's class holds ``kernel_us / streams`` of it, the element-wise class the
    rest -- where their durations summed are ``streams * kernel_us``, more than the step (h37-classsum33, after the
    GTX 1060 capture's five streams, ``wild/extrap_parallel_kernels_gtx1060``)."""
    r = Rank(rank=0, pid=5120, device=0)
    lead = 13.0 * streams  # the launches of one step, each its op's 13 us on the host: all kernels start after them

    def body(rr: Rank) -> None:
        t0 = rr.host_us + lead
        rr.kernel("aten::mm", CONCURRENT_GEMM, kernel_us, not_before=t0, grid=(264, 1, 1))
        for s in range(1, streams):
            rr.kernel("aten::add", CONCURRENT_ELEMENTWISE, kernel_us, stream=COMPUTE_STREAM + 100 + s, not_before=t0)
        _runtime_call(rr, "cudaDeviceSynchronize", max(t0 + kernel_us - rr.host_us, 0.0) + 5.0, 165)

    for k in range(steps):
        r.step(3 + k, body)
        r.host_us += 30.0
    write_doc(path, trace_doc(r, 1))
    ms = kernel_us / 1000
    return {"steps": steps, "streams": streams, "kernel_busy_ms": ms, "summed_kernel_ms": streams * ms,
            "class_ms": {"matmul/conv": ms / streams, "elementwise": ms * (streams - 1) / streams}}


def write_first_op_call(path: str, steps: int = 5, first_ms: float = 300.0, started: bool = True,
                        busy: bool = False) -> dict[str, Any]:
    """A loop of ``steps`` marked steps with CPU and CUDA activity, each a long GEMM then a convolution, whose first
    ``aten::conv2d`` call spends ``first_ms`` more on the host (a library's lazy start-up, cuDNN's handle: the op's own
    code, no runtime call).  ``started``: the process starts its runtime in the window (``cuModuleGetLoadingMode``
    first, as an Nsight-era CUDA 12 records it), so that call is the process's first; else the window opens mid-run.
    ``busy``: the step's GEMM runs ``first_ms`` on the GPU, queued before the convolution, so the GPU is busy through
    the long first call (the host then waits for GPU work, no start-up); else it takes 200 us and the GPU idles.
    Truth by construction: the first call is a one-time cost of ``first_ms`` exactly when ``started`` and not
    ``busy``."""
    r = Rank(rank=0, pid=4300, device=0)
    if started:
        r.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cuModuleGetLoadingMode", "pid": r.pid, "tid": r.pid,
                       "ts": round(r.host_us, 3), "dur": 3.0, "args": {"cbid": 0, "correlation": 0}})
        r.host_us += 20.0
    gemm_us = first_ms * 1000.0 if busy else 200.0

    def body(rank: Rank, first: bool) -> None:
        rank.kernel("aten::mm", "ampere_sgemm_128x64_tn", gemm_us, args=mm_args("aten::mm", 4096, 4096, 4096, "float"))
        conv = rank.cpu("aten::conv2d", 0.0, advance=False)
        rank.host_us += 4.0
        if first:
            rank.host_us += first_ms * 1000.0  # the op's own host work, paid once
        rank.kernel("aten::cudnn_convolution", "sm80_xmma_fprop_implicit_gemm_tf32f32", 150.0)
        conv["dur"] = round(rank.host_us + 2.0 - conv["ts"], 3)
        rank.host_us += 4.0
        rank.kernel("aten::relu", "void at::native::vectorized_elementwise_kernel<4, at::native::ReLU>", 20.0)
        rank.sync()

    for n in range(1, steps + 1):
        r.step(n, lambda rank, first=(n == 1): body(rank, first))
    write_doc(path, trace_doc(r, 1))
    return {"first_call_ms": first_ms, "one_time": started and not busy, "steps": steps}


def write_memory_beside_work(path: str, steps: int = 4, kernels: int = 6, kernel_us: float = 400.0,
                             step_bytes: int = 4 << 30, side_device: int = 1, side_bytes: int = 20 << 30) -> dict[str, Any]:
    """A one-process ``torch.profiler`` trace (``profile_memory=True``) whose work runs on GPU 0 -- ``steps``
    ``ProfilerStep#N`` steps of ``kernels`` recorded kernels of ``kernel_us``, each step allocating ``step_bytes`` and
    freeing it -- while the program also holds ``side_bytes`` on GPU ``side_device`` (a tensor moved to ``cuda:1`` in
    the first step and kept: a second copy of a model, a buffer on the wrong device) that runs no recorded kernel.
    The header lists both GPUs (``deviceProperties``).  Truth by construction: the GPUs with work (0), the GPU known
    only by its memory (``side_device``), each one's allocator peak and the GPUs' size."""
    r = Rank(rank=0, pid=4400, device=0)
    r.mem = MemSim(0)
    side = Rank(rank=0, pid=r.pid, device=side_device)
    side.mem = MemSim(0)

    def body(rr: Rank) -> None:
        block = rr.malloc(step_bytes, at=rr.host_us + 0.5)
        if not side.mem.events:
            side.host = rr.host  # the same thread's events: ``Ev Idx`` counts them
            side.malloc(side_bytes, at=rr.host_us + 1.0)
        for k in range(kernels):
            rr.kernel("aten::mm", f"ampere_sgemm_128x64_nn_{k}", kernel_us)
        rr.mfree(block, at=rr.host_us - 0.5)

    for n in range(steps):
        r.step(n, body)
    doc = trace_doc(r, 1)
    doc["deviceProperties"].append({"id": side_device, **H100})
    doc["traceEvents"] = doc["traceEvents"] + side.mem.events
    write_doc(path, doc)
    return {"active": [0], "memory_only": [side_device], "device_bytes": H100_BYTES,
            "peak_allocated_bytes": {0: r.mem.peak_allocated, side_device: side.mem.peak_allocated}}


#: c10's ``DeviceType::MPS``: the ``Device Type`` of the MPS allocator's ``[memory]`` events.
MPS_DEVICE_TYPE = 13


def write_mps_capture(path: str, steps: int = 4, conv: bool = True, memory: bool = True,
                      item_ms: float = 8.0) -> dict[str, Any]:
    """A training loop on an Apple GPU (PyTorch's ``mps`` device) under torch.profiler, as it records one: the host's
    ops only -- no kernel, copy, runtime call or ``deviceProperties``, no CUDA versions (Kineto has no Metal activity
    source).  Each ``ProfilerStep#N`` runs a convolution forward (``conv``: dispatched to ``aten::_mps_convolution``,
    its backward to ``aten::mps_convolution_backward``; else ``aten::addmm`` only, of no one backend), then
    ``loss.item()``, whose ``aten::_local_scalar_dense`` waits ``item_ms`` for the GPU's queue to drain; ``memory``:
    ``profile_memory=True``, the MPS allocator's ``[memory]`` events (``Device Type`` 13).  Truth by construction:
    the job ran on the Apple GPU, whose work the capture holds no record of by design (not a lost record)."""
    r = Rank(rank=0, pid=4242, device=0)
    mem: list[dict] = []
    for n in range(steps):
        step = r.cpu(f"ProfilerStep#{n + 2}", 0.0, cat="user_annotation", advance=False)
        t0 = r.host_us
        r.cpu("aten::conv2d" if conv else "aten::linear", 40.0, advance=False)
        r.host_us += 5.0
        r.cpu("aten::_mps_convolution" if conv else "aten::addmm", 30.0)
        if memory:
            mem.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": r.pid,
                        "tid": r.pid, "ts": round(r.host_us - 10.0, 3),
                        "args": {"Total Reserved": 1 << 28, "Total Allocated": 1 << 26, "Bytes": 1 << 22,
                                 "Addr": 0x100000 + n, "Device Id": 0, "Device Type": MPS_DEVICE_TYPE,
                                 "Ev Idx": len(r.host)}})
        r.host_us += 10.0
        r.cpu("autograd::engine::evaluate_function: ConvolutionBackward0" if conv else
              "autograd::engine::evaluate_function: AddmmBackward0", 45.0, advance=False)
        r.host_us += 5.0
        r.cpu("aten::mps_convolution_backward" if conv else "aten::mm", 35.0)
        r.host_us += 10.0
        r.cpu("aten::item", item_ms * 1000.0 + 6.0, advance=False)
        r.host_us += 3.0
        r.cpu("aten::_local_scalar_dense", item_ms * 1000.0)
        r.host_us += 20.0
        step["dur"] = round(r.host_us - t0, 3)
    doc = trace_doc(r, 1)
    doc.pop("deviceProperties", None)
    for k in ("cuda_driver_version", "cuda_runtime_version", "cupti_version"):
        doc.pop(k, None)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("pid") != r.device] + mem
    if memory:
        doc["profile_memory"] = 1
    write_doc(path, doc)
    return {"backend": "mps", "steps": steps, "item_ms": item_ms}


#: :func:`write_mixed_window_run`'s start-up rank: its calls (name, CUPTI callback id, us), the context's creation in
#: the ``cudaMalloc``.
MIXED_START_UP = (("cudaGetDeviceCount", 3, 40.0), ("cudaMalloc", 20, 250_000.0),
                  ("cudaStreamCreateWithPriority", 22, 30.0))


def write_mixed_window_run(out: str, run: str = "mixed_window", steps: int = 8, one_node: bool = False,
                           start_up_ranks: int = 1) -> dict[str, Any]:
    """A 2-rank job on two nodes whose ranks' windows differ: node0's rank 0 holds ``steps`` steps of
    ``healthy_bf16`` (bf16 GEMMs, FLOPs from the traced shapes), node1's rank 1 only its start-up
    (:data:`MIXED_START_UP`: no kernel launched), as a ``torch.profiler`` window opened on each rank at once and
    closed when rank 0's steps were done writes them.  Truth by construction: node0's report is the same as its
    file's alone -- healthy, its MFU over the bf16 peak from the traced shapes -- and node1's is a start-up window.
    ``one_node``: both ranks on node0, rank 1 on its GPU 1 (h37-probe43w: a node's ranks are one host).
    ``start_up_ranks``: how many start-up ranks (1, 2, ...: ranks 1..N on node1's GPUs 0..N-1, or node0's 1..N), the
    job ``1 + start_up_ranks`` ranks (``distributedInfo.world_size``): node1's host then holds N ranks, none of which
    has a GPU row (h37-probe44v: the session counted such a host as one rank).
    Returns the folder, the loop's file and the (first) start-up file (``start_ups``: all of them)."""
    (r0,) = simulate("healthy_bf16", steps)
    idle = [Rank(rank=k, pid=4100 + k, device=k, node=0) if one_node else Rank(rank=k, pid=4100 + k, device=k - 1, node=1)
            for k in range(1, 1 + start_up_ranks)]
    for r1 in idle:
        for name, cbid, us in MIXED_START_UP:
            _runtime_call(r1, name, us, cbid)
    folder = os.path.join(out, run)
    os.makedirs(folder, exist_ok=True)
    stamp = BASE_NS + int(T0_US * 1000)
    paths = [write_doc(os.path.join(folder, f"{_worker(r)}.{stamp + r.rank * 1_000_000}.pt.trace.json"),
                       trace_doc(r, 1 + start_up_ranks)) for r in (r0, *idle)]
    return {"folder": folder, "good": paths[0], "start_up": paths[1], "start_ups": paths[1:]}


#: The categories of a Kineto trace that record the GPU's side: the GPU's own records (kernels, copies, fills, the
#: step's GPU annotations, the launch-to-kernel flows) -- lost where CUPTI's records are lost -- and with them, where
#: the profiler's activities leave CUDA out, the runtime's and driver's calls (one activity records both).
GPU_RECORD_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "ac2g")
CUDA_ACTIVITY_CATS = GPU_RECORD_CATS + ("cuda_runtime", "cuda_driver")


def unrecord_gpu(path: str, lost: bool = False) -> str:
    """Rewrite one rank's Kineto trace at ``path`` as torch.profiler writes it without its GPU's side: with
    ``activities=[ProfilerActivity.CPU]`` (:data:`CUDA_ACTIVITY_CATS` gone -- no CUDA call, kernel or copy; the header's
    ``deviceProperties`` and ``distributedInfo`` stay, as the profiler writes them wherever CUDA is available), or,
    ``lost``, with CUPTI's GPU records lost (:data:`GPU_RECORD_CATS` gone, the runtime's calls kept).  The GPU's
    process and thread names go with its events.  Truth by construction: the rank ran the same work as before; only
    its record of it is gone (norank61: a job rank whose GPU work the session does not hold).  Gzip kept as found."""
    gz = path.endswith(".gz")
    with (gzip.open(path, "rt", encoding="utf-8") if gz else open(path, encoding="utf-8")) as f:
        doc = json.load(f)
    drop = set(GPU_RECORD_CATS if lost else CUDA_ACTIVITY_CATS)
    gpu_pids = {e.get("pid") for e in doc["traceEvents"] if e.get("cat") in GPU_RECORD_CATS and e.get("cat") != "ac2g"}
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in drop
                          and not (e.get("ph") == "M" and e.get("pid") in gpu_pids)]
    text = _dumps(doc)
    with (gzip.open(path, "wt", encoding="utf-8") if gz else open(path, "w", encoding="utf-8")) as f:
        f.write(text)
    return path


#: :func:`write_event_timed_cpu_model`: the CPU model's layers a step (``aten::linear`` > ``aten::addmm``, then
#: ``aten::relu``) and each linear's host time, us.
TIMED_CPU_LAYERS, TIMED_CPU_LINEAR_US = 3, 900.0
#: The CUDA calls a step timed with ``torch.cuda.Event(enable_timing=True)`` makes: (name, CUPTI callback id, us).
EVENT_TIMING_CALLS = (("cudaEventRecord", 135, 4.0), ("cudaEventRecord", 135, 4.0),
                      ("cudaEventSynchronize", 147, 3.0), ("cudaEventElapsedTime", 149, 2.0))


def _event_timed_cpu_step(r: Rank) -> None:
    """One step of :func:`write_event_timed_cpu_model`: ``start.record()``, the CPU model, ``end.record()``,
    ``end.synchronize()``, ``start.elapsed_time(end)``."""
    (name, cbid, us), *rest = EVENT_TIMING_CALLS
    _runtime_call(r, name, us, cbid)
    for _ in range(TIMED_CPU_LAYERS):
        r.cpu("aten::linear", TIMED_CPU_LINEAR_US, advance=False)
        r.host_us += 5.0
        r.cpu("aten::addmm", TIMED_CPU_LINEAR_US - 20.0)
        r.host_us += 20.0
        r.cpu("aten::relu", 40.0)
    for name, cbid, us in rest:
        _runtime_call(r, name, us, cbid)
    r.host_us += 50.0


def _write_marked_steps(r: Rank, out: str, run: str, steps: int, body: Callable[[Rank], None],
                        marked: bool = True) -> str:
    """Run ``body`` ``steps`` times on rank ``r`` (each a ``prof.step()``, numbered from 2 as a schedule's active
    steps are, where ``marked``) and write its one trace into ``out/run``, as ``tensorboard_trace_handler`` names it;
    returns the folder.  One home for the single-rank loop writers' shared tail."""
    for n in range(2, 2 + steps):
        if marked:
            r.step(n, body)
        else:
            body(r)
    folder = os.path.join(out, run)
    os.makedirs(folder, exist_ok=True)
    write_doc(os.path.join(folder, f"{_worker(r)}.{BASE_NS + int(T0_US * 1000)}.pt.trace.json"), trace_doc(r, 1))
    return folder


def write_event_timed_cpu_model(out: str, run: str = "event_timed_cpu_model", steps: int = 8,
                                marked: bool = True) -> dict[str, Any]:
    """A benchmark loop that times each step with CUDA events (``torch.cuda.Event(enable_timing=True)``) around a model
    left on the CPU, on a machine with an H100: per step ``TIMED_CPU_LAYERS`` ``aten::linear`` (> ``aten::addmm``)
    that launch nothing, between the events' :data:`EVENT_TIMING_CALLS`; ``marked``: each step a ``prof.step()``.
    Truth by construction: no kernel, copy or fill; ``2 * TIMED_CPU_LAYERS * steps`` matmul ops ran on the CPU while
    the event calls -- which queue no GPU work -- ran between them: the model never reached the GPU, whatever the
    window.  Returns the folder and the counts."""
    r = Rank(rank=0, pid=4100, device=0)
    folder = _write_marked_steps(r, out, run, steps, _event_timed_cpu_step, marked)
    return {"folder": folder, "matmuls": 2 * TIMED_CPU_LAYERS * steps, "calls": len(EVENT_TIMING_CALLS) * steps}


def write_idle_synced_steps(out: str, run: str = "idle_synced_steps", steps: int = 6,
                            host_us: float = 300.0) -> dict[str, Any]:
    """A ``prof.step()`` loop whose steps run host work only -- ``aten::add_`` and ``aten::zero_`` on CPU tensors, then
    ``host_us`` of untraced Python -- and end in ``torch.cuda.current_stream().synchronize()`` (one
    ``cudaStreamSynchronize`` each), on a machine with an H100.  Truth by construction: ``steps`` marked steps, each
    with one CUDA call that queues no GPU work; no kernel, copy or fill: the loop ran on the CPU, every step alike --
    no start-up in the window."""
    r = Rank(rank=0, pid=4100, device=0)

    def body(rr: Rank) -> None:
        rr.cpu("aten::add_", 40.0)
        rr.cpu("aten::zero_", 30.0)
        _runtime_call(rr, "cudaStreamSynchronize", 15.0, 131)
        rr.host_us += host_us

    folder = _write_marked_steps(r, out, run, steps, body)
    return {"folder": folder, "steps": steps, "calls": steps}


#: The ops that read a GPU value back inside themselves to size their output (issue #37 class 3, h37-probe43s), as
#: PyTorch's CUDA code makes them: ``aten::nonzero`` counts the hits with cub, copies the count to pinned host memory
#: and waits for it (``at::cuda::memcpy_and_sync``: ``cudaMemcpyAsync`` then ``cudaStreamSynchronize``,
#: aten/src/ATen/native/cuda/Nonzero.cu), then selects; boolean-mask indexing (``x[mask]``) is ``aten::index`` over
#: that ``aten::nonzero``; ``torch.unique`` (``aten::_unique2``) sorts, then copies the number of uniques back the
#: same way (Unique.cu).  The program wrote no ``.item()``: the op asked.  (op chain outermost first, kernel before the
#: read, kernel after it.)
IMPLICIT_SYNC_OPS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "nonzero": (("aten::nonzero",),
                "void cub::DeviceReduceSingleTileKernel<cub::DeviceReducePolicy<bool, int, cub::Sum>::Policy600>",
                "void cub::DeviceSelectSweepKernel<cub::DispatchSelectIf<cub::CountingInputIterator<long, long>>>"),
    "mask_index": (("aten::index", "aten::nonzero"),
                   "void cub::DeviceReduceSingleTileKernel<cub::DeviceReducePolicy<bool, int, cub::Sum>::Policy600>",
                   "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<float>>"),
    "unique": (("aten::_unique2",),
               "void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<at_cuda_detail::cub::DeviceRadixSortPolicy<long, "
               "at_cuda_detail::cub::NullType, unsigned int>::Policy800, false, long>",
               "void at_cuda_detail::cub::DeviceSelectSweepKernel<at_cuda_detail::cub::DispatchSelectIf<long>>"),
}


def _implicit_read(r: Rank, chain: tuple[str, ...], before: str, after: str, select_us: float = 30.0,
                   nested: tuple[str, ...] = ()) -> None:
    """One op of :data:`IMPLICIT_SYNC_OPS`: its count kernel, the 4-byte read of the count into pinned memory and the
    host's wait for its stream (every kernel queued before it), then the kernel that writes the output.  ``nested``:
    ops the reading op calls (4 us each, no launch) after its count kernel and before its read, each ended before the
    read begins -- ``aten::empty`` of the pinned count (Nonzero.cu's ``at::empty({1}, ...pinned)``)."""
    start = r.host_us
    ops = []
    for name in chain:  # each op of the chain a little after the one that calls it, as the profiler records them
        ops.append(r.cpu(name, 0.0, advance=False))
        r.host_us += 2.0
    r.kernel(None, before, 8.0)
    for name in nested:
        r.cpu(name, 4.0)
        r.host_us += 1.0
    op = ops[-1]
    _, copy_start = r.memcpy(op, "Memcpy DtoH (Device -> Pinned)", 4, 1.5)
    r.host_us += 15.0
    copy_end = copy_start + 1.5
    r.corr += 1
    sync_at = r.host_us
    wait = max(copy_end - sync_at, 0.0) + 3.0
    r.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": r.pid, "tid": r.pid,
                   "ts": round(sync_at, 3), "dur": round(wait, 3),
                   "args": {"External id": op["args"]["External id"], "cbid": 131, "correlation": r.corr}})
    r.host_us = sync_at + wait + 4.0
    r.step_kernels.append((copy_start, copy_end))
    r.kernel(None, after, select_us)
    r.host_us += 3.0
    for depth, e in enumerate(ops):
        e["dur"] = round(r.host_us - start - depth * 2.5, 3)


def write_implicit_sync(path: str, op: str = "nonzero", steps: int = 10, layers: int = 6,
                        gemm_us: float = 100.0, host_after_us: float = 80.0,
                        nested: tuple[str, ...] = ()) -> dict[str, Any]:
    """A bf16 MLP's forward, backward and optimizer (``layers`` GEMM + ReLU forward, two GEMMs each backward), where
    each forward layer runs ``op`` of :data:`IMPLICIT_SYNC_OPS` (``torch.nonzero(mask)``, ``x[mask]``,
    ``torch.unique(ids)``: a router's data-dependent selection) then ``host_after_us`` of Python that uses its
    output before the next launch -- and the step holds no ``.item()`` at all.

    Truth by construction: each op's read drains the queue (the host waits for the layer's GEMM queued before it), the
    GPU then idles until the host launches again (~``host_after_us`` and the launches); the sync is the op's, not a
    read the program wrote, so its fix is the op's (a size known in advance: ``nonzero_static``, counts kept on the
    GPU), not "keep .item() out of the step".  ``nested``: ops the reading op calls and ends before its read
    (:func:`_implicit_read`; ``("aten::empty",)``).  Returned: the op's name as the trace has it (the outermost of its chain),
    the op that reads (the innermost), the step's GEMM time and the GPU's idle per kept step from each op's last kernel
    to the next launched kernel (ms) -- idle the syncs caused, which reading the drain only up to the op's own next
    kernel missed."""
    chain, before, after = IMPLICIT_SYNC_OPS[op]
    r = Rank(rank=0, pid=4800, device=0)
    idle: list[float] = []  # per step: the GPU idle from each op's last kernel to the next launch's kernel (us)

    def body(rr: Rank) -> None:
        idle.append(0.0)
        ended = None
        for i in range(layers):
            start, _ = rr.kernel("aten::addmm", GEMM_FWD, gemm_us, args=SHAPES_4096["addmm"])
            if ended is not None:
                idle[-1] += max(start - ended, 0.0)
            rr.kernel("aten::relu", RELU_BF16, 10.0)
            _implicit_read(rr, chain, before, after, nested=nested)
            rr.cpu("aten::view", host_after_us)  # the Python that uses the selection before the next launch
            ended = rr.streams[COMPUTE_STREAM]
        start, _ = rr.kernel("aten::mm", GEMM_FWD, gemm_us)
        idle[-1] += max(start - ended, 0.0)
        for _ in range(layers - 1):
            rr.kernel("aten::mm", GEMM_FWD, gemm_us)
        for _ in range(layers):
            rr.kernel("aten::mm", GEMM_FWD, gemm_us)
            rr.kernel("aten::mm", GEMM_FWD, gemm_us)
        optimizer(rr)

    for n in range(steps):
        r.step(n, body)
    write_doc(path, trace_doc(r, 1))
    kept = idle[1:-1]  # the Advisor drops a capture's first and last step
    return {"op": chain[0], "syncing_op": chain[-1], "gemm_ms": 3 * layers * gemm_us / 1000.0,
            "idle_after_ops_ms": sum(kept) / len(kept) / 1000.0}


#: Syncs inside the backward pass (:func:`write_backward_read`), the node autograd's engine runs first.
#: ``mask_index``: ``IndexBackward0`` of ``x[mask]``, whose ``index_put_`` turns the boolean mask into indices
#: (``aten::nonzero`` reads the count of hits, then writes them).  ``custom_item``: a custom ``autograd.Function``
#: whose backward calls ``.item()`` (its node named after the class) and uses the value before launching on.
BACKWARD_READS: dict[str, tuple[str, ...]] = {
    "mask_index": ("IndexBackward0", "aten::index_put_", "aten::_index_put_impl_", "aten::nonzero"),
    "custom_item": ("ClampScaleBackward", "aten::item"),
}


def _backward_read(r: Rank, case: str, host_us: float) -> None:
    """One backward node of :data:`BACKWARD_READS` ``case`` as autograd's engine runs it:
    ``autograd::engine::evaluate_function: <node>`` around ``<node>`` around its ops, one of which waits for the GPU
    (``cudaStreamSynchronize``); ``custom_item``'s node then runs ``host_us`` of Python on the value and launches."""
    chain = BACKWARD_READS[case]
    node = chain[0]
    if case == "mask_index":
        _implicit_read(r, (f"autograd::engine::evaluate_function: {node}", *chain), *IMPLICIT_SYNC_OPS["nonzero"][1:])
        return
    wrapper = r.cpu(f"autograd::engine::evaluate_function: {node}", 0.0, advance=False)
    r.host_us += 1.0
    inner = r.cpu(node, 0.0, advance=False)
    r.host_us += 2.0
    r.sync(op=chain[1])
    r.cpu("aten::mul", host_us)  # the backward's own Python on the value, then its launch
    r.kernel("aten::mul", RELU_BF16, 10.0)
    inner["dur"] = round(r.host_us + 1.0 - inner["ts"], 3)
    wrapper["dur"] = round(r.host_us + 2.0 - wrapper["ts"], 3)
    r.host_us += 3.0


def write_backward_read(path: str, case: str = "mask_index", steps: int = 10, layers: int = 4,
                        gemm_us: float = 150.0, host_us: float = 100.0) -> dict[str, Any]:
    """A bf16 MLP's training step whose backward waits for the GPU inside one of its nodes: ``layers`` forward GEMMs
    on the loop's thread, then autograd's thread (:data:`AUTOGRAD_TID`) runs per layer an ``MmBackward0`` node (two
    GEMMs) and the node of :data:`BACKWARD_READS` ``case`` (:func:`_backward_read`), then the optimizer on the loop's
    thread.

    Truth by construction: ``layers`` syncs a step, each in the node the engine ran (``node``) -- the user's code
    there is that node (the backward of their ``x[mask]``, their Function's backward), not the engine's wrapper
    ``autograd::engine::evaluate_function: <node>``, which every backward node wears alike."""
    r = Rank(rank=0, pid=4900, device=0)

    def body(rr: Rank) -> None:
        for _ in range(layers):
            rr.kernel("aten::mm", GEMM_FWD, gemm_us)
        first_host, first_flow = len(rr.host), len(rr.flows)
        for _ in range(layers):
            mm = rr.cpu("autograd::engine::evaluate_function: MmBackward0", 0.0, advance=False)
            rr.host_us += 2.0
            rr.kernel("aten::mm", GEMM_FWD, gemm_us)
            rr.kernel("aten::mm", GEMM_FWD, gemm_us)
            mm["dur"] = round(rr.host_us - mm["ts"], 3)
            _backward_read(rr, case, host_us)
        for e in rr.host[first_host:] + [f for f in rr.flows[first_flow:] if f["ph"] == "s"]:
            e["tid"] = AUTOGRAD_TID
        optimizer(rr)

    for n in range(steps):
        r.step(n, body)
    write_doc(path, trace_doc(r, 1))
    node = BACKWARD_READS[case][0]
    return {"node": node, "reads_per_step": layers, "wrapper": f"autograd::engine::evaluate_function: {node}"}


def write_copy_only_window(out: str, run: str = "copy_only_window", steps: int = 8, mb: float = 64.0,
                           h2d_us: float = 2800.0, d2h_us: float = 3000.0, host: str = "Pinned",
                           host_us: float = 200.0, sync: str = "item") -> dict[str, Any]:
    """A data-staging loop under torch.profiler (``prof.step()`` each turn): each step copies a ``mb`` MiB batch to the
    GPU with ``tensor.to('cuda', non_blocking=True)`` (``aten::to`` -> ``aten::copy_``: ``cudaMemcpyAsync``, a
    ``Memcpy HtoD ({host} -> Device)`` of ``h2d_us``), copies it back with ``.cpu()`` (``Memcpy DtoH (Device ->
    {host})`` of ``d2h_us``), then waits and spends ``host_us`` on the host -- the shape of a host-device bandwidth
    check (``torch.cuda`` copies timed in a loop) or a staging tool: no kernel at all.  ``sync``: how it waits --
    ``"item"`` a read of a value (``cudaStreamSynchronize`` inside ``aten::_local_scalar_dense``), ``"device"``
    ``torch.cuda.synchronize()`` (a bare ``cudaDeviceSynchronize``, no ATen op around it: pytorch/benchmark PR #1080's
    A100 copy loop, h37-hunt71b).
    Truth by construction: ``steps`` marked steps, 2 copies each, no kernel and no fill; the GPU's copy time, H2D and
    D2H bytes; the copies' host memory.  Copies are GPU work: the window is neither start-up nor "no GPU work"."""
    r = Rank(rank=0, pid=4100, device=0)
    nbytes = int(mb * (1 << 20))

    def body(rr: Rank) -> None:
        op = rr.cpu("aten::to", 20.0, advance=False)
        rr.memcpy(op, f"Memcpy HtoD ({host} -> Device)", nbytes, h2d_us)
        rr.host_us += 20.0
        op = rr.cpu("aten::to", 20.0, advance=False)
        rr.memcpy(op, f"Memcpy DtoH (Device -> {host})", nbytes, d2h_us)
        rr.host_us += 20.0
        if sync == "device":
            _runtime_call(rr, "cudaDeviceSynchronize", max(max(rr.streams.values()) - rr.host_us, 0.0) + 4.0, 165)
        else:
            rr.sync("aten::copy_")
        rr.host_us += host_us

    folder = _write_marked_steps(r, out, run, steps, body)
    return {"folder": folder, "steps": steps, "copies": 2 * steps, "copy_ms": steps * (h2d_us + d2h_us) / 1000.0,
            "h2d_bytes": steps * nbytes, "d2h_bytes": steps * nbytes, "host_memory": host.lower()}


#: :func:`write_teardown_window`'s calls in order: (name, CUPTI callback id -- nominal, the reader reads the name --,
#: us, count).  ``torch.cuda.synchronize()``; ``torch.cuda.empty_cache()`` after the model is dropped: the caching
#: allocator's ``release_cached_blocks`` frees each cached segment with ``cudaFree`` (c10/cuda/CUDACachingAllocator.cpp)
#: and the pinned-memory allocator's cached blocks with ``cudaFreeHost`` (CachingHostAllocator); the allocator's
#: recorded events destroyed.
TEARDOWN_CALLS = (("cudaDeviceSynchronize", 165, 40.0, 1), ("cudaFree", 24, 180.0, 12),
                  ("cudaFreeHost", 25, 2500.0, 2), ("cudaEventDestroy", 137, 6.0, 4))


def write_teardown_window(out: str, run: str = "teardown_window") -> dict[str, Any]:
    """A torch.profiler window opened after the training loop (a schedule whose ``active`` steps came after the last
    ``prof.step()``, or a ``with profile():`` around the program's exit): it holds the exit's calls alone
    (:data:`TEARDOWN_CALLS`) -- no kernel, no copy, nothing made.  Truth by construction: the program's tear-down after
    its loop, never start-up and never a warm-up; its one-time costs (``cudaFreeHost`` 5 ms) are the exit's."""
    r = Rank(rank=0, pid=4100, device=0)
    for name, cbid, us, n in TEARDOWN_CALLS:
        for _ in range(n):
            _runtime_call(r, name, us, cbid)
            r.host_us += 10.0
    folder = os.path.join(out, run)
    os.makedirs(folder, exist_ok=True)
    write_doc(os.path.join(folder, f"{_worker(r)}.{BASE_NS + int(T0_US * 1000)}.pt.trace.json"), trace_doc(r, 1))
    return {"folder": folder, "calls": sum(n for *_, n in TEARDOWN_CALLS),
            "released": sum(n for name, *_, n in TEARDOWN_CALLS if name != "cudaDeviceSynchronize")}


#: :func:`write_rank_pause`'s loop: per step ``PAUSED_KERNELS`` kernels of ``PAUSED_KERNEL_US``, then the result read
#: back (``.item()``), so no step's GPU work queues into the next; the paused rank's one module load, ms.
RANK_PAUSE_LOAD_MS, RANK_PAUSE_STEP = 30.0, 7


def rank_pause(paused: int | None, load_ms: float = RANK_PAUSE_LOAD_MS,
               step: int = RANK_PAUSE_STEP) -> Callable[[list[Rank], int], None]:
    """Ranks each running :func:`paused_loop`'s steady step on their own (no collective ties them); rank ``paused``
    alone loads a module (``cuModuleLoadData``, as CUPTI records the driver's lazy load of a first-called kernel's
    module: pytorch/kineto's ``CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData``) for ``load_ms`` on its loop's thread at
    the head of its ``ProfilerStep#<step>``, so its later steps run that much later than the other ranks'.  Truth by
    construction: each rank reads as it does alone -- the load is its step ``step``'s own one-time cost, the warm-up
    step dropped is that one, and no kept step of any GPU holds start-up."""
    def body(ranks: list[Rank], n: int) -> None:
        for r in ranks:
            def one(rr: Rank) -> None:
                if rr.rank == paused and n == step:
                    rr.corr += 1
                    rr.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cuModuleLoadData", "pid": rr.pid,
                                    "tid": rr.pid, "ts": round(rr.host_us, 3), "dur": round(load_ms * 1000, 3),
                                    "args": {"cbid": 0, "correlation": rr.corr}})
                    rr.host_us += load_ms * 1000
                for _ in range(PAUSED_KERNELS):
                    rr.kernel("aten::mm", GEMM_FWD, PAUSED_KERNEL_US)
                rr.sync("aten::item")
            r.step(n, one)
    return body


def write_rank_pause(out: str, ranks: int = 2, paused: int | None = 1, late: int = 0, steps: int = 12,
                     run: str = "rank_pause", closed_early: int = 0, start_up: int = 0, rankless: tuple[int, ...] = (),
                     **kw: Any) -> list[str]:
    """:func:`rank_pause`'s job, one file per rank under ``out/<run>/`` (``write_run``); ``late``: the last rank's
    capture opened ``late`` steps after the others' (its events before its ``ProfilerStep#<2 + late>`` unrecorded:
    ``torch.profiler.schedule`` counts each process's own ``prof.step()`` calls, so a rank that reaches the loop
    later starts recording later; every rank's step numbers stay the loop's); ``closed_early``: the last rank's
    capture closed ``closed_early`` steps before the others' (its last steps unrecorded: :func:`_close_early`);
    ``start_up``: that many more ranks of the job on node0's next GPUs, each in its own file, whose window held only
    the process's start-up (:data:`MIXED_START_UP`: no kernel launched); ``rankless``: the ranks whose file holds no
    ``distributedInfo`` (written before ``init_process_group`` or after ``destroy_process_group``, or stripped).
    Truth: a late or early-closed rank's steps are its own numbered ones, as with neither; each rank reads as it does
    alone; the start-up ranks are the job's idle ranks (``ranks + start_up`` in all, every one's trace here); a file
    without a rank is its process's, read as with its rank."""
    sc = Scenario(ranks, rank_pause(paused, **kw), [], [], f"{ranks} ranks, rank {paused} loading a module once")
    rs = simulate(sc, steps)
    if late:
        _open_late(rs[-1], 2 + late)
    if closed_early:
        _close_early(rs[-1], 2 + steps - closed_early)
    rs += [_start_up_rank(k) for k in range(ranks, ranks + start_up)]
    folder = os.path.join(out, run)
    os.makedirs(folder, exist_ok=True)
    paths = []
    for r in rs:
        doc = trace_doc(r, len(rs))
        if r.rank in rankless:
            doc.pop("distributedInfo", None)
        path = os.path.join(folder, f"{_worker(r)}.{BASE_NS + int(T0_US * 1000) + r.rank * 1_000_000}.pt.trace.json")
        paths.append(write_doc(path, doc))
    return paths


def _start_up_rank(rank: int, node: int = 0) -> Rank:
    """Rank ``rank`` of a job on ``node``'s GPU ``rank`` whose window held only its start-up (:data:`MIXED_START_UP`:
    device query, the allocator's first ``cudaMalloc``, ...; no kernel, copy or fill)."""
    r = Rank(rank=rank, pid=4100 + rank, device=rank, node=node)
    for name, cbid, us in MIXED_START_UP:
        _runtime_call(r, name, us, cbid)
    return r


def _open_late(r: Rank, first: int) -> None:
    """Drop ``r``'s events before its ``ProfilerStep#<first>`` opened (host, GPU, flows): its capture began there."""
    at = next(e["ts"] for e in r.host if e["name"] == f"ProfilerStep#{first}")
    r.host = [e for e in r.host if e["ts"] >= at]
    r.gpu = [e for e in r.gpu if e["ts"] >= at]
    r.flows = [e for e in r.flows if e["ts"] >= at]


def _close_early(r: Rank, first: int) -> None:
    """Drop ``r``'s events from its ``ProfilerStep#<first>`` on (host, GPU, flows): its capture closed there -- its
    profiler stopped, or its trace was written, before the other ranks' (``torch.profiler.schedule``'s ``active`` counts
    each process's own ``prof.step()`` calls; a rank whose buffer filled or whose ``on_trace_ready`` ran early stops
    on its own).  The GPU's work launched before the close stays (each step ends with its read-back, so none runs
    past it), and the profiler's own span ends with the last event kept."""
    at = next(e["ts"] for e in r.host if e["name"] == f"ProfilerStep#{first}")
    kept = {e["args"]["correlation"] for e in r.host if e["ts"] < at and "correlation" in e.get("args", {})}
    r.host = [e for e in r.host if e["ts"] < at]
    r.gpu = [e for e in r.gpu if e.get("args", {}).get("correlation", -1) in kept
             or "correlation" not in e.get("args", {}) and e["ts"] < at]
    r.flows = [e for e in r.flows if e.get("id") in kept]
    r.host_us = max(e["ts"] + e.get("dur", 0.0) for e in r.host)
    r.streams = {s: min(t, max(e["ts"] + e["dur"] for e in r.gpu)) for s, t in r.streams.items()}


def write_native_queued_loop(path: str, extra: list[int], pause_us: float | list[float] = 2000.0,
                             gemm_us: float = 900.0, extra_us: float = 80.0, after_us: float = 0.0) -> dict[str, Any]:
    """Write one rank's trace of a native loop (a C++ extension's own launches: no ATen op, no ``prof.step()``, no
    sync) whose iteration ``k`` launches a GEMM of ``gemm_us`` then ``extra[k]`` elementwise kernels of ``extra_us``,
    queued back to back (the host launches 13 us apart, far ahead of the GPU), then runs ``pause_us`` of untraced host
    code (its own bookkeeping) once the GPU is done, the GPU idle: the only gaps are the iterations' boundaries.
    ``pause_us`` may give each iteration its own pause (a first iteration's one-time work); ``after_us`` of the host's
    own work after the loop (a checkpoint saved) runs before the profiler's window closes.
    Return the truth: each iteration's start (the first kernel's, us) and its start-to-start length (ms)."""
    r = Rank(0, 4100, 0)
    starts = []
    pauses = pause_us if isinstance(pause_us, list) else [pause_us] * len(extra)
    for n, pause in zip(extra, pauses):
        starts.append(r.kernel(None, GEMM_FWD, gemm_us)[0])
        for _ in range(n):
            r.kernel(None, "void at::native::vectorized_elementwise_kernel<4, relu>", extra_us)
        r.host_us = max(r.host_us, max(r.streams.values())) + pause
    r.host_us += after_us
    with open(path, "w", encoding="utf-8") as f:
        f.write(_dumps(trace_doc(r, 1)))
    return {"starts_us": starts, "step_ms": [(b - a) / 1000.0 for a, b in pairwise(starts)]}


#: NCCL's kernel for a group of calls (``ncclDevKernel_Generic``): its name tells no collective, the launching op does.
NCCL_GENERIC = "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)"
#: :func:`write_coalesced_all_gather`: the two ranks' uneven shards (bf16 elements), the group's kernel, the GEMMs
#: before and after it, the process group's id.
COALESCED_SHARDS, COALESCED_US, COALESCED_GEMM_US, COALESCED_PG = (1_310_720, 655_360), 400.0, 300.0, 3


def _coalesced_all_gather(r: Rank, not_before: float) -> tuple[float, float]:
    """``dist.all_gather`` of uneven shards as ``ProcessGroupNCCL::allgather`` runs it (PyTorch 2.0-2.1): the op
    (``c10d::allgather_``) records its message (``record_param_comms`` "all_gather": this rank's shard), then opens a
    coalesced group of one ``_broadcast_oop`` per shard -- each its own ``record_param_comms`` and ``nccl:_broadcast_oop``
    annotation, returning before anything launches -- and launches the group as one kernel at its end
    (``endCoalescing``): inside the op and its record, after every inner record and annotation returned.  Returns the
    kernel's (start, end)."""
    start = r.host_us
    op = r.cpu("c10d::allgather_", 0.0, advance=False)
    r.host_us += 2.0
    rec = _message(r, "all_gather", COALESCED_SHARDS[r.rank], len(COALESCED_SHARDS), COALESCED_PG)
    r.host_us += 10.0  # past the record's own 8 us: its body runs on inside it
    for n in COALESCED_SHARDS:
        _message(r, "_broadcast_oop", n, len(COALESCED_SHARDS), COALESCED_PG)
        r.host_us += 1.0
        r.cpu("nccl:_broadcast_oop", 4.0, cat="user_annotation")
        r.host_us += 5.0  # the inner record (8 us) has returned
    ext, r.ext = r.ext, rec["args"]["External id"]  # the group's launch is the outer record's
    span = r.kernel(None, NCCL_GENERIC, COALESCED_US, stream=NCCL_STREAM, not_before=not_before)
    r.ext = ext
    r.host_us += 2.0
    rec["dur"] = round(r.host_us - rec["ts"], 3)
    r.host_us += 2.0
    op["dur"] = round(r.host_us - start, 3)
    return span


def write_coalesced_all_gather(path: str, steps: int = 6) -> dict[str, Any]:
    """Rank 0 of 2 whose each step runs a GEMM, the all-gather of the ranks' uneven shards
    (:func:`_coalesced_all_gather`: one ``ncclDevKernel_Generic`` launched inside ``c10d::allgather_`` after its inner
    ``_broadcast_oop`` calls returned), a GEMM on the gathered tensor, and ``.item()``.  Truth by construction: one
    AllGather a step, of this rank's shard (``bytes``), in a group of 2 (``group_size``), process group ``pg``."""
    r = Rank(rank=0, pid=4520, device=0)

    def body(rr: Rank) -> None:
        end = rr.kernel("aten::mm", GEMM_FWD, COALESCED_GEMM_US, args=SHAPES_4096["mm"])[1]
        _, gathered = _coalesced_all_gather(rr, end)
        rr.kernel("aten::mm", GEMM_FWD, COALESCED_GEMM_US, not_before=gathered, args=SHAPES_4096["mm"])
        rr.sync()

    for k in range(steps):
        r.step(k, body)
    write_doc(path, trace_doc(r, len(COALESCED_SHARDS)))
    return {"type": "AllGather", "calls_per_step": 1, "bytes": COALESCED_SHARDS[0] * 2,
            "group_size": len(COALESCED_SHARDS), "pg": f"pg {COALESCED_PG}"}


#: :func:`write_host_marked_epoch`'s iteration: each ``record_function`` range the loop opens (name) and the host ops
#: inside it (name, us), in order -- a small CNN's batch upload, forward and backward as the real
#: ``wild/cuda_unrecorded_cifar_cnn`` marks them (its backward, each layer's gradient and the update, holds the most ops)
HOST_MARKED_PHASES = (("data_to_device", (("aten::to", 1400.0), ("aten::to", 500.0))),
                      ("forward", (("aten::conv2d", 900.0), ("aten::relu", 150.0), ("aten::max_pool2d", 300.0),
                                   ("aten::linear", 400.0), ("aten::cross_entropy_loss", 250.0))),
                      ("backward", (("autograd::engine::evaluate_function: AddmmBackward0", 300.0),
                                    ("autograd::engine::evaluate_function: ReluBackward0", 80.0),
                                    ("autograd::engine::evaluate_function: MaxPool2DWithIndicesBackward0", 200.0),
                                    ("autograd::engine::evaluate_function: ConvolutionBackward0", 1200.0),
                                    ("autograd::engine::evaluate_function: ReluBackward0", 80.0),
                                    ("autograd::engine::evaluate_function: ConvolutionBackward0", 900.0),
                                    ("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 40.0),
                                    ("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 40.0),
                                    ("Optimizer.step#SGD.step", 700.0))))


def write_host_marked_epoch(path: str, iterations: int = 12, startup_ms: float = 3000.0, fetch_us: float = 600.0,
                            gap_us: float = 300.0, workers: bool = True) -> dict[str, Any]:
    """A ``torch.profiler`` trace of one training epoch whose GPU side was not recorded (the allocator's ``[memory]``
    events on GPU 0, no CUDA call, kernel or copy) and whose loop calls no ``prof.step()``: ``iterations`` batches,
    each fetched from the DataLoader (``fetch_us``; worker processes where ``workers``) then marked by the user's
    ``record_function`` ranges of :data:`HOST_MARKED_PHASES` around their host ops, ``gap_us`` of untraced Python
    between them; the epoch opens with the sampler's two ops, then ``startup_ms`` with no event (the loader's
    iterator made: its workers starting) before the first batch's fetch.  Truth by construction: the iterations, each
    iteration's time (ms, from one ``forward`` to the next), and the unrecorded start-up (ms)."""
    r = Rank(rank=0, pid=35500, device=0)
    r.mem = MemSim(held=2 << 20)
    loader = MULTI_DATALOADER if workers else "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
    epoch = r.cpu("training_epoch", 0.0, cat="user_annotation", advance=False)
    start = r.host_us
    r.cpu("aten::randperm", 2.0)
    r.cpu("aten::random_", 2.0)
    r.host_us += startup_ms * 1000.0
    for _ in range(iterations):
        r.cpu(loader, fetch_us)
        for phase, ops in HOST_MARKED_PHASES:
            mark = r.cpu(phase, 0.0, cat="user_annotation", advance=False)
            begun = r.host_us
            r.host_us += 2.0
            for name, us in ops:
                r.cpu(name, us, advance=False)
                addr = r.malloc(1 << 20, r.host_us + 1.0)
                r.mfree(addr, r.host_us + us - 1.0)
                r.host_us += us
            r.host_us += 2.0
            mark["dur"] = round(r.host_us - begun, 3)
        r.host_us += gap_us
    epoch["dur"] = round(r.host_us - start, 3)
    write_doc(path, trace_doc(r, 1))
    per = fetch_us + gap_us + sum(sum(us for _, us in ops) + 4.0 for _, ops in HOST_MARKED_PHASES)
    return {"iterations": iterations, "iteration_ms": per / 1000.0, "startup_ms": startup_ms}


#: The one-file writers whose windows say most of the profiler and the runtime (start-up, the loop's end, CUDA activity
#: off, records lost, first calls, a first call of no framework, a compiled first call with CUDA activity only, a copy
#: on another GPU): each written on each vendor's GPU by :func:`write_vendor_windows`.
VENDOR_WINDOWS = ("write_cuda_activity_off", "write_profiler_calls_only",
                  "write_loop_ended", "write_start_up_of_no_framework", "write_first_op_call", "write_lost_gpu_records",
                  "write_unrecorded_gpu_steps", "write_upload_elsewhere", "write_loop_opened",
                  "write_compiled_first_call", "write_stream_handoff", "write_cuda_only_first_call")
#: The vendors a trace is written for: the document as CUDA's PyTorch writes it, ROCm's (:func:`as_rocm`), ROCm's with
#: neither ``deviceProperties`` nor ROCm's version keys (what is left to say AMD: HIP's calls), and an Intel GPU's
#: (:func:`as_xpu`).
VENDOR_FORMS = ("cuda", "rocm", "rocm_unnamed", "xpu", "unknown", "unknown_named", "cuda_unnamed")


#: NVIDIA's own kernel families (``devices.nvidia.OWN_KERNELS``) -> a name no vendor's library gives, the same work.
_NV_FAMILY = ((re.compile(r"^(?:maxwell|pascal|volta|turing|ampere|hopper|blackwell)_"), ""),
              (re.compile(r"^sm\d{2,3}_"), ""), (re.compile(r"^nvjet_"), "gemm_"), (re.compile(r"xmma_"), "mma_"),
              (re.compile(r"cutlass", re.I), "tiled"), (re.compile(r"cudnn", re.I), "dnn"),
              (re.compile(r"cublas", re.I), "blas"),
              (re.compile(r"^nccl"), "ccl"))
#: PyTorch's cuDNN ops -> what a build for another backend dispatches the same layer to (an out-of-tree device's
#: convolution is ``aten::convolution_overrideable``; any other cuDNN op its native twin).
_UNKNOWN_OPS = ((re.compile(r"^aten::cudnn_convolution(_backward)?$"), r"aten::convolution\1_overrideable"),
                (_CUDNN_OP, "aten::native_"),
                # c10d's record of a collective names its backend: ``ccl_x:all_reduce`` as the backend above
                (re.compile(r"^nccl:"), "ccl_x:"))
#: The runtime of a GPU no vendor's table knows: its calls' prefix (CUDA's calls as such a runtime spells them).
UNKNOWN_RUNTIME = "xrt"


def as_unknown_vendor(doc: dict[str, Any], model: str | None = None) -> dict[str, Any]:
    """``doc`` (a :func:`trace_doc`) as a PyTorch build for a GPU of a vendor nothing here knows writes it, in place: no
    ``deviceProperties`` (or one GPU named ``model``, a model no vendor's table claims), no CUDA version keys, the
    runtime's calls its own (``xrtLaunchKernel`` for ``cudaLaunchKernel``), NVIDIA's library kernels under names no
    vendor's library gives (``sgemm_128x64_tn`` for ``ampere_sgemm_128x64_tn``), NCCL's as a collective library's
    (``ccl...``), no ``nccl`` backend, its cuDNN ops the backend's own (:data:`_UNKNOWN_OPS`).  Truth by construction: nothing in the file names a vendor (h37-vendor64)."""
    if model is None:
        doc.pop("deviceProperties", None)
    else:
        doc["deviceProperties"] = [{"id": p.get("id", 0), "name": model, "totalGlobalMem": 68719476736}
                                   for p in doc.get("deviceProperties", [{}])]
    for k in ("cuda_driver_version", "cuda_runtime_version", "cupti_version"):
        doc.pop(k, None)
    info = doc.get("distributedInfo")
    if isinstance(info, dict) and str(info.get("backend", "")).lower() == "nccl":
        info["backend"] = "ccl_x"
    for e in doc["traceEvents"]:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            e["name"] = re.sub(r"^cuda|^cu(?=[A-Z])", UNKNOWN_RUNTIME, e["name"])
        elif e.get("cat") == "kernel":
            for pattern, repl in _NV_FAMILY:
                e["name"] = pattern.sub(repl, e["name"])
        elif e.get("cat") in ("cpu_op", "user_annotation"):
            for pattern, repl in _UNKNOWN_OPS:
                e["name"] = pattern.sub(repl, e["name"])
    return doc


def as_vendor(doc: dict[str, Any], form: str) -> dict[str, Any]:
    """``doc`` (a :func:`trace_doc`) in ``form`` (one of :data:`VENDOR_FORMS`), in place: ``unknown`` /
    ``unknown_named`` a GPU of no vendor the file names (:func:`as_unknown_vendor`, without ``deviceProperties`` / with
    a model no table knows); ``cuda_unnamed`` CUDA's trace without ``deviceProperties`` -- its calls still NVIDIA's."""
    if form.startswith("rocm"):
        as_rocm(doc)
        if form == "rocm_unnamed":
            for k in ("deviceProperties", "roctracer_version", "hip_runtime_version", "hip_driver_version"):
                doc.pop(k, None)
    elif form == "xpu":
        as_xpu(doc)
    elif form.startswith("unknown"):
        as_unknown_vendor(doc, "Accel X1" if form == "unknown_named" else None)
    elif form == "cuda_unnamed":
        for k in ("deviceProperties", "cuda_driver_version", "cuda_runtime_version", "cupti_version"):
            doc.pop(k, None)
    return doc


def write_vendor_windows(out: str, writers: tuple[str, ...] = VENDOR_WINDOWS,
                         forms: tuple[str, ...] = VENDOR_FORMS) -> list[str]:
    """Each of ``writers``' traces in each of ``forms``, one run each (``<form>_<window>``) under ``out``; returns the
    runs.  Truth by construction: the vendor of each run is its form's (NVIDIA, AMD, AMD, Intel, none, none, NVIDIA)."""
    runs = []
    for name in writers:
        path = os.path.join(out, f".{name}.json")
        os.makedirs(out, exist_ok=True)
        globals()[name](path)
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        os.remove(path)
        for form in forms:
            run = f"{form}_{name.removeprefix('write_')}"
            os.makedirs(os.path.join(out, run), exist_ok=True)
            write_doc(os.path.join(out, run, f"node0_4500.{BASE_NS}.pt.trace.json"),
                      as_vendor(json.loads(json.dumps(doc)), form))
            runs.append(run)
    return runs


#: MIOpen's Winograd convolution kernel for gfx9 in fp16 ``dot2`` instructions: no MFMA (``devices.amd``), as MIOpen
#: picked it for the 1x1 and 3x3 convolutions of amd/HPCTrainingExamples' MI300X ResNet (h37-huntk66).
MIOPEN_WINOGRAD_FP16 = "miopenSp3AsmConv_v30_3_1_gfx9_fp16_dot2_edc_f3x2_stride1"


def conv_backward_args(n: int, c_in: int, c_out: int, hw: int = 8, k: int = 3) -> dict[str, Any]:
    """``record_shapes``' args of one fp16 ``aten::convolution_backward`` (grad output, input, weight; stride 1,
    padding k//2, both gradients), as Kineto writes them."""
    return {"Input Dims": [[n, c_out, hw, hw], [n, c_in, hw, hw], [c_out, c_in, k, k], [], [], [], [], [], [], [], []],
            "Input type": ["c10::Half", "c10::Half", "c10::Half", "ScalarList", "ScalarList", "ScalarList",
                           "ScalarList", "Scalar", "ScalarList", "Scalar", "ScalarList"],
            "Concrete Inputs": ["", "", "", "[0]", "[1, 1]", f"[{k // 2}, {k // 2}]", "[1, 1]", "False", "[0, 0]",
                                "1", "[True, True, False]"]}


def write_fp16_conv_fallback(path: str, channels: tuple[int, int] = (128, 512), steps: int = 8, convs: int = 4,
                             conv_us: float = 400.0) -> dict[str, Any]:
    """A GPU-bound fp16 training loop on an MI300X whose every step runs ``convs`` convolution backwards of
    ``channels`` (C_in, C_out), each one MIOpen Winograd ``dot2`` kernel of ``conv_us`` (no MFMA), then
    ``loss.item()``.  Truth by construction: the convolutions' kernels miss the Matrix Cores; with channels that are
    multiples of 8 (the default 128 -> 512) padding cannot be the cause -- MIOpen chose the kernel, and its search
    (``torch.backends.cudnn.benchmark``) is the fix; with odd channels (``(100, 500)``: 100 and 500 are no multiples
    of 8) the dims are misaligned, as ``misaligned_dims`` says."""
    r = Rank(rank=0, pid=5150, device=0)
    c_in, c_out = channels
    args = conv_backward_args(64, c_in, c_out)
    for n in range(steps):
        step = r.cpu(f"ProfilerStep#{n + 2}", 0.0, cat="user_annotation", advance=False)
        t0 = r.host_us
        for _ in range(convs):
            r.kernel("aten::convolution_backward", MIOPEN_WINOGRAD_FP16, conv_us, launch_us=6.0, args=args,
                     grid=(304 * 4 * 256, 1, 1), block=(256, 1, 1), launch_call="hipExtModuleLaunchKernel")
        r.sync()
        r.host_us += 10.0
        step["dur"] = round(r.host_us - t0, 3)
    write_doc(path, trace_doc(r, 1, MI300X))
    return {"channels": channels, "aligned": c_in % 8 == 0 and c_out % 8 == 0, "conv_us": conv_us, "convs": convs}


#: TraceLens' ``TraceFuse`` moves each rank's pids and correlation / flow ids by these (TraceLens/TraceFusion: a
#: rank's ``pid`` + rank x 10^8, ``correlation`` and ``ac2g`` ids + rank x 10^5), keeping its ``External id``s.
FUSE_PID_STRIDE, FUSE_ID_STRIDE = 100_000_000, 100_000


def fuse_like_tracelens(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One file of several ranks' Kineto documents as TraceLens' ``TraceFuse`` writes it (amd/HPCTrainingExamples
    ``MLExamples/TraceLens/fused_traces/merged_all_events.json.gz``): only ``traceEvents``, each event tagged
    ``args.rank`` and ``pid_raw`` (``correlation_raw``, ``id_raw``), its pid, correlation and flow id moved by its
    rank; ``External id`` kept; ``python_function`` events left out; no header (``deviceProperties``,
    ``distributedInfo``, ``baseTimeNanoseconds``)."""
    out = []
    for rank, doc in enumerate(docs):
        for e in doc["traceEvents"]:
            if e.get("cat") == "python_function" or not isinstance(e.get("pid"), int):
                continue
            e = json.loads(json.dumps(e))
            args = e.setdefault("args", {})
            args.update(rank=rank, pid_raw=e["pid"])
            e["pid"] += rank * FUSE_PID_STRIDE
            if "correlation" in args:
                args["correlation_raw"] = args["correlation"]
                args["correlation"] += rank * FUSE_ID_STRIDE
            if e.get("cat") == "ac2g":
                args["id_raw"] = e["id"]
                e["id"] += rank * FUSE_ID_STRIDE
            out.append(e)
        # TraceFuse names each rank's processes by its rank (``RANK 0 - CPU``, ``RANK 0 - GPU``) in place of theirs
        for pid, what in sorted({(e["pid"], "GPU" if e.get("cat") in ("kernel", "gpu_user_annotation", "gpu_memcpy")
                                  else "CPU") for e in out if e["args"].get("rank") == rank
                                 and e.get("ph") == "X"}):
            out.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": f"RANK {rank} - {what}"}})
    return {"traceEvents": out}


def write_fused_ranks(path: str, ranks: int = 2, steps: int = 6, gemm_us: float = 300.0,
                      relu_us: float = 40.0) -> dict[str, Any]:
    """Write ``ranks`` ranks' training loops fused into one file as TraceLens' ``TraceFuse`` does
    (:func:`fuse_like_tracelens`).  Every rank counts its ``External id``s alike but runs its ops in its own order:
    rank 0 an ``aten::mm`` then an ``aten::relu`` each step, rank 1 the ReLU first, ...: the same ids name different
    ops on different ranks.  Truth by construction: every GEMM kernel is ``aten::mm``'s, every ReLU kernel
    ``aten::relu``'s, on every rank."""
    docs = []
    for rank in range(ranks):
        r = Rank(rank=rank, pid=7000 + rank, device=rank)
        for n in range(steps):
            step = r.cpu(f"ProfilerStep#{n + 2}", 0.0, cat="user_annotation", advance=False)
            t0 = r.host_us
            ops = [("aten::mm", GEMM_FWD, gemm_us), ("aten::relu", RELU_BF16, relu_us)]
            for op, kernel, us in (ops if (n + rank) % 2 == 0 else ops[::-1]):
                r.kernel(op, kernel, us, launch_us=7.0)
            r.sync()
            r.host_us += 20.0
            step["dur"] = round(r.host_us - t0, 3)
        docs.append(trace_doc(r, ranks))
    with open(path, "w", encoding="utf-8") as f:  # as TraceFuse writes it: json.dump(indent=4), the events alone
        json.dump(fuse_like_tracelens(docs), f, indent=4)
    return {"ranks": ranks, "steps": steps, "ops": {GEMM_FWD: "aten::mm", RELU_BF16: "aten::relu"}}


#: The late-rank job's kernels: short elementwise kernels, so a rank whose host dispatches them slower runs host-bound.
LATE_KERNELS, LATE_KERNEL_US, LATE_LAUNCH_US = 60, 20.0, 7.0


#: The buffers broadcast's kernel, as NCCL names a broadcast (rank 0 its root).
NCCL_BROADCAST = "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def _broadcast_buffers(rs: list[Rank], late: int, lead_us: float, bcast_us: float, waits: dict[int, float]) -> None:
    """DDP's buffers broadcast at the step's start (``broadcast_buffers``), rank 0 its root: each rank enters it once
    its host has dispatched it -- the late rank ``lead_us`` after the others --, the root leaves ``bcast_us`` after it
    entered (it has sent), every other rank ``bcast_us`` after the last one entered (the ring passes the data on).
    Adds each rank's wait (the last arrival less its own; the root's none: it left before) to ``waits``."""
    at = {r.rank: r.host_us + 5.0 + (lead_us if r.rank == late else 0.0) for r in rs}
    last = max(at.values())
    for r in rs:
        end = at[r.rank] + bcast_us if r.rank == 0 else last + bcast_us
        r.host_us = at[r.rank] - 5.0
        r.cpu("nccl:broadcast", 12.0, cat="user_annotation", advance=False)
        _message(r, "broadcast", AR_NELEMS, len(rs))
        r.kernel("c10d::broadcast_", NCCL_BROADCAST, end - at[r.rank], stream=NCCL_STREAM, not_before=at[r.rank])
        r.gpu[-1]["ts"], r.gpu[-1]["dur"] = round(at[r.rank], 3), round(end - at[r.rank], 3)
        r.streams[NCCL_STREAM] = end
        r.step_kernels[-1] = (at[r.rank], end)
        waits[r.rank] += 0.0 if r.rank == 0 and end < last else last - at[r.rank]


def write_late_rank_fused(path: str, ranks: int = 4, late: int = 3, late_launch_us: float = 60.0, steps: int = 6,
                          comm_us: float = 300.0, calls: int = 2, launch_us: float = LATE_LAUNCH_US,
                          broadcast_us: float = 0.0) -> dict[str, Any]:
    """A DDP-like job of ``ranks`` ranks on one host, fused as TraceLens' ``TraceFuse`` writes it
    (:func:`fuse_like_tracelens`), where rank ``late`` dispatches the same GPU work slower: each of its
    ``LATE_KERNELS`` launches takes ``late_launch_us`` on its host, the others' ``launch_us`` (``LATE_LAUNCH_US``, ahead of
    their ``LATE_KERNEL_US`` kernels; above it every rank is launch-bound and the late one more: h37-overlap66) -- so its GPU runs the
    same kernels as theirs, host-bound, and enters each of the step's ``calls`` all-reduces last (a host lagging by its
    own dispatch: MI300X DDP's rank 3, h37-straggle66).  Each all-reduce ends on every rank ``comm_us`` after the last
    rank entered it.  Truth by construction: the late rank (and its GPU), each other rank's wait in the all-reduces per
    step (the last arrival less its own, summed over the step's calls, the mean over the steps), and the GPU compute per
    rank (the same on every rank).  ``broadcast_us``: each step opens with DDP's buffers broadcast
    (:func:`_broadcast_buffers`), the late rank entering it ``late_launch_us`` after the others, the root leaving it
    ``broadcast_us`` after it entered; 0: none."""
    rs, waits = _late_rank_ranks(ranks, late, late_launch_us, steps, comm_us, calls, launch_us, broadcast_us)
    docs = [trace_doc(r, ranks) for r in rs]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(fuse_like_tracelens(docs), f, indent=4)
    return {"late_rank": late, "late_gpu": late, "steps": steps,
            "wait_ms": {k: v / steps / 1000.0 for k, v in waits.items()},
            "compute_ms": LATE_KERNELS * LATE_KERNEL_US / 1000.0}


def write_late_rank_nodes(out: str, nodes: int = 2, ranks: int = 4, late: int = 3, late_launch_us: float = 60.0,
                          steps: int = 6, launch_us: float = LATE_LAUNCH_US, run: str = "late_rank_nodes") -> list[str]:
    """:func:`write_late_rank_fused`'s job on ``nodes`` machines (ranks k // (ranks / nodes) on node k's), one Kineto
    file per rank as ``torch.profiler`` writes them (``node<n>_<pid>.<stamp>.pt.trace.json`` under ``out/run``):
    rank ``late`` dispatches its launches at ``late_launch_us``, the others at ``launch_us``, so it enters every
    all-reduce last and the others' next bucket's compute runs inside their wait.  Truth by construction: the late rank
    keeping pace gives back the step less the same job's with ``late_launch_us`` = ``launch_us`` (session 68: the
    across-hosts straggler's saving)."""
    per_node = max(1, ranks // nodes)
    rs, _ = _late_rank_ranks(ranks, late, late_launch_us, steps, 300.0, 2, launch_us, 0.0, per_node=per_node)
    folder = os.path.join(out, run)
    os.makedirs(folder, exist_ok=True)
    paths = []
    for r in rs:
        path = os.path.join(folder, f"{_worker(r)}.{BASE_NS + int(T0_US * 1000) + r.rank * 1_000_000}.pt.trace.json")
        paths.append(write_doc(path, trace_doc(r, ranks)))
    return paths


def _late_rank_ranks(ranks: int, late: int, late_launch_us: float, steps: int, comm_us: float, calls: int,
                     launch_us: float, broadcast_us: float, per_node: int | None = None
                     ) -> tuple[list[Rank], dict[int, float]]:
    """The simulated ranks of :func:`write_late_rank_fused`'s job and each rank's wait in the all-reduces (us over the
    steps); ``per_node``: ranks per machine (their GPUs numbered from 0 on each), None: all on one."""
    per = per_node or ranks
    rs = [Rank(rank=k, pid=7100 + k, device=k % per, node=k // per) for k in range(ranks)]
    waits = {k: 0.0 for k in range(ranks)}
    for n in range(2, 2 + steps):
        start = max([r.host_us for r in rs] + [max(r.streams.values(), default=0.0) for r in rs])
        for r in rs:
            r.host_us = start
        ends: dict[int, float] = {}
        for c in range(calls):
            ready: dict[int, float] = {}
            for r in rs:
                if c == 0:
                    mark = r.cpu(f"ProfilerStep#{n}", 0.0, cat="user_annotation", advance=False)
                    r.host_us += 5.0
                    r.step_kernels = []
                    r._mark = mark  # type: ignore[attr-defined]
            if c == 0 and broadcast_us > 0:
                _broadcast_buffers(rs, late, late_launch_us, broadcast_us, waits)
            for r in rs:
                launch = late_launch_us if r.rank == late else launch_us
                for _ in range(LATE_KERNELS // calls):
                    r.kernel("aten::mul", RELU_BF16, LATE_KERNEL_US, launch_us=launch)
                ready[r.rank] = max(r.streams.get(COMPUTE_STREAM, 0.0), r.host_us)
            for r in rs:  # each rank's kernel starts as its launch allows; every one ends comm_us after the last
                _allreduce(r, ready[r.rank], ready[r.rank] + comm_us, group=ranks)
            last = max(r.gpu[-1]["ts"] for r in rs)
            end = last + comm_us
            for r in rs:
                ev = r.gpu[-1]
                waits[r.rank] += last - ev["ts"]
                ev["dur"] = round(end - ev["ts"], 3)
                r.streams[NCCL_STREAM] = end
                r.step_kernels[-1] = (ev["ts"], end)
                r.host_us = max(r.host_us, ready[r.rank])
            ends[c] = end
        for r in rs:
            r.host_us = max(r.host_us, ends[calls - 1])
            r.sync()
            r._mark["dur"] = round(r.host_us - r._mark["ts"], 3)  # type: ignore[attr-defined]
            s_ = min(k[0] for k in r.step_kernels)
            r.gpu.append({"ph": "X", "cat": "gpu_user_annotation", "name": f"ProfilerStep#{n}", "pid": r.device,
                          "tid": COMPUTE_STREAM, "ts": round(s_, 3), "dur": round(max(k[1] for k in r.step_kernels) - s_, 3),
                          "args": {"External id": r._mark["args"]["External id"]}})  # type: ignore[attr-defined]
    return rs, waits


def collectives_only_like_tracelens(fused: dict[str, Any]) -> dict[str, Any]:
    """A fused file (:func:`fuse_like_tracelens`) filtered to its collectives, as TraceLens' NCCL-only view keeps them
    (amd/HPCTrainingExamples ``fused_traces/merged_nccl_only.json.gz``): the NCCL kernels, their ``nccl:*`` GPU ranges
    and the GPU processes' names; nothing of the host, no compute kernel, no copy."""
    gpu_pids = {e["pid"] for e in fused["traceEvents"] if e.get("cat") == "kernel"}
    keep = [e for e in fused["traceEvents"]
            if (e.get("cat") == "kernel" and e["name"].startswith("nccl"))
            or (e.get("cat") == "gpu_user_annotation" and e["name"].startswith("nccl:"))
            or (e.get("ph") == "M" and e["pid"] in gpu_pids)]
    return {"traceEvents": json.loads(json.dumps(keep))}


def write_collectives_only(path: str, edit: Callable[[dict[str, Any]], None] | None = None, backend: str = "nccl",
                           **fused: Any) -> dict[str, Any]:
    """Write at ``path`` :func:`write_late_rank_fused`'s job (its keywords ``fused``) filtered to its collectives
    (:func:`collectives_only_like_tracelens`), after ``edit`` changed the filtered document where given; the fused job
    is written to a directory of its own and removed, so ``path``'s logdir holds the filtered file alone.  Returns the
    fused job's truth (one writer for the tests of the collectives-only reading, h37-late67/h37-nccl67).

    ``backend`` a CPU one (``gloo``, ``mpi``): one rank's own trace of a job whose collectives ran on that backend and
    whose profiler recorded them alone (:func:`cpu_collectives_doc`, its keywords ``fused``: ``rank``, ``world``,
    ``params``, ``steps``), with its truth."""
    if backend != "nccl":
        doc, truth = cpu_collectives_doc(backend, **fused)
        if edit is not None:
            edit(doc)
        write_doc(path, doc)
        return truth
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "merged_all_events.json")
        truth = write_late_rank_fused(full, **fused)
        with open(full) as f:
            only = collectives_only_like_tracelens(json.load(f))
    if edit is not None:
        edit(only)
    with open(path, "w") as f:
        json.dump(only, f)
    return truth


#: The sizes (floats) of the parameters :func:`cpu_collectives_doc` syncs one by one, cycled: a BERT layer's (a
#: 768 x 768 projection, its bias, a 3072 x 768 feed-forward, a LayerNorm's weight) -- each its own gather and scatter.
CPU_PARAM_FLOATS = (589_824, 768, 2_359_296, 768)
#: Gloo's time per float moved (us), over loopback TCP between processes of one node: ~1 GB/s.
CPU_US_PER_FLOAT = 0.004


def cpu_collectives_doc(backend: str = "gloo", rank: int = 0, world: int = 4, params: int = 16, steps: int = 5,
                        threads: int = 2) -> tuple[dict[str, Any], dict[str, Any]]:
    """One rank's ``torch.profiler`` trace of a data-parallel job on a CPU backend (``gloo``, ``mpi``) that syncs each
    parameter's gradient with a ``gather`` to rank 0 and a ``scatter`` back (Princeton COS 568 DistLM's task 2a, whose
    traces hold exactly that: h37-huntk68), as the profiler keeps it when it recorded the collectives alone: c10d's
    ``<backend>:gather`` / ``<backend>:scatter`` annotations on the backend's ``threads`` worker threads (never the
    main one), no op, no step mark, no GPU record, an empty ``deviceProperties``, ``distributedInfo`` naming the
    backend, the profiler's span with ``Op count`` 0.  ``params`` parameters a step, sized by
    :data:`CPU_PARAM_FLOATS`, each collective :data:`CPU_US_PER_FLOAT` a float, the next parameter's after it.
    Truth by construction: the backend, how many collectives of each name, on how many threads, and that no op ran."""
    pid = 1_503_557 + rank
    tids = [pid + 412 - 3 * k for k in range(threads)]
    at, ext, events = T0_US + TRACE_LEAD_US, 8_000, []
    for _ in range(steps):
        at += 180_000.0  # the step's forward and backward, on the main thread, not recorded
        for p in range(params):
            us = 40.0 + CPU_PARAM_FLOATS[p % len(CPU_PARAM_FLOATS)] * CPU_US_PER_FLOAT
            for collective in ("gather", "scatter"):
                ext += 1
                events.append({"ph": "X", "cat": "user_annotation", "name": f"{backend}:{collective}", "pid": pid,
                               "tid": tids[p % threads], "ts": round(at, 3), "dur": round(us, 3),
                               "args": {"External id": ext, "Record function id": 0, "Ev Idx": len(events)}})
                at += us + 25.0
    meta = [{"name": "process_name", "ph": "M", "ts": T0_US, "pid": pid, "tid": 0, "args": {"name": "python3"}},
            {"name": "process_labels", "ph": "M", "ts": T0_US, "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
    meta += [{"name": "thread_name", "ph": "M", "ts": T0_US, "pid": pid, "tid": t, "args": {"name": f"thread {t} (python3)"}}
             for t in (*tids, pid)]
    span = {"ph": "X", "cat": "Trace", "ts": T0_US, "dur": round(at - T0_US, 3), "pid": "Spans",
            "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}
    doc = {"schemaVersion": 1, "deviceProperties": [],
           "distributedInfo": {"backend": backend, "rank": rank, "world_size": world, "pg_count": 1,
                               "pg_config": [{"pg_name": "0", "pg_desc": "default_pg",
                                              "backend_config": f"cpu:{backend},cuda:{backend}", "pg_size": world,
                                              "ranks": list(range(world))}]},
           "traceEvents": events + meta + [span], "traceName": f"./RTE/trace_{rank}.json", "displayTimeUnit": "ms",
           "baseTimeNanoseconds": BASE_NS}
    by_name = {f"{backend}:{c}": steps * params for c in ("gather", "scatter")}
    return doc, {"backend": backend, "collectives": sum(by_name.values()), "by_name": by_name,
                 "threads": min(threads, params), "ops": 0, "window_ms": (at - T0_US) / 1000.0}


#: :func:`write_submission_waits`' waits from each launch call's return to its kernel's start (us), cycled over the
#: step's launches: a driver that submits in batches, after duoan/playground-cuda's RTX 5080 (p5-p90 23-71 us, a
#: longer wait where a batch was flushed late).  Median 32 us; two of ten past the 50 us allowance
#: (``metrics.breakdown.LAUNCH_START_PS``), 57 us of each ten launches.
SUBMIT_WAITS_US = (28.0, 31.0, 35.0, 26.0, 62.0, 30.0, 95.0, 33.0, 41.0, 29.0)
#: the host's own Python between two launches of :func:`write_submission_waits` (each kernel 4 us): the GPU drains
#: before each launch reaches it, as the RTX 5080's eager loop did
SUBMIT_HOST_US = 40.0


def write_submission_waits(path: str, steps: int = 8, kernels: int = 40, latency: bool = True,
                           turn_us: float = 0.0, turn_steps: tuple[int, ...] = (2, 5),
                           tail_us: float = SUBMIT_HOST_US) -> dict[str, Any]:
    """A ``torch.profiler`` window of an eager, host-paced loop: each step launches ``kernels`` 4 us kernels,
    ``SUBMIT_HOST_US`` of the host's Python apart, then ``.item()``.  ``latency``: every kernel starts
    :data:`SUBMIT_WAITS_US` (cycled) after its launch call returns -- a driver's submission latency, paid by every
    launch on the idle GPU; else each starts as its call returns, as a Linux driver's do.  ``turn_us``: in each step
    of ``turn_steps`` one kernel (the middle one) starts ``turn_us`` after its call returns -- another context's turn
    on the GPU, a hold in a few places only.  Truth by construction: whether the waits are a submission latency
    (``latency``), their median (``median_us``), and the held idle per step that no launch latency explains
    (``held_ms``: each turn less the 50 us allowance every launch has, ``LAUNCH_START_PS``).  ``tail_us``: the
    host's Python after the step's last launch, before its ``.item()``; where the sync begins before that launch's
    kernel starts, the host waits in it for the late submission -- the part of the step the latency costs
    (``critical_ms``: per step, the idle from the return's 50 us allowance, or the sync's start where later, to the
    last kernel's start; a kernel delayed by any wait shorter than the host's 40 us between launches costs nothing)."""
    r = Rank(rank=0, pid=4832, device=0)
    launch_us, at = 7.0, {"step": -1}

    def body(rr: Rank) -> None:
        for k in range(kernels):
            ret = rr.host_us + 3.0 + launch_us  # the launch call's return (:meth:`Rank.kernel`)
            wait = SUBMIT_WAITS_US[k % len(SUBMIT_WAITS_US)] if latency else 0.0
            if turn_us and k == kernels // 2 and at["step"] in turn_steps:
                wait = turn_us
            rr.kernel("aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
                      4.0, launch_us=launch_us, not_before=ret + wait if wait else 0.0, grid=(64, 1, 1))
            rr.host_us += SUBMIT_HOST_US if k < kernels - 1 else tail_us
        rr.sync()

    for n in range(steps):
        at["step"] = n
        r.step(n, body)
        r.host_us += 20.0
    write_doc(path, trace_doc(r, 1))
    turns = sum(1 for n in turn_steps if n < steps) if turn_us else 0
    last = SUBMIT_WAITS_US[(kernels - 1) % len(SUBMIT_WAITS_US)] if latency else 0.0
    sync_at = 3.0 + tail_us + 2.0  # the sync call's start after the last launch's return (``Rank.kernel``, ``Rank.sync``)
    return {"steps": steps, "latency": latency, "median_us": statistics.median(SUBMIT_WAITS_US) if latency else 0.0,
            "held_ms": turns * (turn_us - 50.0) / 1000.0 / steps,
            "critical_ms": max(0.0, last - max(50.0, sync_at)) / 1000.0}


#: cuDNN's grouped direct convolution in fp16, as cuDNN 8/9 names it (a ConvNeXt / MobileNet depthwise layer under
#: PyTorch; the template as public nsys summaries print it): CUDA-core work (``devices.direct_convolution_one``).
CUDNN_GROUPED_DIRECT_FP16 = ("void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, false, false, "
                             "int, __half, __half, __half, __half, float, float>(cudnn::cnn::GroupedDirectFpropParams, "
                             "__half const*, __half const*, __half*, float, float, float const*, float const*, "
                             "cudnnActivationStruct)")
#: cuDNN's Tensor Core implicit-GEMM forward convolution in fp16 (a pointwise layer's).
CUDNN_XMMA_FPROP_FP16 = ("sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_"
                         "stage3_warpsize2x2x1_g1_tensor16x8x16_kernel")


def conv2d_args(x: tuple[int, int, int, int], w: tuple[int, int, int, int], groups: int = 1,
                dtype: str = "c10::Half") -> dict[str, Any]:
    """``record_shapes``' args of one ``aten::conv2d(input, weight, bias=None, stride=1, padding=k//2, dilation=1,
    groups)``, as Kineto writes them."""
    k = w[2]
    return {"Input Dims": [list(x), list(w), [], [], [], [], []],
            "Input type": [dtype, dtype, "", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
            "Concrete Inputs": ["", "", "", "[1, 1]", f"[{k // 2}, {k // 2}]", "[1, 1]", str(groups)]}


def write_depthwise_block(path: str, steps: int = 6, batch: int = 32, channels: int = 256, hw: int = 28,
                          dw_kernel: str = CUDNN_GROUPED_DIRECT_FP16, dw_us: float = 180.0,
                          pw_us: float = 120.0, k: int = 3) -> dict[str, Any]:
    """A MobileNet block's forward in fp16 on an A100-SXM4-40GB, ``steps`` marked steps: a ``k x k`` (3x3) depthwise
    ``aten::conv2d`` (``groups == channels``) run by ``dw_kernel`` (cuDNN's grouped direct kernel by default) for
    ``dw_us``, then a 1x1 pointwise ``aten::conv2d`` (``channels`` -> ``channels``) on cuDNN's Tensor Core
    implicit GEMM for ``pw_us``, then ``loss.item()``.  Truth by construction: the FLOPs of each, per step (2 per
    multiply-add over the ``batch x channels x hw x hw`` outputs: ``k * k`` per output for the depthwise layer,
    ``channels`` for the pointwise one); the depthwise FLOPs run on the vector units, the pointwise on the Tensor
    Cores."""
    r = Rank(rank=0, pid=6868, device=0)
    x = (batch, channels, hw, hw)
    dw_args = conv2d_args(x, (channels, 1, k, k), groups=channels)
    pw_args = conv2d_args(x, (channels, channels, 1, 1))

    def body(rank: Rank) -> None:
        rank.kernel("aten::conv2d", dw_kernel, dw_us, args=dw_args)
        rank.kernel("aten::conv2d", CUDNN_XMMA_FPROP_FP16, pw_us, args=pw_args)
        rank.sync()

    for n in range(1, steps + 1):
        r.step(n, body)
    write_doc(path, trace_doc(r, 1, A100_40GB))
    outputs = batch * channels * hw * hw
    return {"depthwise_flops": 2.0 * outputs * k * k, "pointwise_flops": 2.0 * outputs * channels,
            "depthwise_us": dw_us, "pointwise_us": pw_us, "steps": steps,
            "depthwise_bytes": 2.0 * (2 * outputs + channels * k * k)}


#: cuDNN's fused Winograd forward convolution in fp32 on the CUDA cores (an A100 with TF32 off runs it for 3x3 layers).
CUDNN_WINOGRAD_FP32 = "ampere_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"


def write_winograd_conv(path: str, kernel: str = CUDNN_WINOGRAD_FP32, us: float = 1300.0, steps: int = 6,
                        batch: int = 32, channels: int = 256, hw: int = 28,
                        props: dict[str, Any] | None = None) -> dict[str, Any]:
    """One fp32 3x3 ``aten::conv2d`` (``channels`` -> ``channels``, stride 1, same padding) a step on an
    A100-SXM4-40GB (or the device ``props``), run by ``kernel`` (cuDNN's fused Winograd by default) for ``us``, then
    ``loss.item()``.  Truth by construction: the op's direct FLOPs (2 per multiply-add: ``channels x 9`` per output)
    and the kernel's time, so the direct FLOPs' rate -- 22.8 TFLOP/s by default, above the A100's fp32 CUDA-core
    19.5 and within a Winograd F(2x2, 3x3) kernel's 2.25x fewer multiplies of it."""
    r = Rank(rank=0, pid=6969, device=0)
    args = conv2d_args((batch, channels, hw, hw), (channels, channels, 3, 3), dtype="float")

    def body(rank: Rank) -> None:
        rank.kernel("aten::conv2d", kernel, us, args=args)
        rank.sync()

    for n in range(1, steps + 1):
        r.step(n, body)
    write_doc(path, trace_doc(r, 1, props or A100_40GB))
    flops = 2.0 * batch * channels * hw * hw * channels * 9
    return {"flops": flops, "us": us, "bytes": 4.0 * (2 * batch * channels * hw * hw + channels * channels * 9)}
