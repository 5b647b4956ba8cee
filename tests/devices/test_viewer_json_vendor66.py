"""A GPU whose XPlane plane states nothing of its device (a trace viewer JSON's) is of the vendor the file's own calls
and kernels show, and of no vendor where they show none (issue #37 class 1; h37-vendor64's *Left* 3, h37-vendor66).

Truth by construction: ``synthetic.jaxcapture``'s JAX training step printed as its trace viewer JSON
(``tfcapture.write_trace_viewer_json``: no plane stat survives), then -- as the same program's JSON on another GPU
would read -- its CUDA calls and cuBLASLt kernels renamed: ROCm's (``hipLaunchHostFunc``, Tensile's ``Cijk_*``) or
an unknown runtime's and library's (``xrtLaunchHostFunc``, ``gemm_*``: nothing names a vendor).  On base (c079d51f)
the plane's GPU was ``GPU:0``, read as NVIDIA's whatever the file held (``capture.vendor`` NVIDIA, "Tensor Cores"),
and a host-only window's JSON (its plane without any stat: "GPU of unknown model") was told JAX's ``CudaDevice``.
Control: the JSON as printed (``nvjet_*``, ``cuLaunchHostFunc``) stays NVIDIA's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import jaxcapture as jc
from tb_gpu_advisor import devices
from tests.support.viewer_json import json_report as _report
from tests.support.viewer_json import viewer_json_run as _json_run

#: the vendors' own words and tools a report could say, in prose or code
_VENDOR_WORDS = re.compile(r"\bNCCL\b|\bRCCL\b|Tensor[ -]Cores?|Matrix Cores?|Nsight|\bnsys\b|\bCUPTI\b|\bCUDA\b|"
                           r"\bHIP\b|\bROCm\b|cuDNN|cuBLAS|\bSMs\b|CudaDevice|RocmDevice")

#: (pattern, replacement) per form: the same program's calls and library kernels as the other GPU's software names them
_FORMS = {"rocm": ((r"\bcu(?=[A-Z])", "hip"), (r"\bnvjet_sm90_tst_(\d+)x(\d+)\w*", r"Cijk_Ailk_Bljk_BBS_BH_MT\1x\2x16_MI16x16x16x1")),
          "unknown": ((r"\bcu(?=[A-Z])", "xrt"), (r"\bnvjet_sm90_tst_", "gemm_"))}


def _json_of(tmp_path: Path, form: str | None) -> dict:
    (xplane,) = jc.jax_raw().write(tmp_path / "x", "jax_raw")
    run = _json_run(tmp_path, xplane, anonymous=False)
    if form is not None:
        (path,) = run.rglob("*.trace.json.gz")
        import gzip

        text = gzip.decompress(path.read_bytes()).decode()
        for pattern, repl in _FORMS[form]:
            text, n = re.subn(pattern, repl, text)
            assert n, pattern  # the file held what the form renames
        path.write_bytes(gzip.compress(text.encode()))
    return _report(run)


def _said(rep: dict) -> str:
    return " ".join(f["title"] + " " + f["summary"] + " " + " ".join(a["text"] + " " + (a.get("snippet") or "")
                                                                       for a in f["actions"]) for f in rep["findings"])


@pytest.mark.parametrize(("form", "vendor", "gpu"), [("rocm", "AMD", "AMD GPU"),
                                                     ("unknown", "unknown", devices.unknown.GPU_NAME)])
def test_a_viewer_jsons_gpu_is_of_the_vendor_its_calls_and_kernels_show(tmp_path: Path, form: str, vendor: str,
                                                                        gpu: str) -> None:
    """The GPU is named and spoken to as the file shows: AMD's, or nobody's (base: ``GPU:0``, NVIDIA, "Tensor Cores")."""
    rep = _json_of(tmp_path, form)
    (host,) = rep["hosts"]
    assert host["capture"]["vendor"] == vendor
    assert [g["name"] for g in host["gpus"]] == [gpu]
    said = _said(rep)
    assert "Tensor Core" not in said and "CUDA" not in said, said
    if form == "unknown":
        assert not _VENDOR_WORDS.findall(said.replace(devices.unknown.LEGEND, "")), _VENDOR_WORDS.findall(said)


def test_control_the_printed_json_keeps_nvidias_reading(tmp_path: Path) -> None:
    """``nvjet_*`` kernels and ``cuLaunchHostFunc``: NVIDIA's, as on base."""
    rep = _json_of(tmp_path, None)
    (host,) = rep["hosts"]
    assert host["capture"]["vendor"] == "NVIDIA"


def test_a_host_only_viewer_json_names_no_vendors_device(tmp_path: Path) -> None:
    """A host-only window's JSON (its GPU plane "GPU of unknown model", no call, no kernel): each GPU build's device to
    look for (``devices.unknown.DEVICES``; base: "``CudaDevice`` in ``jax.devices()``", the profilers' default)."""
    truth = jc.write_host_only_window(tmp_path / "x", "xplane_run", fetch=None)
    rep = _report(_json_run(tmp_path, truth["path"], anonymous=False))
    (host,) = rep["hosts"]
    assert host["job"]["gpus_listed"] == "GPU of unknown model"
    said = _said(rep)
    assert "a GPU device (CudaDevice, RocmDevice, ...)" in said, said  # each GPU build's, never one vendor's alone
    assert "CudaDevice" not in said.replace("(CudaDevice, RocmDevice", ""), said
    assert host["capture"]["vendor"] in (None, devices.UNKNOWN)
