"""ROCm's forms of a generator capture's copies (``synthetic.scenarios``' XPlanes): the same copies as its tracers
write them -- roctracer's records and the HIP runtime's blit kernels -- for the tests that ask whether a ROCm copy
reads as the CUDA one (tests/formats/test_xplane_upstream_forms.py, tests/metrics/test_blit_copies_table.py)."""

from __future__ import annotations


def _renamed(plane, old: str, new: str) -> None:
    plane._events = {(new if n == old else n): i for n, i in plane._events.items()}


def roctracer_copies(space) -> None:
    """XLA's roctracer-based ROCm tracer: each copy's HIP-OPS record named by roctracer (``CopyHostToDevice``), with
    ``memcpy_details`` of no size (``kind:Unknown size:0 ...``: the record carries none); the call on the host is
    ``hipMemcpyHtoDAsync``."""
    gpu = space.plane("/device:GPU:0")
    _renamed(gpu, "MemcpyH2D", "CopyHostToDevice")
    for ln in gpu.lines:
        for n, s, d, st in ln.take(lambda n, s, d, st: n == "CopyHostToDevice"):
            ln.add(n, s, d, **{**st, "memcpy_details": "kind:Unknown size:0 dest:0 async:1"})
    _renamed(space.plane("/host:CPU"), "MemcpyH2D", "hipMemcpyHtoDAsync")


def blit_copies(space) -> None:
    """The HIP runtime's blit kernels: each H2D copy run as ``__amd_rocclr_copyBuffer.kd`` on the stream, made by
    the host's ``hipMemcpyHtoDAsync`` (the same correlation id), no ``memcpy_details``."""
    gpu = space.plane("/device:GPU:0")
    _renamed(gpu, "MemcpyH2D", "__amd_rocclr_copyBuffer.kd")
    for ln in gpu.lines:
        for n, s, d, st in ln.take(lambda n, s, d, st: n == "__amd_rocclr_copyBuffer.kd"):
            ln.add(n, s, d, **{k: v for k, v in st.items() if k != "memcpy_details"})
    _renamed(space.plane("/host:CPU"), "MemcpyH2D", "hipMemcpyHtoDAsync")
