"""Nsight Compute reports by construction: what ``ncu -o <name>`` writes, under its own name ``<name>.ncu-rep``, and
the zip a course repository commits of several (parthshinde1221/GPU_mode's ``profiles.zip``: four reports of a Tesla
T4's kernels beside compute-sanitizer's text logs, survey h37-huntn66).

The bytes follow the layout read by hand off real reports (``formats.heads.NCU_REPORT_MAGIC``: ``NVR\\0``, the format's
version as a little-endian 32-bit number -- 2 in 2023-2025 reports -- then protobuf messages naming the machine, the
program's path and each kernel).  Only the head is what any reader asks; the body is filler that names the same things
a real one does, so that a test can tell the report is read by its head and name, never parsed.

Truth by construction: each file is one counter collection's report (metrics per kernel, no timeline), named as ncu
names it; a zip of them holds that collection and no profile a timeline reader reads.
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

#: ``formats.heads.NCU_REPORT_MAGIC`` (kept here as the writer's own constant: a generator does not import the reader).
MAGIC = b"NVR\x00"
#: The report format's version real 2023-2025 reports carry.
VERSION = 2


def _field(number: int, text: str) -> bytes:
    """One protobuf length-delimited field (``number``, a string): what a real report's messages are made of."""
    data = text.encode()
    key = (number << 3) | 2
    return bytes([key]) + _varint(len(data)) + data


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def report_bytes(gpu: str = "Tesla T4", program: str = "/content/app/build/bin/vec_add",
                 kernel: str = "_Z14vec_add_kernelPKfS0_Pfi", version: int = VERSION) -> bytes:
    """One report's bytes: ncu's head, then messages naming the GPU, the program and its one kernel."""
    body = _field(1, gpu) + _field(2, program) + _field(3, kernel) + _field(4, f".text.{kernel}")
    return MAGIC + struct.pack("<I", version) + body + bytes(range(256))


def write_report(path: str | Path, **kw) -> Path:
    """Write one report at ``path`` (``<name>.ncu-rep`` as ncu names it, or any name to test a renamed one)."""
    path = Path(path)
    path.write_bytes(report_bytes(**kw))
    return path


#: The kernels of the real course repository's four reports (program, kernel), one report each.
COURSE_KERNELS = (("vec_add_naive", "_Z14vec_add_kernelPKfS0_Pfi"), ("vec_add_opt", "_Z14vec_add_kernelPKfS0_Pfi"),
                  ("matmul_naive", "_Z13matmul_kernelPKfS0_Pfi"), ("matmul_tiled", "_Z19matmul_tiled_kernelPKfS0_Pfi"))


def write_course_folder(folder: str | Path, kernels=COURSE_KERNELS) -> list[str]:
    """Write one report per program into ``folder`` beside compute-sanitizer's text logs, as the course repository's
    zip holds them; returns the reports' names (the truth: one Nsight Compute collection of that many reports)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for program, kernel in kernels:
        write_report(folder / f"{program}.ncu-rep", program=f"/content/GPU_mode/build/bin/{program}", kernel=kernel)
        (folder / f"{program}_memcheck.txt").write_text("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n")
        names.append(f"{program}.ncu-rep")
    return sorted(names)


def write_course_zip(path: str | Path, kernels=COURSE_KERNELS) -> list[str]:
    """Write the same folder packed flat into the zip ``path`` (``profiles.zip``); returns the reports' names."""
    path = Path(path)
    names = []
    with zipfile.ZipFile(path, "w") as z:
        for program, kernel in kernels:
            z.writestr(f"{program}.ncu-rep", report_bytes(program=f"/content/GPU_mode/build/bin/{program}", kernel=kernel))
            z.writestr(f"{program}_memcheck.txt", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n")
            names.append(f"{program}.ncu-rep")
    return sorted(names)
