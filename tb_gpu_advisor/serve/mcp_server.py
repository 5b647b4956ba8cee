"""The MCP server: the Advisor's reports, diffs and tables as tools an assistant calls (``tb-gpu-advisor mcp``).

Engineers ask an assistant "why is my run slow"; the answer is already in our reports (ranked findings with their
saving, windows and evidence), our diff (predicted vs realised savings) and our kernel and op tables.  This module
serves them over the Model Context Protocol (stdio), with the official SDK (the ``mcp`` extra), so any MCP client
can call them.

Two layers, so the analysis side has no SDK in it:

* :class:`ToolBackend` answers every question as text, synchronously, from the one entry point
  (``runtime.advisor.Advisor``: discovery, the report cache shared with the CLI, the tab and precompute), through
  the plugin's :class:`~tb_gpu_advisor.serve.service.ReportService` (analysis off the event loop, one computation
  per session however many calls ask, an in-memory LRU so explain / tables / capture calls on the same run answer
  at once).  Text comes from the existing renderers (``report.render``, ``report.diff_render``, ``rules.docs``).
* :func:`build_server` wraps it in the SDK's ``MCPServer`` (imported here lazily: the package works without the
  extra) as tools and rule-doc resources, sending progress while an analysis runs.

Answers fit an assistant's context: a report's JSON (over 100,000 characters on a big run) comes in pages of whole
lines (:func:`page`: ``offset`` and ``max_chars``, the next offset said on the first line), and ``summary`` is the
report in a few thousand characters.  The settings of ``tb-gpu-advisor mcp`` (``--params``, ``--net-gbps``,
``--model-flops-per-step``) apply to every analysis; a tool call may override them, as the tab's Settings do.

Security, as every route of the plugin: the logdir is fixed when the server starts; run, session and host names
are looked up in what discovery lists (which never leaves the logdir, symlinks included) and only its paths are
opened, so ``../``, absolute paths or a symlink out of the logdir are just unknown names.  A bad parameter is a
tool error naming the choices; the server keeps serving.

This module deliberately has no ``from __future__ import annotations``: the SDK reads the tools' annotations
(``Context``, ``Literal`` choices, parameter descriptions) at registration, from inside :func:`build_server`.
"""

import dataclasses
import inspect
import json
import logging
import os
import textwrap
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor import __version__, devices
from tb_gpu_advisor.common.fmt import echo, echo_list, gb, ms, pct
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import REGISTRY as FRAMEWORKS
from tb_gpu_advisor.frameworks import action
from tb_gpu_advisor.job import work_of
from tb_gpu_advisor.model.schema import Finding, HostReport, Metric, Report, Table
from tb_gpu_advisor.report import diff as diffmod
from tb_gpu_advisor.report import diff_render, render
from tb_gpu_advisor.report.verdict import damage_records, one_pass, one_step
from tb_gpu_advisor.report.view import memory_label, memory_labels
from tb_gpu_advisor.rules import REGISTRY as RULES
from tb_gpu_advisor.rules import RULE_IDS
from tb_gpu_advisor.rules import docs as rule_docs
from tb_gpu_advisor.runtime.advisor import ROOT_RUN, Advisor, Session, how_to_capture_text
from tb_gpu_advisor.serve.service import Outcome, ReportService

logger = logging.getLogger(__name__)

SERVER_NAME = "tb-gpu-advisor"
#: What ``tb-gpu-advisor mcp`` says when the SDK is missing (or is the 1.x API, which this server does not use).
SDK_MISSING = ("the MCP server needs the official MCP Python SDK 2.x: pip install 'tb-gpu-advisor[mcp]' "
               "(or pip install 'mcp>=2.3,<3')")
#: How long a tool waits on the report service before it sends a progress note and asks again (seconds); a
#: report that is cached or quick answers within the first wait, without any note.
POLL_S = 0.25
ENV_POLL_S = "TB_GPU_ADVISOR_MCP_POLL_S"
#: The longest answer a tool gives in one call (characters, about 10,000 tokens); a longer one comes in pages.
PAGE_CHARS = 40_000
#: How a user of the MCP server has symlinks inside the logdir followed.
FOLLOW_FLAG = "--follow-symlinks (tb-gpu-advisor mcp LOGDIR --follow-symlinks)"
#: The per-host tables a tool serves: name -> what it holds.
TABLES = {
    "kernels": "the largest GPU kernels by total time (top 25 per host): op, count, total/avg/min/max us, Tensor Core use",
    "ops": "the largest framework ops by kernel time (top 25 per host): host ms, kernels, Tensor Core share, precision",
    "kernel_classes": "every kernel of the kept steps grouped by class (GEMM, elementwise, NCCL, ...): us per step",
    "memcpy": ("copies by direction (h2d, d2h, d2d, p2p, other) and the GPU's fills (memset, no transfer): count, bytes "
               "and ms per step, synchronous share, the ops behind them"),
    "communication": "collectives per step and GPU by type: calls, time, exposed time, transfer",
}
RULES_URI = "tb-gpu-advisor://rules"

INSTRUCTIONS = """\
tb-gpu-advisor checks GPU profiles (TensorFlow/JAX .xplane.pb, PyTorch .pt.trace.json) in one TensorBoard logdir
against the TensorFlow GPU performance guide and ranks what slows the training step, each finding with its
estimated saving in ms per step.
Typical use: list_runs -> get_report(run) (markdown; format='summary' for the gist in a few thousand characters) ->
explain_finding(run, finding_id) for the windows, evidence and fix -> after the user changes the code and captures
again, diff_runs(base_run, new_run) to see whether the step got faster and whether the saving we predicted was
realised.  get_tables gives the kernel and op tables; get_memory where the GPU memory goes; capture_advice says
whether a capture can be trusted and how to record a better one.  Long answers come in pages: the first line says the offset of the next page.  Rule docs
are resources (tb-gpu-advisor://rules/<rule>).  Names come from list_runs; times are ms unless a column says us."""


class ToolInputError(ValueError):
    """A parameter that names nothing in the logdir, or a choice that does not exist: said to the caller with the
    names it could have used."""


