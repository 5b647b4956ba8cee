"""The kept H200 wait twins (tests/fixtures/h200_waits) read once per test session: several test modules check
metrics of the same runs, and reading a run is the slow part."""

from __future__ import annotations

from functools import lru_cache

from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

WAITS = FIXTURES / "h200_waits"


@lru_cache(maxsize=None)
def waits_metrics(run: str):  # noqa: ANN201
    """The one host's metrics of a kept run."""
    (s,) = discover(str(WAITS / run))
    (hf,) = s.hosts
    return host_metrics(formats.read(hf))
