"""``get_memory`` of a session with no allocator events says how the framework that wrote it records them
(``Framework.memory_record``), not PyTorch's ``profile_memory=True`` whatever wrote it (review70: a TensorFlow
XPlane's or an Nsight export's empty memory view named PyTorch's option).  Fails on main 492a2e11 and base dbf6cf15."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.model.schema import HostReport, Report
from tb_gpu_advisor.serve.mcp_server import memory_text


def _empty(*frameworks: str) -> str:
    hosts = [HostReport(f"h{i}", f"/x/h{i}", 1, capture={"framework": fw}) for i, fw in enumerate(frameworks)]
    return memory_text(Report("run", "s", hosts, [], [], True, "a", "t"), "markdown")


@pytest.mark.parametrize("fw", ["tensorflow", "jax"])
def test_an_xplane_session_is_told_its_own_profiler(fw: str):
    text = _empty(fw)
    assert "profile_memory" not in text and "torch" not in text
    assert "host_tracer_level" in text and "MemoryAllocation" in text


def test_a_session_of_no_framework_is_told_no_framework_option():
    text = _empty("native")
    assert "No allocator events in this session" in text
    assert "profile_memory" not in text and "host_tracer_level" not in text


def test_a_pytorch_session_keeps_its_words():
    """Control (passes on base): a PyTorch session is told its own option."""
    assert "profile_memory=True" in _empty("pytorch")


def test_two_writers_are_each_told_theirs_once():
    both = _empty("pytorch", "tensorflow", "pytorch")
    assert both.count("PyTorch: ") == 1 and "TensorFlow: " in both and "host_tracer_level" in both