# --------------------------------------------------------------------------- analysis side (no SDK)


def poll_s() -> float:
    """:data:`POLL_S`, or ``$TB_GPU_ADVISOR_MCP_POLL_S`` (a positive number of seconds)."""
    try:
        value = float(os.environ.get(ENV_POLL_S, POLL_S))
    except ValueError:
        return POLL_S
    return value if value > 0 else POLL_S


class ToolBackend:
    """What the tools need from one logdir, without the SDK: the names discovery lists, and session reports, all from
    the entry point ``advisor`` (its logdir, settings, cache and symlink choice).

    ``isolate`` (the server's default): a one-host session is analysed in a child process with the worker limits;
    False analyses it in this process, as ``tb-gpu-advisor report`` does.  A session of several hosts always goes
    the CLI's way (merged from the per-host cache that ``precompute --shard`` fills, the missing hosts analysed in
    worker processes), so a cluster capture is never analysed again host after host in one child.
    """

    def __init__(self, advisor: Advisor | str, isolate: bool = True, service: ReportService | None = None) -> None:
        self.advisor = advisor if isinstance(advisor, Advisor) else Advisor(advisor)
        self.logdir = self.advisor.logdir
        self.isolate = isolate
        self._service = service or ReportService(workers=2, memory_entries=16, wait_s=poll_s())

    # -- names -------------------------------------------------------------

    def sessions(self) -> list[Session]:
        """What discovery lists now (a new capture shows at once; the logdir is small to walk)."""
        return self.advisor.sessions()

    def runs_json(self) -> str:
        """Runs -> sessions -> hosts as the tab's ``/runs`` lists them (``has_gpu``: a cheap probe, null unknown); an
        empty logdir says why (symlinks not followed or leading out, ...) or how to capture."""
        sessions = self.sessions()
        body: dict[str, Any] = {"logdir": self.logdir, "runs": self.advisor.listing(sessions)}
        if not sessions:
            why = self.advisor.nothing_found(FOLLOW_FLAG)
            body["note"] = (f"{why[0]}. {why[1]}" if why is not None
                            else f"no GPU profiles found. {how_to_capture_text()}")
        return json.dumps(body, indent=1)

    def select(self, run: str, session: str | None = None, host: str | None = None) -> Session:
        """The session named by ``run`` (its newest session unless ``session``), narrowed to ``host``; only names
        discovery listed are accepted, each unknown one is a :class:`ToolInputError` listing the known ones."""
        found = self.sessions()
        if not found:
            raise ToolInputError(f"no GPU profiles in the logdir {self.logdir}")
        chosen = _session_of(found, _name(run, "run"), _name(session, "session") if session else None)
        if not host:
            return chosen
        hosts = [h for h in chosen.hosts if h.host == host]
        if not hosts:
            raise ToolInputError(f"unknown host {echo(host)} in {chosen.stock_run}. Available hosts: "
                                 f"{_names(h.host for h in chosen.hosts)}")
        return dataclasses.replace(chosen, hosts=tuple(hosts))

    def options(self, params: int | None = None, net_gbps: float | None = None,
                model_flops: float | None = None) -> UserOptions:
        """The server's settings with a call's own over them (None: the server's)."""
        return self.advisor.options.overridden_by(UserOptions(params, net_gbps, model_flops))

    # -- reports -----------------------------------------------------------

    def outcome(self, s: Session, options: UserOptions | None = None) -> Outcome:
        """The report service's answer for a selected session analysed with ``options`` (None: the server's): ready,
        computing (with progress), or error.  Waits at most ``POLL_S``; call again while computing."""
        options = self.advisor.options_for(options)
        key = (self.advisor.session_key(s, options).digest, tuple(h.host for h in s.hosts))
        return self._service.get(key, lambda progress: self._compute(s, progress, options))

    def _compute(self, s: Session, progress: Callable[[str, float], None], options: UserOptions) -> str:
        """In a service worker: the entry point's report, the report cache first (the CLI's key)."""
        a = self.advisor.report(s, options=options, progress=progress, jobs=None, isolate=self.isolate)
        if a.not_stored and self.advisor.cache.enabled:
            logger.info("%s: report not cached: %s", s.stock_run, a.not_stored)
        return a.report.to_json()

    def shutdown(self) -> None:
        self._service.shutdown()


# --------------------------------------------------------------------------- answers (pure functions of reports)


def report_text(report: Report, fmt: str, top: int) -> str:
    """A report as the CLI prints it: JSON (the versioned schema, docs/report-schema.md), markdown or text; or its
    ``summary`` (:func:`summary_json`)."""
    if fmt == "json":
        return report.to_json(indent=1)
    if fmt == "summary":
        return summary_json(report, top)
    if fmt == "text":
        return render.to_text(report, top=top)
    return render.to_markdown(report, top=top)


def summary_json(report: Report, top: int = 10) -> str:
    """The report in a few thousand characters, as JSON: the verdict, the step and what fixing everything would
    give, each host's capture, the headline cards, the ``top`` findings (id, severity, title, saving, where, the
    first fix) and the notes; the full report is ``format='json'`` (paged) and one finding is ``explain_finding``."""
    def saving(f: Finding) -> dict[str, Any] | None:
        return None if f.saving is None else {"ms_per_step": round(f.saving.ms_per_step, 4),
                                              "percent_of_step": round(f.saving.percent_of_step, 2)}

    findings = [f for f in report.findings if f.rule != "healthy"]
    a = report.achievable or {}
    body = {
        "run": report.run, "session": report.session, "verdict": report.verdict, "healthy": report.healthy,
        "step_ms": a.get("step_ms"),
        # null where the account promises no step (a start-up-only window: ``achievable.reason``)
        "achievable_step_ms": a.get("achievable_step_ms"),
        "hosts": [summary_host(h) for h in report.hosts],
        "headline": [summary_card(m) for m in report.headline],
        "findings": [{"id": f.id, "rule": f.rule, "severity": f.severity, "title": f.title, "saving": saving(f),
                      **({"frees_bytes": f.saving_bytes} if f.saving_bytes else {}),
                      **({"confidence": f.confidence} if f.confidence and f.confidence != "high" else {}),
                      "where": f.host or (f.hosts or None), "fix": f.actions[0].text if f.actions else None}
                     for f in findings[:top]],
        "more_findings": max(0, len(findings) - top),
        "notes": list(report.notes),
        "full_report_chars": len(report.to_json(indent=1)),
        "next": "explain_finding(run, finding_id) for one finding in full; get_report(format='json') for every "
                "number, in pages",
    }
    return json.dumps(body, indent=1)


