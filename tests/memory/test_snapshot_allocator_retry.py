"""A snapshot whose caching allocator gave its cache back inside an allocation ran at the GPU's capacity (issue #37
class 5, h37-wild53).

Real snapshots from YaoShuai-hub/lcpu-llm-from-scratch-assignment2-systems @d260b77 (MIT, CS336 template; kept in
tests/fixtures/wild/snapshot_retry_full_gpu_sgd and snapshot_forward_autograd_2p7b): ``profile_memory.py --mode
memory`` -- CS336's 2.7B LM (d_model 2560, 32 layers, fp32: 12.8 GiB of weights), batch 4, context 128.  The
training step (zero_grad, forward, ``logits.sum().backward()``, plain SGD) needs weights + gradients, 25.5 GiB: in
the backward, a gradient's ``cudaMalloc`` failed with 30.7 GiB reserved, so the allocator gave back every cached
segment (266 of 20 MiB, 5.2 GiB; the ``segment_free`` entries' stacks run through ``DeviceCachingAllocator::malloc``
from ``AccumulateGrad``) -- 65.7 ms of cudaFree -- and asked again.  A snapshot records no GPU size, so main read
the capacity as unknown and said nothing: a step at its GPU's limit read healthy.  The retry is where the driver said
no: what the allocator then held plus the segment it asked for again is more than it could reach -- an upper bound on
its capacity (30.8 GiB here), so the share in use read against it is never overstated.

Controls: the same program's forward-only snapshot (autograd on, no retry: capacity stays unknown, the kept graph is
the finding), and AndyUB/au25-cse599o-hw1 @61746b1's ``memory_snapshot_0`` (UW CSE 599O; a 36-layer LM under
``torch.no_grad()``, recorded after 5 warm-ups: inference, no memory finding).  Truth is read off the files."""

from __future__ import annotations

import gzip
import os
import pickle

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"
RETRY = WILD / "snapshot_retry_full_gpu_sgd" / "memory_snapshot_fwd_bwd_ctx128.pickle.gz"
FORWARD = WILD / "snapshot_forward_autograd_2p7b" / "memory_snapshot_fwd_only_ctx128.pickle.gz"
AFTER_WARMUP = WILD / "snapshot_inference_after_warmup" / "memory_snapshot_0.pickle.gz"
NCA3D = WILD / "snapshot_nca3d_inference" / "my_snapshot.pickle"
GIB = 2 ** 30


