"""Where the GPU memory goes, on every real trace holding allocator events (issue #29): each GPU's peak allocated and
reserved bytes in the report against the trace's own totals (within 1%), read here independently with ``json``;
PyTorch 1.9's deltas-only events as "above the capture's start"; XPlane captures against the stock Memory Profile.

Real traces: tests/fixtures/wild (PROVENANCE.md): the Hugging Face Qwen forward on an H100, TraceLens's BERT-small
on an MI300X (HIP's Device Type 6), vLLM's graph capture on an MI300X, a cold normalization test on an MI300X; the
PyTorch tutorial's ResNet-50 samples (../shared/profiles/wild-torch, old schema); the JAX H100 set (real-h100-jax).
"""

from __future__ import annotations

import functools
import gzip
import json
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from tests.support.kept_reports import kept_host_report
from tests.support.paths import FIXTURES, SHARED_PROFILES

WILD = FIXTURES / "wild"
H200 = FIXTURES / "h200_memory"  # our own H200 captures with profile_memory=True (TRUTH.json, PROVENANCE.md)
#: every real PyTorch trace we hold, in the fixtures and the shared sets: the test finds which carry [memory] events
TORCH_TRACES = sorted(WILD.glob("*/*.pt.trace.json.gz")) + sorted(H200.glob("*/*.pt.trace.json.gz")) \
    + sorted(SHARED_PROFILES.glob("wild-torch/*/*.json.gz")) + sorted(SHARED_PROFILES.glob("real-h100-torch/*/*.json"))
GPU_TYPES = (1, 6)  # c10 DeviceType: CUDA, HIP


@functools.cache
def _gpu_memory_events(path: Path) -> tuple[dict, ...]:
    """The trace's GPU ``[memory]`` events, read with ``json`` once per test process, by the tests (not at
    collection: see :func:`_kind_by_bytes`).  A trace whose text never names ``"[memory]"`` holds none: that byte
    search skips the JSON parse of the ~450 MB of traces without them; and :func:`_kind_by_bytes` made that search at
    collection, in this process: a trace it found without the name is not decompressed again."""
    if path in _WITHOUT_MEMORY:
        return ()
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        text = f.read()
    if b'"[memory]"' not in text:
        return ()
    doc = json.loads(text)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return tuple(e for e in events if e.get("ph") == "i" and e.get("name") == "[memory]"
                 and e["args"].get("Device Type") in GPU_TYPES and e["args"].get("Device Id", -1) >= 0)


def _memory_events(path: Path) -> list[dict]:
    return list(_gpu_memory_events(path))


def _totals(events: list[dict]) -> dict[int, tuple[int, int]] | None:
    """GPU -> (max Total Allocated, max Total Reserved) as the trace writes them; None for a trace without totals."""
    if not events or "Total Allocated" not in events[0]["args"]:
        return None
    out: dict[int, tuple[int, int]] = {}
    for e in events:
        a = e["args"]
        g = a["Device Id"]
        al, rs = out.get(g, (0, 0))
        out[g] = (max(al, a["Total Allocated"]), max(rs, a["Total Reserved"]))
    return out


def _report(path: Path):
    """The trace's host in its session's report, analysed once per test run and shared with the property walk, which
    analyses every kept session (``tests/support/kept_reports.py``; this module analysed each file again itself)."""
    return kept_host_report(path)


#: a ``[memory]`` event's ``args`` object (Kineto writes ``name`` before ``args``, with no object between them)
_MEMORY_ARGS = re.compile(rb'"name":\s*"\[memory\]"[^{}]*"args":\s*\{([^{}]*)\}')
_GPU_TYPE = re.compile(rb'"Device Type":\s*(?:%s)(?![0-9])' % b"|".join(b"%d" % t for t in GPU_TYPES))
_GPU_ID = re.compile(rb'"Device Id":\s*\d')  # a GPU's ordinal: 0 and up (the host's is -1)