def summary_card(m: Metric) -> dict[str, Any]:
    """One headline card as the summary gives it: its value and status, and why it reads so where the text report
    says why (``render.card_note``: "n/a: not recorded ...", "graded by its finding ...").

    Why: the summary gave "n/a" alone where the text report, the markdown and the tab say why (h37-surfaces31)."""
    out = {"id": m.id, "label": m.label, "value": m.display, "status": m.status}
    if note := render.card_note(m):
        out["note"] = note
    return out


def summary_host(h: HostReport) -> dict[str, Any]:
    """One host as the summary gives it: what the tab's host line and time breakdown show -- the job's line, its
    steps (count, source, confidence; the one pass of a capture that marks none), the loop a window without GPU work
    times on the CPU and why no GPU step is timed (``job.host_loop``, ``job.no_gpu_step``), the GPUs and their count,
    and the step's ledger (``breakdown_ms``, the categories that hold time: ``memset`` beside the copies).

    Why: the summary quoted the job's line but none of the keys behind it, so an agent read "4 marked steps of 88.0
    ms" as words only and never saw the ledger the tab charts (h37-surfaces31): one account, the same facts on every
    surface."""
    job, steps = h.job or {}, h.steps if isinstance(h.steps, dict) else {}
    out: dict[str, Any] = {
        "host": h.host, "framework": h.capture.get("framework_name") or h.capture.get("framework"),
        # a window that times no GPU step counts none, as the tab's host line and the CLI's header say ("no step"),
        # whatever its CPU loop's marks (``host_loop``)
        "job": job.get("summary"), "steps": 0 if job.get("no_gpu_step") else steps.get("count"),
        # the GPUs' names once each, and how many (the tab's "4 GPUs: NVIDIA H100 80GB HBM3"), each as a sentence and
        # the tab's host line say it (``devices.said_name``: an inferred name's model alone, its reasons left to the
        # GPUs table, h37-review31)
        "gpus": sorted({devices.said_name(g.name) or g.name for g in h.gpus}), "gpu_count": len(h.gpus),
        "error": h.error,
        "damage": h.damage or None, "contradictions": h.contradictions or None,
        "unreadable": h.unreadable or None,
        # each piece typed (kind, code, words, where), an error host's too: what an agent tests, not the words
        "damage_records": [dataclasses.asdict(d) for d in damage_records(h)] or None}
    if out["steps"]:  # where the steps came from, of steps counted (the tab's "6 steps (ProfilerStep marks)")
        out.update(step_source=steps.get("source_label"), step_confidence=steps.get("confidence"))
    if one_pass(h):
        out["one_pass"] = True
    for key in ("host_loop", "no_gpu_step"):
        if job.get(key):
            out[key] = job[key]
    ledger = {k: round(v, 4) for k, v in (h.breakdown_ms or {}).items() if isinstance(v, (int, float)) and v > 0}
    if ledger:
        out["breakdown_ms"] = ledger
    return out


def page(text: str, offset: int = 0, max_chars: int = PAGE_CHARS) -> str:
    """``text`` when it fits in ``max_chars``, else the page of whole lines from ``offset``: a first line says which
    characters of how many it holds and the ``offset`` of the next page (the pages, without those lines, add up to
    the whole text).  An offset past the end is a :class:`ToolInputError`."""
    if offset < 0 or (offset and offset >= len(text)):
        raise ToolInputError(f"offset {offset} is past the end of the answer ({len(text):,} characters)")
    if offset == 0 and len(text) <= max_chars:
        return text
    end = min(len(text), offset + max_chars)
    if end < len(text):
        cut = text.rfind("\n", offset, end)
        end = cut + 1 if cut > offset else end  # whole lines, unless one line is longer than a page
    more = (f"the next page: the same call with offset={end}" if end < len(text) else "the last page")
    return f"[characters {offset:,}-{end:,} of {len(text):,}; {more}]\n{text[offset:end]}"


def diff_text(base: Report, new: Report, base_label: str, new_label: str, host: str | None, fmt: str,
              top: int) -> str:
    """``tb-gpu-advisor diff`` of two reports: the same function, labels and renderer as the CLI."""
    d = diffmod.diff_reports(base, new, host=host, base_label=base_label, new_label=new_label, top=top)
    return diff_render.render(d, fmt)


def all_findings(report: Report) -> list[Finding]:
    """The session's ranked findings, then each host's own (a finding merged over hosts has the bare rule id in
    the session list; the hosts keep ``rule:host`` ids)."""
    seen, out = set(), []
    for f in [*report.findings, *(f for h in report.hosts for f in h.findings)]:
        if f.id not in seen:
            seen.add(f.id)
            out.append(f)
    return out


def find_finding(report: Report, finding_id: str) -> Finding:
    """The finding with this id, or the only finding of this rule; else a :class:`ToolInputError` with the ids."""
    findings = all_findings(report)
    for f in findings:
        if f.id == finding_id:
            return f
    of_rule = [f for f in findings if f.rule == finding_id]
    if len(of_rule) == 1 or (of_rule and of_rule[0].id == of_rule[0].rule):
        return of_rule[0]
    ids = _names(f.id for f in findings) or "none"
    raise ToolInputError(f"no finding {echo(finding_id)} in {report.run}/{report.session}. Its findings: {ids}")


