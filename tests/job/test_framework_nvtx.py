"""NVTX that frameworks write, not users: jobs described only by ranges other tools made (issue #37, survey25).

Each case is built with ``synthetic.nsysexport`` from the framework's own source (tests/fixtures/wild/SURVEY.md, "NVTX
made by frameworks"), truth by construction:

* PyTorch's ``emit_nvtx`` suffixes a user's ``record_function("train_step")`` as it does an ATen op (``train_step,
  op_id = 7``; ``torch/csrc/profiler/util.cpp``, ``getNvtxStr``), but with no ``seq`` and no namespace.  Main read it
  as an op, so the program's own step ranges were never read and the steps came from the launches' period;
* XLA on a GPU pushes ``XlaModule:#hlo_module=jit_train_step,program_id=7#`` around each module execution and
  ``Thunk:#...hlo_op=fusion.3...#`` around each thunk (``xla/backends/gpu/runtime/annotation.cc``).  Main read them as
  the user's blocks: a guessed "most repeated range" step (medium), no framework, no kind;
* NVIDIA's TensorFlow builds under ``TF_ENABLE_NVTX_RANGES=1`` push ``MatMul: dense/MatMul`` around each op in the
  ``tensorflow-core`` domain.  Main took one op's ranges for the user's steps;
* DALI (``DALI``) and RAPIDS (``libcudf``, ``cudf_python``) push their own ranges in their own domains; main took
  DALI's per-op ranges for the steps.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.frameworks import nvtx, xla
from tb_gpu_advisor.runtime.pipeline import analyze_session

XLA_MODULE = "XlaModule:#prefix=jit(train_step),hlo_module=jit_train_step,program_id=7#"
XLA_THUNK = "Thunk:#name={grad}dot_general,hlo_op=fusion.{seq},unique_hlo_op_id={op_id}#"
CASES = {
    "record_function": dict(step_range="train_step, op_id = {k}"),
    "record_function_registered": dict(step_range="train_step, op_id = {k}", text_ids=True),
    "xla": dict(step_range=XLA_MODULE, autograd_nvtx=False, op_text=XLA_THUNK.replace("{grad}", "")),
    "xla_grad": dict(step_range=XLA_MODULE, autograd_nvtx=False,
                     op_text=XLA_THUNK.replace("{grad}", "transpose(jvp(MLP))/")),
    "tensorflow": dict(step_range=None, autograd_nvtx=False, op_text="MatMul: dense_{seq}/MatMul",
                       op_domain="tensorflow-core"),
    # a key split jitted apart (``jit__threefry_split``) executes once per step before the step's module: a tie
    "xla_tie": dict(step_range=None, autograd_nvtx=False, range_starts=(1,),
                    extra_ranges=("XlaModule:#hlo_module=jit__threefry_split,program_id=3#",
                                  "XlaModule:#hlo_module=jit_train_step,program_id=7#")),
    # DALI pushes its pipeline's ranges in its own NVTX domain (``dali/core/nvtx.cc``): a library's, never the step
    "dali": dict(step_range=None, autograd_nvtx=False, op_text="[DALI] RunGPU", op_domain="DALI"),
    # CUDA's C++ core libraries (CCCL: CUB, Thrust) push a range per device algorithm in their domain ``CCCL``; a model
    # calls one per layer (YiconRain/profiling's SGLang exports: 209 ``cub::DeviceScan::InclusiveScan`` in a prefill)
    "cccl": dict(step_range=None, autograd_nvtx=False, op_text="cub::DeviceScan::InclusiveScan", op_domain="CCCL"),
    "cccl_name": dict(step_range=None, autograd_nvtx=False, op_text="thrust::sort"),
    # controls: a user's plain NVTX step range, and DeepSpeed's ``instrument_w_nvtx`` ranges around each part of one
    # iteration (``DeepSpeedEngine.forward`` / ``backward`` / ``step``) -- read right on main already
    "plain": dict(step_range="train_step {k}"),
    "deepspeed": dict(step_range=None, autograd_nvtx=False,
                      extra_ranges=("DeepSpeedEngine.forward", "DeepSpeedEngine.backward", "DeepSpeedEngine.step")),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    d = tmp_path_factory.mktemp("framework_nvtx")
    out = {}
    for name, kw in CASES.items():
        p = str(d / f"{name}.sqlite")
        truth = nx.write(p, nx.NsysJob(steps=8, ops=9, **kw))
        host = SimpleNamespace(host="h0", path=p, format="nsys", size=os.path.getsize(p))
        out[name] = (analyze_session("w", "s", [host]).to_dict()["hosts"][0], truth, p)
    return out


@pytest.mark.parametrize(("text", "name", "is_op"), [
    ("train_step, op_id = 7", "train_step", False),  # a user's record_function: main read it as an op
    ("aten::mm, op_id = 3, sizes = [[4, 4], [4, 4]]", "aten::mm", True),  # no grad: no seq, still an op
    ("aten::addmm, seq = 12, op_id = 40", "aten::addmm", True),
    ("MmBackward0, seq = 12, op_id = 90", "MmBackward0", True),  # the backward node carries its forward's seq
    ("autograd::engine::evaluate_function: MmBackward0, op_id = 89", "autograd::engine::evaluate_function: MmBackward0",
     True),
    ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__, op_id = 2",
     "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", True),  # PyTorch's own scope
    ("Optimizer.step#SGD.step, op_id = 55", "Optimizer.step#SGD.step", True),
    ('{"op":"MatMul","name":"dense/MatMul","args":[{"name":"x","shape":[4,4]}],"attrs":{}}', "MatMul: dense/MatMul",
     True),  # TensorFlow's detailed op range: main named it PyProf's ``pyprof::op``
    ("train_step 3", "train_step 3", False),
])
def test_range_names(text, name, is_op):
    assert nvtx.op_name(text) == (name, is_op)


def test_xla_range_vocabulary():
    assert xla.nvtx_module(XLA_MODULE) == "jit_train_step"
    assert xla.nvtx_module("XlaModule:#hlo_module=pmap_step,program_id=2#") == "pmap_step"
    assert xla.nvtx_module("forward") is None
    assert nvtx.is_op_name(XLA_MODULE) and nvtx.is_op_name("Thunk:#hlo_op=fusion.3,unique_hlo_op_id=4#")
    assert xla.module_execution("jit_step:XLA GPU module") == "jit_step"


@pytest.mark.parametrize("case", ["record_function", "record_function_registered"])
def test_a_users_record_function_under_emit_nvtx_marks_the_steps(reports, case):
    host, truth, _ = reports[case]
    st = host["steps"]
    assert st["source"] == "nvtx_range"  # main: repeated_launches, the program's own ranges unread
    assert "`train_step`" in st["note"]
    assert st["found"] == truth.steps


def test_xla_module_ranges_are_the_steps_of_a_jax_job(reports):
    host, truth, p = reports["xla"]
    st = host["steps"]
    assert st["source"] == "xla_module_launches"  # main: nvtx_top_range, the module range a guessed user block
    assert "`jit_train_step`" in st["note"]
    assert st["found"] == truth.steps
    assert host["capture"]["framework"] == "jax"  # main: native, "no ML framework"
    tr = read_trace(p)
    names = [tr.h.names[int(i)] for i in tr.h.name[tr.ranges.idx]]
    assert all(o for n, o in zip(names, tr.ranges.op.tolist()) if xla.is_nvtx_range(n))  # XLA's, not the user's


def test_of_modules_executed_as_often_the_step_is_the_one_launching_the_work(reports):
    host, truth, _ = reports["xla_tie"]
    st = host["steps"]
    assert "`jit_train_step`" in st["note"]  # main: the first seen, `jit__threefry_split` (one launch of nine)
    assert st["found"] == truth.steps


def test_xla_gradient_thunks_say_training(reports):
    host, _, _ = reports["xla_grad"]
    assert host["job"]["kind"] == "training"  # main: unknown
    assert "jit_train_step" in host["job"]["kind_evidence"]
    assert reports["xla"][0]["job"]["kind"] != "training"  # control: no gradient's instruction, no training


def test_tensorflow_op_ranges_are_ops_not_steps(reports):
    host, truth, p = reports["tensorflow"]
    st = host["steps"]
    assert "MatMul" not in st["note"]  # main: "NVTX ranges `MatMul: dense_1/MatMul`, the most repeated top-level range"
    assert st["found"] == truth.steps
    assert host["capture"]["framework"] == "tensorflow"
    tr = read_trace(p)
    assert tr.ranges.op.all()


def test_a_data_loading_librarys_ranges_mark_no_steps(reports):
    host, truth, _ = reports["dali"]
    st = host["steps"]
    assert "DALI" not in st["note"]  # main: "NVTX ranges `[DALI] RunGPU`" -- 72 "steps" of 8
    assert st["found"] == truth.steps
    assert nvtx.is_library_range("GROUPBY_AGG", "cudf_python") and nvtx.is_library_range("sort", "libcudf")


@pytest.mark.parametrize("case", ["cccl", "cccl_name"])
def test_cuda_core_librarys_algorithm_ranges_mark_no_steps(reports, case):
    """CUB's and Thrust's ranges (domain ``CCCL``, or their names alone where the domain is not registered) are a
    library's calls: main read "NVTX ranges `cub::DeviceScan::InclusiveScan`, the most repeated top-level range" as
    the steps -- 72 "steps" of 8 -- as it read YiconRain/profiling's 209 in one prefill (h37-survey72)."""
    host, truth, _ = reports[case]
    st = host["steps"]
    assert "cub::" not in st["note"] and "thrust::" not in st["note"]
    assert st["found"] == truth.steps
    assert nvtx.is_library_range("cub::DeviceRadixSort::SortPairs") and nvtx.is_library_range("x", "CCCL")


