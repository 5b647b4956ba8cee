"""Where TensorFlow and JAX write XPlane files: ``<logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb``.

``<run>`` may be nested (``job/tensorboard``) or the logdir itself (run ``"."``); it never has a
``plugins`` folder in its path.  Hosts sit directly in the session folder; below ``plugins`` only
``plugins/profile/<session>`` can hold them, so the walk does not enter the other plugins' assets or the
stock tool's caches, which can be large.
"""

from __future__ import annotations

import os

from tb_gpu_advisor.formats.base import PLUGINS_DIR, Found, Groups, Located
from tb_gpu_advisor.model.logdir import ROOT_RUN, HostFile

HOST_SUFFIX = ".xplane.pb"
PROFILE_DIR = "profile"
EXPECTED = "<run>/plugins/profile/<session>/<host>" + HOST_SUFFIX
#: What TensorFlow's legacy profiler (``tf.summary.trace_export(profiler_outdir=...)``) leaves in a session folder --
#: and what the Keras TensorBoard callback's ``profile_batch`` wrote up to TensorFlow 2.1, through that profiler
#: (``plugins/profile/<%Y-%m-%d_%H-%M-%S>/local.trace``: a TF-GPU 2.0.0 Keras run on a V100, survey h37-wild55x).
#: TensorFlow 2.2 wrote tool data and its trace viewer JSON; 2.3 on, the XPlane.
LEGACY_TRACE = "local.trace"
LEGACY_TRACE_WHY = ("TensorFlow's legacy profiler trace (tf.summary.trace_on(profiler=True) / trace_export(..., "
                    "profiler_outdir=...), which TensorFlow 1.14 to 2.1 also wrote for the Keras TensorBoard "
                    "callback's profile_batch): not an XPlane, not read; profile again on TensorFlow 2.3 or later with "
                    "tf.profiler.experimental.start(logdir) ... stop() or the Keras TensorBoard callback's "
                    "profile_batch, which write " + EXPECTED)
#: The tool data TensorFlow's profiler and xprof convert a session's XPlane into, beside it in the session folder
#: (what the stock Profile tab shows: trace viewer, overview page, input pipeline, TF and kernel stats, memory
#: profile, op profile, xprof's op-stats cache, JAX's Perfetto trace).  Beside an XPlane they are its companions;
#: alone, the XPlane they came from is missing (survey h37-survey11: jackmcarthur/lorrax's ``op_stats_v2.pb`` only;
#: h37-survey18: aoberai/chess-engine's sessions, which hold both).
TOOL_DATA_SUFFIXES = (".trace.json.gz", ".trace.json", ".overview_page.pb", ".input_pipeline.pb",
                      ".tensorflow_stats.pb", ".kernel_stats.pb", ".memory_profile.json.gz", ".op_profile.json",
                      ".op_stats.pb", ".op_stats_v2.pb", ".pod_viewer.json")
#: JAX's ``jax.profiler.trace(logdir, create_perfetto_trace=True)`` (and ``create_perfetto_link``) writes this beside
#: the session's ``<host>.xplane.pb`` and ``<host>.trace.json.gz``: that trace viewer JSON re-written with its
#: ``metadata`` entry dropped (jax ``_src/profiler.py`` ``_write_perfetto_trace_file``: ``del trace["metadata"]``,
#: which holds only ``highres-ticks``) -- the same events, for ui.perfetto.dev.  It names no host.
PERFETTO_TRACE = "perfetto_trace.json.gz"
#: The host a session's ``perfetto_trace.json.gz`` read alone is named for: the file names none, and neither does its
#: JSON (its processes are ``/host:CPU`` and ``/device:GPU:N``).
PERFETTO_HOST = "perfetto_trace"
TOOL_DATA_WHY = ("TensorFlow/JAX profiler tool data (what the stock Profile tab shows: trace viewer JSON, overview "
                 "page, input pipeline, op and kernel stats, memory profile), converted from the session's XPlane, "
                 "which the Advisor reads instead: give the `<host>.xplane.pb` the profiler wrote beside it "
                 "(TensorFlow 2.3 and later, JAX) or, from TensorFlow 2.2, which wrote no XPlane, the session's "
                 "`<host>.trace.json.gz` (copy the whole session folder), or profile again with tf.profiler.experimental.start(logdir) ... stop() "
                 "or jax.profiler.trace(logdir), which write " + EXPECTED)

#: The file names TensorFlow's profiler gives a session's trace viewer JSON (``<host>.trace.json.gz``; xprof's
#: uncompressed ``.trace.json`` alike), which TensorFlow 2.2 wrote instead of an XPlane (``viewer_json``).  PyTorch's
#: ``.pt.trace.json`` is another writer's (Kineto).
VIEWER_SUFFIXES = (".trace.json.gz", ".trace.json")
_KINETO_SUFFIXES = (".pt.trace.json.gz", ".pt.trace.json")


