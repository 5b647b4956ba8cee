"""The tables of a rocmProfileData database (``runTracer.sh -o <file>.rpd``: AMD's ROCm tracer, rpd_tracer), as its
files hold them (schema_version 2; checked against ROCm/rocmProfileData's blog example and its ``raptor`` test
trace):

* ``rocpd_api``: every host record -- HIP calls, roctx ranges and marks (``apiName`` ``UserMarker``, the range's text
  in ``args``), and the tracer's own work (:data:`OVERHEAD`) -- with ``pid``, ``tid``, ``start``, ``end`` (ns);
* ``rocpd_op``: the GPU's work per ``gpuId`` and ``queueId``: kernels (``KernelExecution``; a HIP graph's kernels
  ``Task``), copies (``CopyHostToDevice`` ...), fills (``FillBuffer``), the kernel's name in ``description`` (empty
  for copies);
* ``rocpd_api_ops``: which call launched which op (a graph launch: many ops);
* ``rocpd_copyapi``: per copy call its ``size`` and ``kind`` (HIP's ``hipMemcpyKind``: the direction the program
  asked for).  Its ``sync`` and ``pinned`` columns are not facts of the copy: rpd_tracer sets ``sync`` for a few
  calls only (``hipMemcpyWithStream``, which blocks, is left 0) and never sets ``pinned`` (its row's default, 0);
  the call's name says whether it blocks (``devices.copy_call_sync``), and the host memory's kind is unknown;
* ``rocpd_kernelapi``: per launch its grid and workgroup (HIP's module launches record the grid in work-items);
* ``rocpd_string``: every name and argument text, by ``id``;
* ``rocpd_metadata``: ``tag`` / ``value`` rows (``schema_version``).

Names are the database's own; no view it defines is ever read (``formats.sqlite.Schema`` counts real tables only).
"""

from __future__ import annotations

from tb_gpu_advisor.formats.heads import NSIGHT_STRINGS, RPD_API as API, RPD_OP as OP, RPD_OWN as OWN, \
    RPD_STRING as STRING, is_rpd

#: the names read here from the heads (their one home), the rpd reader and layout read through this module
__all__ = ["API", "OP", "STRING", "OWN", "NSIGHT_STRINGS", "is_rpd"]

API_OPS = "rocpd_api_ops"
COPY_API = "rocpd_copyapi"
KERNEL_API = "rocpd_kernelapi"
METADATA = "rocpd_metadata"
#: The string table's text column.
STRING_TEXT = "string"
#: ``apiName`` of roctx ranges and marks, and of the ops PyTorch's hooks record through roctx: the text is ``args``.
USER_MARKER = "UserMarker"
#: ``opType`` of a kernel dispatched by a launch call, and of one a HIP graph launch ran.
KERNEL_OPS = ("KernelExecution", "Task")
#: The tracer's own records (``Logger::createOverheadRecord``: its flushes of each table, its activity callback):
#: its work, not the program's.
OVERHEAD = ("rpdflush", "hcc_activity_callback")
OVERHEAD_SUFFIX = "::writeRows"


def is_overhead(name: str) -> bool:
    """A record of the tracer's own work (:data:`OVERHEAD`)."""
    return name in OVERHEAD or name.endswith(OVERHEAD_SUFFIX)

#: The tables that make an SQLite file rocmProfileData's database (:data:`OWN`) and the test of one (:func:`is_rpd`)
#: live in ``formats.heads``: the Nsight layout refuses such a file by them, and no format imports another.