def explain_markdown(report: Report, f: Finding, evidence_rows: int) -> str:
    """One finding in full: the report's own section for it with every window and evidence table, where its
    windows are, and the rule's documentation (what it checks, thresholds, sources)."""
    rank = next((i for i, x in enumerate(report.findings, 1) if x.id == f.id), None)
    place = f"#{rank} of {len(report.findings)} in the report" if rank else "a per-host finding"
    head = [f"## {render.md_inline(f.title)}", "",
            (f"Finding {render.md_code(f.id)} (rule {render.md_code(f.rule)}, {f.severity}, {place}) in run "
             f"{render.md_code(report.run)}, session {render.md_code(report.session)}."), ""]
    body = render.finding_markdown(f, rank or 1, evidence_rows=evidence_rows, open_=True, windows=None, tables=None,
                                   one=one_step(report, f))
    where = ["### Where to look", "",
             (f"{plural(len(f.windows), 'trace window')} above, in ms since the capture's start: open the host's capture in "
              "the Trace Viewer (TensorBoard's Profile tab) or Perfetto at those times." if f.windows else
              "This finding names no trace window."), ""]
    doc = rule_docs.rule_section(f.rule) if f.rule in RULES else []
    tail = [f"### How the rule decides (resource {RULES_URI}/{f.rule})", "", *doc[1:]] if doc else []
    return "\n".join(head + body + where + tail).rstrip() + "\n"


def kernel_classes_table(h: HostReport) -> Table:
    """``HostReport.kernel_classes`` (every kernel, by class) as a table like the others."""
    rows = [[c.get("class"), c.get("kernels"), c.get("launches_per_step"), c.get("us_per_step")]
            for c in h.kernel_classes]
    return Table("Kernel time by class (every kernel of the kept steps)",
                 ["class", "kernels", "launches/step", "us/step"], rows)


def host_table(h: HostReport, which: str) -> Table | None:
    """One of :data:`TABLES` of a host (None: the host has none, e.g. a CPU-only capture's kernels)."""
    if which == "kernel_classes":
        return kernel_classes_table(h) if h.kernel_classes else None
    return getattr(h, which)


def tables_text(report: Report, which: str, rows: int, fmt: str) -> str:
    """The ``which`` table of every host of the report, its first ``rows`` rows, as markdown or JSON."""
    if which not in TABLES:
        raise ToolInputError(f"unknown table {echo(which)}. Tables: {_names(TABLES)}")
    tables = [(h, None if h.error else host_table(h, which)) for h in report.hosts]
    if fmt == "json":
        hosts = [{"host": h.host, "error": h.error, "total_rows": len(t.rows) if t else 0,
                  "table": None if t is None else dataclasses.asdict(Table(t.title, t.columns, t.rows[:rows]))}
                 for h, t in tables]
        return json.dumps({"run": report.run, "session": report.session, "table": which, "hosts": hosts}, indent=1)
    out = [f"## {which} of run {render.md_code(report.run)}, session {render.md_code(report.session)}", "",
           TABLES[which] + ".", ""]
    for h, t in tables:
        if t is None:
            why = f"could not be analysed: {h.error}" if h.error else "no such table (nothing of this kind captured)"
            out += [f"### Host {render.md_code(h.host)}: {render.md_inline(why)}", ""]
            continue
        shown = min(rows, len(t.rows))
        out += [f"### {render.md_inline(t.title)} on host {render.md_code(h.host)} ({shown} of {len(t.rows)} rows)",
                ""] + render.table_markdown(t, rows) + [""]
    return "\n".join(out).rstrip() + "\n"


#: The memory findings (issue #29): what ``get_memory`` lists beside the numbers.
MEMORY_RULES = ("oom_snapshot", "activation_memory", "memory_fragmentation", "memory_near_capacity", "memory_leak",
                "memory_imbalance", "batch_size_headroom", "allocator_churn")


def fmt_bytes(n: Any) -> str:
    return gb(n) if isinstance(n, (int, float)) else str(n)


def _no_memory_words(report: Report) -> str:
    """What a session with no allocator events is told: how the framework that wrote each host's capture records
    them (``Framework.memory_record``), each said once; where none says, that the capture holds none.  Why: every
    session was told PyTorch's ``profile_memory=True``, a TensorFlow or Nsight one too (review70)."""
    said: list[str] = []
    for h in report.hosts:
        fw = FRAMEWORKS.get(h.capture.get("framework") or "")
        if fw is not None and fw.memory_record and f"{fw.name}: {fw.memory_record}" not in said:
            said.append(f"{fw.name}: {fw.memory_record}")
    if not said:
        return "No allocator events in this session: the capture holds none of the allocator's memory events."
    how = said[0].partition(": ")[2] if len(said) == 1 else f"-- {'; '.join(said)}"
    return f"No allocator events in this session: record them {how}."


def memory_text(report: Report, fmt: str, timeline: bool = False) -> str:
    """Where each GPU's memory goes (``GpuSummary.memory``): the peak table, what holds each peak, the OOMs a
    snapshot recorded, and the memory findings with their fixes; as markdown or JSON (``timeline``: with the chart's
    series)."""
    findings = [f for f in all_findings(report) if f.rule in MEMORY_RULES]
    if fmt == "json":
        hosts = [{"host": h.host, "error": h.error,
                  "gpus": [{"gpu": g.gpu, "name": g.name,
                            "memory": None if g.memory is None else
                            {k: v for k, v in g.memory.items() if timeline or k != "timeline"}} for g in h.gpus]}
                 for h in report.hosts]
        return json.dumps({"run": report.run, "session": report.session, "hosts": hosts,
                           "findings": [dataclasses.asdict(f) for f in findings]}, indent=1)
    out = [f"## GPU memory of run {render.md_code(report.run)}, session {render.md_code(report.session)}", ""]
    rows = render.memory_rows(report)
    if not rows:
        out += [_no_memory_words(report), ""]
        return "\n".join(out)
    out += render.md_table(render.MEMORY_COLS, rows) + [""]
    for h in report.hosts:
        names = memory_labels(h)
        for g in h.gpus:
            m = g.memory
            if not m:
                continue
            if m.get("top"):
                out += [f"### What holds {render.md_code(h.host)} GPU{g.gpu}'s memory at its peak", ""]
                out += render.md_table(["op", "holds", "size", "allocations"],
                                       [[op, memory_label(cat, names), fmt_bytes(b), n] for op, cat, b, n in m["top"]]) + [""]
            for o in m.get("ooms") or []:
                out += [f"### Out of memory on {render.md_code(h.host)} GPU{g.gpu}: {fmt_bytes(o['requested_bytes'])} "
                        f"requested, {fmt_bytes(o['device_free_bytes'])} free", ""]
                out += [f"- asked for at {render.md_code(fr)}" for fr in o["frames"][:6]] + [""]
                live = [[fmt_bytes(b), memory_label(c, names), " <- ".join(fr[:3])] for b, c, fr in o["live"]]
                out += render.md_table(["size", "holds", "allocated at"], live) + [""]
    for i, f in enumerate(findings, 1):
        out += render.finding_markdown(f, i, evidence_rows=10, open_=True, one=one_step(report, f))
    return "\n".join(out).rstrip() + "\n"


