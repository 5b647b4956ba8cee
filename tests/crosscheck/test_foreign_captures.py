"""Real captures of kinds no other set holds: TPU and MTIA work, and Nsight exports of non-ML CUDA programs made on
NERSC's Perlmutter (A100).  Provenance: ``tests/fixtures/foreign/PROVENANCE.md``.

Each was misread before: the TPU and MTIA captures as CPU-only jobs told to check CUDA, the two exports not analysed
at all (a metadata row that is no UTF-8; kernel times that wrapped in int32 picoseconds).  The numbers they are held
to come from the files themselves (SQL on the export), not from the Advisor.
"""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.nsys import reader as nsys_reader
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

FOREIGN = FIXTURES / "foreign"
CLOVERLEAF = FOREIGN / "nsys_a100_cloverleaf" / "perlmutter-cloverleaf-cuda.sqlite"
#: What a GPU-less capture was told before: check CUDA, the GPU's libraries, nvidia-smi.
CUDA_ADVICE = re.compile(r"cuda|cuDNN|cuBLAS|Tensor Core|nvidia-smi|ProfilerActivity", re.I)
SAXPY = FOREIGN / "nsys_a100_saxpy_mpi" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"


def _report(run: str) -> dict:
    (s,) = [s for s in discover(str(FOREIGN)) if s.run == run]
    return session_report(s).to_dict()


def _sql(path, query: str) -> tuple:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.text_factory = bytes
    try:
        return con.execute(query).fetchone()
    finally:
        con.close()


@pytest.mark.parametrize("path", [CLOVERLEAF, SAXPY], ids=["cloverleaf", "saxpy_mpi"])
def test_perlmutter_exports_read_every_kernel_at_its_own_time(path):
    """Every kernel, its total time and the window's length as the export's own tables hold them.  CloverLeaf's kernels
    all lie in the first 0.9 s of the session, so the tables narrow their times to int32, where ``* 1000`` (ns to ps)
    wrapped: kernels read at -2.1 s, and the analysis failed."""
    count, first, last, busy = _sql(path, "SELECT count(*), min(start), max(end), sum(end - start) "
                                          "FROM CUPTI_ACTIVITY_KIND_KERNEL")
    trace = nsys_reader.read_trace(str(path))
    (d,) = [d for d in trace.devices if len(d)]
    k = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
    assert int(k.sum()) == count
    assert int((d.end[k] - d.start[k]).sum()) == busy * 1000
    assert int(d.start.min()) >= 0 and (d.end >= d.start).all()
    assert int(d.end[k].max() - d.start[k].min()) == (last - first) * 1000


@pytest.mark.parametrize("run", ["nsys_a100_cloverleaf", "nsys_a100_saxpy_mpi"])
def test_perlmutter_exports_are_analysed(run):
    """The saxpy export's ``GpuInfo`` row is a binary protobuf in a TEXT column: discovery listed the file as "an
    SQLite file that cannot be read", with the raw bytes in the message."""
    rep = _report(run)
    (host,) = rep["hosts"]
    assert host["error"] is None
    assert host["gpus"] and any(g["kernel_count"] for g in host["gpus"])


@pytest.mark.parametrize("run,device", [("tpu_v6e_inference", "4 x TPU v6 Lite"),
                                        ("mtia_inference", "MTIA 17 (ARTEMIS)")])
def test_work_on_an_accelerator_we_do_not_read_is_named_not_called_cpu_only(run, device):
    """JAX on four TPU v6e chips (``/device:TPU:N`` planes) and an MTIA serving worker (``mtia_ccp_events`` on the
    "MTIA 17" process) hold no GPU work, but their work did not run on the CPU either: the report names the
    accelerator, says nothing was judged, and gives no CUDA advice."""
    rep = _report(run)
    (host,) = rep["hosts"]
    assert device in host["job"]["kind_evidence"] and "CPU" not in host["job"]["kind_evidence"]
    assert [f["rule"] for f in rep["findings"]] == ["capture_quality"]
    (f,) = rep["findings"]
    # its one fix: the viewers that open this file and draw every device's work, no GPU fix (every finding has a fix)
    assert device in f["summary"] and [a["text"].split(":")[0] for a in f["actions"]] == [
        "Read the accelerator's work with its own profiler tools"]
    assert ("Profile tab" if run.startswith("tpu") else "Perfetto") in f["actions"][0]["text"]
    assert not CUDA_ADVICE.findall(json.dumps(rep["findings"]))
    cards = {c["id"]: c["value"] for c in host["headline"]}
    assert all(v is None for v in cards.values()), cards  # no GPU: no GPU number, not "0% input wait"


