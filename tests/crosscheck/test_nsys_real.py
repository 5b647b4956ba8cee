"""The three real Nsight Systems exports of ``../shared/profiles/nsys``, checked against what they hold.

``TRUTH.json`` beside them gives the first one (``h100_fsdp_window``: host-to-device copies fill 96% of the GPUs'
window; the top finding must say so, not input- or launch-bound).  The other two (a before/after pair of a 2-GPU
FSDP job, 0.3 s each, no known injected problem) were read with sqlite3 for this test; their truth -- what a right
analysis finds and what it must not claim -- is :data:`EXTENDED_TRUTH`, in ``TRUTH.json``'s own form, scored by the
shared scorer (``../shared/tools/score_real.py``) like every real set; the numbers each holds are checked on the
reader's trace.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.model.columns import union_intervals
from tests.support.paths import DEMO_LOGS, REPO, SHARED_PROFILES
from tests.support.real_checks import our_report

NSYS = SHARED_PROFILES / "nsys"
SCORER = SHARED_PROFILES.parent / "tools" / "score_real.py"
pytestmark = pytest.mark.skipif(not (NSYS / "TRUTH.json").is_file(), reason=f"real Nsight exports not found in {NSYS}")

#: What a right analysis says of either half of the before/after FSDP pair: nothing is wrong but the window's length.
_FSDP_MFU = {
    "kind": "nsys", "gpus": 2, "dtype": "bfloat16",
    "expect_top": [], "allow": ["capture_quality"],
    "expect_not": ["input_bound", "excessive_memcpy", "mixed_precision_off", "tensor_core_unused", "launch_bound",
                   "host_sync"],
}

#: Read off the exports with sqlite3 (per GPU: kernels, NCCL kernels, host-to-device copies; host syncs across
#: ranks, as wall time) and what the analysis must and must not say about them.
EXTENDED_TRUTH = {
    "h100_fsdp_window": {
        "kind": "nsys", "gpus": 2, "dtype": "float32",
        "expect_top": ["excessive_memcpy"], "expect_not": ["input_bound", "launch_bound"],
        "file": "h100_2gpu_1s.sqlite",
        "kernel_ms": {0: 22.385, 1: 22.444}, "kernels": {0: 1721, 1: 1721}, "nccl_ms": {0: 0.0, 1: 0.0},
        "h2d_pinned": {"count": 223, "gb": 25.475, "ms": 921.0}, "sync_wall_ms": 428.6,
        "top_kernel": "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8",
        "note": "1 s of a 2 x H100 FSDP run under pytest (FastVideo's test_inference_performance, wan-t2v-1.3b: the "
                "T5 encoder's forward pass, per META_DATA_CAPTURE): per GPU 921 of 960 ms is host-to-device copies "
                "(pinned, up to 4.2 GB each); 22.4 ms of fp32 FFMA GEMMs; two 428 ms cudaStreamSynchronize under "
                "aten::item",
    },
    "fsdp_mfu_before": {
        **_FSDP_MFU,
        "file": "mfu_2gpu_before.sqlite",
        "kernel_ms": {0: 270.876, 1: 264.325}, "kernels": {0: 1993, 1: 2017}, "nccl_ms": {0: 17.173, 1: 8.229},
        "sync_wall_ms": 175.5, "top_kernel": "void flash::flash_fwd_kernel<",
        "note": "0.3 s of a 2-GPU FSDP job with activation checkpointing: GPUs ~90% busy with flash attention and "
                "bf16 nvjet GEMMs, NCCL SendRecv (all-to-all); only the window's length is a problem (too few steps)",
    },
    "fsdp_mfu_after": {
        **_FSDP_MFU,
        "file": "mfu_2gpu_after.sqlite",
        "kernel_ms": {0: 237.473, 1: 251.362}, "kernels": {0: 1793, 1: 1794}, "nccl_ms": {0: 9.989, 1: 23.753},
        "sync_wall_ms": 157.9, "top_kernel": "void flash::flash_fwd_kernel<",
        "note": "the same job after a change: 237-251 ms of kernels per 300 ms",
    },
}


def _trace(run: str):
    return read_trace(str(NSYS / run / EXTENDED_TRUTH[run]["file"]))


@pytest.mark.skipif(not SCORER.is_file(), reason="the shared scorer is not here")
def test_score_real_with_the_extended_truth(tmp_path):
    truth = {run: {k: v for k, v in t.items() if k in ("kind", "gpus", "dtype", "expect_top", "expect_not", "allow", "note")}
             for run, t in EXTENDED_TRUTH.items()}
    shared = json.loads((NSYS / "TRUTH.json").read_text())
    for run, t in shared.items():  # the shared truth is part of ours, unchanged
        assert {k: truth[run][k] for k in t if k != "note"} == {k: v for k, v in t.items() if k != "note"}
    path = tmp_path / "TRUTH.json"
    path.write_text(json.dumps(truth))
    out = subprocess.run([sys.executable, str(SCORER), str(NSYS), str(path), f"{sys.executable} -m tb_gpu_advisor.cli",
                          "--verbose"], capture_output=True, text=True, timeout=600, cwd=str(REPO), check=False)
    assert out.returncode == 0 and "real captures right on every check: 3/3" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("run", sorted(EXTENDED_TRUTH))
def test_numbers_each_export_holds(run):
    want = EXTENDED_TRUTH[run]
    t = _trace(run)
    assert len(t.devices) == want["gpus"]
    names = {}
    for d in t.devices:
        k = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
        nccl = d.kind == devices.KIND_COLLECTIVE
        assert int(k.sum()) == want["kernels"][d.gpu]
        assert float((d.end[k] - d.start[k]).sum()) / 1e9 == pytest.approx(want["kernel_ms"][d.gpu], abs=0.002)
        assert float((d.end[nccl] - d.start[nccl]).sum()) / 1e9 == pytest.approx(want["nccl_ms"][d.gpu], abs=0.002)
        for i in np.flatnonzero(k):
            names[d.names[d.name[i]]] = names.get(d.names[d.name[i]], 0) + int(d.end[i] - d.start[i])
        if "h2d_pinned" in want:
            h2d = np.array([n == "Memcpy HtoD (Pinned -> Device)" for n in d.names])[d.name]
            assert int(h2d.sum()) == want["h2d_pinned"]["count"]
            assert float(d.mem_bytes[h2d].sum()) / 1e9 == pytest.approx(want["h2d_pinned"]["gb"], abs=0.001)
            assert float((d.end[h2d] - d.start[h2d]).sum()) / 1e9 == pytest.approx(want["h2d_pinned"]["ms"], abs=0.5)
    assert max(names, key=names.get).startswith(want["top_kernel"])
    sync = t.h.name_mask(devices.is_sync_call)
    s, e = union_intervals(t.h.start[sync].astype(np.int64), t.h.end[sync].astype(np.int64))
    assert float((e - s).sum()) / 1e9 == pytest.approx(want["sync_wall_ms"], abs=0.5)


def _report(run: str) -> dict:
    """``report NSYS --run RUN --format json`` through the command's own code in this process
    (``real_checks.our_report``: the run's shared report cache of the kept sets)."""
    res = our_report(NSYS, run)
    assert res.report is not None, res.error
    return res.report


def test_h100_window_top_finding_is_the_copies():
    """The copies fill 95-96% of the analysed window (969 ms: the window holds host work before the first copy),
    their fix is named; the fp32 GEMMs come next, as notes: they would save about 1% of the window (issue #37 item 4:
    a fix that saves under a few per cent is info, whatever its share of GPU time); the GPU model is said to be
    missing."""
    rep = _report("h100_fsdp_window")
    bad = [f for f in rep["findings"] if f["severity"] in ("warning", "critical")]
    top = bad[0]
    assert top["rule"] == "excessive_memcpy" and top["severity"] == "critical"
    assert top["metric"]["value"] >= 0.9
    fp32 = [f for f in rep["findings"] if f["rule"] in ("mixed_precision_off", "tensor_core_unused")]
    assert len(fp32) == 2 and all(f["severity"] == "info" and f["saving"]["percent_of_step"] < 100 * T(
        "severity.warning_min_saving") for f in fp32)
    host = rep["hosts"][0]
    assert host["capture"]["framework"] == "pytorch"
    assert any("GPU model: not in this export" in n for n in host["capture"]["notes"])
    assert "Nsight Systems timeline" in host["capture"]["time_base"]


def test_diff_of_the_before_after_pair(capsys):
    before = NSYS / "fsdp_mfu_before" / EXTENDED_TRUTH["fsdp_mfu_before"]["file"]
    after = NSYS / "fsdp_mfu_after" / EXTENDED_TRUTH["fsdp_mfu_after"]["file"]
    code = cli.main(["diff", str(before), str(after), "--format", "json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0
    # each window is one step since h37-left58 (its one long gap lies inside one op): no step was found in either
    # 300 ms slice of the job, so each "step" is its window's length (290.4 vs 298.6 ms of work launched in it) -- no
    # step time to compare: no verdict (a36 said SLOWER, +2.8%, on the 1% floor alone) and no CI gate, each side
    # saying why (the two-burst reading before it had made the verdict "unchanged" on a 95% spread)
    assert d["step"]["noise_ms"] is None and d["step"]["base_ms"] > 0 and d["step"]["new_ms"] > 0
    assert d["step"]["verdict"] == "unknown" and d["step"]["delta_ms"] > 0
    assert all("no step found" in d[w]["window"] and "300.0 ms capture window" in d[w]["window"] for w in ("base", "new"))
    assert any(n.startswith("base: no step found") and "not a step's" in n for n in d["notes"])
    assert cli.main(["diff", str(before), str(after), "--fail-on-regression", "1"]) == 0  # +2.8% > 1%: no gate
    capsys.readouterr()
    # the largest kernel change is flash attention's: per SQL 256.6 -> 240.8 ms over both GPUs and each window's one
    # step (2 kept steps before h37-left58: 64.1 -> 60.2 ms per step and GPU then) (issue #36: the diff printed the sum over GPUs, 136 -> 120 ms
    # "per step" beside a 150 ms step) -- the kernels launched in each window: the before window's first burst opens
    # with 15.7 ms of flash kernels (both GPUs) launched before it, no part of its first step (h37-left56; 272.3 ms
    # with them)
    top = d["kernels"][0]
    assert "flash_fwd_kernel" in top["key"] and top["base"] > top["new"] > 0
    assert top["base"] == pytest.approx(256_600 / 2, rel=0.01) and top["new"] == pytest.approx(240_800 / 2, rel=0.01)


def test_diff_of_an_nsight_capture_against_a_pytorch_trace(capsys):
    torch_trace = next((DEMO_LOGS / "pytorch_input_bound").glob("*.pt.trace.json*"), None)
    if torch_trace is None:
        pytest.skip("no PyTorch demo trace")
    base = NSYS / "fsdp_mfu_before" / EXTENDED_TRUTH["fsdp_mfu_before"]["file"]
    code = cli.main(["diff", str(base), str(torch_trace), "--format", "json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["step"]["base_ms"] > 0 and d["step"]["new_ms"] > 0
    assert any(f["rule"] == "input_bound" and f["status"] == "new" for f in d["findings"])