def _kind_by_bytes(path: Path) -> str | None:
    """"totals" or "deltas" as the trace's first GPU ``[memory]`` event has ``Total Allocated`` or not, None for a
    trace without one: what :func:`_totals` of :func:`_memory_events` says, read off the bytes with no JSON parse.
    Why: the parametrizations below are picked at collection, which every pytest-xdist worker runs for every module;
    parsing the ~30 traces with memory events there cost ~9 s of CPU per worker.  The tests parse only their own
    traces, once, and ``test_the_picks_by_bytes_are_the_jsons`` holds the picks to the JSON's.

    The text is searched in windows of :data:`_WINDOW` bytes that overlap by :data:`_OVERLAP` (an event's ``args``
    lie a few hundred bytes after its name: every match lies whole in one window), and the search stops at the first
    GPU event: the ~25 traces with memory events were decompressed to their end for it (~2 s of each worker's
    collection); a trace without one is still read to its end."""
    opener = gzip.open if path.suffix == ".gz" else open
    named, tail = False, b""
    with opener(path, "rb") as f:
        while chunk := f.read(_WINDOW):
            window = tail + chunk
            if b'"[memory]"' not in window:
                tail = window[-_OVERLAP:]
                continue
            named = True
            for m in _MEMORY_ARGS.finditer(window):
                args = m.group(1)
                if _GPU_TYPE.search(args) and _GPU_ID.search(args):
                    return "totals" if b'"Total Allocated"' in args else "deltas"
            tail = window[-_OVERLAP:]
    if not named:
        _WITHOUT_MEMORY.add(path)
    return None


#: :func:`_kind_by_bytes`' window, and how much of the window before it each one holds again
_WINDOW, _OVERLAP = 8 << 20, 64 << 10


#: the traces whose text never names ``"[memory]"`` (found by :func:`_kind_by_bytes`, the same byte search)
_WITHOUT_MEMORY: set[Path] = set()
_KINDS = {p: _kind_by_bytes(p) for p in TORCH_TRACES}
WITH_TOTALS = [p for p in TORCH_TRACES if _KINDS[p] == "totals"]
DELTAS_ONLY = [p for p in TORCH_TRACES if _KINDS[p] == "deltas"]


def test_the_picks_by_bytes_are_the_jsons():
    """The traces picked at collection from their bytes are those whose GPU ``[memory]`` events, parsed with
    ``json``, have totals (``_totals``) and those that have deltas only."""
    with_memory = [p for p in TORCH_TRACES if _memory_events(p)]
    assert WITH_TOTALS == [p for p in with_memory if _totals(_memory_events(p))]
    assert DELTAS_ONLY == [p for p in with_memory if not _totals(_memory_events(p))]


def test_the_real_sets_hold_both_kinds_of_memory_events():
    """The checks below run on something: traces with totals (a CUDA and a HIP one among them) and deltas only."""
    names = {p.parent.name for p in WITH_TOTALS}
    assert {"hf_qwen_h100", "amd_mi300x", "vllm_mi300x_capture", "cold_mi300x_norm", "torch_mem_activations",
            "torch_mem_fragmented"} <= names
    assert "torchscript_fallback_a100_gnn" in {p.parent.name for p in DELTAS_ONLY}  # PyTorch 1.8-1.10: deltas only
    if (SHARED_PROFILES / "wild-torch").is_dir():  # the PyTorch tutorial's four V100 traces (PyTorch 1.9)
        assert len([p for p in DELTAS_ONLY if "wild-torch" in p.parts]) == 4


@pytest.mark.parametrize("path", WITH_TOTALS, ids=lambda p: p.parent.name)
def test_peaks_are_the_traces_own_totals(path: Path):
    """Every GPU with [memory] events reports its peak allocated and reserved within 1% of the trace's own
    ``Total Allocated`` / ``Total Reserved`` (the allocator's statistics), as absolute numbers."""
    truth = _totals(_memory_events(path))
    rep = _report(path)
    got = {g.gpu: g.memory for g in rep.gpus if g.memory}
    # the allocator's device ids are the framework's ordinals; ROCm's tracer numbers the GPU after the CPU agents
    # (GPU 2 for HIP device 0 on the MI300X traces): one GPU each side, paired in order
    assert len(got) == len(truth) and (set(got) == set(truth) or path.parent.name.endswith(("mi300x", "mi300x_norm",
                                                                                             "mi300x_capture")))
    for (_, (alloc, reserved)), mem in zip(sorted(truth.items()), (got[k] for k in sorted(got))):
        assert mem["baseline"] == "absolute"
        assert mem["peak_allocated_bytes"] == pytest.approx(alloc, rel=0.01)
        assert mem["peak_reserved_bytes"] == pytest.approx(reserved, rel=0.01)
        # the chart's series holds the peak itself, and every point is a real state (never above the peak)
        assert max(mem["timeline"]["allocated"]) == mem["peak_allocated_bytes"]
        assert max(v for v in mem["timeline"]["reserved"] if v is not None) == mem["peak_reserved_bytes"]
        if _lists_device_memory(path):  # the trace's deviceProperties give each GPU's totalGlobalMem
            assert mem["capacity_bytes"] and mem["capacity_source"] == "device memory"
        else:  # a trace listing no device (the CUDA side unrecorded): capacity unknown, never guessed
            assert not mem["capacity_bytes"], mem.get("capacity_source")


