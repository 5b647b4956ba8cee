"""The kind of work a capture holds: a training step, an inference forward pass, a serving engine step, no GPU work.

Decided from positive evidence, most specific first: a serving engine's or generation loop's names
(``frameworks.engines``); the framework's training-only events (autograd's backward nodes, an optimizer's update,
TF's gradient ops) or a backward pass in the compiled program (XLA's ``transpose(jvp(...))``); a recorded grad mode
(``inference_mode``).  A PyTorch capture with ops but neither backward nor optimizer is an inference forward pass;
an XLA program without any backward is one too.  Nothing either way is ``unknown``: the fixes then stay the
training loop's, as the guide writes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import and_list
from tb_gpu_advisor.frameworks import Framework, engines
from tb_gpu_advisor.model.trace import MEMORY_PHASES, Trace

#: Kinds of work, as reported (``job.kind``).
KINDS = ("training", "inference", "serving", "no_gpu", "unknown")
#: Distinct names looked at per table: the evidence is in a capture's first names, and a hostile file may hold millions.
_MAX_NAMES = 200_000


@dataclass(frozen=True)
class Kind:
    kind: str  # one of KINDS
    confidence: str  # "high" | "medium" | "low"
    evidence: str  # in words, with the name that showed it
    engine: str | None = None  # frameworks.engines id
    engine_name: str | None = None
    #: no GPU work and no GPU runtime call at all: the framework's ops ran on the CPU (a model never moved to a GPU)
    cpu_only: bool = False
    #: no GPU work, but work on accelerators no stage reads (``Trace.unread_devices``: TPUs, MTIA)
    unread_devices: tuple[str, ...] = ()
    #: no GPU record, but the host shows GPU use ("260 kernel launches", "22 allocator events on GPU 0"): the GPU's
    #: side of the capture was lost or not recorded, its work did not run on the CPU (kind ``unknown``, not ``no_gpu``)
    lost_gpu: str = ""


def work_kind(trace: Trace, fw: Framework) -> Kind:
    """The kind of work of ``trace`` (written by ``fw``)."""
    kernels = [n for d in trace.devices if len(d) for n in d.names[:_MAX_NAMES]]
    if trace.snapshot is not None and not kernels:
        return _snapshot_kind(trace)
    if not any(len(d) for d in trace.devices):
        if trace.unread_devices:
            return Kind("no_gpu", "high", f"the work ran on {and_list(trace.unread_devices)}, not on a GPU: an accelerator "
                                          "the Advisor does not analyse", unread_devices=trace.unread_devices)
        names = trace.h.names[:_MAX_NAMES] if len(trace.h) else []
        launched = int(trace.h.name_mask(devices.is_launch_call).sum()) if names else 0
        if launched:
            # GPU work whose records are gone: of a kind nothing says (not "no GPU work", which the host disproves)
            return Kind("unknown", "low", f"the host launched {launched:,} kernels, but the capture holds no GPU record "
                                          "of them: the GPU's side of the capture was lost",
                        lost_gpu=f"the host launched {launched:,} kernels")
        used = {g: len(m.t) for g, m in trace.memory.items() if len(m.t)}
        if used:  # the allocator handed out GPU memory: the work was on the GPU, its activity not recorded
            where = ", ".join(f"GPU {g}" for g in sorted(used))
            return Kind("unknown", "low", f"the GPU's allocator recorded {sum(used.values()):,} events on {where}, but "
                                          "the capture holds no kernel or GPU runtime record: the GPU's activity was "
                                          "not recorded", lost_gpu=f"the allocator recorded memory on {where}")
        if names and not any(devices.is_runtime_call(n) for n in names):
            return Kind("no_gpu", "high", "no kernel, copy or collective ran on any GPU in the capture, and the host "
                                          "made no GPU runtime call: the work ran on the CPU", cpu_only=True)
        return Kind("no_gpu", "high", "no kernel, copy or collective ran on any GPU in the capture")
    host = list(trace.h.names[:_MAX_NAMES]) if len(trace.h) else []
    found = engines.find(host, kernels)
    if found is not None:
        e, hit = found
        what = "serving engine" if e.kind == "serving" else "generation loop"
        return Kind(e.kind, "high", f"the {what} {e.name}: `{_short(hit)}` in the trace", e.id, e.name)
    used = _used_names(trace)
    train = next((n for n in used if fw.training_event(n)), None)
    if train is not None:
        return Kind("training", "high", f"work only training does (a backward pass, an optimizer step, a data-parallel "
                                        f"training wrapper): `{_short(train)}`")
    grads = trace.producer.get("autodiff_modules")
    if grads:
        return Kind("training", "high", f"the compiled program {grads} holds a backward pass (transpose(jvp(...)) "
                                        "instructions in its HLO)")
    infer = next((n for n in used if fw.inference_event(n)), None)
    if infer is not None:
        return Kind("inference", "high", f"the framework's inference entry point: `{_short(infer)}`")
    mode = trace.producer.get("grad_mode", "")
    if mode in ("inference_mode", "no_grad"):
        return Kind("inference", "high", f"the trace records grad mode `{mode}`")
    if fw.id == "pytorch" and any(n.startswith("aten::") for n in used):
        return Kind("inference", "medium", "ATen ops ran but no backward pass (autograd's `*Backward` nodes) and no "
                                           "optimizer step: a forward pass")
    if trace.flop_ops is not None and trace.flop_ops.source == "hlo" and "autodiff_modules" not in trace.producer:
        return Kind("inference", "low", "the compiled programs' HLO holds no backward pass (no transpose(jvp(...)))")
    if any(devices.is_launch_call(n) or devices.is_graph_launch(n) for n in host):
        return Kind("unknown", "low", "GPU work, but no backward pass, optimizer step or serving engine is named")
    return Kind("unknown", "low", "no host event says what the GPU work was for")


def _snapshot_kind(trace: Trace) -> Kind:
    """A memory snapshot records allocations, not GPU work: its allocations' stacks show a training step when
    autograd's backward pass or an optimizer allocated."""
    seen = {MEMORY_PHASES[p] for m in trace.memory.values() for p in np.unique(m.phase) if 0 <= p < len(MEMORY_PHASES)}
    train = [p for p in ("backward", "optimizer") if p in seen]
    if train:
        return Kind("training", "medium", f"a memory snapshot whose allocations' stacks hold the {' and the '.join(train)} "
                                          f"step{'s' if len(train) > 1 else ''}")
    return Kind("unknown", "low", "a memory snapshot records allocations, not the GPU's work")


def _used_names(trace: Trace) -> list[str]:
    """The distinct host event and Python span names (a name table may hold names no event uses)."""
    names = trace.h.names
    if len(names) > _MAX_NAMES:
        names = names[:_MAX_NAMES]
    return list(names)


def _short(name: str, n: int = 80) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"