def viewer_host_of(file_name: str) -> str | None:
    """The host of a trace viewer JSON's file name (``instance-2.trace.json.gz`` -> ``instance-2``), else None."""
    if file_name.endswith(_KINETO_SUFFIXES):
        return None
    for suffix in VIEWER_SUFFIXES:
        if file_name.endswith(suffix) and len(file_name) > len(suffix):
            return file_name[: -len(suffix)]
    return None


#: A host file packed by hand (to attach it to an issue, to send it): no profiler writes one compressed -- TensorFlow,
#: JAX and xprof write and read ``<host>.xplane.pb`` only (xprof's ``XPLANE_FILE_SUFFIX``).
PACKED_SUFFIXES = (".gz", ".zst", ".bz2", ".xz")
PACKED_WHY = ("a compressed XPlane: the profiler writes " + EXPECTED + " uncompressed, and that is what the Advisor "
              "reads; decompress it in place (gunzip, zstd -d, ...) and point the Advisor at the folder again")

#: A capture saved in chunks (``SaveXSpaceChunk``: ``<host>.xplane.riegeli``, each chunk an XSpace in a Brotli-packed
#: Riegeli record, openxla/xla xla/tsl/profiler/rpc/client/save_profile.cc): another container than the one-message
#: ``.xplane.pb`` this reader parses.
CHUNKED_SUFFIX = ".xplane.riegeli"
CHUNKED_WHY = ("an XPlane capture saved in chunks (" + CHUNKED_SUFFIX + ": Riegeli records, Brotli-compressed), which "
               "the Advisor does not read: it reads the one-message export the profiler writes by default, " + EXPECTED)


def viewer_json_host(file_name: str) -> str | None:
    """The host of a session's trace viewer JSON by its file name: ``<host>.trace.json.gz`` (:func:`viewer_host_of`),
    or JAX's ``perfetto_trace.json.gz`` (:data:`PERFETTO_HOST`: the same JSON less its ``metadata``); else None.

    Why: a session folder holding JAX's ``perfetto_trace.json.gz`` alone (the file users keep, upload and attach,
    since ui.perfetto.dev opens it) was refused as "tool data: give the xplane.pb" -- although it holds every event
    of the ``<host>.trace.json.gz`` this reader already reads where TensorFlow 2.2 wrote no XPlane (session 59
    h37-wild59's *Left* 1).  Beside the session's XPlane or its ``<host>.trace.json.gz`` it is dropped
    (:meth:`XPlaneLayout.group`): one capture, read once."""
    if file_name == PERFETTO_TRACE:
        return PERFETTO_HOST
    return viewer_host_of(file_name)


def is_tool_data(file_name: str) -> bool:
    """A file the profiler converted from an XPlane (:data:`TOOL_DATA_SUFFIXES`), by its name."""
    return file_name.endswith(TOOL_DATA_SUFFIXES) and not file_name.endswith((".pt.trace.json", ".pt.trace.json.gz"))


def host_of(file_name: str) -> str | None:
    """Host name of a profile file name, or None for any other file."""
    if file_name.endswith(HOST_SUFFIX) and len(file_name) > len(HOST_SUFFIX):
        return file_name[: -len(HOST_SUFFIX)]
    return None


#: How many seconds apart the session folders of one capture's hosts can be named.  Each process names its folder by its
#: own clock's second when it exports (``ExportToTensorBoard`` -> ``<logdir>/plugins/profile/<now as
#: %Y_%m_%d_%H_%M_%S>/<host>.xplane.pb``, after its own ``CollectData``; ``jax.profiler.stop_trace`` per process), so the
#: hosts of one multi-host job land in sibling folders when their exports straddle a second (survey h37-xplane2).  The
#: spread is the hosts' stop skew (under a step: collectives keep them in step), each host's collect-and-convert time
#: (seconds for a large capture) and clock skew (NTP: milliseconds); a second capture of the same job is at least a
#: profiling window later and holds the same host names (never merged: :func:`discover.discover`).
HOST_FOLDERS_WITHIN_S = 10.0