def test_capture_with_no_device_is_still_cpu_only():
    """The other side of the line: a PyTorch profile of CPU work alone is still told its work ran on the CPU."""
    rep = json.dumps(_report_of_fixture("h200_jobs", "torch_cpu_only"))
    assert "ran on the CPU" in rep


def _report_of_fixture(folder: str, run: str) -> dict:
    (s,) = [s for s in discover(str(FIXTURES / folder)) if s.run == run]
    return session_report(s).to_dict()



PT18 = FOREIGN / "pt18_resnet50_autograd_api" / "worker0.1610366387140.pt.trace.json.gz"


def _raw_events(path) -> list[dict]:
    import gzip

    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]


def test_a_loop_without_profiler_steps_is_cut_at_its_optimizer_steps():
    """PyTorch 1.8 (January 2021, old schema, no ``deviceProperties``): a ResNet-50 training loop profiled without
    ``prof.step()``.  Its 6 ``Optimizer.step#SGD.step`` events end its 6 iterations; the first holds the cold start
    (first launches, cuDNN autotuning).  Read before as 46 "steps" of GPU busy clusters, half of them inside the cold
    iteration, which made its allocator calls a critical finding about every step.

    Held to the raw file: the kept steps are iterations 2-5, each as long as the time between two optimizer steps'
    ends, with the kernel time that ran between them."""
    events = _raw_events(PT18)
    ends = sorted(e["ts"] + e["dur"] for e in events if e.get("name", "").startswith("Optimizer.step#"))
    kernels = [e for e in events if e.get("cat") == "Kernel"]
    rep = _report("pt18_resnet50_autograd_api")
    (host,) = rep["hosts"]
    steps = host["steps"]
    assert steps["source"] == "step_end_events" and steps["found"] == len(ends) == 6
    assert [d["step"] for d in steps["dropped"]] == [0, 5]
    rows = [r for r in host["step_rows"] if r["gpu"] == 0]
    assert len(rows) == 4
    for r, a, b in zip(rows, ends, ends[1:]):
        assert abs(r["step_ms"] - (b - a) / 1000) < 0.01
        busy = sum(k["dur"] for k in kernels if a <= k["ts"] < b) / 1000
        assert abs(r["breakdown"]["device_compute"] - busy) < 0.02 * busy
    assert "allocator_churn" not in [f["rule"] for f in rep["findings"]]


def test_a_gpu_the_capture_does_not_describe_is_not_promised_bf16():
    """No ``deviceProperties`` (PyTorch 1.8): the GPU's generation is unknown -- its ``volta_*`` kernels ran on a V100
    -- so the advice is float16 with loss scaling, which every Tensor Core GPU runs, never bf16."""
    rep = _report("pt18_resnet50_autograd_api")
    prose = json.dumps([[f["summary"], [a["text"] for a in f["actions"]]] for f in rep["findings"]
                        if f["rule"] in ("tensor_core_unused", "mixed_precision_off")])
    assert "fp16" in prose or "float16" in prose
    assert "bf16" not in prose and "bfloat16" not in prose  # h37-review14: not even the old releases' bf16 aside


#: Words of an ML framework's API: none belongs in advice to a CUDA program that uses none.
ML_WORDS = re.compile(r"\btf\.|Keras|tf\.function|\btorch\b|PyTorch|\bjax\b|DataLoader|autocast|steps_per_execution|"
                      r"XLA|optimizer", re.I)


@pytest.mark.parametrize("run", ["nsys_a100_cloverleaf", "nsys_a100_saxpy_mpi"])
def test_a_cuda_program_with_no_ml_framework_is_advised_in_cuda_words(run):
    """CloverLeaf (CFD) and an MPI saxpy name no framework: their findings were told Keras callbacks, tf.function and
    tf.debugging placement logs (the guide's TensorFlow spelling, meant for XPlane captures of unknown origin).  Now
    every finding has a fix, in terms of streams, copies, syncs and CUDA graphs, and the framework-only cards say
    n/a."""
    rep = _report(run)
    (host,) = rep["hosts"]
    assert host["capture"]["framework"] == "native"
    assert rep["findings"] and all(f["actions"] for f in rep["findings"])
    words = ML_WORDS.findall(json.dumps([[f["title"], f["summary"], f["actions"]] for f in rep["findings"]]))
    assert not words, words
    cards = {c["id"]: c for c in host["headline"]}
    assert cards["input_wait_share"]["value"] is None and cards["host_op_share"]["value"] is None
