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
  per op name.

Only the first :data:`HEAD_BYTES` of a text file are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: How much of a text file's start is read to tell a summary.
HEAD_BYTES = 4096
#: Text files a summary is written as (``output_file`` is the user's choice; these are the names seen in use).
SUFFIXES = (".txt", ".log", ".out")

_TORCH_TRACE = ("torch.profiler with on_trace_ready=torch.profiler.tensorboard_trace_handler('LOGDIR/<run>') (or "
                "prof.export_chrome_trace('trace.json')), which writes <worker>.<time>.pt.trace.json")


@dataclass(frozen=True)
class Summary:
    """One profiler's text summary: its name, what it holds, the first-lines pattern that tells it, the capture that
    records a timeline of the same program."""

    name: str
    holds: str
    head: re.Pattern[str]
    timeline: str

    def words(self) -> str:
        return (f"{self.name}'s text summary ({self.holds}), not a trace: it keeps totals, not the timeline of "
                f"calls, launches, kernels and copies the Advisor reads; profile the same steps with {self.timeline}")


SUMMARIES = (
    Summary("DeepSpeed's Flops Profiler", "parameters, MACs, FLOPS and latency per module of one step",
            re.compile(r"^\s*-{3,}\s*DeepSpeed Flops Profiler\s*-{3,}", re.M), _TORCH_TRACE),
    Summary("torch.profiler's op table (key_averages().table(); Lightning PyTorchProfiler's .txt)",
            "time per op name, summed over the capture",
            re.compile(r"^\s*Name\s{2,}(?:Overload Name\s{2,})?Self CPU %\s{2,}Self CPU\s{2,}CPU total %", re.M), _TORCH_TRACE),
)


def maybe(file_name: str) -> bool:
    """A text file's name a summary may be written under (:data:`SUFFIXES`)."""
    return file_name.endswith(SUFFIXES)


def summary(head: bytes) -> Summary | None:
    """The profiler summary a text file starting with ``head`` is, None for any other text."""
    text = head[:HEAD_BYTES].decode("utf-8", errors="replace")
    return next((s for s in SUMMARIES if s.head.search(text)), None)
