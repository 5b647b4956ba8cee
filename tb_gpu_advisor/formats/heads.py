"""The heads by which one format is told from another: what a file's start (or an SQLite file's tables) says it is,
asked by its own format's layout to claim it and by another's to refuse it by name.  Why their own module: a format
imports no other format (as ``formats.gz``, h37-debt45's *Left*): the Kineto layout had imported rocprof's layout to
refuse a ``results.json``, and the Nsight layout Kineto's layout and rpd's tables to refuse an ``.rpd`` saved as
``.sqlite`` (h37-debt46)."""

from __future__ import annotations

import re
from typing import Protocol

#: A Chrome trace's event list (``{"traceEvents": [...]``).
_TRACE_KEYS = rb'"traceEvents"\s*:'
#: The section labels ROCm rocprof's ``tblextr`` writes (``label_json``): the host's API calls, roctx, copies, each GPU
#: and its barriers (``formats.rocprof.layout``).
_ROCPROF_LABELS = rb'"args"\s*:\s*\{\s*"name"\s*:\s*"(?:CPU HIP API|CPU HSA API|COPY|Markers and Ranges|GPU Barriers\d+)"'
#: An event of a rocprof file without labels: tblextr's exact times, as strings, in its args.
_ROCPROF_TIMES = rb'"BeginNs"\s*:\s*"\d+"\s*,\s*"EndNs"\s*:\s*"\d+"'


def is_rocprof_head(head: bytes) -> bool:
    """Whether the start of a JSON file is rocprof's trace: ``traceEvents`` with a section label only tblextr writes,
    or its ``BeginNs``/``EndNs`` string times."""
    return bool(re.search(_TRACE_KEYS, head)) and bool(re.search(_ROCPROF_LABELS, head) or
                                                       re.search(_ROCPROF_TIMES, head))


#: rocmProfileData's tables (``formats.rpd.tables``: HIP calls, GPU operations, names; survey h37-survey30:
#: ROCm/rocmProfileData's examples): together they make an SQLite file its database.
RPD_API, RPD_OP, RPD_STRING = "rocpd_api", "rocpd_op", "rocpd_string"
RPD_OWN = (RPD_API, RPD_OP, RPD_STRING)
#: Nsight Systems' string table: an export that also holds ``rocpd_`` tables is Nsight's, never rpd's.
NSIGHT_STRINGS = "StringIds"
#: A rocmProfileData database the Nsight reader was given (an ``.rpd`` saved as ``.sqlite``): read as rpd's.
RPD_DATABASE = "a rocmProfileData database (runTracer.sh -o <file>.rpd), not an Nsight Systems export: read as one"


#: nvprof's own database (``nvprof -o <file>.nvvp``, CUDA's legacy profiler that Nsight Systems replaced): CUPTI's
#: activity tables by the names an export uses, but its strings in ``StringTable`` and its format in ``Version``, with
#: no ``StringIds`` (survey h37-survey21: rajesh-s/mlsys-deepspeech-gpu-profiling's 2022 P100 DeepSpeech runs): read by
#: ``formats.nvprof``, refused by the Nsight layout by these.
NVPROF_STRINGS = "StringTable"
NVPROF_OWN = (NVPROF_STRINGS, "Version")
#: An nvprof database the Nsight reader was given (an ``.nvvp`` saved as ``.sqlite``, PyProf's ``net.sql``).
NVPROF_DATABASE = "nvprof's database (nvprof -o <file>.nvvp), not an Nsight Systems export: read as one"


class Tables(Protocol):
    tables: frozenset[str]


def is_rpd(schema: Tables) -> bool:
    """rocmProfileData's database (:data:`RPD_OWN`), not an Nsight Systems export (``formats.sqlite.Schema``)."""
    return all(t in schema.tables for t in RPD_OWN) and NSIGHT_STRINGS not in schema.tables


def is_nvprof(schema: Tables) -> bool:
    """nvprof's database (:data:`NVPROF_OWN` beside a ``CUPTI_ACTIVITY_KIND_*`` table), not an Nsight Systems export."""
    return (all(t in schema.tables for t in NVPROF_OWN) and NSIGHT_STRINGS not in schema.tables
            and any(t.startswith("CUPTI_ACTIVITY_KIND_") for t in schema.tables))
