"""An input-bound TensorFlow job is told the tf.data levers its trace does not show in use, then the next one.

The profiler records each tf.data iterator's work under the stage's chain from the root
(``Iterator::Model::ParallelMapV2``; ``Iterator::Model::Prefetch::...``): a pipeline that maps in parallel or prefetches
says so in its own events.  The input-bound fix was "parallelize and prefetch the tf.data pipeline" whatever they said
(h37-survey68: every ECBM4040 Keras session on a T4 runs Keras's ``ParallelMapV2`` and was told to parallelize).  Truth
by construction: :func:`synthetic.tfcapture.write_keras_batch_with_map` with the iterators it is given.
"""

from __future__ import annotations

import pytest

from synthetic.tfcapture import write_keras_batch_with_map
from tb_gpu_advisor import rules
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.frameworks import tensorflow as tf
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.properties import in_use_problems
from tests.support.report_store import session_report

PARALLEL = ("Iterator::Model", "Iterator::Model::ParallelMapV2", "Iterator::Model::ParallelMapV2::Zip")
BOTH = ("Iterator::Model", "Iterator::Model::Prefetch", "Iterator::Model::Prefetch::ParallelMapV2")


def _input_finding(tmp_path, iterators):
    path = tmp_path / "instance-2.xplane.pb"
    write_keras_batch_with_map(str(path), iterators=iterators)
    found = {f.rule: f for f in rules.evaluate(host_metrics(read_trace(str(path))))}
    return found["input_bound"]


def _texts(f):
    return [a.text for a in f.actions]


def test_a_parallel_map_in_the_trace_is_not_advised_prefetch_and_the_next_lever_are(tmp_path):
    f = _input_finding(tmp_path, PARALLEL)
    assert "Already in use, so not suggested: a parallel tf.data stage" in f.summary
    texts = _texts(f)
    assert tf.TF_DATA_PARALLEL.text not in texts
    assert tf.TF_DATA_PREFETCH.text in texts and tf.TF_DATA_CHEAPER.text in texts
    assert not any("num_parallel_calls" in a.text for a in f.actions if a.text != tf.TF_DATA_CHEAPER.text)


def test_a_pipeline_that_maps_in_parallel_and_prefetches_is_told_only_the_next_lever(tmp_path):
    f = _input_finding(tmp_path, BOTH)
    assert "tf.data prefetch" in f.summary
    texts = _texts(f)
    assert tf.TF_DATA_PARALLEL.text not in texts and tf.TF_DATA_PREFETCH.text not in texts
    assert tf.TF_DATA_CHEAPER.text in texts
    assert "tf.data prefetch" in f.summary and "a parallel tf.data stage" in f.summary


def test_a_pipeline_whose_iterators_are_not_recorded_is_told_both_levers_not_the_next(tmp_path):
    f = _input_finding(tmp_path, ())
    texts = _texts(f)
    assert tf.TF_DATA_PARALLEL.text in texts and tf.TF_DATA_PREFETCH.text in texts
    assert tf.TF_DATA_CHEAPER.text not in texts
    assert "Already in use" not in f.summary


def test_the_iterators_are_told_by_their_stage_not_by_a_word_in_the_chain():
    assert tf.is_parallel_iterator("Iterator::Model::ParallelMapV2")
    assert tf.is_parallel_iterator("Iterator::Root::Prefetch::MapAndBatch")
    assert not tf.is_parallel_iterator("Iterator::Model::Map")
    assert tf.is_prefetch_iterator("Iterator::Model::Prefetch")
    assert tf.is_prefetch_iterator("Iterator::Root::Prefetch::ParallelMapV2")
    assert not tf.is_prefetch_iterator("Iterator::Model::PrefetchToDevice")
    assert not tf.is_prefetch_iterator("IteratorGetNextOp::DoCompute")


@pytest.mark.parametrize("iterators", [PARALLEL, BOTH])
def test_no_fix_of_the_report_tells_a_tf_data_lever_the_trace_shows_in_use(tmp_path, iterators):
    """The law over the whole report (``in-use``): no finding's words or code tell the stage again."""
    folder = tmp_path / "logs" / "keras" / "plugins" / "profile" / "2023_11_07_18_18_59"
    folder.mkdir(parents=True)
    write_keras_batch_with_map(str(folder / "instance-2.xplane.pb"), iterators=iterators)
    (s,) = discover(str(tmp_path / "logs"))
    (h,) = session_report(s).hosts
    assert "tf_data_parallel" in h.capture["applied"]
    assert not in_use_problems(h.host, h)
