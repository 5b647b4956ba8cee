"""The metrics' context of one capture, as the pipeline builds it (``runtime.pipeline``): for tests that ask a
context-level reading (a mask, an enclosing op, a call group) the report does not show."""

from __future__ import annotations

from tb_gpu_advisor import formats, frameworks
from tb_gpu_advisor.discover.logdir import discover, locate_file
from tb_gpu_advisor.job import detect_job
from tb_gpu_advisor.metrics.context import Context, build_context
from tb_gpu_advisor.model.trace import device_launches
from tb_gpu_advisor.steps.detect import detect_steps


def capture_context(path: str) -> Context:
    """The context of the capture at ``path``: a profile file itself, or a logdir whose first host file is read."""
    found = locate_file(path)
    trace = formats.read(found[2] if found is not None else discover(path)[0].hosts[0])
    fw = frameworks.detect_trace(trace)
    launches = device_launches(trace.h, trace.devices)
    job = detect_job(trace, launches, fw)
    return build_context(trace, detect_steps(trace, launches, job), launches, fw, job=job)
