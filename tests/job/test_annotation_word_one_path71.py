"""The job's words for the program's annotations (``job.kind._annotated_training_steps``: Kineto's
``record_function("train_step")``) come by the one path the steps' notes take, ``frameworks.ranges_word``
(h37-homes71's Left 3; h37-onehome71).  Before (main a717fd14) the job read ``Framework.annotation_ranges`` itself.

Fails on a717fd14: a ``ranges_word`` that says another word leaves the job's words unchanged.  The control (passes
there too): the job says "the program's record_function ranges" for PyTorch's annotations, as before.
"""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats.xplane.adapter import to_trace
from tb_gpu_advisor.formats.xplane.reader import parse_timeline
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.job import kind
from tests.support.tiny_capture import Cap


def _annotated():
    """Four ``train_step`` host events kept as annotations among the ops (``Trace.annotations``), no range table."""
    cap = Cap()
    for k in range(4):
        cap.host_ev("train_step", 1_000.0 * k, 800.0)
        cap.kernel(1_000.0 * k + 100.0, 300.0, launch_us=1_000.0 * k + 50.0)
    trace = to_trace(parse_timeline(cap.space.encode()))
    trace.ranges = None
    trace.annotations = np.flatnonzero(trace.h.name_mask(lambda n: n == "train_step"))
    return trace


def test_the_job_names_annotations_as_before():
    said = kind._annotated_training_steps(_annotated(), pytorch.FRAMEWORK)
    assert said.startswith("the program's record_function ranges name training steps (4 ranges"), said


def test_the_job_asks_the_one_word(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(frameworks, "ranges_word", lambda trace, fw=None: "marked spans")
    said = kind._annotated_training_steps(_annotated(), pytorch.FRAMEWORK)
    assert said.startswith("the program's marked spans name training steps"), said
