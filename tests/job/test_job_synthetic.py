"""The job stage on generated PyTorch traces whose truth is known by construction (``synthetic/torchtrace.py``):
a vLLM-like serving worker, a cold first forward pass, an eager autocast forward pass."""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.runtime.pipeline import analyze_session


@lru_cache(maxsize=None)
def _report(tmp: str, name: str, steps: int) -> dict:
    paths = tt.write_run(tmp, name, steps=steps, run=f"{name}_{steps}")
    hosts = [SimpleNamespace(host=f"h{i}", path=p, format="kineto", size=0) for i, p in enumerate(paths)]
    return analyze_session(f"{name}_{steps}", "s", hosts).to_dict()


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("jobs"))


def test_serving_worker_steps_are_its_engine_steps_and_its_custom_all_reduce_is_communication(tmp):
    rep = _report(tmp, "serving_decode", 10)
    host = rep["hosts"][0]
    job = host["job"]
    assert (job["kind"], job["engine"], job["step_source"]) == ("serving", "vLLM", "engine_steps")
    assert host["steps"]["found"] == 10 and host["steps"]["count"] == 8
    (ar,) = [r for r in host["communication"]["rows"] if r[0] == "AllReduce"]
    extra = tt.SCENARIOS["serving_decode"].extra
    assert ar[1] == 2 * tt.SERVE_LAYERS and ar[2] == pytest.approx(extra["allreduce_ms"], rel=0.01)
    assert rep["findings"][0]["rule"] in tt.SCENARIOS["serving_decode"].expect_top
    text = str([[a["text"], a["snippet"]] for f in rep["findings"] for a in f["actions"]])
    assert "vllm serve" in text and "loss" not in text and "DataLoader" not in text


def test_one_cold_forward_pass_leads_with_its_start_up_and_no_launch_bound(tmp):
    rep = _report(tmp, "cold_forward", 1)
    host = rep["hosts"][0]
    assert host["job"]["phase"] == "warm-up" and host["job"]["kind"] == "inference"
    top = rep["findings"][0]
    assert top["rule"] == "cold_start" and top["severity"] == "critical"
    startup = host["breakdown_ms"]["startup"]
    assert startup == pytest.approx(sum(tt.COLD_LAUNCH_US) / 1000, rel=0.05)  # the GPU idles through them all
    assert not [f for f in rep["findings"] if f["rule"] == "launch_bound" and f["severity"] != "info"]


def test_cold_steps_are_left_out_where_steady_ones_remain(tmp):
    rep = _report(tmp, "cold_forward", 3)
    steps = rep["hosts"][0]["steps"]
    assert steps["found"] == 3 and steps["count"] == 2 and steps["dropped"][0]["reason"].startswith("warm-up: holds")
    assert rep["hosts"][0]["breakdown_ms"]["startup"] == 0
    assert rep["findings"][0]["rule"] == "cold_start"  # still said first: the window was mostly start-up


def test_start_up_before_the_steps_is_still_said_first(tmp_path):
    """A process's start-up ahead of its few steps (DLProf's LeNet capture: `cudaMalloc` creates the context for 2.08 s
    of a 2.47 s window, then one forward pass) is a cold start even though no step holds it and none was dropped:
    here a 2 s `cudaMalloc` before three generated Nsight steps -- main said nothing of it."""
    import sqlite3

    from synthetic.nsysexport import NsysJob, write

    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(steps=3))
    con = sqlite3.connect(p)
    first, tid = con.execute("SELECT MIN(start), globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    con.execute("INSERT INTO StringIds (id, value) VALUES (99, 'cudaMalloc_v3020')")
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, 9999, 99, 0, NULL)",
                (first - 2_000_001_000, first - 1000, tid))
    con.commit()
    con.close()
    hosts = [SimpleNamespace(host="job", path=str(p), format="nsys", size=0)]
    rep = analyze_session("cold_nsys", "s", hosts).to_dict()
    assert rep["hosts"][0]["job"]["phase"] == "warm-up" and rep["hosts"][0]["steps"]["dropped"] == []
    top = rep["findings"][0]
    assert top["rule"] == "cold_start" and "`cudaMalloc`, 2.00 s" in top["summary"] + top.get("detail", "")