class XPlaneLayout:
    expected = EXPECTED
    host_folders_within_s = HOST_FOLDERS_WITHIN_S

    def claims(self, rel: tuple[str, ...]) -> bool:
        """A session's ``<host>.xplane.pb``, or its ``<host>.trace.json.gz`` or JAX's ``perfetto_trace.json.gz``:
        TensorFlow 2.2 wrote the trace viewer JSON and no XPlane (``viewer_json``), and a JAX session may be kept as
        its Perfetto JSON alone; beside an XPlane the JSON is dropped (:meth:`group`)."""
        return (len(rel) >= 4 and rel[-4] == PLUGINS_DIR and rel[-3] == PROFILE_DIR and PLUGINS_DIR not in rel[:-4]
                and (host_of(rel[-1]) is not None or viewer_json_host(rel[-1]) is not None))

    def descend(self, rel: tuple[str, ...]) -> bool:
        if PLUGINS_DIR not in rel:
            return True
        below = rel[rel.index(PLUGINS_DIR) + 1:]
        return len(below) <= 2 and (not below or below[0] == PROFILE_DIR)

    def misplaced(self, rel: tuple[str, ...]) -> bool:
        return host_of(rel[-1]) is not None and not self.claims(rel)

    def unread_beside(self, file_name: str, read: frozenset[str]) -> bool:
        return bool(read)  # TensorFlow's tool data and legacy trace beside a session's XPlane are that session's

    def unread(self, rel: tuple[str, ...]) -> str | None:
        """TensorFlow's legacy profiler (``tf.summary.trace_on(profiler=True)`` with ``trace_export(...,
        profiler_outdir=...)``) writes ``local.trace`` into the same ``plugins/profile/<session>`` folder: a host-only
        trace proto with no XPlane in it (survey h37-survey11: a Keras laptop run of 2023 whose logdir read "no GPU
        profiles found")."""
        in_session = len(rel) >= 4 and rel[-4] == PLUGINS_DIR and rel[-3] == PROFILE_DIR
        packed = rel[-1].rsplit(".", 1)
        if len(packed) == 2 and "." + packed[1] in PACKED_SUFFIXES and host_of(packed[0]) is not None:
            return PACKED_WHY
        if in_session and rel[-1] == LEGACY_TRACE:
            return LEGACY_TRACE_WHY
        if rel[-1].endswith(CHUNKED_SUFFIX) and len(rel[-1]) > len(CHUNKED_SUFFIX):
            return CHUNKED_WHY
        if in_session and is_tool_data(rel[-1]):
            return TOOL_DATA_WHY  # discovery keeps it only where no XPlane sits beside it
        return None

    def group(self, found: list[Found]) -> Groups:
        with_xplane = {f.folder for f in found if host_of(f.name) is not None}
        with_viewer = {f.folder for f in found if viewer_host_of(f.name) is not None}
        groups: Groups = {}
        for f in found:
            if host_of(f.name) is None and f.folder in with_xplane:
                continue  # the trace viewer JSON converted from the XPlane beside it: that XPlane is read
            if f.name == PERFETTO_TRACE and f.folder in with_viewer:
                continue  # JAX's copy of the <host>.trace.json.gz beside it, less its metadata: that one is read
            run = "/".join(f.rel[:-4]) or ROOT_RUN
            host = HostFile(host_of(f.name) or viewer_json_host(f.name) or "", f.path, f.size, f.mtime_ns, "xplane")
            groups.setdefault((run, f.rel[-2], f.folder), []).append(host)
        return groups

    def maybe(self, rel: tuple[str, ...]) -> bool:
        return False  # an XSpace is known by its name and place only

    def sniff(self, path: str) -> str | None:
        return "not an XPlane file name"

    def refused(self, path: str) -> str | None:
        return self.sniff(path)

    def lone_content(self, path: str) -> str | None:
        return None  # an XSpace is known by its name and place only

    def locate(self, path: str) -> Located | None:
        if not path.endswith(HOST_SUFFIX):
            return None
        p = os.path.abspath(path)
        session_dir = os.path.dirname(p)
        profile_dir = os.path.dirname(session_dir)
        plugins_dir = os.path.dirname(profile_dir)
        if os.path.basename(profile_dir) != PROFILE_DIR or os.path.basename(plugins_dir) != PLUGINS_DIR:
            return None  # a file copied anywhere: read alone (``lone_host``)
        # the run folder itself as the logdir: discovery calls its run "."
        return Located(os.path.dirname(plugins_dir), os.path.basename(session_dir), host_of(os.path.basename(p)) or "")

    def lone_host(self, file_name: str) -> str | None:
        return host_of(file_name)

    def read_instead(self, file_name: str) -> tuple[str, ...]:
        """A session's trace viewer JSON given by path is read as the XPlane it was converted from, where that is
        beside it (TensorFlow 2.3 on, JAX); JAX's ``perfetto_trace.json.gz``, which names no host, as any host's
        XPlane or trace viewer JSON of its folder (JAX writes it only where the folder holds one host's)."""
        if file_name == PERFETTO_TRACE:
            return ("*" + HOST_SUFFIX, "*" + VIEWER_SUFFIXES[0])
        host = viewer_host_of(file_name)
        return (host + HOST_SUFFIX,) if host is not None else ()

    def beside(self, file_name: str) -> tuple[str, ...]:
        return ()  # the reader reads the XSpace alone (TensorFlow's tool data beside it is made from it)


LAYOUT = XPlaneLayout()
