"""A collective kernel whose name says no type (``ncclDevKernel_Generic``) and whose launching op is not held is typed
by the c10d range Kineto drew over it on the GPU (``nccl:all_reduce``, ``nccl:broadcast``; h37-late67).

Real trace: amd/HPCTrainingExamples ``MLExamples/TraceLens/fused_traces/merged_nccl_only.json.gz`` @82661816 (MIT,
4.4 KB, kept out of the repository; ``TB_GPU_ADVISOR_NCCL_ONLY`` points at it): 84 ``ncclDevKernel_Generic`` kernels
under 60 ``nccl:all_reduce`` and 24 ``nccl:broadcast`` GPU ranges, no host event.  On base all 84 were of type
"collective".

Generator (truth by construction): ``synthetic.torchtrace.collectives_only_like_tracelens`` of
``write_late_rank_fused``'s file, its kernels renamed ``ncclDevKernel_Generic`` as NCCL 2.19+ names them and the
c10d range drawn over each as Kineto draws it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthetic.torchtrace import write_collectives_only
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

NCCL_ONLY = Path(os.environ.get("TB_GPU_ADVISOR_NCCL_ONLY")
                 or Path(__file__).resolve().parents[1] / "fixtures" / "real" / "tracelens_merged_nccl_only.json.gz")
GENERIC = "ncclDevKernel_Generic(ncclDevComm*, channelMasks, ncclWork*)"


def test_generated_generic_kernels_take_their_ranges_type(tmp_path):
    """Fails on base: the generic kernels read as type "collective"."""
    def generic(only: dict) -> None:
        for e in [e for e in only["traceEvents"] if e.get("cat") == "kernel"]:
            # the c10d range Kineto draws over each call on the GPU, the kernel's name NCCL 2.19+'s
            only["traceEvents"].append({"ph": "X", "cat": "gpu_user_annotation", "name": "nccl:all_reduce",
                                        "pid": e["pid"], "tid": e["tid"], "ts": e["ts"] - 1.0, "dur": e["dur"] + 2.0,
                                        "args": {"rank": e["args"]["rank"]}})
            e["name"] = GENERIC

    out = tmp_path / "merged_nccl_only.json"
    write_collectives_only(str(out), edit=generic)
    m = host_metrics(read_trace(str(out)))
    assert [r.type for r in m.comm.by_type] == ["AllReduce"]


def test_the_real_nccl_only_file_names_its_all_reduces_and_broadcasts():
    """Fails on base: one type, "collective", for all 84 kernels."""
    if not NCCL_ONLY.is_file():
        pytest.skip(f"{NCCL_ONLY} is not here (a real trace kept out of the repository)")
    m = host_metrics(read_trace(str(NCCL_ONLY)))
    assert sorted(r.type for r in m.comm.by_type) == ["AllReduce", "Broadcast"]


def test_a_collectives_only_files_header_counts_no_steps(tmp_path):
    """Fails on base: the header read "1 host, N steps, step X ms" off the collectives' GPU bursts, which are no steps
    of the job (the finding says so; h37-late67)."""
    from types import SimpleNamespace

    from tb_gpu_advisor.report.render import to_text
    from tb_gpu_advisor.runtime.pipeline import analyze_session

    out = tmp_path / "merged_nccl_only.json"
    write_collectives_only(str(out))
    rep = analyze_session("run", "s", [SimpleNamespace(host="nccl", path=str(out), format="kineto")])
    head = to_text(rep).splitlines()[0]
    assert "collectives only: no step of the job in it" in head and " steps" not in head, head
