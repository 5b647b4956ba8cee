"""Each kind of all-to-all told its own fix, on random jobs with truth by construction (issue #37 class 3,
h37-a2afix; ``synthetic.randjobs.random_form9_job``, ``scripts/randjobs.py --forms9``).

One rank's NCCL all-to-all (point-to-point kernels a ``c10d::alltoall_base_`` op names), exposed, beside the work
its kind runs: a recommender's embedding lookups, an MoE's router top-k and grouped GEMM, sequence parallelism's
projection and attention.  The law (``truth_problems`` -> ``exchange_problems``): the fix names its own kind and no
other's, and a forward pass hears no training word.  Main told all three TorchRec's pipeline "(embedding or expert
exchange)": both kinds' words at once, and a training pipeline to a forward pass.
"""

from __future__ import annotations


import pytest

from synthetic.randjobs import EXCHANGE_KINDS, TRUTH, form9_job, random_form9_job
from tests.support.random_jobs import exchange_problems, laws_broken, reports_of, truth_problems, walk


def _job(kind: str, train: bool):
    return form9_job(kind=kind, steps=4, layers=2, a2a_us=400.0, work_us=150.0, train=train,
                     marker="profiler_step", loader_us=0.0)


@pytest.mark.parametrize("kind", EXCHANGE_KINDS)
@pytest.mark.parametrize("train", [True, False])
def test_each_kind_of_all_to_all_is_told_its_own_fix(kind: str, train: bool) -> None:
    job = _job(kind, train)
    (r,) = reports_of(job)
    assert any(f.rule == "comm_exposed" for f in r.findings)  # the law below has a finding to read
    assert not exchange_problems(TRUTH[job.seed], r), exchange_problems(TRUTH[job.seed], r)
    assert r.hosts[0].job["tags"][-1] == f"exchange_{kind}"
    assert not truth_problems(job, r) and not laws_broken(r)


def test_the_a2a_form_walks_clean_under_every_law() -> None:
    """Four seeds of ``--forms9`` (0 draws experts, 1 and 2 embeddings, 3 sequence), every law and the truth of
    construction."""
    assert {random_form9_job(s).params["kind"] for s in range(4)} == set(EXCHANGE_KINDS)
    assert walk(range(4), random_form9_job) == {"a2a"}
