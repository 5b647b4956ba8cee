"""A GPU that names itself not is named from its properties where the device tables hold exactly one model that fits
them all (h37-follow30, issue #37; h37-survey65's left item 4).

The wrong assumption (``formats.xplane.adapter.device_info``): *a GPU is known only by its name*.  TF 2.x wrote the
ECBM4040 T4 XPlanes' GPU plane with no ``gpu_device_name`` stat, only ``compute_cap`` 7.5, 40 SMs and 14.8 GiB: the
report showed "GPU:0" and estimated its peaks from the generation's rates.  Those three properties fit one table
entry, the T4, whose datasheet peaks now apply, the name saying it was inferred.  Where more than one entry fits (an
A100's 8.0 and 108 SMs: four variants), an entry's memory is not tabled, a property is missing, or no entry fits (an
RTX 2070 SUPER: 7.5, 40 SMs, 8 GiB), the GPU stays unknown.

Generator: :func:`synthetic.tfcapture.write_grouped_keras_batch` (its T4 plane carries no name stat), truth by
construction (the properties written).
"""

from __future__ import annotations

import dataclasses

import pytest

from synthetic.tfcapture import A100, T4, write_grouped_keras_batch
from tb_gpu_advisor import devices
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.metrics.types import GpuMetrics
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics
from tests.support.properties import name_once_problems, report_violations


def _gpu(tmp_path, **kw) -> GpuMetrics:
    path = tmp_path / "instance-2.xplane.pb"
    write_grouped_keras_batch(str(path), **kw)
    (gpu,) = host_metrics(read_trace(str(path))).gpus
    return gpu


def test_a_t4_plane_without_a_name_is_named_from_its_properties_and_gets_its_peaks(tmp_path):
    """Main: "GPU:0" in the GPUs table, its fp32 peak the Turing estimate from SMs x clock."""
    gpu = _gpu(tmp_path)
    assert gpu.name is not None and "T4" in gpu.name and "inferred" in gpu.name, gpu.name
    named = devices.peak_flops("Tesla T4", T4.cc, devices.P_FP32)
    assert devices.peak_flops(gpu.name, T4.cc, devices.P_FP32).value == named.value
    assert devices.memory_bandwidth(gpu.name, T4.cc).value == devices.memory_bandwidth("Tesla T4", T4.cc).value


@pytest.mark.parametrize("case", ["ambiguous", "missing", "unlisted"])
def test_control_an_unnamed_gpu_no_single_entry_fits_stays_unknown(tmp_path, case):
    """An A100's properties fit four variants; a T4 without its memory stat lacks a property; a 7.5 / 40-SM / 8 GiB
    device (RTX 2070 SUPER) fits no entry: none is named."""
    kw = {"ambiguous": {"gpu_props": A100}, "missing": {"omit": ("memory_size",)},
          "unlisted": {"gpu_props": dataclasses.replace(T4, memory=8 << 30)}}[case]
    assert _gpu(tmp_path, **kw).name == "GPU:0"  # the GPUs table's unnamed device


def test_inferred_model_by_its_properties():
    """The table's side, by construction: the T4's datasheet memory (16 GiB) less what ECC and the driver hold back."""
    assert "T4" in devices.inferred_model((7, 5), 40, T4.memory)
    assert devices.inferred_model((7, 5), 40, 17 << 30) is None  # more memory than the T4 has
    assert devices.inferred_model((7, 5), 40, None) is None
    assert devices.inferred_model(None, 40, T4.memory) is None
    assert devices.inferred_model((8, 0), 108, A100.memory) is None  # four A100 variants


