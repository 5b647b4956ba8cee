"""The heads by which one format is told from another: what a file's start (or an SQLite file's tables) says it is,
asked by its own format's layout to claim it and by another's to refuse it by name.  Why their own module: a format
imports no other format (as ``formats.gz``, h37-debt45's *Left*): the Kineto layout had imported rocprof's layout to
refuse a ``results.json``, and the Nsight layout Kineto's layout and rpd's tables to refuse an ``.rpd`` saved as
``.sqlite`` (h37-debt46)."""

from __future__ import annotations

import re
from typing import Protocol

from tb_gpu_advisor.formats.protowire import WireError, read_varint, walk_fields

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


#: A Perfetto trace file (protobuf ``perfetto.protos.Trace``): its ``TracePacket``s one after another, each framed as
#: the Trace's field 1 (tag ``0x0a``, then its length), each stamped by the tracing service with its writer's
#: ``trusted_packet_sequence_id`` (the packet's field 10) -- no JSON, and no XPlane (whose planes, field 1 of
#: ``XSpace`` too, hold fields 1-7 only).  Written for the Perfetto UI by rocprofv3 (``--output-format pftrace``:
#: ``<pid>_results.pftrace``), rocprof-sys (``perfetto-trace-<pid>.proto``) and Kineto's opt-in Perfetto output (survey
#: h37-wild59: pelagos-consulting/HIP_Course's three -- rocprof-sys's two of an MI250X node, rocprofv3's beside the CSVs
#: of a Radeon laptop's run).
PERFETTO_SEQUENCE_FIELD = 10
#: How many whole packets the head must hold (the first ones, each with its sequence id) to be told as one.
PERFETTO_PACKETS = 2
#: ``TracePacket.track_event``: an event (a slice's begin or end, a counter's value), what every writer's records are.
PERFETTO_EVENT_FIELD = 11
#: A head shorter than this is the whole file (the layouts read 64 kB of a file's start).
PERFETTO_WHOLE = 64 << 10
#: rocprofv3's name for its Perfetto output (``<pid>_results.pftrace``, ``-o`` naming the ``results`` part).
ROCPROFV3_PERFETTO_NAME = re.compile(r"\d+_[^/]*\.pftrace(?:\.gz)?$")
#: The names only a ROCm profiler's Perfetto trace holds in its first packets (interned HIP and HSA calls, rocprof-sys's
#: ``rocm_`` tracks, the GPU's ``gfx`` ISA): its words then are AMD's only.
_PERFETTO_ROCM = re.compile(rb'hip[A-Z][A-Za-z]+|hsa_[a-z]+|rocm_[a-z]+|gfx[0-9]{3}')
_PERFETTO_IS = ("a Perfetto protobuf trace ({who}), for the Perfetto UI, a format the Advisor does not read: ")
_PERFETTO_ROCM_WHO = "a ROCm profiler's: rocprofv3 --output-format pftrace or rocprof-sys's perfetto-trace-<pid>.proto"
_PERFETTO_ROCM_FIX = ("record the run with rocprofv3 in a format it reads, beside the Perfetto trace if wanted: "
                      "rocprofv3 --kernel-trace --hip-trace --memory-copy-trace --output-format csv pftrace -- <app> "
                      "(or json, rocpd), or with torch.profiler on ROCm")
_PERFETTO_EMPTY = (", and this one holds no event: only the tracer's clock, system and track records (its process "
                   "made no call the tracer records: one of the run's helper processes, whose siblings' files hold the "
                   "work, or one that ended before its GPU work); ")
_PERFETTO_ANY_WHO = ("rocprofv3 --output-format pftrace, rocprof-sys's perfetto-trace-<pid>.proto, Kineto's Perfetto "
                     "output or another tool's")
_PERFETTO_ANY_FIX = ("give a record of the same run in a format it reads: rocprofv3's --output-format csv, json or "
                     "rocpd, PyTorch's <worker>.pt.trace.json (torch.profiler's export_chrome_trace or "
                     "tensorboard_trace_handler), JAX/TensorFlow's <host>.xplane.pb, or an Nsight Systems export "
                     "(nsys export --type sqlite)")


def perfetto_words(head: bytes, name: str = "") -> str:
    """What a Perfetto protobuf trace (:func:`is_perfetto_head`) is and what to give instead, in its writer's vendor's
    words where its first packets name ROCm's calls (:data:`_PERFETTO_ROCM`) or its name is rocprofv3's
    (``<pid>_results.pftrace``), else every writer's; a whole one without an event says so first."""
    rocm = bool(_PERFETTO_ROCM.search(head)) or ROCPROFV3_PERFETTO_NAME.search(name) is not None
    words = _PERFETTO_IS.format(who=_PERFETTO_ROCM_WHO if rocm else _PERFETTO_ANY_WHO)
    if _perfetto_without_events(head):
        words = words.rstrip(": ") + _PERFETTO_EMPTY
    return words + (_PERFETTO_ROCM_FIX if rocm else _PERFETTO_ANY_FIX)


