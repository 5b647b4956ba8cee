"""The launch-bound finding counts kernels per step of one GPU, as the step and the launch wait it reads them beside
(h37-review8).  A host file of several GPUs (one process driving two, TF's MirroredStrategy; two ranks in one Nsight
export) counted every GPU's kernels per step: the real v100_bert (two V100s in one process, 665 kernels a step each)
read "1,086 of 1,330 kernels per step" and "Cast, 585 calls per step taking 6.97 ms" in the 20.6 ms step of one GPU,
and its saving kept 1 us for each of the 1,086 kernels -- twice the launches a fused graph of one GPU makes.

Truth: each GPU's own kernel count in the kept steps (``GpuMetrics.kernel_count``), counted by the multi-GPU stage."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.rules.base import Ctx, kernels_per_step
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics
from tests.support.paths import FIXTURES, SHARED_PROFILES

V100_BERT = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"


def _metrics(logdir):
    s = discover(str(logdir))[0]
    return host_metrics(read(s.hosts[0]))


def test_kernels_per_step_are_one_gpus_on_a_host_of_two_gpus():
    """wild/tp_rtx4090_two_ranks: two tensor-parallel ranks read as one host of two GPUs, each with its own kernels."""
    m = _metrics(FIXTURES / "wild" / "tp_rtx4090_two_ranks")
    gpus = [g.kernel_count for g in m.gpus if g.kernel_count]
    assert len(gpus) == 2 and m.steps.count >= 1
    assert m.headline.kernel_count == sum(gpus)  # the headline counts both GPUs' kernels
    assert kernels_per_step(m, Ctx(m)) == pytest.approx(sum(gpus) / len(gpus) / m.steps.count)


def test_a_host_of_one_gpu_counts_as_before():
    """Control: on one GPU the host's count is the GPU's (wild/amd_mi300x, 60 kernels a step)."""
    m = _metrics(FIXTURES / "wild" / "amd_mi300x")
    assert len([g for g in m.gpus if g.kernel_count]) == 1
    assert kernels_per_step(m, Ctx(m)) == pytest.approx(m.headline.kernel_count / m.steps.count)


@pytest.fixture(scope="module")
def bert():
    if not V100_BERT.is_file():
        pytest.skip(f"the real V100 BERT capture (../shared/profiles) is not here ({V100_BERT})")
    return analyze_host(SimpleNamespace(host="v100_bert", path=str(V100_BERT), format="xplane"))


def test_the_launch_finding_of_two_gpus_in_one_process_counts_one_gpus_kernels(bert):
    (f,) = [f for f in bert.findings if f.rule == "launch_bound"]
    steps = bert.steps["count"]
    per_gpu = [g.kernel_count / steps for g in bert.gpus if g.kernel_count]
    assert len(per_gpu) == 2
    said = re.search(r"([\d,]+) of ([\d,]+) kernels (?:per step|in the step|in the pass)", " ".join(f.summary.split()))
    small, every = (int(x.replace(",", "")) for x in said.groups())
    assert min(per_gpu) <= every <= max(per_gpu)  # main: 1,330, both GPUs' 665
    assert f.metric.detail["small_kernels_per_step"] == pytest.approx(small, abs=0.5) and small <= every
    # the offenders' calls and time per step are one GPU's too: together within that GPU's kernels and step
    (t,) = [t for t in f.evidence if "calls/step" in t.columns]
    calls = sum(row[t.columns.index("calls/step")] for row in t.rows)
    busy = sum(row[t.columns.index("ms/step")] for row in t.rows)
    assert calls <= small + 0.5 and busy <= max(g.step_ms for g in bert.gpus)