def test_autocast_gemm_time_is_the_gemm_kernels_and_the_casts_are_named_apart(tmp):
    """Each aten::linear launches a cast (90 us), its GEMM (60 us) and a bias add (30 us): GEMM time and rate are the
    GEMM kernel's alone, the rest is reported as what it is."""
    rep = _report(tmp, "autocast_forward", 10)
    host = rep["hosts"][0]
    extra = tt.SCENARIOS["autocast_forward"].extra
    mfu = next(c for c in host["headline"] if c["id"] == "mfu")
    (row,) = host["roofline"]["rows"]
    cols = dict(zip(host["roofline"]["columns"], row))
    assert cols["ms/step"] == pytest.approx(extra["gemm_ms"], rel=0.02)
    m, k, n = tt.AUTOCAST_SHAPE
    flops = 2.0 * m * k * n
    assert cols["TFLOP/s"] == pytest.approx(flops / (tt.AUTOCAST_GEMM_US * 1e-6) / 1e12, rel=0.02)
    assert cols["precision"] == "bf16"
    assert mfu["detail"]["gemm_tflops_per_s"] == pytest.approx(cols["TFLOP/s"], rel=0.02)
    assert mfu["detail"]["non_gemm_ms_per_step"] == pytest.approx(extra["other_ms"], rel=0.02)  # casts + bias adds
    assert host["job"]["kind"] == "inference"


def test_a_gemm_faster_than_the_gpu_s_peak_is_left_out_not_believed(tmp, monkeypatch):
    """Physics: a GEMM shape whose FLOPs over its kernels' time beat the dense peak has kernels missing from its time;
    its rate is not shown, and the MFU card says why."""
    monkeypatch.setattr(tt, "AUTOCAST_SHAPE", (2048, 4096, 4096))  # 68.7 GFLOP in 60 us: 1,145 TFLOP/s on an H100
    _report.cache_clear()
    rep = _report(tmp, "autocast_forward", 4)
    host = rep["hosts"][0]
    assert host["roofline"] is None
    mfu = next(c for c in host["headline"] if c["id"] == "mfu")
    assert "above the GPU's peak" in str(mfu["detail"]) + str(mfu.get("display"))
    _report.cache_clear()


def test_nested_compile_spans_count_the_time_they_cover(tmp):
    """dynamo's compile spans nest (``_compile.compile_inner`` > ``compile_fx_inner`` > ``async_compile``): their
    time is the 600 ms they cover, not the 1150 ms their durations sum to (a real first call read 3.97 s of compiling
    in a 1.7 s capture)."""
    rep = _report(tmp, "compile_first_call", 3)
    job = rep["hosts"][0]["job"]
    assert job["phase"] == "warm-up"
    (part,) = [p for p in job["phase_evidence"].split("; ") if "compilation" in p]
    assert part.startswith("a cold start: 3 compilation spans") and part.endswith(", 600.0 ms)"), part
    assert job["one_time_ms"] == pytest.approx(tt.COMPILE_NEST_MS[0][1], rel=0.01)


def test_a_fusion_compiler_s_first_call_is_compilation(tmp):
    """nvFuser's compile ranges (a new kernel runtime, each kernel's compile, NVRTC's compile inside) are a one-time
    cost like torch.compile's: the capture of its first call is a cold start, the 500 ms its ranges cover."""
    rep = _report(tmp, "fuser_first_call", 3)
    job = rep["hosts"][0]["job"]
    assert job["phase"] == "warm-up"
    (part,) = [p for p in job["phase_evidence"].split("; ") if "compilation" in p]
    assert "KernelExecutor::compile" in part and part.endswith(", 500.0 ms)"), part
    assert job["one_time_ms"] == pytest.approx(tt.NVFUSER_NEST_MS[0][1], rel=0.01)
    assert rep["findings"][0]["rule"] == "cold_start"