def _field_numbers(msg: bytes) -> set[int] | None:
    """The field numbers of one whole protobuf message, None where its bytes are not one (a bad tag or wire type, a
    length past its end)."""
    try:
        return {number for number, *_ in walk_fields(msg, 0, len(msg))}
    except WireError:
        return None


def _perfetto_packets(head: bytes):
    """Each packet's field numbers in turn, from the start of a Perfetto trace, while they are whole and well formed;
    the last item is None where the bytes stop being packets (the cut-off end of a head, or no trace at all)."""
    i = 0
    while i < len(head):
        try:
            length = read_varint(head, i + 1, len(head)) if head[i] == 0x0A else None
        except WireError:
            length = None
        if length is None or length[0] == 0 or length[1] + length[0] > len(head):
            yield None
            return
        start, i = length[1], length[1] + length[0]
        fields = _field_numbers(head[start:i])
        yield fields
        if fields is None:
            return


def is_perfetto_head(head: bytes) -> bool:
    """Whether the start of a file (decompressed) is a Perfetto protobuf trace (:func:`perfetto_words`): its first
    :data:`PERFETTO_PACKETS` packets whole, well formed, and each with its sequence id."""
    first = [fields for fields, _ in zip(_perfetto_packets(head), range(PERFETTO_PACKETS))]
    return len(first) == PERFETTO_PACKETS and all(f is not None and PERFETTO_SEQUENCE_FIELD in f for f in first)


def _perfetto_without_events(head: bytes) -> bool:
    """Whether ``head`` is a whole Perfetto trace (shorter than :data:`PERFETTO_WHOLE`, its packets ending at its end)
    none of whose packets is an event (``TracePacket.track_event``, field :data:`PERFETTO_EVENT_FIELD`): only the
    tracer's clock snapshots, system info and descriptors (survey h37-wild59: three of D-W-Chiang/JACC.jl's rocprofv3
    ``<pid>_results.pftrace`` of 643-645 bytes beside its Julia process's, written on ORNL's faraday node)."""
    if len(head) >= PERFETTO_WHOLE:
        return False
    packets = list(_perfetto_packets(head))
    return bool(packets) and None not in packets and not any(PERFETTO_EVENT_FIELD in f for f in packets)


#: rocprof-sys's other files beside its trace (``<output>/<date>/``): ``metadata-<pid>.json``, ``functions-<pid>.json``
#: (``{"rocprofiler-systems": ...}``) and each counter's samples, ``rocprof-device-<n>-<counter>-<pid>.json``
#: (timemory's ``{"timemory": ...}``), and with binary instrumentation ``instrumentation/{available,excluded,
#: instrumented,overlapping}.json`` (``{"rocprofsys": ...}``) -- no event list (survey h37-wild59).
_ROCPROF_SYS_DATA = re.compile(rb'^\s*\{\s*"(?:rocprofiler-systems|rocprofsys|timemory)"\s*:')
ROCPROF_SYS_DATA = ("rocprof-sys's run data (its metadata, its function or instrumentation lists, or one counter's "
                    "samples), not a trace; its trace is the output folder's perfetto-trace-<pid>.proto, "
                    + _PERFETTO_IS.format(who="a ROCm profiler's") + _PERFETTO_ROCM_FIX)


def is_rocprof_sys_data(head: bytes) -> bool:
    """Whether the start of a JSON file is one of rocprof-sys's data files (:data:`ROCPROF_SYS_DATA`)."""
    return bool(_ROCPROF_SYS_DATA.match(head))


