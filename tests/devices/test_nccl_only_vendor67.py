"""A GPU whose file's only vendor word is NCCL's is NVIDIA's or AMD's: PyTorch drives it as ``cuda`` on both builds,
so its code says ``torch.cuda`` / ``ProfilerActivity.CUDA`` as written, and its prose names no CUDA-only library or
tool (h37-late67; ``devices.nccl_gpu``).

Real trace: amd/HPCTrainingExamples ``MLExamples/TraceLens/fused_traces/merged_nccl_only.json.gz`` @82661816 (MIT,
kept out of the repository; ``TB_GPU_ADVISOR_NCCL_ONLY``): NCCL kernels and ``nccl:*`` GPU ranges alone.  On base its
GPUs were "GPU of unknown vendor" and its profiler snippet ``ProfilerActivity.<DEVICE>`` under a placeholder legend.

Generator (truth by construction): ``synthetic.torchtrace.collectives_only_like_tracelens`` of
``write_late_rank_fused``'s file: NCCL's kernels and ranges, nothing else of any vendor.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from synthetic.torchtrace import write_collectives_only
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

NCCL_ONLY = Path(os.environ.get("TB_GPU_ADVISOR_NCCL_ONLY")
                 or "/work/wild66/huntk66/runs/ncclonly/merged_nccl_only.json.gz")
CUDA_ONLY = re.compile(r"cuDNN|cudnn|nsys|Nsight|CUPTI|<DEVICE>|<device>")


def _said(path) -> tuple[object, list[str], list[str]]:
    m = host_metrics(read_trace(str(path)))
    fs = evaluate(m)
    prose = [t for f in fs for t in (f.title, f.summary, *(a.text for a in f.actions))]
    code = [a.snippet for f in fs for a in f.actions if a.snippet]
    return m, prose, code


def _check(m, prose, code) -> None:
    assert m.job.gpu_vendor == devices.NCCL_GPU
    assert {g.name for g in m.gpus if g.active} == {devices.nccl_gpu.GPU_NAME}
    assert any("ProfilerActivity.CUDA" in c for c in code), code
    assert not [t for t in prose + code if CUDA_ONLY.search(t)]


def test_generated_nccl_only_file_says_torch_cuda(tmp_path):
    """Fails on base: "GPU of unknown vendor", ``ProfilerActivity.<DEVICE>``."""
    only = tmp_path / "merged_nccl_only.json"
    write_collectives_only(str(only))
    _check(*_said(only))


def test_the_real_nccl_only_file_says_torch_cuda():
    """Fails on base, as the generated one."""
    if not NCCL_ONLY.is_file():
        pytest.skip(f"{NCCL_ONLY} is not here (a real trace kept out of the repository)")
    _check(*_said(NCCL_ONLY))
