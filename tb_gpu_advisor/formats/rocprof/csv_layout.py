"""rocprofv3's CSV output (``rocprofv3 --output-format csv``, the default before ROCm 7): one CSV per kind of record,
all of one run in one folder, each named ``<prefix>_<kind>.csv`` (the prefix the process id, or ``-o``'s name).

The files and their columns (facts read off rocprofiler-sdk's CSV writer, ``source/lib/output/generateCSV.cpp`` of
ROCm/rocm-systems, and off the real files its users posted -- an MI300X's ``agent_info.csv`` in
ROCm/rocprofiler-sdk's issues, AMD's HPC training's ``kernel_trace.csv``; no real capture is kept, survey
h37-rocprof3):

* ``kernel_trace.csv``: ``Kind`` (``KERNEL_DISPATCH``), ``Agent_Id``, ``Queue_Id``, ``Stream_Id`` (from ROCm 6.4),
  ``Thread_Id``, ``Dispatch_Id``, ``Kernel_Id``, ``Kernel_Name``, ``Correlation_Id``, ``Start_Timestamp``,
  ``End_Timestamp``, ..., ``Workgroup_Size_X/Y/Z``, ``Grid_Size_X/Y/Z`` (HSA's grid, in work-items);
* ``hip_api_trace.csv``, ``hsa_api_trace.csv``, ``marker_api_trace.csv`` (roctx), ``rccl_api_trace.csv`` ...: one
  header, ``Domain``, ``Function``, ``Process_Id``, ``Thread_Id``, ``Correlation_Id``, ``Start_Timestamp``,
  ``End_Timestamp``; the domain says what a row is (``HIP_RUNTIME_API``, ``MARKER_CORE_RANGE_API`` ...);
* ``memory_copy_trace.csv``: ``Kind`` (``MEMORY_COPY``), ``Direction`` (``MEMORY_COPY_HOST_TO_DEVICE``; older:
  ``HOST_TO_DEVICE``), ``Stream_Id`` (newer), ``Source_Agent_Id``, ``Destination_Agent_Id``, ``Correlation_Id``,
  ``Start_Timestamp``, ``End_Timestamp`` -- no size;
* ``agent_info.csv``: ``Node_Id``, ``Logical_Node_Id``, ``Agent_Type`` (``CPU`` / ``GPU``), ..., ``Cu_Count``, ...,
  ``Name``, ``Vendor_Name``, ``Product_Name``, ``Model_Name``.

A file is told by its header (:func:`kind_of`), its name only saying which CSVs to ask: a ``<prefix>_<kind>.csv`` of a
run folder (:data:`FILE_KINDS`) whose first line is one of these headers (rocpd2csv's, which adds a leading ``Guid``,
too).  The files of one run -- one folder, one prefix
(what its name holds before ``_<kind>.csv``) -- are one capture, one host named after the prefix: its path the kernel
trace (else the first file), every file of it in ``HostFile.ranks``.  A folder of agent info alone is no capture.
"""

from __future__ import annotations

import os
import re

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.base import (ROOT_RUN, ByIdentity, Found, Groups, HostFile, RunFolderLayout,
                                         unused_session_name)

EXPECTED = ("<run>/<pid>_kernel_trace.csv, <pid>_hip_api_trace.csv ... (rocprofv3 --output-format csv: one run's "
            "files together, told by their headers)")
#: How much of a file's start is read to tell it (its header line).
SNIFF_BYTES = 8 << 10
#: Columns each kind's header holds (lower-cased; the writers' spelling varies: ``LDS_Block_Size``/``Lds_Block_Size``).
KINDS = {
    "kernel": ("kind", "agent_id", "kernel_name", "correlation_id", "start_timestamp", "end_timestamp"),
    "api": ("domain", "function", "process_id", "thread_id", "correlation_id", "start_timestamp", "end_timestamp"),
    "copy": ("kind", "direction", "source_agent_id", "destination_agent_id", "start_timestamp", "end_timestamp"),
    "agents": ("node_id", "logical_node_id", "agent_type"),
}
#: The files rocprofv3 names after their records (``<prefix>_<kind>.csv``, whatever ``-o`` names the prefix) that
#: hold what is read: a run's traces and its agents.  Only a CSV so named is asked (its header then decides): a
#: training loop's ``metrics.csv``, rocprofv3's own stats and counters, are never opened.
FILE_KINDS = ("kernel_trace", "hip_api_trace", "hsa_api_trace", "marker_api_trace", "memory_copy_trace",
              "rccl_api_trace", "rocdecode_api_trace", "rocjpeg_api_trace", "agent_info")
_PREFIX = re.compile(r"^(.*?)_?(?:%s)\.csv$" % "|".join(FILE_KINDS))


