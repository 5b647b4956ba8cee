"""Where nvprof's printed trace sits in a logdir, and how it is told: ``nvprof --csv --print-gpu-trace <program>
2> trace.csv`` (or ``--log-file trace.csv``), saved under any ``.csv`` name in a run's folder.

The file (facts read off real ones: jakemdaly/PyTorch-GPU-Profiling's ``trace_l1_*.csv`` of a Jetson Nano, the
layouts quoted by the scripts that parse them, h37-wild56x / h37-wild57n):

* the console's own lines first, ``==<pid>== NVPROF is profiling process <pid>, command: ...``, ``==<pid>== Profiling
  result:`` (``========`` in place of the pid with ``--log-file``; ``Err:510`` once a spreadsheet read them as
  formulas and saved the file again);
* the header: ``"Start","Duration","Grid X",...,"Device","Context","Stream","Name","Correlation_ID"`` with
  ``--print-gpu-trace`` (older nvprof: no ``SrcMemType`` / ``DstMemType`` / ``Correlation_ID``; a peer copy adds
  ``Src Dev`` ...), ``"Start","Duration","Name","Correlation_ID"`` with ``--print-api-trace`` alone;
* a row of units (``s,ms,,,...,KB,B,MB,GB/s,...``), then one row per kernel, copy or memset (and, with
  ``--print-api-trace``, per API call: its GPU cells empty).

A CSV is told by its header (:func:`kind_of`): ``Start``, ``Duration`` first, a ``Name``, and a ``Device`` (the GPU's
rows) or a ``Correlation_ID`` (the API's).  Any other CSV of a logdir is passed over in silence, as before (a training
loop's ``metrics.csv``; nvprof's CSV of totals or counters is named by ``formats.summaries``).  Each file is a session
of its own, as nvprof's database is.
"""

from __future__ import annotations

import re

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.base import ByIdentity, Groups, RunFolderLayout, Found

EXPECTED = ("<run>/<name>.csv (nvprof --csv --print-gpu-trace <program> 2> <name>.csv: the GPU's rows, told by their "
            "header)")
#: How much of a file's start is read to tell it: the console's lines (a long command line) and the header.
SNIFF_BYTES = 16 << 10
#: Lines before the header that are nvprof's console output, not the table (or a spreadsheet's rendering of them).
CONSOLE = re.compile(r"^\s*(?:==(?:\d+|=+)==|Err:\d+)")


def header_cells(line: str) -> list[str]:
    """The column names of a CSV header line, lower-cased, quotes off."""
    return [c.strip().strip('"').strip().lower() for c in line.strip().lstrip("\ufeff").split(",")]


def kind_of(cells: list[str]) -> str | None:
    """``"gpu"`` for the header of nvprof's printed GPU trace (``--print-gpu-trace``, with or without the API's rows),
    ``"api"`` for its API trace alone (``--print-api-trace``), None for any other CSV."""
    if cells[:2] != ["start", "duration"] or "name" not in cells:
        return None
    if "device" in cells and "stream" in cells:
        return "gpu"
    return "api" if "correlation_id" in cells else None


def header_at(lines: list[str]) -> int | None:
    """The index of the header line among a file's first lines: the first that is not nvprof's console output or
    blank; None where that line is no trace's header."""
    for i, line in enumerate(lines):
        if not line.strip() or CONSOLE.match(line):
            continue
        return i if kind_of(header_cells(line)) else None
    return None


_probed: ByIdentity[str | None] = ByIdentity()


def sniff(path: str) -> str | None:
    """None when ``path`` is nvprof's printed trace; ``""`` otherwise -- a CSV that is none is passed over without a
    word (discovery leaves out silently what a sniff gives no reason for)."""
    def probe() -> str | None:
        try:
            raw = fsio.read_head(path, SNIFF_BYTES)
        except Exception:  # noqa: BLE001 - unreadable, gone: not known to be one
            return ""
        lines = raw.decode("utf-8", errors="replace").splitlines()[:-1] or [raw.decode("utf-8", "replace")]
        return None if header_at(lines) is not None else ""
    return _probed.answer_for(path, probe)


def stem(file_name: str) -> str:
    """The host a file is named after: its name without ``.csv``."""
    return file_name[:-4] if file_name.lower().endswith(".csv") and len(file_name) > 4 else file_name


class NvprofCsvLayout(RunFolderLayout):
    expected = EXPECTED

    def claims(self, rel: tuple[str, ...]) -> bool:
        return False  # never by its name: a CSV is anyone's

    def maybe(self, rel: tuple[str, ...]) -> bool:
        return rel[-1].lower().endswith(".csv") and self.in_run_folder(rel)

    def sniff(self, path: str) -> str | None:
        return sniff(path)

    def group(self, found: list[Found]) -> Groups:
        return self.one_file_sessions(found, stem, "nvprof-csv")


LAYOUT = NvprofCsvLayout()
