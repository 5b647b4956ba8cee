"""A memory snapshot whose frames name no build, and whose streams show it ran on no CUDA device's default stream,
is told words true of every build -- never CUDA's alone (issue #37, "a finding never contradicts the hardware";
h37-wild56m, session 55's h37-wild55v *Left* 1).

Three of codeasier/MemSnapDump's seven Ascend NPU snapshots (no licence: read locally, not kept) are Python-only
records with no ``torch.npu`` call in any stack: no frame names ``torch_npu``, and the report spoke CUDA's words --
``ProfilerActivity.CUDA`` as capture advice, ``torch.cuda.memory._dump_snapshot`` as the memory's source, "GPU 0",
and ``PYTORCH_CUDA_ALLOC_CONF`` wherever a fix names the allocator's setting (torch_npu reads
``PYTORCH_NPU_ALLOC_CONF``).  What the files do say is their streams: every segment and trace entry lies on one
stream handle (1067708320, 1276474240, ...), where a CUDA or ROCm build records its default stream -- the null
stream -- as 0 (every one of the 28 kept CUDA snapshots does).  ``formats.snapshot.reader._vendor`` reads a snapshot
with no segment on stream 0 and no frame naming a build as ``devices.UNNAMED``; ``devices.unnamed`` speaks of "the
device" and writes the build's names as placeholders (``PYTORCH_<DEVICE>_ALLOC_CONF``, ``torch.<device>.``) with
what each build spells there.

Scenarios: ``synthetic.memsnapshot``'s, recorded Python-only as torch_npu writes them (``as_npu(stream=NPU_STREAM)``:
truth by construction).  Controls: the same records on stream 0 (CUDA's default) keep CUDA's words; frames that name
a build win over the streams."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.schema import Finding, HostReport
from tb_gpu_advisor.runtime.pipeline import analyze_host

#: What one build's user alone reads right: CUDA's allocator variables and device in code, its runtime, libraries and
#: tools, NVIDIA's name, and "GPU" (an NPU is none).  A line that says what the placeholders stand for names each
#: build in turn, and is the one line allowed them.
ONE_BUILDS = re.compile(r"PYTORCH_(?:NO_)?CUDA_|torch\.cuda\b|ProfilerActivity\.CUDA|['\"]cuda['\"]|\.cuda\(\)"
                        r"|\bcuda(?:Malloc|Free|Memcpy)\w*|\bCUDA\b|NVIDIA|nvidia-smi|\bNVTX\b|Nsight|Tensor Cores?"
                        r"|cuDNN|cuBLAS|\bNCCL\b|CUPTI|\bGPUs?\b")
LEGEND = "the snapshot names no build"
SCENARIOS = ("oom_activations", "fragmented", "cache_twin", "memory_cap", "forward_only", "ring_buffer_training",
             "training_with_workspace", "moved_with_grads", "training_iterations", "inference_loop")


def _unnamed(doc: dict) -> dict:
    """``doc`` as torch_npu records it with Python frames only and no ``torch.npu`` call in a stack."""
    return ms.as_recorded(ms.as_npu(doc, stream=ms.NPU_STREAM), stacks="python")


def _report(tmp_path: Path, doc: dict, name: str = "snap") -> HostReport:
    path = Path(ms.write(str(tmp_path / f"{name}.pickle"), doc))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _vendor(tmp_path: Path, doc: dict) -> str | None:
    return read_trace(ms.write(str(tmp_path / "v.pickle"), doc)).snapshot.vendor


def _said(rep: HostReport) -> list[str]:
    """The lines the findings, the capture advice, the job's line and the memory's source say."""
    def words(f: Finding) -> list[str]:
        out = [f.title, f.summary, *[x for a in f.actions for x in (a.text, a.snippet or "")]]
        out += [f.metric.label, f.metric.meaning] if f.metric is not None else []
        return out + [str(c) for t in f.evidence for row in [[t.title], t.columns, *t.rows] for c in row]
    text = [w for f in rep.findings for w in words(f)]
    text += [str(rep.job.get("capture_advice") or ""), str(rep.job.get("summary") or "")]
    text += [str(g.memory["source"]) for g in rep.gpus if g.memory]
    return [line for t in text for line in t.split("\n")]


def _one_build_words(rep: HostReport) -> list[str]:
    return sorted({w for line in _said(rep) if LEGEND not in line for w in ONE_BUILDS.findall(line)})


def test_a_python_only_record_on_no_null_stream_names_no_build(tmp_path: Path) -> None:
    """No frame names torch_npu, every segment lies on torch_npu's stream handle: no CUDA device's default stream."""
    assert _vendor(tmp_path, _unnamed(ms.training_iterations().doc)) == "unnamed"
    assert _vendor(tmp_path, _unnamed(ms.cache_twin(empty_cache=False).doc)) == "unnamed"


def test_controls_stream_zero_and_named_frames_stay_as_they_were(tmp_path: Path) -> None:
    """Control: the same Python-only record on stream 0 names no vendor (CUDA's words, as before); C++ frames that
    name a build win over any stream (an NPU's on its handle, a CUDA job run wholly on a side stream)."""
    python_only = ms.as_recorded(ms.as_npu(ms.training_iterations().doc), stacks="python")
    assert _vendor(tmp_path, python_only) is None
    assert _vendor(tmp_path, ms.as_npu(ms.training_iterations().doc, stream=ms.NPU_STREAM)) == "Huawei"
    assert _vendor(tmp_path, ms.on_stream(ms.training_iterations().doc, 0x5555_0000)) == "NVIDIA"


@pytest.mark.parametrize("name", SCENARIOS)
def test_an_unnamed_builds_report_says_no_one_builds_word(tmp_path: Path, name: str) -> None:
    assert not (found := _one_build_words(_report(tmp_path, _unnamed(getattr(ms, name)().doc), name))), found


def test_the_allocator_setting_is_written_for_every_build(tmp_path: Path) -> None:
    """A fragmented OOM's fix: the build's variable as a placeholder, what it stands for said on the line above."""
    rep = _report(tmp_path, _unnamed(ms.fragmented().doc))
    fix = next(a.snippet for f in rep.findings for a in f.actions if "expandable_segments" in (a.snippet or ""))
    lines = fix.split("\n")
    assert lines[-1] == "export PYTORCH_<DEVICE>_ALLOC_CONF=expandable_segments:True", fix
    assert any(LEGEND in x and "NPU" in x and "CUDA" in x and x.startswith("#") for x in lines[:-1]), fix


def test_the_capture_advice_and_source_name_every_build(tmp_path: Path) -> None:
    rep = _report(tmp_path, _unnamed(ms.training_iterations().doc))
    advice = str(rep.job.get("capture_advice"))
    assert "torch_npu.profiler" in advice and "ProfilerActivity.<DEVICE>" in advice
    assert {g.memory["source"] for g in rep.gpus if g.memory} == {
        "PyTorch memory snapshot (torch.<device>.memory._dump_snapshot)"}


def test_control_a_python_only_cuda_record_keeps_cudas_words(tmp_path: Path) -> None:
    """Control: a Python-only record on stream 0 (the CUDA default every kept CUDA snapshot shows) is told CUDA's
    setting and profiler, as before."""
    rep = _report(tmp_path, ms.as_recorded(ms.fragmented().doc, stacks="python"))
    fix = next(a.snippet for f in rep.findings for a in f.actions if "expandable_segments" in (a.snippet or ""))
    assert fix == "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
    assert "ProfilerActivity.CUDA" in str(rep.job.get("capture_advice"))


def _cards_and_titles(rep: HostReport) -> list[str]:
    out = [x for c in rep.headline for x in (c.meaning, str((c.detail or {}).get("not_available") or ""))]
    return out + [rep.kernels.title, rep.ops.title]


@pytest.mark.parametrize("build", ["npu", "unnamed"])
def test_the_cards_and_table_titles_speak_as_the_findings(tmp_path: Path, build: str) -> None:
    """The headline cards' meanings and the kernel and op tables' titles in the vendor's words, as the findings: an
    NPU's report read "no GPU kernels in kept steps" beside "NPU 0" (h37-wild55v *Left* 2)."""
    doc = ms.training_iterations().doc
    rep = _report(tmp_path, ms.as_npu(doc) if build == "npu" else _unnamed(doc))
    said = _cards_and_titles(rep)
    assert not [w for w in said if re.search(r"\bGPUs?\b", w)], said
    assert any(("NPU" if build == "npu" else "device") in w for w in said), said


def test_control_a_cuda_snapshots_cards_say_gpu(tmp_path: Path) -> None:
    said = _cards_and_titles(_report(tmp_path, ms.training_iterations().doc))
    assert "no GPU kernels in kept steps" in said and "Top GPU kernels (kept steps, all GPUs)" in said, said
