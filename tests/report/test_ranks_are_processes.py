"""A rank is a process, not a GPU (h37-left20): the session header counts the GPUs of one process as GPUs.

The real TF 2.4 capture of BERT on 8 x V100 (``../shared/profiles/v100_bert_8gpu_tf24.xplane.pb``) is one process's
file -- one ``/host:CPU`` plane, its ops named per MirroredStrategy replica (``replica_4/...``, ``replica_6/...``) --
driving GPUs 4 and 6; main's header read "2 ranks on 1 host".  The synthetic ``multi_host`` scenario is, by
construction, two MultiWorkerMirroredStrategy workers (one file each) of two GPUs each.  Controls: the ranks of a
PyTorch DDP job (a process per GPU) stay ranks.
"""

from __future__ import annotations

import shutil
from types import SimpleNamespace as NS

import numpy as np
import pytest

from synthetic import scenarios as S
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.xplane.reader import read_timeline
from tb_gpu_advisor.metrics.multigpu import processes
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report import render
from tests.support.paths import DEMO_LOGS, SHARED_PROFILES
from tests.support.report_store import session_report

V100 = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"


def _session(root) -> Report:
    (s,) = discover(str(root))
    return session_report(s)


def _header(r: Report) -> str:
    return render.to_text(r).splitlines()[0]


def test_one_process_driving_two_gpus_is_not_two_ranks(tmp_path):
    if not V100.is_file():
        pytest.skip(f"{V100} not present")
    tl = read_timeline(str(V100))
    assert [p.name for p in tl.planes if p.name.startswith("/host:")] == ["/host:CPU"]  # one process's profile
    dst = tmp_path / "v100" / "plugins" / "profile" / "2021_06_01_00_00_00"
    dst.mkdir(parents=True)
    shutil.copyfile(V100, dst / V100.name)
    r = _session(tmp_path)
    assert r.hosts[0].capture["processes"] == 1
    head = _header(r)
    assert "2 GPUs in 1 process on 1 host" in head and "(median of 2 GPUs)" in head and "rank" not in head
    assert r.ranks.title.startswith("GPUs")
    assert "\nGPUs (2, mean per step" in render.to_text(r)


def test_two_workers_of_two_gpus_are_two_processes(tmp_path):
    S.multi_host().write(tmp_path)
    r = _session(tmp_path)
    assert [h.capture["processes"] for h in r.hosts] == [1, 1]
    assert "4 GPUs in 2 processes on 2 hosts" in _header(r)
    assert "Collectives per step (median GPU)" in render.to_text(r)


def test_ranks_of_a_process_each_stay_ranks():
    r = _session(DEMO_LOGS / "pytorch_ddp_straggler")
    assert sum(h.capture["processes"] for h in r.hosts) == 4
    assert "4 ranks on 1 host" in _header(r) and r.ranks.title.startswith("Ranks")


def test_processes_are_groups_of_gpus_sharing_host_lines():
    def n(lines, ids, ranks=None):
        return processes(NS(trace=NS(gpu_host_lines={g: np.asarray(v, np.int64) for g, v in lines.items()},
                                     gpu_ranks=ranks or {})), ids)

    assert n({}, [0, 1, 2, 3]) == 1  # no line per GPU: one process's lines drive them all
    # no line per GPU, but each GPU's job rank stated (a fused file filtered to its GPU events, args.rank): a rank is
    # a process (1 before session 68: the TraceLens NCCL-only file's 4 ranks read as one process)
    assert n({}, [2, 3, 4, 5], {2: 0, 3: 1, 4: 2, 5: 3}) == 4
    assert n({}, [0, 1, 2, 3], {0: 0, 1: 1}) == 3  # the GPUs of no stated rank: one process more
    assert n({0: [1], 1: [2], 2: [3]}, [0, 1, 2]) == 3  # DDP: a process per GPU
    assert n({0: [1, 2], 1: [2, 3], 2: [5]}, [0, 1, 2]) == 2  # GPUs 0 and 1 share line 2: one process
    assert n({0: [1]}, []) == 0
