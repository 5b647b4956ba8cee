"""TensorFlow 2.4's ``MultiDeviceIterator`` (``tf.distribute``'s per-GPU input) runs its generator's functions with no
group: the ops of tf.data's own functions, input work -- read by hand on the shared V100 BERT
(``../shared/profiles/v100_bert_8gpu_tf24.xplane.pb``; h37-xla64, ``/work/wild64/xla64/bert22.py``).

Each GPU's ``tf_data_iterator_resource`` thread calls the generator's functions synchronously
(``InstantiatedCapturedFunction::RunWithBorrowedArgs``, 0.9-5.6 ms, no group): ``_init_func`` under a ``FunctionRun``
of a group of its own, ``_next_func`` with none.  ``_next_func`` runs on the GPU's private thread
(``RemoteCall____inference__next_func_331``/``_441``, ungrouped), which runs ``MultiDeviceIteratorFromStringHandle`` /
``MultiDeviceIteratorGetNextFromShard`` and the ``Identity`` copies on the inter-op threads (``tf_Compute``), all
ungrouped: 26 ops inside the two GPUs' recorded calls, and 8 more -- the same nodes, 0.3-0.6 ms after each GPU's last
recorded call ended -- in the next call, still running when the capture stopped (a call's event is written at its
end).  34 ungrouped TF ops in all, every one of them a node of a function tf.data called; no other TF op of the
capture is ungrouped.  Main read 22 of them (those inside the step) as "TensorFlow ops placed on the host"; the
session-63 rule (every ungrouped op after the first call) took the same 34, but its finding named 68 us of them as
"other ops" of no op named, which its account (``input<=account``) did not read."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor import rules
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import SHARED_PROFILES
from tests.support.properties import input_account_problems

V100 = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"
pytestmark = pytest.mark.skipif(not V100.is_file(), reason="../shared/profiles/v100_bert_8gpu_tf24.xplane.pb is absent")

#: The nodes of the generator's functions, read by hand (the op's name before its type).
NODES = {"RemoteCall____inference__next_func_331", "RemoteCall____inference__next_func_441",
         "RemoteCall____inference__init_func_309", "RemoteCall____inference__init_func_419",
         "MultiDeviceIteratorFromStringHandle", "MultiDeviceIteratorGetNextFromShard",
         "Identity", "Identity_1", "Identity_2", "Identity_3", "Identity_4"}


@pytest.fixture(scope="module")
def bert():
    tr = read_trace(str(V100))
    return tr, host_metrics(tr)


def test_the_multi_device_iterator_s_function_ops_are_the_pipeline_s(bert):
    tr, _ = bert
    h = tr.h
    ungrouped = [i for i in tr.pipeline_ops.tolist() if h.group_id[i] < 0]
    assert len(ungrouped) == 34
    assert {h.names[h.name[i]].split(":")[0] for i in tr.pipeline_ops} == NODES


def test_they_are_input_work_not_ops_placed_on_the_host(bert):
    tr, hm = bert
    assert hm.host_ops.count_per_step == 413.5  # main: 424.5 over the 2 GPUs, the 22 in the step among them
    assert not {o.op_name for o in hm.host_ops.top} & {n.split(":")[0] for n in NODES if "Identity" not in n}


def test_the_input_finding_names_the_whole_wait_as_one_account(bert):
    _, hm = bert
    f = next(f for f in rules.evaluate(hm) if f.rule == "input_bound")
    said = " ".join(f.summary.split())
    assert "run on the step's threads (68 us in the step, 0.3% of the step)" in said
    assert input_account_problems(f.id, f) == []
    parts = hm.input.own_ms_per_step + sum(v for _, v in hm.input.functions)
    assert parts == pytest.approx(hm.breakdown.input_wait, abs=1e-6)  # the parts are the ledger's wait, none twice
    assert np.isclose(hm.breakdown.input_wait, (f.metric.detail or {})["input_wait_ms"])