@functools.cache
def _lists_device_memory(path: Path) -> bool:
    """Whether the trace's ``deviceProperties`` give some GPU's ``totalGlobalMem`` (read with ``json``, not our reader):
    only then can a report know the GPU's capacity from the file (wild ``cuda_unrecorded_cifar_cnn`` lists none)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        doc = json.load(f)
    props = doc.get("deviceProperties") if isinstance(doc, dict) else None
    return any(isinstance(d, dict) and d.get("totalGlobalMem") for d in props or ())


@pytest.mark.parametrize("path", DELTAS_ONLY, ids=lambda p: f"{p.parent.name}/{p.name[:20]}")
def test_deltas_only_are_bytes_above_the_capture_start(path: Path):
    """PyTorch 1.9 wrote ``Bytes`` only: the report's peak is the running sum's maximum over time, labelled as above
    the capture's start, with no reserved bytes and no headroom judged from it."""
    events = sorted(_memory_events(path), key=lambda e: e["ts"])
    running, peak = 0, 0
    for e in events:
        running += e["args"]["Bytes"]
        peak = max(peak, running)
    rep = _report(path)
    (mem,) = [g.memory for g in rep.gpus if g.memory]
    assert mem["baseline"] == "capture_start" and mem["peak_allocated_bytes"] == peak
    assert mem["peak_reserved_bytes"] is None and "above the capture's start" in mem["note"]
    assert not [f for f in rep.findings if f.rule in ("batch_size_headroom", "memory_near_capacity")]


def test_hip_events_count_as_the_gpus():
    """ROCm writes Device Type 6 (HIP): the MI300X's memory is a GPU's, not dropped as the host's."""
    rep = _report(next((WILD / "amd_mi300x").glob("*.gz")))
    (gpu,) = rep.gpus
    assert gpu.memory["peak_allocated_bytes"] == 146394112 and gpu.memory["peak_reserved_bytes"] == 224395264


def test_what_holds_the_peak_is_named_after_real_ops():
    """The cold MI300X normalization test runs forward and backward: its peak's live allocations are booked to the
    backward's gradients and the forward's activations by the autograd scopes around them, and the ops holding the
    most are ATen ops of its layers (never the allocation-only ``aten::empty``)."""
    rep = _report(next((WILD / "cold_mi300x_norm").glob("*.gz")))
    mem = rep.gpus[0].memory
    assert sum(mem["breakdown"].values()) == mem["peak_allocated_bytes"]
    names = [t[0] for t in mem["top"]]
    assert names and all(n.startswith("aten::") and n not in ("aten::empty", "aten::empty_strided") for n in names)
    qwen = _report(next((WILD / "hf_qwen_h100").glob("*.gz")))
    m = qwen.gpus[0].memory
    assert m["start_bytes"] == 984742400  # the model's weights, allocated before the profiled step
    assert m["breakdown"]["held"] >= m["start_bytes"]


def test_an_inference_forward_gets_no_checkpointing_advice_and_a_serving_engine_no_alarm():
    """Checkpointing is a training fix: the Qwen forward (inference) has headroom, said without communication words
    (one GPU, no collective); vLLM's start-up holds 94% of the MI300X by design: info, in the engine's words."""
    qwen = _report(next((WILD / "hf_qwen_h100").glob("*.gz")))
    rules = {f.rule: f for f in qwen.findings}
    assert "activation_memory" not in rules
    head = rules["batch_size_headroom"]
    assert head.severity == "info" and "communication" not in head.summary and "collective" not in head.summary
    assert head.metric.detail["growth_factor"] > 10  # 2.6 GiB of an 80 GB H100
    vllm = _report(next((WILD / "vllm_mi300x_capture").glob("*.gz")))
    (near,) = [f for f in vllm.findings if f.rule == "memory_near_capacity"]
    assert near.severity == "info" and "KV cache" in near.summary


