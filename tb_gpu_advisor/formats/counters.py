"""Counter collections: what the GPU vendors' counter tools write, told by their own files' layout, so that a folder of
one is named for what it is -- a counter collection, not a timeline -- instead of "no GPU profiles found" with the
frameworks' capture help, which fits no HIP or CUDA user who ran a counter tool.

A counter tool replays each kernel once per counter pass and serialises the kernels to read the hardware counters of
each dispatch alone (rocprof-compute's and Nsight Compute's documentation say so): what it keeps is counters per
dispatch, never the run's timeline of calls, launches, copies and waits the Advisor's checks read.  So nothing in such
a folder can be analysed, and what helps is the vendor's tracing command for the same program.

The layouts (facts from the tools' documentation and from a real rocprof-compute run, survey h37-survey47):

* rocprof-compute (Omniperf) profile mode: a workload folder ``workloads/<name>/<gpu>/`` holding ``pmc_perf.csv``
  (one row per dispatch, its counters as columns; ``.csv.gz`` in newer releases, ``pmc_perf_<n>.csv`` per pass before
  the analyser merges them) beside ``profiling_config.yaml`` (newer releases) or ``sysinfo.csv``;
* rocprofv3 ``--pmc`` with CSV output: ``<prefix>_counter_collection.csv``; while it collects, rocprofv3 buffers
  records in ``.rocprofv3/<pid>-<tid>-counter_values.dat`` (binary);
* Nsight Compute: ``ncu -o <name>`` writes ``<name>.ncu-rep``.

Only names are looked at (a listing, as discovery is): no file is opened.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: The AMD tracing command that records what the Advisor reads (rocprofv3's rocpd database of the run's timeline).
AMD_TIMELINE = "rocprofv3 --runtime-trace --output-format rocpd -- ./app"
#: The NVIDIA tracing command: Nsight Systems' report of the CUDA API and the GPU's kernels and copies in time.
NVIDIA_TIMELINE = "nsys profile -t cuda,nvtx -o run ./app"


@dataclass(frozen=True)
class CounterTool:
    """One counter tool: its name as its users know it, what its files hold, how its files are named (a folder is
    the tool's when every pattern of ``needs`` names one of its files), and the vendor's timeline command."""

    name: str
    holds: str
    needs: tuple[re.Pattern[str], ...]
    timeline: str

    def files(self, names: Iterable[str]) -> list[str]:
        """The names of this tool's files among ``names`` (one folder's), [] unless every pattern names one."""
        names = sorted(names)
        matched = [[n for n in names if p.fullmatch(n)] for p in self.needs]
        if not all(matched):
            return []
        return sorted({n for group in matched for n in group})

    def names(self, name: str) -> bool:
        """Whether ``name`` is one of this tool's own file names (a file under it is the tool's, told by its folder:
        ``formats.foreign_capture`` tells by bytes only files under a name no tool gives them)."""
        return any(p.fullmatch(name) for p in self.needs)


#: Nsight Compute's reports (``<name>.ncu-rep``; under another name told by their bytes: ``formats.foreign_capture``).
NSIGHT_COMPUTE = CounterTool("Nsight Compute (ncu -o)", "metrics per kernel, each kernel replayed and serialised per pass",
                             (re.compile(r".+\.ncu-rep"),), NVIDIA_TIMELINE)

TOOLS = (
    CounterTool("rocprof-compute (Omniperf) profile mode",
                "performance counters per kernel dispatch, each kernel replayed once per counter pass",
                (re.compile(r"pmc_perf(?:_\d+)?\.csv(?:\.gz)?"), re.compile(r"profiling_config\.yaml|sysinfo\.csv")),
                AMD_TIMELINE),
    CounterTool("rocprofv3 --pmc", "counter values per kernel dispatch",
                (re.compile(r".*counter_collection\.csv"),), AMD_TIMELINE),
    CounterTool("rocprofv3 --pmc", "rocprofv3's binary buffers of counter records",
                (re.compile(r".+-counter_values\.dat"),), AMD_TIMELINE),
    NSIGHT_COMPUTE,
)


@dataclass(frozen=True)
class Collection:
    """A folder's counter collection: the tool and the files of it found there."""

    tool: CounterTool
    files: tuple[str, ...]

    def words(self, where: str) -> str:
        """What the folder ``where`` holds and what to run instead, in the tool's vendor's words only."""
        shown = ", ".join(self.files[:3]) + (f" and {len(self.files) - 3} more" if len(self.files) > 3 else "")
        return (f"{where} holds a counter collection of {self.tool.name} ({shown}): {self.tool.holds}, no timeline. "
                f"The Advisor reads timelines (each call, launch, kernel and copy in time), which a counter tool does "
                f"not record; trace the same program for one: {self.tool.timeline}")


def collection(names: Iterable[str]) -> Collection | None:
    """The counter collection a folder whose files are ``names`` holds (the first tool whose layout they fit), None
    for any other folder."""
    names = list(names)
    for tool in TOOLS:
        files = tool.files(names)
        if files:
            return Collection(tool, tuple(files))
    return None