#: An Nsight Systems report (``.nsys-rep``; ``.qdrep`` before 2021.4) starts with these bytes, then its format's tag up
#: to a ``.`` -- ``1`` (2019.6 to 2023.x) or Nsight's own version, ``2025@5@1@121-255136380782v0`` -- then its header in
#: the clear, a protobuf message (read by hand off four real reports, survey h37-heads60: gartangh/Master-s-Dissertation's
#: 2019.6.1 ``report4.qdrep``, ayush-os/nsight-systems-deep-dive's 2023.1.2 A100 ones, cestwc/balinski-and-gomory-cuda's
#: 2025.5.1 one): field 9 the host's name, field 26 the launch (its field 10 the program, 11 each argument, 12 the
#: working directory, 30 the environment), then the compressed streams only ``nsys`` reads.
NSYS_REPORT_MAGIC = b"NVIDIA Tegra Profiler Report "
#: How much of a report's start holds its header in the clear (1-15 kB in the real ones): what a reader of it reads
#: (``formats.foreign_capture`` of a report under another name, ``nsys.export`` where nsys is absent).
NSYS_HEADER_BYTES = 1 << 16
#: The longest format tag read before its ``.`` (the 2025 one is 27 bytes).
_NSYS_TAG_MAX = 64
#: ``2025@5@1@<build>``: the Nsight Systems version a 2024+ report's tag spells.
_NSYS_TAG_VERSION = re.compile(rb"(20\d\d)@(\d{1,2})@(\d{1,2})@")
#: An older report names its version only in its header's paths: the install it ran from (``nsight-systems-2019.6.1/``,
#: ``/opt/nvidia/nsight-systems/2023.1.2/target-linux-x64``).
_NSYS_PATH_VERSION = re.compile(rb"[Nn]sight[-_ ][Ss]ystems[-/ ](20\d\d\.\d{1,2}(?:\.\d{1,3})?)[/\x00-\x1f]")
_NSYS_HOST, _NSYS_LAUNCH, _NSYS_PROGRAM, _NSYS_ARG = 9, 26, 10, 11
#: How many header fields are walked before giving up on the launch (a real header has about 20 before it), and how
#: long a program, argument or host name is quoted.
_NSYS_FIELDS_MAX, _NSYS_TEXT_MAX = 64, 200


def is_nsys_report_head(head: bytes) -> bool:
    """Whether the start of a file is an Nsight Systems report's (:data:`NSYS_REPORT_MAGIC`), whatever its name."""
    return head.startswith(NSYS_REPORT_MAGIC)


def _text(raw: bytes) -> str | None:
    """A header string as quoted: printable, clipped, None when it is not text."""
    text = raw[:_NSYS_TEXT_MAX].decode("utf-8", "replace")
    if not text or any(c < " " for c in text):
        return None
    return text + ("..." if len(raw) > _NSYS_TEXT_MAX else "")


def nsys_report_header(head: bytes) -> tuple[str | None, str | None, str | None]:
    """(Nsight Systems version, profiled command, host) read from a report's head (:func:`is_nsys_report_head`), each
    None where the head does not say it (a cut-off or damaged header, an older report without its install path):
    bounded by the head it is given, never raising."""
    body = head[len(NSYS_REPORT_MAGIC):]
    dot = body.find(b".", 0, _NSYS_TAG_MAX)
    tag = body[:dot] if dot > 0 else b""
    m = _NSYS_TAG_VERSION.match(tag) or _NSYS_PATH_VERSION.search(head)
    version = ".".join(g.decode() for g in m.groups()) if m else None
    host = command = None
    if dot <= 0:
        return version, command, host
    try:
        for n, (number, wire, _, start, end) in enumerate(walk_fields(body, dot + 1, len(body))):
            if n >= _NSYS_FIELDS_MAX:
                break
            if number == _NSYS_HOST and wire == 2:
                host = _text(body[start:end])
            elif number == _NSYS_LAUNCH and wire == 2:
                words = [_text(body[s:e]) for k, w, _, s, e in walk_fields(body, start, end)
                         if k in (_NSYS_PROGRAM, _NSYS_ARG) and w == 2]
                if words and None not in words:
                    command = " ".join(words)
                break
    except WireError:
        pass  # the header cut off or damaged: what was read before stands
    return version, command, host


def nsys_report_said(head: bytes) -> str:
    """What a report's header says of its run, in words (``recorded by Nsight Systems 2023.1.2 of `./bench_a100` on
    host``), "" where it says nothing readable."""
    version, command, host = nsys_report_header(head)
    said = [f"recorded by Nsight Systems {version}" if version else "",
            f"of `{command}`" if command else "", f"on {host}" if host else ""]
    return " ".join(s for s in said if s)


def nsys_report_words(head: bytes, name: str) -> str:
    """What a file whose head is an Nsight Systems report is, what its header says (version, command, host) and the
    one command that exports it, for a report under a name that is not ``.nsys-rep`` / ``.qdrep``."""
    said_text = nsys_report_said(head)
    name, stem = _renamed(name)
    out = f"{stem}.sqlite" if f"{stem}.sqlite" != name else f"{stem}.export.sqlite"  # never over the report itself
    return (f"an Nsight Systems report (the binary .nsys-rep that nsys profile writes{', ' + said_text if said_text else ''}), "
            f"under another name: only nsys reads it. Export it to SQLite and analyse that: "
            f"nsys export --type sqlite -o {out} {name} (or name it {stem}.nsys-rep in the "
            f"logdir, and where nsys is on PATH the Advisor exports it itself)")


