"""Kernels too small to fill the GPU (issue #37): each reader's launch configuration, the underfill metric, the
``small_grid`` rule.

Why: a kernel launched with fewer thread blocks than its GPU has SMs leaves the others idle however long it runs
(CUDATutorial's ``reduce_baseline``: one block of one thread, 1.04 s, read as "too few steps" before).  The readers'
columns are checked against the files' own values counted here apart from the readers (SQLite, JSON, the XPlane
stat strings); the metric and the rule against a real capture and a generated one whose numbers are known by
construction.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import formats
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.devices import KIND_KERNEL
from tb_gpu_advisor.formats.xplane.adapter import DERIVED_GPU_LINES
from tb_gpu_advisor.formats.xplane.reader import read_timeline
from tb_gpu_advisor.model.trace import DeviceInfo
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"
REDUCE = WILD / "cuda_reduce_baseline" / "report1.sqlite"
CLOVERLEAF = next((FIXTURES / "foreign" / "nsys_a100_cloverleaf").glob("*.sqlite"))
QWEN = next((WILD / "hf_qwen_h100").glob("*.pt.trace.json.gz"))
JAX_MI355X = next((WILD / "jax_mi355x").rglob("*.xplane.pb"))


def _read(path: Path):
    fmt = "nsys" if path.suffix == ".sqlite" else "xplane" if path.name.endswith(".xplane.pb") else "kineto"
    return formats.read(SimpleNamespace(path=str(path), host=path.stem, format=fmt))


def _launches(trace) -> list[tuple[int, int, int, int]]:
    """(GPU, start ps, blocks, threads) of every event the reader gives a launch configuration, sorted."""
    return sorted((d.gpu, int(d.start[i]), int(b), int(t)) for d in trace.devices
                  for i, b, t in zip(*(c.tolist() for c in d.launches())))


# -- readers: the file's own values ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", [REDUCE, CLOVERLEAF], ids=lambda p: p.parent.name)
def test_nsight_kernels_carry_their_grid_and_block(path):
    """Every kernel row of the export's kernel table, with gridX*gridY*gridZ blocks of blockX*blockY*blockZ threads,
    multiplied here from the table itself."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT gridX * gridY * gridZ, blockX * blockY * blockZ FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    con.close()
    got = _launches(_read(path))
    assert len(got) == len(rows) > 0
    assert sorted((b, t) for _, _, b, t in got) == sorted(rows)


def test_the_tutorials_kernel_is_one_block_of_one_thread():
    trace = _read(REDUCE)
    (d,) = trace.devices
    assert d.info.sm_count == 28  # TARGET_INFO_GPU of the RTX 3060
    idx, blocks, threads = d.launches()
    assert blocks.tolist() == [1] and threads.tolist() == [1]
    assert d.names[d.name[idx[0]]].startswith("reduce_baseline")


def test_pytorch_kernels_carry_their_grid_and_block():
    """A real H100 trace: each ``kernel`` event's ``args.grid`` and ``args.block`` products, from the JSON itself."""
    events = json.loads(gzip.decompress(QWEN.read_bytes()))["traceEvents"]
    want = sorted((int(np.prod(e["args"]["grid"])), int(np.prod(e["args"]["block"]))) for e in events
                  if e.get("ph") == "X" and e.get("cat") == "kernel" and "grid" in e.get("args", {}))
    got = _launches(_read(QWEN))
    assert len(want) > 1000 and sorted((b, t) for _, _, b, t in got) == want
    assert min(b for _, _, b, _ in got) < 132 < max(b for _, _, b, _ in got)  # small and large grids both read


def test_xplane_kernels_carry_the_grid_and_block_of_their_details():
    """A real MI355X JAX capture: the ``grid:x,y,z block:x,y,z`` of each kernel's ``kernel_details`` stat, parsed
    here from the raw stat strings."""
    tl = read_timeline(str(JAX_MI355X))
    want = []
    for plane in tl.gpu_planes():
        for ln in plane.lines:
            if not len(ln) or ln.name in DERIVED_GPU_LINES or plane.stat_key("kernel_details") is None:
                continue
            for start, sid in zip(ln.start_ps.tolist(), ln.str_stat("kernel_details").tolist()):
                text = plane.string(sid) if sid >= 0 else None
                g = re.search(r"grid:(\d+),(\d+),(\d+)", text or "")
                b = re.search(r"block:(\d+),(\d+),(\d+)", text or "")
                if g and b:
                    want.append((int(np.prod([int(x) for x in g.groups()])), int(np.prod([int(x) for x in b.groups()]))))
    got = _launches(_read(JAX_MI355X))
    assert len(want) >= 100 and sorted((b, t) for _, _, b, t in got) == sorted(want)