def capture_advice_text(report: Report | None) -> str:
    """Whether the session's capture can be trusted (its steps, length, steadiness and ``capture_quality``
    findings) and how to record a better one for its framework; without a report, how to capture for each."""
    if report is None:
        out = ["## How to capture a profile the Advisor can judge", "", *_guide_lines(), ""]
        for fw in FRAMEWORKS.values():
            out += _snippet_lines(fw)
        return "\n".join(out + ["```text", how_to_capture_text(), "```"]) + "\n"
    quality = [f for f in report.findings if f.rule == "capture_quality"]
    out = [f"## Capture advice: run {render.md_code(report.run)}, session {render.md_code(report.session)}", "",
           f"**{render.md_inline(_capture_verdict(quality + _warm_up(report), _kept_steps(report), _steps_noun(report)))}**",
           ""]
    out += render.md_table(["host", "framework", "capture", "steps kept / found", "step marks", "step time cv",
                            "steady"], [_capture_row(h) for h in report.hosts]) + [""]
    out += _capture_notes(report) + [""]
    for i, f in enumerate(quality, 1):
        out += render.finding_markdown(f, i, evidence_rows=20, open_=True, windows=None, tables=None,
                                       one=one_step(report, f))
    out += ["### Recording a better capture", "", *_guide_lines(_steps_noun(report)), ""]
    out += _job_snippets(report)
    return "\n".join(out).rstrip() + "\n"


def _job_snippets(report: Report) -> list[str]:
    """How to record each framework's job better: the advice the report composed for each host's job
    (``job.capture_advice``: its loop, its ranks, a cold start's schedule, a serving engine's routes), each text
    once; a framework's general advice only for a host without it (a report of an older analyzer), and every
    framework's where no host names one.  The job's own advice, never a text written for a training loop beside
    fixes that loop the job's step (h37-left43)."""
    out: list[str] = []
    shown: set[tuple[str, str]] = set()
    for h in report.hosts:
        fw = FRAMEWORKS.get(h.capture.get("framework") or "")
        if fw is None:
            continue
        text = (h.job or {}).get("capture_advice") or fw.capture_snippet
        if (fw.id, text) not in shown:
            shown.add((fw.id, text))
            out += _snippet_lines(fw, text)
    if not out:
        for fw in FRAMEWORKS.values():
            out += _snippet_lines(fw)
    return out


def _warm_up(report: Report) -> list[Finding]:
    """The findings that say the capture recorded warm-up (``cold_start`` at warning or critical): the report leads
    with them, so the capture advice cannot call such a capture trustworthy (issue #36)."""
    return [f for f in report.findings if f.rule == "cold_start" and f.severity in ("critical", "warning")]


def _kept_steps(report: Report) -> int | None:
    """The fewest steps a host of the report kept (its per-step averages rest on them), None without an analysed
    host."""
    kept = [int((h.steps or {}).get("count") or 0) for h in report.hosts if h.error is None]
    return min(kept) if kept else None


def _capture_verdict(quality: Sequence[Finding], kept: int | None = None,
                     noun: tuple[str, str] = ("training steps", "training step")) -> str:
    """Recapture when a capture-quality or cold-start finding is a warning (no GPU activity, too few steps, warm-up
    recorded); else trusted for per-step averages -- only where every host kept the steps averages need
    (``capture.min_steps``, the too-few-steps check's own bound): a capture of one engine step or one forward pass,
    which that check only notes, is read as it is, and a memory snapshot that times no step has no per-step average
    to trust (h37-review13: sglang_b300_decode's one engine step and every snapshot read "can be trusted for per-step
    averages" above a note saying at least 5 steps make averages trustworthy)."""
    worrying = [f for f in quality if f.severity in ("critical", "warning")]
    if worrying:
        return "Recapture before trusting the numbers: " + "; ".join(dict.fromkeys(f.title for f in worrying))
    notes = " (see the notes below)." if quality else "."
    if kept is not None and kept < 1:
        return "The capture can be read as it is: it times no step, so its numbers are the capture's, not per-step averages" + notes
    if kept is not None and kept < T("capture.min_steps"):
        return (f"The capture can be read as it is, but it kept {plural(kept, noun[1], noun[0])}, fewer than the "
                f"{T('capture.min_steps'):g} that make per-step averages trustworthy" + notes)
    return "The capture can be trusted for per-step averages" + notes


def _capture_row(h: HostReport) -> list[str]:
    c, s = h.capture, h.steps
    cv = c.get("step_time_cv")
    steady = {True: "yes", False: "no", None: "-"}[c.get("steady_state")]
    length = "-" if c.get("length_ms") is None else ms(c["length_ms"])
    if c.get("too_short") or c.get("too_long"):
        length += " (short)" if c.get("too_short") else " (long)"
    return [h.host, c.get("framework_name") or "-", length, f"{s.get('count', '-')} / {s.get('found', '-')}",
            s.get("source") or "-", "-" if cv is None else pct(cv), steady]