def test_launches_with_no_gpu_record_are_a_lost_capture_not_a_job_without_gpu(tmp):
    """A trace whose host launched kernels but whose GPU records are gone (a real one: the profiler stopped before
    they were flushed) lost them: the report says how many launches lost their records, never "was the GPU
    visible?" -- a launch always runs a kernel.  The file itself is whole, so no damage (a report, not an input
    error).  Built from a healthy trace with its device-side events removed."""
    import glob
    import json
    import os

    (path,) = tt.write_run(tmp, "healthy_bf16", steps=6, run="lost_records")
    with open(path) as f:
        doc = json.load(f)
    gpu_cats = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in gpu_cats]
    launches = sum(1 for e in doc["traceEvents"] if e.get("name") == "cudaLaunchKernel")
    assert launches > 0
    with open(path, "w") as f:
        json.dump(doc, f)
    hosts = [SimpleNamespace(host="h0", path=p, format="kineto", size=0) for p in glob.glob(os.path.join(tmp, "lost_records", "*"))]
    rep = analyze_session("lost_records", "s", hosts).to_dict()
    (host,) = rep["hosts"]
    assert not host["damage"] and f"launched {launches:,} kernels" in host["job"]["kind_evidence"]
    assert [f["title"] for f in rep["findings"]] == ["The capture lost its GPU records"]
    assert f"launched {launches:,} kernels" in rep["findings"][0]["summary"]
    assert "visible" not in json.dumps(rep["findings"])


def test_cast_advice_keeps_to_the_16_bit_dtype_the_gpu_runs(tmp):
    """The autocast forward pass's casts (``autocast_forward``), on an H100 and again with its ``deviceProperties``
    saying V100: the H100 is told to cast the model to bfloat16 once, the V100 -- no bf16 Tensor Cores -- to
    float16 (a real TF V100 capture was told ``mixed_bfloat16``)."""
    import json

    (path,) = tt.write_run(tmp, "autocast_forward", steps=6, run="casts_v100")
    with open(path) as f:
        doc = json.load(f)
    texts = {}
    for gpu, (major, minor) in (("NVIDIA H100 80GB HBM3", (9, 0)), ("Tesla V100-SXM2-32GB", (7, 0))):
        for p in doc["deviceProperties"]:
            p.update(name=gpu, computeMajor=major, computeMinor=minor)
        with open(path, "w") as f:
            json.dump(doc, f)
        rep = analyze_session("casts_v100", "s", [SimpleNamespace(host="h0", path=path, format="kineto", size=0)])
        (f,) = [f for f in rep.to_dict()["findings"] if f["rule"] == "dtype_casts"]
        texts[major] = " ".join(f"{a['text']} {a['snippet'] or ''}" for a in f["actions"])
    assert "bfloat16" in texts[9] and "float16" in texts[7] and "bfloat16" not in texts[7], texts


def test_an_op_that_computes_on_the_host_is_the_host_s_time_not_a_launch_wait(tmp):
    """``cpu_input``: each step makes its input with a 10 ms ``aten::randn`` of a CPU tensor (no GPU runtime call),
    copies it and runs one kernel.  The GPU's idle time during the randn is the host preparing the step's input
    before its first dispatch: input wait, and no launch-bound warning (a real T4 trace was told, critically, to
    capture CUDA graphs for it)."""
    rep = _report(tmp, "cpu_input", 6)
    host = rep["hosts"][0]
    b = host["breakdown_ms"]
    assert b["input_wait"] + b["host_compute"] == pytest.approx(tt.CPU_INPUT_MS, rel=0.05)
    assert host["breakdown_ms"]["launch_wait"] < 0.1 * tt.CPU_INPUT_MS
    assert not [f for f in rep["findings"] if f["rule"] == "launch_bound" and f["severity"] != "info"]