def test_findings_name_an_inferred_gpu_by_its_model_and_the_gpus_table_says_why(tmp_path):
    """h37-review30.  Main b6073b11: the mixed-precision finding said "on NVIDIA T4 (inferred from compute capability
    7.5, 40 SMs, 14.8 GiB) (sm7.5)" and its peaks "dense on NVIDIA T4 (inferred from ...)", the Tensor-Core finding
    "the Tensor Cores of NVIDIA T4 (inferred from ...)": the reasons three times in one finding.  The GPUs table says
    them once; the findings say the model (law ``name-once``)."""
    session = tmp_path / "run1" / "plugins" / "profile" / "2024_01_01"
    session.mkdir(parents=True)
    write_grouped_keras_batch(str(session / "instance-2.xplane.pb"))
    (s,) = discover(str(tmp_path))
    (h,) = analyze_session(s.run, s.session, s.hosts).hosts
    (gpu,) = h.gpus
    assert "inferred from" in gpu.name  # the GPUs table keeps the reasons
    said = {f.id.split(":")[0]: " ".join([f.summary, f.saving.assumption if f.saving else ""]) for f in h.findings}
    assert "on NVIDIA T4" in said["mixed_precision_off"] and "Tensor Cores of NVIDIA T4:" in said["tensor_core_unused"]
    assert name_once_problems(h) == []
    assert not [v for v in report_violations(analyze_session(s.run, s.session, s.hosts)) if v.startswith("name-once")]


def _session_report(root, props, name: str | None = None):
    session = root / "run1" / "plugins" / "profile" / "2024_01_01"
    session.mkdir(parents=True)
    write_grouped_keras_batch(str(session / "instance-2.xplane.pb"), gpu_props=props, name=name)
    (s,) = discover(str(root))
    return analyze_session(s.run, s.session, s.hosts)


def test_a_diff_of_two_inferred_t4s_compares_them_as_one_model(tmp_path):
    """h37-review30.  Two T4s whose drivers hold back different memory (ECC on: 14.8 GiB; off: 15.5 GiB) are one model;
    main b6073b11's diff called the captures not comparable: "GPUs NVIDIA T4 (inferred from ... 14.8 GiB) vs NVIDIA
    T4 (inferred from ... 15.5 GiB)".  Control: an unnamed device that fits no entry stays another GPU."""
    from tb_gpu_advisor.report.diff import diff_reports

    ecc_on = _session_report(tmp_path / "a", T4)
    ecc_off = _session_report(tmp_path / "b", dataclasses.replace(T4, memory=int(15.5 * (1 << 30))))
    names = {r.hosts[0].gpus[0].name for r in (ecc_on, ecc_off)}
    assert len(names) == 2 and all("NVIDIA T4 (inferred from" in n for n in names), names
    assert not [w for w in diff_reports(ecc_on, ecc_off).incomparable if w.startswith("GPUs")]
    other = _session_report(tmp_path / "c", dataclasses.replace(T4, memory=8 << 30))
    assert [w for w in diff_reports(ecc_on, other).incomparable if w.startswith("GPUs")]


def test_a_diff_compares_a_named_t4_and_an_inferred_t4_as_one_model(tmp_path):
    """h37-surfaces31.  PyTorch and the driver name a T4 "Tesla T4"; a TF 2.x XPlane of one names nothing and the
    report infers "NVIDIA T4 (inferred from ...)".  Main 8b34bb94 compared the strings (the inferred name cut to its
    model) and called the captures not comparable: "GPUs NVIDIA T4 vs Tesla T4".  Now by table entry: both are the
    T4.  Control: a device named as another entry (an A10) stays another GPU."""
    from tb_gpu_advisor.report.diff import diff_reports

    inferred = _session_report(tmp_path / "a", T4)
    named = _session_report(tmp_path / "b", T4, name="Tesla T4")
    assert "inferred from" in inferred.hosts[0].gpus[0].name and named.hosts[0].gpus[0].name == "Tesla T4"
    for base, new in ((inferred, named), (named, inferred)):
        assert not [w for w in diff_reports(base, new).incomparable if w.startswith("GPUs")]
    other = _session_report(tmp_path / "c", T4, name="NVIDIA A10")
    (said,) = [w for w in diff_reports(inferred, other).incomparable if w.startswith("GPUs")]
    assert said == "GPUs NVIDIA T4 vs NVIDIA A10", said  # each GPU as a sentence says it: no reasons


# -- every NVIDIA entry's memory tabled (h37-rocmcopy30): unique where one GPU fits, unknown where two do ------------

_GIB = 1 << 30
_CC = {gen: cc for cc, gen in devices.peaks.NVIDIA_GENERATION.items()}