#: An Nsight Compute report (``ncu -o <name>`` writes ``<name>.ncu-rep``) starts with ``NVR`` and a zero byte, then its
#: format's version as a little-endian 32-bit number (2 in 2023-2025 reports), then protobuf messages: the machine,
#: the program's path, each kernel's metrics and its cubin (read by hand, survey h37-heads60: LakshyaSingh354/CudaCode's
#: ``vec_add.ncu-rep``, armleth/cuda-mlp-inference's Colab ``report.ncu-rep``).
NCU_REPORT_MAGIC = b"NVR\x00"
#: The highest format version taken as one (a four-byte magic is short: a version field of noise is no report).
_NCU_VERSION_MAX = 255


def is_ncu_report_head(head: bytes) -> bool:
    """Whether the start of a file is an Nsight Compute report's (:data:`NCU_REPORT_MAGIC` and a small version)."""
    return (head.startswith(NCU_REPORT_MAGIC) and len(head) >= 8
            and 0 < int.from_bytes(head[4:8], "little") <= _NCU_VERSION_MAX)


#: Nsight Systems' raw capture stream: what ``nsys profile`` writes while it captures (``report1.qdstrm``, its first
#: bytes ``NVIDIA Nsight Systems Stream <version>``) and, when the capture ends, imports with its host tool
#: ``QdstrmImporter`` into the report (``.nsys-rep``; ``.qdrep`` before 2021.4), deleting the stream.  A stream left
#: behind is a capture whose import did not run: nsys prints "Importer error status: The importer binary and its
#: dependencies were not found ... skipping importation of the QDSTRM file" where only its target side is installed
#: (a distribution's package, an HPC module), or the job was stopped first.  The stream holds what was captured (a
#: header alone where the capture stopped before any event); the host tools import it (``host-linux-x64/QdstrmImporter -i <file>.qdstrm``, beside ``nsys``'s install).  Real ones: Perlmutter
#: captures of 2023.3.1, 2024.1.1 and 2025.3.1 and a 2019.6.1 desktop capture committed without their report
#: (h37-wild54n).  Why named: a logdir holding only a stream read "no GPU profiles found", as if it held nothing of
#: Nsight's, and given by path "not a profile this tool reads".
STREAM_SUFFIX = ".qdstrm"


def stream_words(file_name: str, unpack: str = "", aside: str = "") -> str:
    """Why an Nsight Systems raw capture stream is not read, with the commands that make the export read (``unpack``:
    the one that first decompresses a stream shared compressed; ``aside``: said of the stream after its name)."""
    stem_ = file_name.rsplit("/", 1)[-1][: -len(STREAM_SUFFIX)]
    return (f"Nsight Systems' raw capture stream ({STREAM_SUFFIX}){aside}, which nsys profile imports into its report when "
            "the capture ends: here the import did not run (nsys found no host importer beside a target-only "
            "install, or the capture was stopped before it), so no report was written.  The stream holds what was "
            "captured: import it with the host tools of Nsight Systems, then export the report to SQLite and analyse "
            f"that: {unpack}<nsight-systems>/host-linux-x64/QdstrmImporter -i {stem_}{STREAM_SUFFIX} ; "
            f"nsys export --type sqlite {stem_}.nsys-rep (.qdrep from Nsight Systems before 2021.4)")


#: A stream's first bytes hold this within :data:`_NSYS_STREAM_AT` of its start, after a 4- or 8-byte lead
#: (``\0\xff`` x4 in 2019.6.1's, ``U3w[END]`` in 2023.3-2025.3's: survey h37-wild54n's real streams), then its version.
NSYS_STREAM_MAGIC = b"NVIDIA Nsight Systems Stream "
_NSYS_STREAM_AT = 16


def is_nsys_stream_head(head: bytes) -> bool:
    """Whether the start of a file is an Nsight Systems raw capture stream's (:data:`NSYS_STREAM_MAGIC`)."""
    return NSYS_STREAM_MAGIC in head[:_NSYS_STREAM_AT + len(NSYS_STREAM_MAGIC)]


def renamed_stream_words(name: str) -> str:
    """:func:`stream_words` of a stream under another name (``capture.bin``): copied back to its own name first,
    which the importer is given."""
    name, stem_ = _renamed(name)
    return stream_words(f"{stem_}{STREAM_SUFFIX}", f"cp {name} {stem_}{STREAM_SUFFIX} ; ", " under another name")


def _renamed(name: str) -> tuple[str, str]:
    """(file name, its stem less its last suffix; "report" where none is left) of a capture under another name: what
    the words of a renamed report or stream name it by and copy or export it to."""
    name = name.rsplit("/", 1)[-1]
    return name, re.sub(r"\.[^./]*$", "", name) or "report"
