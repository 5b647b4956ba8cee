"""TensorFlow 2.3 Keras ``fit`` sessions of another person's job, read by hand (h37-huntxla63): nine
``<host>.xplane.pb`` of Pol-Zeimet/Gestenerkennung_Projektarbeit_2's ``tensorboard_logs.zip`` @0917ed5a (Colab, 2020-08/09:
six sessions on a T4, three on a K80 -- compute capability 3.7, 13 SMs, 11.2 GiB), one profiled batch each.  The
repository has no licence: the files are kept in the session's scratch folder only, and this test skips where they
are absent.  Truth read by hand from each session's ``trace.json.gz``: tf.data's parallel map runs Keras's slicing of
the NumPy arrays (``GatherV2``, 1.17-6.02 ms) on the step's two inter-op threads with no group, while the GPU idles
(0.6-3.5 ms of the step under it in 8 of 9); no op of the step's own graph runs on the host."""

from __future__ import annotations

import glob
import os

import pytest

from tb_gpu_advisor import rules
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

ROOT = os.environ.get("TB_GPU_ADVISOR_WILD63", "/work/wild63/huntxla63/gesten")
FILES = sorted(glob.glob(os.path.join(ROOT, "*", "train", "plugins", "profile", "*", "*.xplane.pb")))
_NINE = pytest.mark.skipif(len(FILES) != 9, reason="the unlicensed captures are not here")


@_NINE
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.split(os.sep)[-6] if len(p.split(os.sep)) > 6 else p)
def test_keras_s_batch_slicing_is_input_work_not_a_host_placed_op(path):
    tr = read_trace(path)
    assert [tr.h.names[tr.h.name[i]].split(":")[1] for i in tr.pipeline_ops] == ["GatherV2", "GatherV2"]
    hm = host_metrics(tr)
    found = {f.id.split(":")[0] for f in rules.evaluate(hm)}
    assert "host_op_placement" not in found
    assert hm.host_ops.count_per_step == 0