# --------------------------------------------------------------------------- XPlane against the stock Memory Profile

JAX_SET = SHARED_PROFILES / "real-h100-jax"
XPLANES = sorted(JAX_SET.glob("*/plugins/profile/*/*.xplane.pb")) + sorted(H200.glob("*/plugins/profile/*/*.xplane.pb"))


def _stock_memory(path: str) -> dict:
    from tests.support.stock_tool import stock_tools

    return stock_tools([path], ("memory_profile",))["memory_profile"]


@pytest.mark.skipif(not XPLANES, reason="real H100 JAX captures not found")
def test_xplane_peaks_are_the_stock_memory_profiles():
    """The stock Memory Profile's peak in the profiling window (``peakStats.peakBytesInUse``: heap + stack) and its
    memory capacity, per GPU allocator, are ours within 1% on every real JAX capture, the H100 set's and our H200 one
    (the converter runs in a worker process, on temp copies)."""
    pytest.importorskip("xprof.convert.raw_to_tool_data")
    with ProcessPoolExecutor(max_workers=2) as pool:
        stock = dict(zip(XPLANES, pool.map(_stock_memory, [str(p) for p in XPLANES])))
    checked = 0
    for path, prof in stock.items():
        rep = _report(path)
        ours = {g.gpu: g.memory for g in rep.gpus if g.memory}
        for name, alloc in prof.get("memoryProfilePerAllocator", {}).items():
            if not name.startswith("GPU_"):
                continue
            gpu = int(name.split("_")[1])
            summary = alloc["profileSummary"]
            assert ours[gpu]["peak_allocated_bytes"] == pytest.approx(int(summary["peakStats"]["peakBytesInUse"]),
                                                                     rel=0.01), path
            assert ours[gpu]["capacity_bytes"] == pytest.approx(int(summary["memoryCapacity"]), rel=0.01), path
            checked += 1
    assert checked == len(XPLANES)


def test_a_gpu_known_only_by_its_memory_gets_its_row_and_no_time():
    """The A40 capture whose GPU tracer lost every kernel record (jacobcd52/dictionary_learning, MIT): its header
    describes the GPU (``deviceProperties``: "NVIDIA A40", totalGlobalMem 47,725,936,640 bytes, 84 SMs) and its
    allocator's events name device 0.  Main: no GPU row, the peak without a capacity.  Here: GPU 0's row carries the
    header's name and size and the allocator's peak, and no GPU time (no step time, activity, kernels); the lost
    records stay the leading finding, and no kernel check runs on a GPU whose work was not recorded."""
    path = next((WILD / "lost_kernels_synced_a40").glob("*.gz"))
    with gzip.open(path, "rb") as f:
        (props,) = json.loads(f.read())["deviceProperties"]
    truth = _totals(_memory_events(path))
    rep = _report(path)
    (gpu,) = rep.gpus
    assert (gpu.gpu, gpu.name) == (props["id"], props["name"])
    assert gpu.memory["capacity_bytes"] == props["totalGlobalMem"] and gpu.memory["capacity_source"] == "device memory"
    assert gpu.memory["peak_allocated_bytes"] == pytest.approx(truth[0][0], rel=0.01)
    assert gpu.step_ms is None and gpu.busy_share is None and gpu.kernel_count == 0
    assert rep.findings[0].rule == "capture_quality"
    kernel_rules = {"launch_bound", "host_sync", "small_grid", "tensor_core_unused", "mfu_low", "mixed_precision_off",
                    "unfused_attention", "gpu_imbalance", "step_gaps", "input_bound"}
    assert not kernel_rules & {f.rule for f in rep.findings}
    # the peak against the GPU's own size: 95% of it (the allocator's 45.4 GB of 47.7 GB)
    (near,) = [f for f in rep.findings if f.rule == "memory_near_capacity"]
    assert truth[0][1] / props["totalGlobalMem"] > 0.9
    # one analysis call, no backward, of a job of no known kind: its memory is not said to be kept for a backward
    assert "backward" not in near.summary and "optimizer" not in near.summary, near.summary