def header_cells(line: str) -> list[str]:
    """The column names of a CSV header line, lower-cased, quotes off."""
    return [c.strip().strip('"').strip().lower() for c in line.strip().lstrip("\ufeff").split(",")]


def kind_of(cells: list[str]) -> str | None:
    """Which rocprofv3 file a header is (:data:`KINDS`), None for another CSV."""
    have = set(cells)
    for kind, need in KINDS.items():
        if all(c in have for c in need):
            return kind
    return None


def head_line(path: str) -> str:
    try:
        raw = fsio.read_head(path, SNIFF_BYTES)
    except Exception:  # noqa: BLE001 - unreadable, gone: not known to be one
        return ""
    return raw.split(b"\n", 1)[0].decode("utf-8", errors="replace")


_probed: ByIdentity[str | None] = ByIdentity()


def cut_in_header(path: str) -> bool:
    """Whether ``path``, named as one of rocprofv3's files (``<prefix>_kernel_trace.csv`` ...: :data:`FILE_KINDS`),
    holds no whole line: its header was cut before it ended, so its content cannot say what it is but its name does
    -- the capture's file cut short, claimed so its reader says the cut (h37-damage67b: left out before, its
    siblings read as the whole capture, the kernels it held said "lost")."""
    if _PREFIX.match(os.path.basename(path)) is None:
        return False
    try:
        raw = fsio.read_head(path, SNIFF_BYTES)
    except Exception:  # noqa: BLE001 - unreadable, gone: not known to be one
        return False
    return bool(raw.strip()) and b"\n" not in raw and len(raw) < SNIFF_BYTES


def _trace_cut(f: Found) -> bool:
    """A trace file of the run (by its name: not ``agent_info``) cut in its header (:func:`cut_in_header`): the run
    holds a trace, cut, even with no whole sibling -- grouped, so its reader says the cut by the file's name.

    Why: a lone ``kernel_trace.csv`` cut in its header was claimed by :func:`sniff` and then dropped here (no whole
    trace beside it), and the CLI said "no GPU profiles found in <logdir>" -- exit 2, but neither the file nor its
    damage named (h37-damage68)."""
    return not f.name.endswith("agent_info.csv") and cut_in_header(f.path)


def sniff(path: str) -> str | None:
    """None when ``path`` is one of rocprofv3's CSV files, else why not (cached by the file's identity)."""
    def probe() -> str | None:
        return None if kind_of(header_cells(head_line(path))) or cut_in_header(path) else (
            "a CSV file, but no rocprofv3 trace (its header is none of a kernel, API or copy trace's or agent info's)")
    return _probed.answer_for(path, probe)


def prefix(file_name: str) -> str:
    """The run's prefix a file's name holds (``4242`` of ``4242_kernel_trace.csv``); a name rocprofv3 did not give:
    the name without ``.csv``."""
    m = _PREFIX.match(file_name)
    if m:
        return m.group(1) or "rocprofv3"
    return file_name[:-4] if file_name.endswith(".csv") and len(file_name) > 4 else file_name


class RocprofCsvLayout(RunFolderLayout):
    expected = EXPECTED

    def claims(self, rel: tuple[str, ...]) -> bool:
        return False  # never by its name: a CSV is anyone's

    def maybe(self, rel: tuple[str, ...]) -> bool:
        return _PREFIX.match(rel[-1]) is not None and self.in_run_folder(rel)

    def sniff(self, path: str) -> str | None:
        return sniff(path)

    def group(self, found: list[Found]) -> Groups:
        """One session per run's files (folder, prefix), named for the newest of them; a group with no trace (agent
        info alone) is none."""
        runs: dict[tuple[str, str], list[Found]] = {}
        for f in found:
            runs.setdefault((f.folder, prefix(f.name)), []).append(f)
        groups: Groups = {}
        used: set[tuple[str, str]] = set()
        for (folder, pre), files in sorted(runs.items(), key=lambda kv: (max(f.mtime_ns for f in kv[1]), kv[0])):
            kinds = [kind_of(header_cells(head_line(f.path))) for f in files]
            if not any(k in ("kernel", "api", "copy") for k in kinds) and not any(map(_trace_cut, files)):
                continue
            files = [f for _, f in sorted(zip(kinds, files), key=lambda kf: (kf[0] != "kernel", kf[1].name))]
            run = "/".join(files[0].rel[:-1]) or ROOT_RUN
            mtime = max(f.mtime_ns for f in files)
            name = unused_session_name(run, mtime / 1e9 if mtime else 0.0, used)
            ranks = tuple(HostFile(pre, f.path, f.size, f.mtime_ns, "rocprofv3-csv") for f in files)
            groups[(run, name, folder)] = [HostFile(pre, files[0].path, sum(f.size for f in files), mtime,
                                                    "rocprofv3-csv", ranks=ranks)]
        return groups


LAYOUT = RocprofCsvLayout()
