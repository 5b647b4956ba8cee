"""The ops tf.data's own functions run on the step's threads are input work, not ops of the step placed on the host.

A Keras ``fit`` on NumPy arrays slices each batch with a ``GatherV2`` that tf.data's map function runs on the inter-op
threads the step's ops use; TensorFlow groups it under the ``FunctionRun`` a tf.data thread started (a group of its
own, with no GPU work).  Read by time alone it was "a TF op of the step placed on the host" (h37-survey68: ECBM4040's
Keras CNNs on a T4, ``GatherV2`` 0.24-1.16 ms with the GPU idle under it, told to move to the GPU).  Truth by
construction: :func:`synthetic.tfcapture.write_keras_batch_with_map`.
"""

from __future__ import annotations

import numpy as np
import pytest

from synthetic.tfcapture import write_keras_batch_with_map
from tb_gpu_advisor import rules
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.frameworks import tensorflow
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _analysed(tmp_path, **kw):
    path = tmp_path / "instance-2.xplane.pb"
    truth = write_keras_batch_with_map(str(path), **kw)
    hm = host_metrics(read_trace(str(path)))
    return truth, hm, {f.id.split(":")[0]: f for f in rules.evaluate(hm)}


def test_a_tf_data_function_s_op_is_the_input_wait_not_a_host_placed_op(tmp_path):
    truth, hm, found = _analysed(tmp_path)
    assert "host_op_placement" not in found
    assert hm.host_ops.count_per_step == 0
    assert hm.breakdown.input_wait == pytest.approx(truth["input_ms"], abs=0.01)
    assert hm.input.functions == [("GatherV2:GatherV2", pytest.approx(truth["input_ms"], abs=0.01))]
    said = found["input_bound"].summary
    assert "tf.data's own functions" in said and "`GatherV2:GatherV2` 1.00 ms" in said
    assert "the program's range" not in said  # no range the program marks


def test_an_op_of_the_step_s_own_graph_on_the_host_stays_host_placed(tmp_path):
    """Control: an op of the step's group with no kernel (``Unique``) is still one to move to the GPU."""
    _, _, found = _analysed(tmp_path, host_op_us=800.0)
    assert "host_op_placement" in found and "Unique" in found["host_op_placement"].summary


def test_the_pipeline_s_op_is_not_counted_beside_the_step_s_own(tmp_path):
    truth, hm, _ = _analysed(tmp_path, host_op_us=800.0)
    assert [o.op_name for o in hm.host_ops.top] == ["Unique"]
    assert hm.host_ops.time_ms_per_step == pytest.approx(truth["host_op_ms"], abs=0.01)
    assert hm.breakdown.host_compute == pytest.approx(truth["host_op_ms"], abs=0.01)
    assert hm.breakdown.input_wait == pytest.approx(truth["input_ms"], abs=0.01)


def test_a_function_group_that_holds_gpu_work_is_a_step_not_the_pipeline(tmp_path):
    """Control: the reader's rule -- a ``FunctionRun`` group on a tf.data thread whose group the GPUs' events share
    is a step's (whatever started it), so none of its ops is the pipeline's."""
    path = tmp_path / "instance-2.xplane.pb"
    write_keras_batch_with_map(str(path))
    tr = read_trace(str(path))
    assert [tr.h.names[tr.h.name[i]] for i in tr.pipeline_ops] == ["GatherV2:GatherV2"]
    assert tensorflow.pipeline_function_ops(tr.h, np.array([0, 1])).size == 0


# TensorFlow 2.3's layout: tf.data's call of the captured function (``InstantiatedCapturedFunction::RunAsync``) and the
# function's ops carry no group (no ``FunctionRun`` roots one), the step's own events group 0 -- a Keras ``fit`` on
# NumPy arrays in Colab (Pol-Zeimet/Gestenerkennung_Projektarbeit_2, nine sessions on a T4 and a K80: ``GatherV2``
# 1.2-6.0 ms with the GPU idle 0.6-3.5 ms under it, read as "TensorFlow ops placed on the host"; h37-huntxla63).