def _capture_notes(report: Report) -> list[str]:
    """Each host's step-detection note, capture notes and dropped steps with their reasons."""
    out = []
    for h in report.hosts:
        for note in [h.steps.get("note"), *(h.capture.get("notes") or [])]:
            if note:
                out.append(f"- {render.md_code(h.host)}: {render.md_inline(note)}")
        for d in h.steps.get("dropped") or []:
            out.append(f"- {render.md_code(h.host)}: step {d.get('step')} dropped: {render.md_inline(d.get('reason'))}")
    return out


#: What the guide's advice calls one step of a job's work (``job.work_of``).
_STEP_NOUNS = {"training": ("training steps", "training step"), "inference": ("forward passes", "forward pass"),
               "any_work": ("steps", "step"), "serving": ("engine steps", "engine step")}


def _steps_noun(report: Report) -> tuple[str, str]:
    """The steps of the report's job, plural and singular: one kind of work for every host, else the general words."""
    works = {"serving" if "serving" in (j.get("tags") or ()) else
             work_of(j.get("host_kind") or j.get("kind") or "", j.get("tags") or ())
             for j in (h.job for h in report.hosts) if j}
    return _STEP_NOUNS[works.pop()] if len(works) == 1 else _STEP_NOUNS["training"]


def _guide_lines(noun: tuple[str, str] = _STEP_NOUNS["training"]) -> list[str]:
    """The guide's capture advice in the job's words (``noun``: its steps, plural and singular)."""
    steps, seconds = T("capture.min_steps"), T("capture.max_seconds")
    return [(f"- About ten seconds of steady-state {noun[0]}, after warm-up (at least {steps:g} complete {noun[0]}; "
             f"captures over {seconds:g} s are distorted by profiling overhead)."),
            f"- Mark each {noun[1]} so per-step numbers are exact (the snippets below do)."]


def _snippet_lines(fw: Any, text: str | None = None) -> list[str]:
    """A framework's heading, capture advice (``text``, else its general advice) fenced in its language (a command
    line is no Python: h37-review12, vLLM's ``VLLM_TORCH_PROFILER_DIR=... vllm serve``), and the framework's hints
    where the advice is code of the program's (a capture tool's command line is the whole advice)."""
    text = (text or fw.capture_snippet).strip()
    lang = action("", text).snippet_lang or "python"
    hints = [f"- {render.md_code(h)}" for h in fw.capture_hint] if lang == "python" else []
    return [f"#### {fw.name}", "", f"```{'sh' if lang == 'shell' else lang}", text, "```", "", *hints, ""]


def rule_doc(rid: str) -> str:
    """One rule's section of docs/rules.md (what it checks, thresholds, per-framework fixes)."""
    return "\n".join(rule_docs.rule_section(rid)).rstrip() + "\n"


# --------------------------------------------------------------------------- names


def _name(value: Any, what: str) -> str:
    """A run or session name as given, or a :class:`ToolInputError` for anything that is not a plain string."""
    if not isinstance(value, str) or not value.strip():
        raise ToolInputError(f"{what}: give a {what} name from list_runs")
    return value.strip()


def _session_of(found: Sequence[Session], run: str, session: str | None) -> Session:
    """The discovered session of ``run`` (newest, or the one named ``session``: its folder or RUN/SESSION name).

    ``run`` may also be a RUN/SESSION name as list_runs' ``stock_run`` gives it.
    """
    run = run.rstrip("/") or ROOT_RUN
    of_run = [s for s in found if s.run == run]  # discovery: newest first within a run
    if not of_run:
        exact = [s for s in found if s.stock_run == run]
        if exact and session is None:
            return exact[0]
        raise ToolInputError(f"unknown run {echo(run)}. Available runs: {_names(dict.fromkeys(s.run for s in found))}")
    if session is None:
        return of_run[0]
    session = session.rstrip("/") or session
    for s in of_run:
        if s.named(session):
            return s
    raise ToolInputError(f"unknown session {echo(session)} in run {echo(run)}. Its sessions (newest first): "
                         f"{_names(s.session for s in of_run)}")


def _names(xs: Any, n: int = 40) -> str:
    """The first ``n`` names, each cut to ``fmt.MAX_ECHO_CHARS``."""
    return echo_list(xs, n)


# --------------------------------------------------------------------------- the MCP layer


def sdk_available() -> bool:
    """The SDK of the ``mcp`` extra (2.x, ``mcp.server.mcpserver``) is importable."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        return False
    return True


def one_line(text: str | None) -> str:
    """A docstring or help text as one line: no newlines, no runs of spaces (what an MCP client shows verbatim)."""
    return " ".join(inspect.cleandoc(text or "").split())


def build_server(backend: ToolBackend) -> Any:
    """The SDK's ``MCPServer`` with the tools and rule resources (raises ImportError without the SDK): the tools'
    shared kit (:class:`_Kit`), then each group of tools, then the rules' resources, in the order clients list them."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS)
    k = _Kit(server, backend)
    _add_listing_tool(k)
    _add_report_tools(k)
    _add_table_tools(k)
    _add_capture_tool(k)
    _add_rule_resources(server)
    return server