def _report(path):
    rep = analyze_host(HostFile(path.name.split(".")[0], str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _gpu(rep) -> dict:
    return rep.gpus[0].memory


def _first_retry(path) -> tuple[int, int, int]:
    """(bytes reserved just before the first segment given back from inside ``malloc``, bytes given back in that run,
    the segment asked for right after it), from the file alone: the dump's segments less the history's segment
    changes from that point on."""
    with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as f:
        snap = pickle.load(f)
    trace = snap["device_traces"][0]
    reserved = sum(s["total_size"] for s in snap["segments"])
    seg = [(i, e) for i, e in enumerate(trace) if e["action"] in ("segment_alloc", "segment_free")]
    inside = [i for i, e in seg if e["action"] == "segment_free"
              and any("::malloc(" in f["name"] for f in e["frames"])]
    if not inside:
        return 0, 0, 0
    first = inside[0]
    for i, e in seg:
        if i >= first:
            reserved -= e["size"] if e["action"] == "segment_alloc" else -e["size"]
    run = [i for k, i in enumerate(inside) if i - first == k]
    after = trace[run[-1] + 1]
    return reserved, sum(trace[i]["size"] for i in run), after["size"] if after["action"] == "segment_alloc" else 0


def test_control_truth_of_the_files():
    reserved, released, asked = _first_retry(RETRY)
    assert round(reserved / GIB, 2) == 30.73 and round(released / GIB, 2) == 5.20 and asked == 100 * 2 ** 20
    assert _first_retry(FORWARD) == (0, 0, 0)
    reserved, released, asked = _first_retry(NCA3D)  # a 4.85 GiB request refused at 18.6 GiB: a loose bound
    assert round(reserved / GIB, 1) == 18.6 and round(asked / GIB, 2) == 4.85


def test_a_retry_marks_the_capacity_and_the_step_reads_at_it():
    r = _report(RETRY)
    g = _gpu(r)
    reserved, _, asked = _first_retry(RETRY)
    assert g["capacity_bytes"] == reserved + asked and g["capacity_source"] == "reserved when the driver refused more"
    near = [f for f in r.findings if f.rule == "memory_near_capacity"]
    assert near and near[0].severity == "critical" and r.findings[0].rule == "memory_near_capacity"
    text = near[0].summary
    assert "of at most 30.8 GiB, the most it could reserve" in text and "refused it 100 MiB more" in text
    assert "5.20 GiB of cache" in text and "266 segments" in text
    assert "its 30.8 GiB" not in text  # not the GPU's size: the most this process could reserve


def test_a_request_refused_far_below_the_peak_bounds_the_capacity_from_above():
    """snapshot_nca3d_inference: a 4.85 GiB request refused at 18.6 GiB reserved, the peak later 20.7 GiB reserved:
    the bound (23.5 GiB) stands above the peak, 88% of it, under memory.near_capacity.warning: no finding."""
    r = _report(NCA3D)
    g = _gpu(r)
    reserved, _, asked = _first_retry(NCA3D)
    assert g["capacity_bytes"] == reserved + asked >= g["peak_reserved_bytes"]
    assert "memory_near_capacity" not in {f.rule for f in r.findings}
    assert not [f for f in r.findings if f.severity in ("warning", "critical")]
    # a bound from above claims no room: no headroom, no larger batch (the GPU was full when the driver refused)
    assert r.capture.get("memory_headroom") is None and "batch_size_headroom" not in {f.rule for f in r.findings}


def test_control_forward_only_without_retry_keeps_capacity_unknown():
    r = _report(FORWARD)
    g = _gpu(r)
    assert g["capacity_bytes"] is None and not g["capacity_source"]
    assert r.findings[0].rule == "activation_memory" and r.findings[0].severity == "warning"
    assert "memory_near_capacity" not in {f.rule for f in r.findings}


def test_control_inference_after_warmup_reads_healthy():
    r = _report(AFTER_WARMUP)
    g = _gpu(r)
    assert g["capacity_bytes"] is None and r.job["kind"] == "inference"
    assert not [f for f in r.findings if f.severity in ("warning", "critical")]
    assert round(g["peak_allocated_bytes"] / GIB, 2) == 4.51


# -- by construction (``synthetic.memsnapshot.retry_training``: the generator's allocator gives its cache back from
# inside the allocation that needs room, with that allocation's stack, as PyTorch's does) --

def _scenario(tmp_path, name: str, doc: dict):
    path = ms.write(str(tmp_path / f"{name}.pickle"), doc)
    rep = analyze_host(HostFile(name, path, os.path.getsize(path), 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def test_generated_retry_bounds_the_capacity_by_its_request(tmp_path):
    sc = ms.retry_training()
    assert len(sc.truth["retries"]) == 1
    r = _scenario(tmp_path, "retry", sc.doc)
    g = _gpu(r)
    assert g["capacity_bytes"] == sc.truth["bound"] and g["peak_reserved_bytes"] == sc.truth["peak_reserved"]
    near = [f for f in r.findings if f.rule == "memory_near_capacity"]
    assert near and near[0].severity == "critical"  # 24.8 of at most 25.1 GiB
    assert "refused it 256 MiB more" in near[0].summary and "120 segments" in near[0].summary


def test_control_generated_twins_read_no_retry(tmp_path):
    """The program's own ``empty_cache()`` gives segments back with no allocation's stack; a roomier GPU never
    retries; a history recorded without stacks (``context=None``) cannot tell a retry from ``empty_cache``: each keeps
    the capacity unknown."""
    emptied = ms.retry_training(empty_cache=True)
    roomy = ms.retry_training(capacity=40 * GIB)
    assert not emptied.truth["retries"] and not roomy.truth["retries"]
    stackless = ms.as_recorded(ms.retry_training().doc, context=None)
    for name, doc in (("emptied", emptied.doc), ("roomy", roomy.doc), ("stackless", stackless)):
        r = _scenario(tmp_path, name, doc)
        assert _gpu(r)["capacity_bytes"] is None, name
        assert "memory_near_capacity" not in {f.rule for f in r.findings}, name