# -- metric and rule: a real capture -----------------------------------------------------------------------------


def test_a_one_thread_kernel_on_28_sms_leads_the_report():
    """CUDATutorial's ``reduce_baseline`` <<<1,1>>> on an RTX 3060: the finding leads, critical, and its saving is the
    kernel's time (less the floor no grid shortens) x (1 - 1/28), the kernel's duration read here from the export."""
    con = sqlite3.connect(f"file:{REDUCE}?mode=ro", uri=True)
    (dur_ns,) = con.execute("SELECT end - start FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    con.close()
    m = host_metrics(_read(REDUCE))
    assert m.underfill.underfilled_ms_per_step == pytest.approx(dur_ns / 1e6, rel=1e-9)
    bound = (dur_ns / 1e6 - T("small_grid.floor_us") / 1000) * (1 - 1 / 28)
    assert m.underfill.idle_ms_per_step == pytest.approx(bound, rel=1e-9)
    findings = [f for f in evaluate(m) if f.severity in ("warning", "critical")]
    top = findings[0]
    assert top.rule == "small_grid" and top.severity == "critical"
    assert top.saving.ms_per_step == pytest.approx(bound, abs=1e-3)
    assert top.saving.ms_per_step <= m.headline.avg_step_ms  # no part above its whole
    row = dict(zip(top.evidence[0].columns, top.evidence[0].rows[0]))
    assert (row["thread blocks"], row["threads each"], row["SMs"]) == (1, 1, "28")
    assert "grid-stride" in top.actions[0].text  # a CUDA program's own fix, not a framework's


# -- metric and rule: truth by construction ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_grid_trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("small_grid")
    (path,) = tt.write_run(str(out), "small_grid")
    return Path(path)


def test_the_generated_small_grid_is_measured_as_built(small_grid_trace):
    """One custom kernel of 4 blocks and 1.5 ms a step on an H100's 132 SMs: 1.5 ms underfilled a step, (1.5 ms - the
    floor) x (1 - 4/132) to save; the MLP's large-grid kernels count for nothing."""
    sc = tt.SCENARIOS["small_grid"]
    m = host_metrics(_read(small_grid_trace))
    u = m.underfill
    assert u.underfilled_ms_per_step == pytest.approx(sc.extra["underfilled_ms"], rel=1e-6)
    assert u.idle_ms_per_step == pytest.approx(sc.extra["idle_sm_ms"], rel=1e-6)
    assert [(k.name, k.blocks, k.threads, k.sm_count) for k in u.top] == [("scan_kernel", 4, 256, 132)]
    (f,) = [f for f in evaluate(m) if f.rule == "small_grid"]
    assert f.saving.ms_per_step == pytest.approx(sc.extra["idle_sm_ms"], abs=1e-3)
    assert f.saving.ms_per_step <= m.headline.avg_step_ms


def test_an_unknown_sm_count_judges_only_one_block_kernels(small_grid_trace):
    """Without the GPU's SM count (and a name the device table does not know) a 4-block kernel is no claim: nothing
    about an unknown GPU's units is said but what holds on every multi-SM GPU."""
    trace = _read(small_grid_trace)
    trace.devices = [dataclasses.replace(d, info=DeviceInfo(name="Some GPU")) for d in trace.devices]
    m = host_metrics(trace)
    assert m.underfill.idle_ms_per_step == 0 and not [f for f in evaluate(m) if f.rule == "small_grid"]
    unknown = host_metrics(_one_block_unknown())
    floor = T("small_grid.floor_us") / 1000
    assert unknown.underfill.idle_ms_per_step == pytest.approx((unknown.underfill.underfilled_ms_per_step - floor) / 2)


def _one_block_unknown():
    """The tutorial's one-block kernel with its GPU's SM count and name dropped: judged against 2 SMs."""
    trace = _read(REDUCE)
    trace.devices = [dataclasses.replace(d, info=DeviceInfo()) for d in trace.devices]
    return trace


def test_an_amd_gpu_hears_of_workgroups_and_cus(small_grid_trace):
    """The same kernels on an MI300X (304 CUs): the finding speaks ROCm's words."""
    trace = _read(small_grid_trace)
    trace.devices = [dataclasses.replace(d, info=DeviceInfo(name="AMD Instinct MI300X", sm_count=304))
                     for d in trace.devices]
    (f,) = [f for f in evaluate(host_metrics(trace)) if f.rule == "small_grid"]
    assert "workgroups" in f.title and "CUs" in f.summary and "SM" not in f.summary
    assert "thread block" not in f.summary


def test_kernels_no_grid_can_shorten_save_nothing():
    """Kernels at the floor every kernel takes (the generated CUDA-graph loop: 300 kernels of 2.5 us, 64 blocks on
    132 SMs) are underfilled but no grid makes them shorter: the bound is 0 and no finding is made."""
    import tempfile

    with tempfile.TemporaryDirectory() as out:
        (path,) = tt.write_run(out, "cuda_graph_tiny")
        m = host_metrics(_read(Path(path)))
    assert m.underfill.underfilled_ms_per_step > 0.5  # the 300 kernels are underfilled
    assert m.underfill.idle_ms_per_step == 0 and not [f for f in evaluate(m) if f.rule == "small_grid"]


def test_kernels_outside_steps_and_copies_are_not_counted(small_grid_trace):
    """Only compute kernels of kept steps count: every kernel of the trace marked a copy leaves nothing."""
    trace = _read(small_grid_trace)
    for d in trace.devices:
        d.kind = np.where(d.kind == KIND_KERNEL, np.int8(KIND_KERNEL + 1), d.kind).astype(d.kind.dtype)
    assert host_metrics(trace).underfill.underfilled_ms_per_step == 0


def test_merged_ranks_keep_each_kernels_launch(small_grid_trace):
    """Two ranks' files merged into one trace (``ranks.merge_ranks``): each launch stays on its own kernel's row,
    the second file's after the first's."""
    from tb_gpu_advisor.formats.kineto.parse import parse_trace
    from tb_gpu_advisor.formats.kineto.ranks import merge_ranks

    a, b = parse_trace(str(small_grid_trace)), parse_trace(str(small_grid_trace))
    m = merge_ranks([a, b], ["w_1", "w_2"])
    assert m.launch_row.tolist() == a.launch_row.tolist() + (b.launch_row + len(a)).tolist()
    assert m.blocks.tolist() == a.blocks.tolist() * 2 and m.threads.tolist() == a.threads.tolist() * 2
    names = [m.names[i] for i in m.name[m.launch_row].tolist()]
    small = [n for n, blocks in zip(names, m.blocks.tolist()) if blocks == 4]
    assert small == [tt.SMALL_GRID_KERNEL] * (2 * 12)  # the kernel of each of the 12 steps written, in both files


def test_the_device_table_gives_an_sm_count_only_where_the_name_says_it():
    """A GPU whose trace gives no SM count gets the device table's only where its name fixes the count: the H100's
    SXM and PCIe variants differ (132, 114), so a bare "H100" gets none; an unknown GPU none."""
    from tb_gpu_advisor import devices

    assert devices.sm_count("NVIDIA H100 80GB HBM3", None)[0] == 132
    assert devices.sm_count("NVIDIA H100 PCIe", None)[0] == 114
    assert devices.sm_count("NVIDIA H100", None) is None and devices.sm_count(None, None) is None
    assert devices.sm_count("AMD Instinct MI300X", None)[0] == 304 and devices.unit_name("AMD Instinct MI300X", None) == "CU"


@pytest.mark.parametrize("path", [JAX_MI355X, next((FIXTURES / "h200_memory" / "jax_mem_mlp").rglob("*.xplane.pb"))],
                         ids=lambda p: p.parts[-5])
def test_both_xplane_decoders_give_the_same_launch_columns(path):
    """The compiled XPlane decoder (``_cwire.c``) and the Python one hand the adapter the same ``kernel_details``
    strings, so each GPU's launch columns are equal (skipped where the decoder is not built)."""
    from tb_gpu_advisor.formats.xplane.adapter import USED_STATS, device_events
    from tests.support.compiled import built
    from tests.support.xplane_paths import read_with

    if built("tb_gpu_advisor.formats.xplane._cwire") is None:
        pytest.skip("the compiled XPlane decoder is not built")
    cols = []
    for use_compiled in (True, False):
        tl = read_with(use_compiled, str(path), keep_stats=USED_STATS)
        devs = [device_events(p) for p in tl.gpu_planes()]
        cols.append([tuple(c.tolist() for c in d.launches()) for d in devs])
    assert cols[0] == cols[1] and sum(len(c[0]) for c in cols[0]) > 100


# -- another stream's kernel beside the small one (h37-survey35) -------------------------------------------------


def _alone_us(events: list[dict], name: str) -> list[float]:
    """Per kernel ``name`` of the trace: its time with no other kernel of the GPU running, from the JSON itself."""
    kernels = [e for e in events if e.get("cat") == "kernel"]
    out = []
    for e in kernels:
        if e["name"] != name:
            continue
        s, t = e["ts"], e["ts"] + e["dur"]
        others = sorted((max(s, o["ts"]), min(t, o["ts"] + o["dur"])) for o in kernels
                        if o is not e and o["ts"] < t and o["ts"] + o["dur"] > s)
        covered, end = 0.0, s
        for a, b in others:
            a = max(a, end)
            if b > a:
                covered, end = covered + b - a, b
        out.append(e["dur"] - covered)
    return out


def test_sms_another_streams_kernel_runs_on_are_no_idle_sms(tmp_path):
    """DeepSeek's fp8 GEMMs of 112 thread blocks ran on an H800's 132 SMs beside DeepEP's all-to-all of 20 (their
    published training profile, h37-survey35): the 20 SMs were the communication's, yet the bound counted them idle
    (147.9% of the step "in" underfilled kernels, 84% to save).  Here the 4-block kernel runs its first 600 us beside a
    kernel of another stream of 20 blocks: only the time it ran alone, read from the JSON, leaves SMs idle; the side
    kernel never ran alone; and the two small kernels are 1.5 ms of the step, not 2.1."""
    (path,) = tt.write_run(str(tmp_path), "small_grid_beside")
    events = json.loads(gzip.decompress(Path(path).read_bytes()) if path.endswith(".gz")
                        else Path(path).read_bytes())["traceEvents"]
    alone = _alone_us(events, tt.SMALL_GRID_KERNEL)
    assert alone and all(a == pytest.approx(tt.SMALL_GRID_US - tt.SIDE_US, abs=0.01) for a in alone)
    assert all(a == pytest.approx(0.0, abs=0.01) for a in _alone_us(events, tt.SIDE_KERNEL))
    m = host_metrics(_read(Path(path)))
    sc = tt.SCENARIOS["small_grid_beside"]
    assert m.underfill.underfilled_ms_per_step == pytest.approx(sc.extra["underfilled_ms"], rel=1e-6)
    assert m.underfill.idle_ms_per_step == pytest.approx(sc.extra["idle_sm_ms"], rel=1e-4)
    (f,) = [f for f in evaluate(m) if f.rule == "small_grid"]
    assert f.saving.ms_per_step <= sc.extra["idle_sm_ms"] + 1e-3


def test_control_a_small_kernel_alone_keeps_its_whole_bound(small_grid_trace):
    """The same kernel with nothing beside it: every microsecond above the floor leaves 128 SMs idle, as before."""
    events = json.loads(gzip.decompress(small_grid_trace.read_bytes()) if small_grid_trace.name.endswith(".gz")
                        else small_grid_trace.read_bytes())["traceEvents"]
    assert all(a == pytest.approx(tt.SMALL_GRID_US, abs=0.01) for a in _alone_us(events, tt.SMALL_GRID_KERNEL))
    m = host_metrics(_read(small_grid_trace))
    assert m.underfill.idle_ms_per_step == pytest.approx(tt.SCENARIOS["small_grid"].extra["idle_sm_ms"], rel=1e-6)