def _could_be(gen: str, sms: int, mem: float) -> set[str]:
    """Every GPU -- table entry or look-alike the table lacks -- a device of these properties may be: its generation
    and SMs, and memory at most its datasheet's and no more than an eighth less (the driver's and ECC's share)."""
    gpus = [(m.model, m.generation, m.sm_count, m.memory_bytes) for m in devices.peaks.MODELS]
    gpus += [(a.model, a.generation, a.sm_count, a.memory_bytes) for a in devices.peaks.LOOK_ALIKES]
    return {name for name, g, s, m in gpus if g == gen and s == sms and (m is None or 0.875 * m <= mem <= m)}


def test_every_nvidia_entry_of_the_table_records_its_memory():
    """An entry without its memory can never be inferred (main: only the T4 recorded it)."""
    nvidia = [m for m in devices.peaks.MODELS if m.generation in _CC and m.sm_count is not None]
    assert nvidia and all(m.memory_bytes is not None for m in nvidia), [m.model for m in nvidia if m.memory_bytes is None]


@pytest.mark.parametrize("held", [0.0, 0.03, 0.1])
def test_law_an_inferred_gpu_is_the_only_gpu_that_fits_its_properties(held):
    """Over the whole table, at its memory less 0-10%: a device is named only where it could be one GPU alone (no
    second entry, no look-alike), and is named then; two that fit one triple are never told apart by a guess."""
    for m in devices.peaks.MODELS:
        if m.generation not in _CC or m.sm_count is None or m.memory_bytes is None:
            continue
        mem = int(m.memory_bytes * (1 - held))
        got = devices.inferred_model(_CC[m.generation], m.sm_count, mem)
        could = _could_be(m.generation, m.sm_count, mem)
        if len(could) == 1:
            assert got is not None and got.startswith(f"NVIDIA {next(iter(could))} (inferred"), (m.model, got)
        else:
            assert got is None, (m.model, could, got)


@pytest.mark.parametrize(("cc", "sms", "gib", "want"), [
    ((8, 6), 72, 22.49, "A10"),          # nvidia-smi 23028 MiB
    ((8, 9), 58, 22.49, "L4"),           # 23034 MiB
    ((10, 0), 148, 179.06, "B200"),      # 183359 MiB
    ((8, 0), 108, 79.25, None),          # A100 SXM4 80GB or PCIe 80GB
    ((8, 0), 108, 39.39, None),          # A100 SXM4 40GB or PCIe 40GB
    ((7, 0), 80, 31.74, None),           # V100S, V100 SXM2 or V100 PCIe 32 GB
    ((7, 0), 80, 15.77, None),           # a 16 GB V100: no entry records it
    ((8, 9), 142, 44.99, None),          # L40S, L40 or RTX 6000 Ada
    ((9, 0), 114, 79.65, None),          # H100 PCIe or H800 PCIe
    ((9, 0), 132, 79.65, None),          # H100 SXM or H800 SXM5
    ((9, 0), 132, 140.4, None),          # H200 SXM or H200 NVL
    ((8, 6), 82, 23.69, None),           # RTX 3090: not in the table
    ((8, 9), 128, 23.99, None),          # RTX 4090: not in the table
])
def test_inferred_model_unique_and_ambiguous(cc, sms, gib, want):
    got = devices.inferred_model(cc, sms, int(gib * _GIB))
    if want is None:
        assert got is None
    else:
        assert got is not None and got.startswith(f"NVIDIA {want} (inferred"), got  # main: None, memory not tabled


def test_the_display_gives_each_gpu_its_name_as_a_sentence_says_it(tmp_path):
    """h37-surfaces31.  The tab's per-GPU chart hover and host line printed the report's name, an inferred one with
    its reasons ("GPU 0 (NVIDIA T4 (inferred from compute capability 7.5, 40 SMs, 14.8 GiB)): Step time ..."; two
    inferred T4s listed twice).  The display now gives each GPU's name as the findings say it; the GPUs table (its
    display too) keeps the reasons.  Control: a named GPU's name is itself."""
    from tb_gpu_advisor.report.view import display

    for report, want in ((_session_report(tmp_path / "a", T4), "NVIDIA T4"),
                         (_session_report(tmp_path / "b", T4, name="Tesla T4"), "Tesla T4")):
        (host,) = display(report)["hosts"]
        assert [g["name"] for g in host["gpus"]] == [want]
        assert host["gpus_table"]["rows"][0][1] == report.hosts[0].gpus[0].name  # the table: the name in full