def test_blocks_that_sync_inside_one_model_call_are_one_pass_not_steps(tmp):
    """``synced_layers``: a forward pass whose every block ends with the host waiting for the GPU, inside one
    ``nn.Module`` call.  The launch sequence repeats with the waits a loop's calls have, but a step holds whole model
    calls: it is one pass (a real MoE forward read as 7 "steps" of one block each)."""
    rep = _report(tmp, "synced_layers", 3)
    host = rep["hosts"][0]
    assert host["job"]["step_source"] == "single_pass" and host["steps"]["count"] == 1
    rep_unwrapped = _report(tmp, "decode_unmarked", 12)  # the same shape with no model call around it: a loop's steps
    assert rep_unwrapped["hosts"][0]["job"]["step_source"] == "repeated_launches"


def test_gpu_memory_with_no_gpu_record_is_a_lost_capture_not_cpu_work(tmp):
    """A trace recorded with ``profile_memory`` whose GPU activity was not recorded (a real Windows trace: cuDNN ops and
    CUDA ``[memory]`` events, no kernel or runtime record) ran on the GPU: the allocator's events on a GPU say so.  It
    is never "the work ran on the CPU".  Built from a generated training trace with its device and runtime events
    removed."""
    import glob
    import json
    import os

    name = next(n for n, sc in tt.SCENARIOS.items() if sc.memory_held is not None)
    (path,) = tt.write_run(tmp, name, steps=4, run="unrecorded_gpu")
    with open(path) as f:
        doc = json.load(f)
    gone = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_runtime", "cuda_driver", "ac2g")
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in gone]
    assert any(e.get("name") == "[memory]" for e in doc["traceEvents"])
    with open(path, "w") as f:
        json.dump(doc, f)
    hosts = [SimpleNamespace(host="h0", path=p, format="kineto", size=0)
             for p in glob.glob(os.path.join(tmp, "unrecorded_gpu", "*"))]
    rep = analyze_session("unrecorded_gpu", "s", hosts).to_dict()
    job = rep["hosts"][0]["job"]
    assert "allocator" in job["kind_evidence"] and "CPU" not in job["kind_evidence"]
    # the lost records first; the generated loop's `.item()` (7.8 ms a step on the host) is the host's measured wait
    # in scalar reads since h37-left22; since h37-memrow35 the GPU known only by its allocator has its memory row, so
    # the memory checks may judge its peak too -- and nothing else may fire without GPU records
    titles = [f["title"] for f in rep["findings"]]
    # a torch.profiler file whose header holds no CUDA call, kernel or copy recorded none (h37-probe42c): not "lost"
    assert titles[:2] == ["The capture recorded no CUDA activity: the GPU's work is not in it",
                          "The host waits for the GPU in scalar reads"]
    memory_rules = {"activation_memory", "memory_near_capacity", "memory_fragmentation", "oom_snapshot"}
    assert all(f["rule"] in memory_rules for f in rep["findings"][2:]), titles
    assert "ran on the CPU" not in json.dumps(rep)



@pytest.mark.parametrize("name", ["fsdp_prefetch", "fsdp_no_prefetch"])
def test_an_fsdp_training_step_reads_as_training(tmp, name):
    """The generator's FSDP step runs each layer's backward GEMM under autograd's node and the optimizer's step after
    the last reduce-scatter, as a real training trace records them (``wild/ddp_mi300x_actckpt``): a training job, its
    fixes a training loop's.  On main its backward ran as bare ``aten::mm`` and no optimizer stepped: read as
    forward passes (medium), its capture advice ``model(batch)`` under ``inference_mode``."""
    rep = _report(tmp, name, 8)
    job = rep["hosts"][0]["job"]
    assert (job["kind"], job["kind_confidence"]) == ("training", "high")
    assert "Backward" in job["kind_evidence"]
    code = " ".join(a["snippet"] or "" for f in rep["findings"] for a in f["actions"])
    assert "inference_mode" not in code
