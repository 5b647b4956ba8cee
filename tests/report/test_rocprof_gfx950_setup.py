"""aiter's MXFP4 GEMM benchmark set-up on a gfx950 GPU that rocminfo names only "AMD Radeon Graphics" (kept as
``wild/rocprof_mxfp4_setup_gfx950``, vjelic/aiter-glog-fork, MIT; survey h37-kernames).

The trace holds the benchmark's input set-up alone: 10 random-number and uint8 element-wise kernels (0.04-1.2 ms
each) in three bursts 10.6 and 13.7 ms apart, the host's unrecorded work between them.  Two assumptions were wrong:

* *Consecutive element-wise kernels on a stream are a chain to fuse, however far apart.*  Main read all 10 as one
  chain and put "torch.compile is off ... saves ~3.65 ms (12%)" on top.  A chain to fuse runs back to back: a gap longer
  than a launch and than the kernels beside it is the host's other work, which no fused kernel removes
  (``metrics.kernels._chains_on_stream``).  Control: ``wild/hf_qwen_h100``'s eager Qwen forward, whose chains run
  back to back, keeps its warning and its saving.
* *A generic marketing name is all the capture says of the GPU.*  rocminfo's agent ``Name`` is its GFX id (gfx950):
  the GPU is now "AMD Radeon Graphics (gfx950)", its architecture gfx950, and its peaks the table's models of that
  architecture and CU count at the lowest variant's figure, said so (``devices.peaks`` step 2) -- never a model the
  capture does not name.  Controls: a named GPU (``rocprof_aiter_mi355x``'s "AMD Instinct MI355X") and a generic
  Kineto name that records no GFX id (``amd_mi250``) keep their names.
"""

from __future__ import annotations

from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"
RUN = "rocprof_mxfp4_setup_gfx950"


def _host(run: str):
    (h,) = run_report(WILD, run).hosts
    return h


def test_setup_kernels_milliseconds_apart_are_no_chain_to_fuse():
    h = _host(RUN)
    fuse = [f for f in h.findings if f.rule == "xla_not_used"]
    assert all(f.severity == "info" for f in fuse)  # main: a warning, the top finding, 3.65 ms saved
    assert h.findings[0].rule != "xla_not_used"
    for f in fuse:
        (table,) = [e for e in f.evidence if getattr(e, "title", "") == "Most frequent fusible kernel chains"]
        cols = table.columns
        for row in table.rows:  # every chain left runs back to back: its GPU idle is under its kernels' time
            assert row[cols.index("gap ms")] < row[cols.index("kernel ms")], row
            assert row[cols.index("kernels")] < 10  # main: all 10 kernels, 24.3 ms of gaps inside


def test_back_to_back_chains_still_fuse_control():
    h = _host("hf_qwen_h100")
    (f,) = [f for f in h.findings if f.rule == "xla_not_used"]
    assert f.severity == "warning" and f.saving.ms_per_step > 6.5  # 6.99 ms on main and here


def test_a_generic_amd_name_takes_the_gfx_id_rocminfo_records():
    h = _host(RUN)
    (gpu,) = h.gpus
    assert gpu.name == "AMD Radeon Graphics (gfx950)"  # main: "AMD Radeon Graphics", no architecture
    assert gpu.compute_capability == "gfx950"
    (mfu,) = [c for c in h.headline if c.id == "mfu"]
    source = mfu.detail["peak_source"]
    # the table's figure of the architecture and CU count, the lowest variant's, and said so
    assert "names no model, only its architecture, gfx950, and 256 CUs" in source and "lowest figure" in source


def test_named_amd_gpus_keep_their_names_control():
    assert [g.name for g in _host("rocprof_aiter_mi355x").gpus] == ["AMD Instinct MI355X"]
    assert [g.name for g in _host("amd_mi250").gpus] == ["AMD Radeon Graphics"]
