"""Every fix an AMD GPU's host can be told, in ROCm's words: no CUDA tool, call, build or profiler (h37-hiprocm36).

A law over the fix tables themselves, not one report: each framework's fixes (PyTorch's, JAX's, TensorFlow's, and a
native program's as ``frameworks.native.for_vendor`` gives it to a HIP program) and each capture format's window
fixes that ROCm's tools write (Kineto -- ROCm's PyTorch writes it --, XPlane, rocprof, rocpd, rpd), in the words and
code a finding on an AMD GPU takes (``devices.amd.words`` / ``devices.amd.code``; the window fixes filled with
``devices.amd.TERMS`` as ``rules.base.Ctx.window_fixes`` fills them).  Main told a HIP window that lost its kernel
records "with a PyTorch build made for the installed driver's CUDA, or record the same steps with Nsight Systems",
a PyTorch host on ROCm "torch.cuda.nvtx under Nsight Systems", a HIP MPI program "MPI with CUDA-aware buffers", an
MI300X "On Ampere and newer, let float32 matmuls ... use TF32" (``devices.has_tf32`` gives the MI300 the TF32 fix).
Nsight's own format (``nsys``) and nvprof's database record no AMD GPU, so their window fixes are not asked.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import formats, frameworks
from tb_gpu_advisor.devices import amd, apple
from tb_gpu_advisor.frameworks import native
from tests.support.contradictions import _CUDA_TOOLS

#: NVIDIA's words a ROCm user is never told outside code (``torch.cuda`` and ``ProfilerActivity.CUDA`` are ROCm
#: PyTorch's own spellings, so CUDA alone is not one of them).
_CUDA_PROSE = r"CUDA-aware|CUDA (?:build|toolkit|driver)\b"


def _fixes(vendor) -> list[tuple[str, str, str]]:  # noqa: ANN001 - a vendor module
    """(where, text, code) of every framework fix a host on ``vendor``'s GPU can be given."""
    out = []
    fws = [frameworks.REGISTRY["pytorch"]] if vendor is apple else (  # the one framework with an MPS backend
        list(frameworks.REGISTRY.values()) + [native.for_vendor(native.FRAMEWORK, vendor)])
    for fw in fws:  # a fix the GPU cannot follow is left out of the advice (``Framework.fit``), as ``Ctx.fit`` does
        fitted = ((k, fw.fit(a, vendor.VENDOR, None, None)) for k, acts in fw.fixes.items() for a in acts)
        out += [(f"{fw.id}:{k}", a.text, a.snippet or "") for k, a in fitted if a is not None]
    return out


#: The formats only NVIDIA's tools write (Nsight Systems' export, nvprof's database and printed trace): no AMD GPU is in them.
_NVIDIA_ONLY = ("nsys", "nvprof", "nvprof-csv")


def _window_fixes(vendor) -> list[tuple[str, str, str]]:  # noqa: ANN001 - a vendor module
    """(where, text, code) of every window fix of a format the vendor's tools write, filled with its terms."""
    said = {**vendor.TERMS, "steps": "8", "step_range": "train_step"}
    return [(f"{f.id}:{k}", t.format_map(_Said(said)), c.format_map(_Said(said)))
            for f in formats.REGISTRY.values() if f.id in (vendor.WRITES if vendor is apple else (f.id,))
            and f.id not in _NVIDIA_ONLY
            for k, v in f.window_fixes.items() for t, c in v]


class _Said(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


@pytest.mark.parametrize("vendor", [amd, apple], ids=["AMD", "Apple"])
@pytest.mark.parametrize("source", [_fixes, _window_fixes], ids=["frameworks", "window_fixes"])
def test_no_cuda_tool_in_a_fix_on_an_amd_gpu(source, vendor):
    """Apple's too (h37-apple37): an MPS capture's every fix in Apple's words, its code on the ``mps`` device."""
    import re

    bad = []
    for where, text, code in source(vendor):
        words, snippet = vendor.words(text), vendor.code(vendor.words(code))
        bad += [f"{where}: '{m.group(0)}'" for part in (words, snippet) for m in _CUDA_TOOLS.finditer(part)]
        bad += [f"{where}: '{m.group(0)}'" for m in re.finditer(_CUDA_PROSE, words)]
    assert not bad, "\n".join(sorted(set(bad)))
