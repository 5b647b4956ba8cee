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
