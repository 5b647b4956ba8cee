"""HIP's module launches record their ``grid`` in work-items: the Kineto reader gives their workgroups (issue #37).

Why: on ROCm, Kineto copies each launch call's own arguments into the kernel's ``grid`` and ``block``.
``hipLaunchKernel``, ``hipModuleLaunchKernel`` and ``hipExtLaunchKernel`` take the grid in workgroups (ATen, Triton,
RCCL); ``hipExtModuleLaunchKernel`` (rocBLAS/hipBLASLt's Tensile ``Cijk_`` kernels, MIOpen) takes HSA's global work
size, in work-items (``devices.amd.WORK_ITEM_GRID_CALLS`` cites the sources).  Read as blocks, a 73728 x 256 GEMM
counts 73728 workgroups instead of 288, and a kernel of 8 workgroups on 304 CUs goes unjudged.  The traces say it
too: every one of their ``hipExtModuleLaunchKernel`` kernels but the transposes below has a grid that is a multiple
of its block in every dimension, while ``hipLaunchKernel`` ones launch 1 x 256.  Checked here against the JSON of
real MI300X/MI210 traces (each kernel's launch call found by its ``correlation``, counted apart from the reader) and
a generated MI300X trace whose workgroups are known by construction.  XPlane on ROCm needs no conversion: XLA's
tracer divides the global size by the workgroup size itself (``test_xplane_on_rocm_reads_grids_as_workgroups``).
"""

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import devices, formats
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.formats.xplane.reader import read_timeline
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"
#: Real ROCm traces whose kernels are launched both ways (``tests/fixtures/wild/PROVENANCE.md``).
AMD_TRACES = [next((WILD / d).glob("*.pt.trace.json.gz"))
              for d in ("ddp_mi300x_actckpt", "amd_mi300x", "cold_mi300x_norm", "mi210_gpu_only", "compiled_mi300x_attn")]
ACTCKPT = AMD_TRACES[0]
JAX_MI300X = next((WILD / "jax_mi300x").rglob("*.xplane.pb"))
#: The launch calls whose ``grid`` is work-items, spelt here apart from the package.
WORK_ITEM_CALLS = ("hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel")


def _read(path: Path):
    fmt = "xplane" if path.name.endswith(".xplane.pb") else "kineto"
    return formats.read(SimpleNamespace(path=str(path), host=path.stem, format=fmt))


def _got(trace) -> list[tuple[str, int, int]]:
    """(kernel name, blocks, threads) of every event the reader gives a launch configuration, sorted."""
    return sorted((d.names[d.name[i]], int(b), int(t)) for d in trace.devices
                  for i, b, t in zip(*(c.tolist() for c in d.launches())))