@pytest.mark.parametrize(("case", "part"), [("plain", "`train_step 0`"), ("deepspeed", "`DeepSpeedEngine.forward`")])
def test_controls_read_as_before(reports, case, part):
    host, truth, _ = reports[case]
    st = host["steps"]
    assert part in st["note"] and st["found"] == truth.steps
    steady = [r["step_ms"] for r in host["step_rows"]]
    assert steady and all(abs(ms - truth.step_ms) < 0.01 for ms in steady)  # the whole iteration, not its forward
    assert host["capture"]["framework"] in ("pytorch", "native")


def test_a_bare_named_op_holding_nothing_stays_an_op():
    """``detach_, op_id = 5`` (PyTorch's ``VariableTypeManual`` records it by a bare name) holds no call: an op, as
    in the real FSDP exports (../shared/profiles/nsys/fsdp_mfu_*); a ``train_step, op_id = 7`` holding the step's
    calls is the user's block."""
    import numpy as np

    from tb_gpu_advisor.formats.nsys import reader

    # thread 0: train_step [0, 100) holding a call at 10; detach_ [200, 210) alone; thread 1: a scope left open
    op = np.array([reader._SCOPE, 0, reader._SCOPE, reader._SCOPE, 1], np.int8)
    line = np.array([0, 0, 0, 1, 1])
    start = np.array([0, 10, 200, 0, 50])
    end = np.array([100, 20, 210, 40, 60])
    assert reader._user_scopes(op, line, start, end).tolist() == [False, False, True, True, True]
