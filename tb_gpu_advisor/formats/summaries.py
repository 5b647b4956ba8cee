"""Text summaries profilers print: told by their own first lines, so that a file of one -- in a logdir the user points
the Advisor at, or given by path -- is named for what it is (a summary, no timeline) instead of the silent "no GPU
profiles found" with the frameworks' capture help, or "not a profile this tool reads".

A summary keeps totals (per module, per op), never the run's timeline of calls, launches, kernels, copies and waits
that the Advisor's checks read; what helps is the capture that records one for the same program.  The summaries
(facts from the tools' own sources and documentation, probe h37-probe43d):

* DeepSpeed's Flops Profiler (``deepspeed.profiling.flops_profiler``, ``print_model_profile(output_file=...)``, the
  config's ``flops_profiler.output_file``): opens with the banner
  ``-------------------------- DeepSpeed Flops Profiler --------------------------`` (microsoft/DeepSpeed
  docs/_tutorials/flops-profiler.md, every release's example output) and holds parameters, MACs, FLOPS and latency
  per module, from one forward (and backward) pass;
* torch.profiler's op table (``prof.key_averages().table()`` written to a file; Lightning's ``PyTorchProfiler``
  writes it as ``<stage>-<filename>.txt`` beside its traces): the header row ``Name  Self CPU %  Self CPU  CPU total
  %`` (torch/autograd/profiler_util.py ``_build_table``; ``Overload Name`` after ``Name`` in newer releases), totals
  per op name;
* Nsight Systems' console output (``nsys profile ... > nsys.log``, its ``--stats=true`` tables, ``nsys stats`` and
  ``nsys analyze`` of a report): ``Generating '/tmp/nsys-report-<id>.qdstrm'`` and the ``[1/8] [====100%]
  <name>.nsys-rep`` progress lines the profile command prints, ``[3/8] Executing 'nvtx_sum' stats report`` (2022.4
  on), ``Processing [<name>.sqlite] with [<install>/reports/cuda_gpu_kern_sum.py]...`` (``nsys stats``, ``nsys
  analyze``'s ``rules/``), ``CUDA API Statistics:`` / ``Operating System Runtime API Statistics:`` (2020-2021): totals
  per CUDA API call, kernel, copy, NVTX range or OS call -- the report they were printed from is the timeline
  (survey h37-wild54n: committed as ``nsys_output.txt``, ``nsys.log``, ``nsys_report.txt`` beside no report);
* nvprof's output (``nvprof <program> 2> nvprof.txt``, ``--log-file``): ``==<pid>== Profiling application: ...``,
  ``==<pid>== Profiling result:`` (``========`` in a log file), then totals of ``GPU activities`` and ``API calls``
  -- or, with ``--print-gpu-trace`` / ``--print-api-trace``, each one as a line of text (h37-wild54n);
* nvprof's ``--csv`` output of totals (``nvprof --csv <program> 2> totals.csv``): the same ``==<pid>==`` lines, then
  the quoted header row ``"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"`` and a row of units (h37-wild56x:
  jakemdaly/PyTorch-GPU-Profiling's 100 Jetson Nano files were "no GPU profiles found"; its printed traces,
  ``--print-gpu-trace``, are read since h37-wild57n: ``formats.nvprof.csv_reader``); and nvprof's error alone
  (``======== Error: Application received signal 9``: a run killed before any result).

Only the first :data:`HEAD_BYTES` of a text file are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: How much of a text file's start is read to tell a summary.
HEAD_BYTES = 4096
#: Text files a summary is written as (``output_file`` is the user's choice; these are the names seen in use).
#: ``.csv``: nvprof's ``--csv`` output is saved under it (h37-wild56x: jakemdaly's 100 Tegra X1 ``trace_l1_*.csv``), and
#: only a CSV whose first lines are a summary's is named -- any other CSV of a logdir is passed over as before.
SUFFIXES = (".txt", ".log", ".out", ".csv")

_TORCH_TRACE = ("profile the same steps with torch.profiler with "
                "on_trace_ready=torch.profiler.tensorboard_trace_handler('LOGDIR/<run>') (or "
                "prof.export_chrome_trace('trace.json')), which writes <worker>.<time>.pt.trace.json")
#: What a user holding Nsight Systems' printed tables has instead: the report they were printed from.
_NSYS_REPORT = ("analyse the report they were printed from: put its SQLite export in the logdir (nsys export --type "
                "sqlite <report>.nsys-rep; nsys profile --stats=true already wrote <report>.sqlite beside the report)")
#: nvprof's own database of the same run records its timeline (read since h37-wild55n: ``formats.nvprof``), and
#: nvprof's successor records it on GPUs after Volta.
_NVPROF_SUCCESSOR = ("record the same program into nvprof's database, which the Advisor reads (nvprof -o <name>.nvvp "
                     "<program>), or, on a GPU after Volta, profile it with Nsight Systems, nvprof's successor (nsys "
                     "profile -o <name> <program>, then nsys export --type sqlite <name>.nsys-rep)")

#: What a user holding nvprof's CSV of totals or counters has instead: the same run exported whole, which the Advisor
#: reads (or its printed GPU trace, ``--print-gpu-trace``, read as a timeline of the GPU alone).
_NVPROF_DATABASE = ("export the same run whole with --export-profile (nvprof --export-profile <name>.nvvp <program>, "
                    "or -o): nvprof's database, which the Advisor reads; on a GPU after Volta, profile it with Nsight "
                    "Systems instead (nsys profile -o <name> <program>, then nsys export --type sqlite <name>.nsys-rep); its "
                    "printed GPU trace (nvprof --csv --print-gpu-trace <program> 2> trace.csv) is read too, as the "
                    "GPU's timeline without the host's")


@dataclass(frozen=True)
class Summary:
    """One profiler's text summary: its name, what it holds, the first-lines pattern that tells it, what to give the
    Advisor instead (the capture that records a timeline of the same program, or the report the text was printed
    from), and what it keeps in place of a timeline."""

    name: str
    holds: str
    head: re.Pattern[str]
    instead: str  # what to give the Advisor instead, in words: the capture (or the report) holding the timeline
    keeps: str = "totals"
    kind: str = "text summary"  # what the file is, after its tool's name ("CSV output")
    verdict: str = "not a trace"  # what it is to the Advisor ("not read": printed rows of a timeline)

    def words(self) -> str:
        owner = f"{self.name}'" if self.name.endswith("s") else f"{self.name}'s"  # Nsight Systems' summary
        return (f"{owner} {self.kind} ({self.holds}), {self.verdict}: it keeps {self.keeps}, not the timeline of "
                f"calls, launches, kernels and copies the Advisor reads; {self.instead}")


SUMMARIES = (
    Summary("DeepSpeed's Flops Profiler", "parameters, MACs, FLOPS and latency per module of one step",
            re.compile(r"^\s*-{3,}\s*DeepSpeed Flops Profiler\s*-{3,}", re.M), _TORCH_TRACE),
    Summary("torch.profiler's op table (key_averages().table(); Lightning PyTorchProfiler's .txt)",
            "time per op name, summed over the capture",
            re.compile(r"^\s*Name\s{2,}(?:Overload Name\s{2,})?Self CPU %\s{2,}Self CPU\s{2,}CPU total %", re.M), _TORCH_TRACE),
    Summary("Nsight Systems", "its console output -- nsys profile's log, its --stats=true tables, nsys stats or nsys "
            "analyze --: totals per CUDA API call, kernel, memory copy, NVTX range or OS call over the capture",
            re.compile(r"^Generating '[^'\n]*\.qdstrm'"
                       r"|^\[\d+/\d+\] \[[= ]*\d+%\s*\] \S+\.(?:nsys-rep|qdrep|sqlite)"
                       r"|^\[\d+/\d+\] Executing '\w+' stats report"
                       r"|^Processing \[[^\]\n]+\] with \[[^\]\n]*/(?:reports|rules)/\w+\.py\]"
                       r"|^(?:Generating )?(?:CUDA API|CUDA Kernel|CUDA Memory Operation|Operating System Runtime API"
                       r"|NVTX Push-Pop Range) Statistics\b", re.MULTILINE), _NSYS_REPORT),
    # before nvprof's console output: a CSV starts with the same ``==<pid>==`` lines; its header row tells it
    # (its printed traces, --print-gpu-trace / --print-api-trace, are read: ``formats.nvprof.csv_layout``)
    Summary("nvprof", "nvprof --csv without --print-gpu-trace: totals per GPU activity and API call over the run",
            re.compile(r'^"?Type"?,"?Time\(%\)"?,"?Time"?,"?Calls"?,"?Avg"?,"?Min"?,"?Max"?,"?Name"?', re.MULTILINE),
            _NVPROF_DATABASE, keeps="totals",
            kind="CSV output", verdict="not read"),
    Summary("nvprof", "nvprof --csv --metrics or --events: per kernel name, each hardware counter's min, max and "
            "mean over its invocations, the kernels replayed to collect them",
            re.compile(r'^"?Device"?,"?Kernel"?,"?Invocations"?,"?(?:Metric|Event) Name"?', re.MULTILINE),
            "its counters say how each kernel used the GPU, not what the GPU waited for; for the job's timeline, "
            + _NVPROF_DATABASE, keeps="counters per kernel", kind="CSV output", verdict="not read"),
    Summary("nvprof", "its console output: totals of GPU activities and API calls, or with --print-gpu-trace each one "
            "as a line",
            re.compile(r"^==(?:\d+|=+)== (?:Profiling application:|Profiling result:|NVPROF is profiling)", re.MULTILINE),
            _NVPROF_SUCCESSOR, keeps="totals or printed lines"),
    # after the console output: a run with results printed them first; this file holds nvprof's error alone
    Summary("nvprof", "`======== Error: Application received signal 9` or `... returned non-zero code N`: the "
            "profiled program was killed or failed, and nvprof printed no result",
            re.compile(r"^==(?:\d+|=+)== Error: Application (?:received signal \d+|returned non-zero code \d+)",
                       re.MULTILINE),
            "run the program to its end under the profiler (signal 9 is most often the out-of-memory killer or a job's "
            "time limit: a smaller batch or a shorter run), then " + _NVPROF_DATABASE,
            keeps="the error alone", kind="error output", verdict="no profile"),
)


def maybe(file_name: str) -> bool:
    """A text file's name a summary may be written under (:data:`SUFFIXES`)."""
    return file_name.endswith(SUFFIXES)


def summary(head: bytes) -> Summary | None:
    """The profiler summary a text file starting with ``head`` is, None for any other text."""
    text = head[:HEAD_BYTES].decode("utf-8", errors="replace")
    return next((s for s in SUMMARIES if s.head.search(text)), None)
