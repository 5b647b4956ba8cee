"""rocprofv3's JSON output (``rocprofv3 --output-format json``: ``<pid>_results.json`` in the folder it ran in; its
document ``json_reader.py`` says): where it sits, and how one is told.

A file is claimed by its content, never its name: any JSON file of a run folder whose start holds the writer's one top
key, ``"rocprofiler-sdk-tool"`` (its first characters: the writer opens the document with it).  Each file is a session
of its own, named after its modification time, its host after the file.
"""

from __future__ import annotations

import re

from tb_gpu_advisor.formats.rocprof.layout import ByContentLayout, head_bytes, stem  # rocprof's JSON names alike

#: gzipped too: the file is one JSON document, often tens of MB, and kept or shared compressed (TraceLens' own
#: rocprofv3 test capture is ``908_results.json.gz``)
SUFFIXES = (".json", ".json.gz")
EXPECTED = "<run>/<pid>_results.json (rocprofv3 --output-format json: any name, told by its content)"
#: How much of the file's start is searched for the top key (it is the document's first key).
SNIFF_BYTES = 4 << 10
_TOP = re.compile(rb'^\s*\{\s*"rocprofiler-sdk-tool"\s*:')


def sniff(path: str) -> str | None:
    """None when ``path`` is rocprofv3's JSON, else why not."""
    return None if _TOP.match(head_bytes(path, SNIFF_BYTES)) else "not rocprofv3's JSON (no rocprofiler-sdk-tool key)"


LAYOUT = ByContentLayout(EXPECTED, SUFFIXES, sniff, stem, "rocprofv3-json")