def _want(path: Path) -> tuple[list[tuple[str, int, int]], int]:
    """From the JSON alone: each kernel's workgroups (``ceil(grid_d / block_d)`` per dimension where its launch call
    takes work-items, else the grid's product) and threads per workgroup, sorted; and how many were work-items."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    call = {e["args"]["correlation"]: e["name"] for e in events
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    out, items = [], 0
    for e in events:
        a = e.get("args", {})
        if e.get("ph") != "X" or e.get("cat") != "kernel" or "grid" not in a:
            continue
        g, b = a["grid"], a["block"]
        if call.get(a.get("correlation")) in WORK_ITEM_CALLS:
            items += 1
            out.append((e["name"], math.prod(-(-x // y) for x, y in zip(g, b)), math.prod(b)))
        else:
            out.append((e["name"], math.prod(g), math.prod(b)))
    return sorted(out), items


@pytest.mark.parametrize("path", AMD_TRACES, ids=lambda p: p.parent.name)
def test_hip_module_launches_read_in_workgroups(path):
    want, items = _want(path)
    assert items > 0 and len(want) > items  # both kinds of launch in the trace
    assert _got(_read(path)) == want


def test_a_partial_workgroup_counts_per_dimension():
    """MIOpen's transpose on an MI300X: global size 784 x 1 x 64 work-items of 256 x 1 x 1 is ceil(784/256) x 64 = 256
    workgroups (the last of each row partial, as HSA allows), not 784 x 64 / 256 = 196 nor 50176."""
    got = {(b, t) for n, b, t in _got(_read(ACTCKPT)) if n == "transpose_NCHW2CNHW_V2_2D_WG_off64"}
    assert (256, 256) in got and (196, 256) not in got and (50176, 256) not in got


def test_merged_ranks_keep_each_kernels_workgroups():
    """Two ranks' files merged (``ranks.merge_ranks``): each launch keeps its workgroups, and each kernel still finds
    its own launch call (correlation ids offset per file), so the merged devices read as each file alone."""
    from tb_gpu_advisor.formats.kineto.adapter import to_trace
    from tb_gpu_advisor.formats.kineto.parse import parse_trace
    from tb_gpu_advisor.formats.kineto.ranks import merge_ranks

    a, b = parse_trace(str(ACTCKPT)), parse_trace(str(ACTCKPT))
    m = merge_ranks([a, b], ["w_1", "w_2"])
    assert m.groups.tolist() == a.groups.tolist() * 2
    want, _ = _want(ACTCKPT)
    assert _got(to_trace(m, "h", str(ACTCKPT), ACTCKPT.stat().st_size)) == sorted(want * 2)


def test_only_hips_work_item_launches_are_converted():
    assert devices.grid_in_work_items("hipExtModuleLaunchKernel") and devices.grid_in_work_items("hipHccModuleLaunchKernel")
    for call in ("hipLaunchKernel", "hipModuleLaunchKernel", "hipExtLaunchKernel", "cudaLaunchKernel", "cuLaunchKernel",
                 "hipGraphLaunch", ""):
        assert not devices.grid_in_work_items(call), call


def test_xplane_on_rocm_reads_grids_as_workgroups():
    """JAX on an MI300X: XLA's tracer already wrote workgroups (``grid:1,1,1 block:512,1,1`` is one workgroup, no
    grid of 1 work-item), so the reader takes ``kernel_details`` as it is, here parsed from the raw bytes."""
    raw = JAX_MI300X.read_bytes().decode("latin-1")
    pairs = {tuple(map(int, m.groups())) for m in re.finditer(r"grid:(\d+),(\d+),(\d+) block:(\d+),(\d+),(\d+)", raw)}
    assert (1, 1, 1, 512, 1, 1) in pairs
    got = {(b, t) for _, b, t in _got(_read(JAX_MI300X))}
    assert got == {(g0 * g1 * g2, b0 * b1 * b2) for g0, g1, g2, b0, b1, b2 in pairs}
    assert len(read_timeline(str(JAX_MI300X)).gpu_planes()) >= 1


# -- truth by construction ---------------------------------------------------------------------------------------

#: A Tensile GEMM of 8 workgroups of 256 work-items, 800 us a step, on an MI300X's 304 CUs: 296 CUs idle.
GEMM = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1"
GEMM_WG, GEMM_US = 8, 800.0


def _hip_step(r: tt.Rank) -> None:
    r.kernel("aten::mm", GEMM, GEMM_US, grid=(GEMM_WG * 256, 1, 1), block=(256, 1, 1),
             launch_call="hipExtModuleLaunchKernel")
    r.kernel("aten::add", "void at::native::vectorized_elementwise_kernel<4>", 50.0, grid=(4096, 1, 1),
             block=(256, 1, 1), launch_call="hipLaunchKernel")
    r.sync()


@pytest.fixture(scope="module")
def hip_trace(tmp_path_factory) -> Path:
    r = tt.Rank(rank=0, pid=4242, device=0)
    for n in range(8):
        r.step(n, _hip_step)
    path = tmp_path_factory.mktemp("hip") / "hip.pt.trace.json"
    path.write_text(json.dumps(tt.trace_doc(r, 1, props=tt.MI300X)))
    return path


def test_a_generated_hip_gemm_of_few_workgroups_is_judged_in_rocm_words(hip_trace):
    """The GEMM's 2048-work-item grid is 8 workgroups: underfilled 0.8 ms a step, (0.8 ms - floor) x (1 - 8/304) to
    save; the elementwise kernel's 4096 workgroups (``hipLaunchKernel``: already workgroups) fill the GPU."""
    m = host_metrics(_read(hip_trace))
    u = m.underfill
    assert [(k.name, k.blocks, k.threads, k.sm_count) for k in u.top] == [(devices.short_kernel_name(GEMM), 8, 256, 304)]
    assert u.underfilled_ms_per_step == pytest.approx(GEMM_US / 1000, rel=1e-6)
    bound = (GEMM_US - T("small_grid.floor_us")) / 1000 * (1 - GEMM_WG / 304)
    assert u.idle_ms_per_step == pytest.approx(bound, rel=1e-6)
    (f,) = [f for f in evaluate(m) if f.rule == "small_grid"]
    assert "8 workgroups" in f.summary and "304 CUs" in f.summary
    said = " ".join([f.title, f.summary, f.saving.assumption, f.evidence[0].title, *f.evidence[0].columns])
    assert "workgroups / CUs" in f.saving.assumption and {"workgroups", "CUs"} <= set(f.evidence[0].columns)
    assert "block" not in said and "SM" not in said
    fixes = " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions)  # the fix is ROCm's, not CUDA's
    # a Tensile GEMM is rocBLAS's: its fix is the library's calls, not a grid of the program's own (h37-words32)
    assert "rocBLAS" in fixes and "rocblas_gemm_strided_batched_ex" in fixes and "hipLaunchKernelGGL" not in fixes
    assert "cuda" not in fixes.lower() and "CUB's cub::" not in fixes and "thread block" not in fixes
    assert f.saving.ms_per_step <= m.headline.avg_step_ms