def test_tf23_an_ungrouped_tf_data_function_op_is_the_input_wait(tmp_path):
    truth, hm, found = _analysed(tmp_path, grouped_function=False)
    assert "host_op_placement" not in found
    assert hm.host_ops.count_per_step == 0
    assert hm.breakdown.input_wait == pytest.approx(truth["input_ms"], abs=0.01)
    assert hm.input.functions == [("GatherV2:GatherV2", pytest.approx(truth["input_ms"], abs=0.01))]
    assert "`GatherV2:GatherV2` 1.00 ms" in found["input_bound"].summary


def test_tf23_the_step_s_own_host_op_stays_host_placed(tmp_path):
    """Control: the step's own op (group 0) with no kernel is still one to move to the GPU beside the ungrouped one."""
    truth, hm, found = _analysed(tmp_path, grouped_function=False, host_op_us=800.0)
    assert [o.op_name for o in hm.host_ops.top] == ["Unique"]
    assert hm.host_ops.time_ms_per_step == pytest.approx(truth["host_op_ms"], abs=0.01)
    assert "host_op_placement" in found


def test_an_ungrouped_op_in_a_capture_without_groups_is_not_the_pipeline_s(tmp_path):
    """Control: with no group anywhere (a capture TensorFlow did not group, JAX's), no op is told the pipeline's by
    its missing group."""
    path = tmp_path / "instance-2.xplane.pb"
    write_keras_batch_with_map(str(path), grouped_function=False)
    tr = read_trace(str(path))
    h = tr.h
    h.group_id[:] = -1
    assert tensorflow.pipeline_function_ops(h, np.array([], dtype=np.int64)).size == 0


# A synchronous call (``InstantiatedCapturedFunction::RunWithBorrowedArgs``: TensorFlow 2.4's ``MultiDeviceIterator``
# generator, the shared V100 BERT) blocks its tf.data thread while the function runs: the function's ungrouped ops
# lie inside the call's span, or are the same nodes run again by a call the capture cut.  An ungrouped op elsewhere
# that is no node of the function is no input work (h37-xla64: session 63's reading took every ungrouped op after the
# first call, and moved the BERT's reading without a look at which ops those were).

def test_a_synchronous_call_s_ungrouped_op_inside_its_span_is_the_input_wait(tmp_path):
    truth, hm, found = _analysed(tmp_path, grouped_function=False, call="RunWithBorrowedArgs")
    assert "host_op_placement" not in found
    assert hm.breakdown.input_wait == pytest.approx(truth["input_ms"], abs=0.01)
    assert hm.input.functions == [("GatherV2:GatherV2", pytest.approx(truth["input_ms"], abs=0.01))]


def test_an_ungrouped_op_outside_the_call_and_no_node_of_its_function_stays_host_placed(tmp_path):
    truth, hm, found = _analysed(tmp_path, grouped_function=False, call="RunWithBorrowedArgs", stray_op_us=600.0)
    assert [o.op_name for o in hm.host_ops.top] == ["WriteScalarSummary"]
    assert hm.host_ops.time_ms_per_step == pytest.approx(truth["stray_ms"], abs=0.01)
    assert hm.breakdown.input_wait == pytest.approx(truth["input_ms"], abs=0.01)
    assert "host_op_placement" in found


def test_the_function_s_node_run_again_by_a_call_the_capture_cut_is_the_pipeline_s(tmp_path):
    path = tmp_path / "instance-2.xplane.pb"
    write_keras_batch_with_map(str(path), grouped_function=False, call="RunWithBorrowedArgs", stray_op_us=300.0,
                               cut_call=True)
    tr = read_trace(str(path))
    h = tr.h
    assert [h.names[h.name[i]] for i in tr.pipeline_ops] == ["GatherV2:GatherV2", "GatherV2:GatherV2"]


def test_an_eager_op_after_an_asynchronous_call_is_no_function_s_op(tmp_path):
    """A captured function is a graph: an ungrouped op run eagerly after tf.data's ``RunAsync`` (a callback's summary)
    is none of its ops, where session 63 took every ungrouped op after the call."""
    path = tmp_path / "instance-2.xplane.pb"
    write_keras_batch_with_map(str(path), grouped_function=False, stray_op_us=300.0, stray_eager=True)
    tr = read_trace(str(path))
    h = tr.h
    assert [h.names[h.name[i]] for i in tr.pipeline_ops] == ["GatherV2:GatherV2"]