class _Kit:
    """What every tool group registers its tools with: the SDK's types, the parameters the tools share (run, session,
    host, paging, the user's options), the registration decorator, and the selected session's report."""

    def __init__(self, server: Any, backend: ToolBackend) -> None:
        from mcp.server.mcpserver import Context
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import ToolAnnotations
        from pydantic import Field

        self.server, self.backend = server, backend
        self.Field, self.Context, self.ToolError = Field, Context, ToolError
        self.read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                         open_world_hint=False)
        self.Run = Annotated[str, Field(description="run name from list_runs (e.g. 'input_bound', 'exp1/train'; "
                                                    "'.' for profiles straight in the logdir); a RUN/SESSION name "
                                                    "also works")]
        self.SessionName = Annotated[str | None, Field(description="session (capture) folder name from list_runs; "
                                                                   "default: the run's newest session")]
        self.Host = Annotated[str | None, Field(description="only this host (name from list_runs); default: every "
                                                            "host")]
        self.Offset = Annotated[int, Field(ge=0, description="where this page starts, in characters: 0, or the offset "
                                                             "the previous page named (answers over max_chars come in "
                                                             "pages)")]
        self.MaxChars = Annotated[int, Field(ge=2000, le=400_000, description="the longest page returned, in "
                                                                              f"characters (default {PAGE_CHARS:,})")]
        self.Params = Annotated[int | None, Field(gt=0, description="the model's parameter count, to judge each "
                                                                    "AllReduce (default: the server's --params)")]
        self.NetGbps = Annotated[float | None, Field(gt=0, description="network bandwidth between hosts, GB/s per GPU "
                                                                       "(default: the server's --net-gbps, else 25)")]
        self.ModelFlops = Annotated[float | None, Field(gt=0, description="the model's FLOPs of one training step on "
                                                                          "one GPU (e.g. 6 x params x tokens per GPU): "
                                                                          "MFU from them instead of the trace's shapes "
                                                                          "(default: the server's "
                                                                          "--model-flops-per-step)")]

    def tool(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Registers ``fn`` with its docstring as one line (the SDK would pass its indentation on verbatim)."""
        return self.server.tool(annotations=self.read_only, structured_output=False,
                                description=one_line(fn.__doc__))(fn)

    def checked(self, fn: Callable[[], Any]) -> Any:
        """``fn()``, with the caller's mistakes as tool errors (said to the agent; the server goes on)."""
        try:
            return fn()
        except (ToolInputError, diffmod.DiffError) as e:
            raise self.ToolError(str(e)) from None

    async def selected(self, ctx: Any, run: str, session: str | None, host: str | None,
                       options: UserOptions | None = None) -> tuple[Session, Report]:
        """The selected session and its report, analysed off the event loop with progress notes (cached: instant)."""
        import anyio

        s = self.checked(lambda: self.backend.select(run, session, host))
        while True:
            o = await anyio.to_thread.run_sync(self.backend.outcome, s, options)
            if o.state == "ready":
                return s, Report.from_json(o.body)
            if o.state == "error":
                raise self.ToolError(f"{s.stock_run} could not be analysed: {o.message}")
            await ctx.report_progress(o.progress, 1.0, f"{s.stock_run}: {o.message}")


def _add_listing_tool(k: _Kit) -> None:
    """``list_runs``: the names every other tool takes."""
    @k.tool
    def list_runs() -> str:
        """List the runs, their sessions (one capture each, newest first) and host files in the logdir, as JSON:
        {"runs": [{"run", "sessions": [{"session", "stock_run", "format", "has_gpu", "mtime_ms", "hosts": [{"host",
        "size", ...}]}]}]}.  Call this first: every other tool takes these run / session / host names.  An empty
        logdir says why in "note"."""
        return k.backend.runs_json()


def _add_report_tools(k: _Kit) -> None:
    """``get_report``, ``diff_runs`` and ``explain_finding``: the report of a session, two compared, one finding."""
    @k.tool
    async def get_report(ctx: k.Context, run: k.Run, session: k.SessionName = None, host: k.Host = None,
                         format: Annotated[Literal["markdown", "summary", "json", "text"], k.Field(
                             description="markdown (default: for reading); summary (JSON of the verdict, each "
                                         "host's facts and step ledger, headline cards and ranked findings in a "
                                         "few thousand characters); json (every "
                                         "number, docs/report-schema.md; over 100,000 characters on a big run, so "
                                         "it comes in pages); or text")] = "markdown",
                         top: Annotated[int, k.Field(ge=0, le=200, description="findings shown in markdown, text and "
                                                                             "summary; json has all")] = 10,
                         offset: k.Offset = 0, max_chars: k.MaxChars = PAGE_CHARS, params: k.Params = None,
                         net_gbps: k.NetGbps = None, model_flops_per_step: k.ModelFlops = None) -> str:
        """Why is this run slow: the Advisor's report of one session (a run's newest unless `session`), or of one
        of its hosts.  It opens with a verdict line, then the findings ranked by estimated saving (ms per step and
        % of step, with the assumption), each with its fix and copyable code, then the headline metrics and per-GPU
        tables.  format='summary' gives the gist as compact JSON.  The first call on a capture analyses it (seconds;
        progress is reported), later calls are cached.  An answer longer than max_chars comes in pages: its first
        line names the offset of the next.  Use explain_finding for one finding's windows and full evidence."""
        options = k.backend.options(params, net_gbps, model_flops_per_step)
        report = (await k.selected(ctx, run, session, host, options))[1]
        return k.checked(lambda: page(report_text(report, format, top), offset, max_chars))

    @k.tool
    async def diff_runs(ctx: k.Context,
                        base_run: Annotated[str, k.Field(description="the run before the change (from list_runs)")],
                        new_run: Annotated[str, k.Field(description="the run after the change (from list_runs)")],
                        base_session: k.SessionName = None, new_session: k.SessionName = None,
                        host: Annotated[str | None, k.Field(description="compare this host (default: each side's "
                                                                      "slowest)")] = None,
                        format: Literal["markdown", "json", "text"] = "markdown",
                        top: Annotated[int, k.Field(ge=1, le=200, description="kernel and op changes shown")] = 15,
                        offset: k.Offset = 0, max_chars: k.MaxChars = PAGE_CHARS, params: k.Params = None,
                        net_gbps: k.NetGbps = None, model_flops_per_step: k.ModelFlops = None) -> str:
        """Did the change help: compare two captures as `tb-gpu-advisor diff` does.  Gives the step time before
        and after with its noise (faster / slower / no change beyond the noise), predicted vs realised savings
        (the saving the fixed findings predicted next to the realised step-time change, and their ratio),
        findings fixed / new / still present, and the breakdown, kernel, op and GPU changes; it says when the two
        captures do different work.  Where both record GPU memory (two memory snapshots, or traces that record it) it
        gives each GPU's memory before and after (peak, reserve, what holds the peak, top allocation sites) and the
        bytes the fixed findings predicted next to the peak realised.  Use after the user applied a fix and captured
        again."""
        options = k.backend.options(params, net_gbps, model_flops_per_step)
        base_s, base = await k.selected(ctx, base_run, base_session, None, options)
        new_s, new = await k.selected(ctx, new_run, new_session, None, options)
        text = k.checked(lambda: diff_text(base, new, base_s.stock_run, new_s.stock_run, host, format, top))
        return k.checked(lambda: page(text, offset, max_chars))

    @k.tool
    async def explain_finding(ctx: k.Context, run: k.Run,
                              finding_id: Annotated[str, k.Field(
                                  description="the finding's id from the report (e.g. 'input_bound:worker0', or "
                                              "'input_bound' merged over hosts); a rule id picks its only finding")],
                              session: k.SessionName = None, host: k.Host = None,
                              format: Literal["markdown", "json"] = "markdown",
                              evidence_rows: Annotated[int, k.Field(ge=1, le=1000)] = 50,
                              offset: k.Offset = 0, max_chars: k.MaxChars = PAGE_CHARS, params: k.Params = None,
                              net_gbps: k.NetGbps = None, model_flops_per_step: k.ModelFlops = None) -> str:
        """Explain one finding in full: its summary with the numbers, the metric against its threshold, the
        estimated saving and what it assumes, every trace window it names (host, GPU, step, start/end in ms of
        the capture), every evidence table, the fixes with code, and how the rule decides (its documentation).
        JSON gives the finding as in the report schema."""
        options = k.backend.options(params, net_gbps, model_flops_per_step)
        report = (await k.selected(ctx, run, session, host, options))[1]
        f = k.checked(lambda: find_finding(report, finding_id))
        text = json.dumps(dataclasses.asdict(f), indent=1) if format == "json" else explain_markdown(report, f,
                                                                                                     evidence_rows)
        return k.checked(lambda: page(text, offset, max_chars))


def _add_table_tools(k: _Kit) -> None:
    """``get_tables`` and ``get_memory``: a session's kernel, op, copy and collective tables, and its memory."""
    @k.tool
    async def get_tables(ctx: k.Context, run: k.Run,
                         table: Annotated[Literal["kernels", "ops", "kernel_classes", "memcpy", "communication"],
                                          k.Field(description="; ".join(f"{name}: {v}" for name, v in TABLES.items()))
                                          ] = "kernels",
                         session: k.SessionName = None, host: k.Host = None,
                         rows: Annotated[int, k.Field(ge=1, le=1000)] = 25,
                         format: Literal["markdown", "json"] = "markdown",
                         offset: k.Offset = 0, max_chars: k.MaxChars = PAGE_CHARS) -> str:
        """Kernel and op tables of a session, per host: the largest kernels (`kernels`), the framework ops with
        their kernel time (`ops`), every kernel by class (`kernel_classes`), host-device copies (`memcpy`) or
        collectives (`communication`).  Use to see which kernels or ops take the time a finding speaks of."""
        report = (await k.selected(ctx, run, session, host))[1]
        return k.checked(lambda: page(tables_text(report, table, rows, format), offset, max_chars))

    @k.tool
    async def get_memory(ctx: k.Context, run: k.Run, session: k.SessionName = None, host: k.Host = None,
                         format: Literal["markdown", "json"] = "markdown",
                         timeline: Annotated[bool, k.Field(description="JSON only: add each GPU's memory series "
                                                                     "(ms, allocated, reserved)")] = False,
                         offset: k.Offset = 0, max_chars: k.MaxChars = PAGE_CHARS) -> str:
        """Where the GPU memory goes: per GPU its peak allocated and reserved bytes against its capacity, when in
        the step the peak falls, what holds it (memory held across steps, activations, gradients, the optimizer's
        state; the ops holding most), the reserve beyond the peak (fragmentation), the out-of-memory errors a
        memory snapshot recorded, and the memory findings with their fixes.  Use for "why did this OOM", "can the
        batch grow", "what fills the GPU"."""
        report = (await k.selected(ctx, run, session, host))[1]
        return k.checked(lambda: page(memory_text(report, format, timeline), offset, max_chars))


def _add_capture_tool(k: _Kit) -> None:
    """``capture_advice``: whether a capture can be trusted, and how to record one."""
    @k.tool
    async def capture_advice(ctx: k.Context,
                             run: Annotated[str | None, k.Field(
                                 description="judge this run's capture; omit for how to capture in general")] = None,
                             session: k.SessionName = None) -> str:
        """Can this capture be trusted, and how to record a better one: steps kept, capture length, step-time
        variation and the capture-quality findings of the session, then the capture snippet for its framework
        (TensorFlow, JAX, PyTorch).  Without a run: how to capture a profile for each framework and where the
        files go.  Use when a report has few steps, no GPU activity or unsteady steps, or no profiles exist."""
        if run is None:
            return capture_advice_text(None)
        return capture_advice_text((await k.selected(ctx, run, session, None))[1])


def _add_rule_resources(server: Any) -> None:
    """``tb-gpu-advisor://rules`` (docs/rules.md) and one resource per rule, each listed so a client can find it."""
    from mcp.server.mcpserver.resources import FunctionResource

    def one(rid: str) -> Callable[[], str]:
        return lambda: rule_doc(rid)

    server.add_resource(FunctionResource.from_function(
        rule_docs.render, uri=RULES_URI, name="rules", title="Every rule of the Advisor",
        description="docs/rules.md: every check, its guide section, thresholds with their sources, ranking and "
                    "how savings add up", mime_type="text/markdown"))
    for rid in RULE_IDS:
        r = RULES[rid]
        server.add_resource(FunctionResource.from_function(
            one(rid), uri=f"{RULES_URI}/{rid}", name=f"rule {rid}", title=f"{rid}: {r.title}",
            description=f"Guide {r.section}: {r.title} -- {textwrap.shorten(r.doc, 160)}",
            mime_type="text/markdown"))


def serve_stdio(advisor: Advisor, isolate: bool = True) -> None:
    """Run the server for ``advisor``'s logdir (its settings, cache and symlink choice) on stdin/stdout until the
    client closes it."""
    backend = ToolBackend(advisor, isolate=isolate)
    try:
        build_server(backend).run("stdio")
    finally:
        backend.shutdown()
