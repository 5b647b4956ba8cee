"""Properties of the JSON report that hold for ANY report (h37-review4): the fields an agent, the MCP server or a CI job
reads, several of which the text never prints, agree with one another, with the run and with the hardware.

Each check reads ``Report.to_dict()`` -- the JSON as ``--format json`` writes it -- and returns its violations as lines
``"<property>: <host>: <what>"``; an empty list is a report that holds them all.

* ``vendor`` -- ``capture.vendor`` (whose words the tab's legend takes) names a vendor only where a GPU of the host ran
  work (a kernel, a copy, a collective: busy time): a CPU-only capture, one of an accelerator the Advisor does not
  analyse has no GPU vendor to claim; a memory snapshot only the one its allocator's frames name (from h37-snap22);
  a window that lost its GPU records only the one whose runtime launched its kernels (``job.runtime_vendor``, from
  h37-hiprocm36: ``hipLaunchKernel`` says an AMD GPU ran them).
* ``step-count`` -- one count of steps per host: ``capture.steps_kept`` is ``steps.count`` and
  ``capture.steps_captured`` is ``steps.found``; the steps found less those dropped are the steps kept, except where
  none was found (``steps.source`` ``whole_capture``: the capture is one step or none).
* ``note-numbers`` -- a number ``capture.note`` says is the field's: "only N steps kept" is ``steps.count``.
* ``note-vs-job`` -- a capture note calls the capture CPU-only only where the job says the work ran on the CPU (its
  kind ``no_gpu`` with that evidence): not for work on an accelerator, GPU records lost, or a window before the GPU
  work, which the job and the capture finding name.
* ``steady-vs-job`` -- ``capture.steady_state`` is not true where the job says the window is a cold start
  (``job.phase`` ``warm-up``: the cold-start finding says "not the steady state").
* ``metric-status`` -- a finding's metric is coloured with one of the schema's statuses and no stronger than the
  finding's severity: a note's metric is not amber, a warning's not red.
* ``step-confidence`` (h37-left39) -- a finding whose numbers are per step (any but those about the capture itself,
  ``rules._ABOUT_THE_CAPTURE``, that claim no saving: a saving per step is one, h37-lowconf) is no surer than the steps it rests on, and none is critical on ``low`` steps --
  wherever the steps are a reading of the job (any source but a whole capture analysed as one step with no claim
  about its iterations: ``steps.iteration_guess`` false there, its numbers exact for the window).

* ``job-agree`` (h37-left43) -- the job line (``job.summary``), the loop the fixes run and ``job.kind`` /
  ``job.host_kind`` tell one job: the line names the work the host's events name where the GPU's records were lost
  (never "of an unknown kind" beside a training loop's fixes), and every profiled loop or step the fixes' code runs is
  the job's (``train_step`` a training job's, ``model(batch)`` / ``predict_step`` a forward pass's, ``run_one_step``
  work of no known kind's).
* ``count-agree`` (h37-left43) -- the job line's kind agrees in number with the steps the capture holds: one step
  found (or the window read as at most one iteration) is "a training step", never "training steps".

Each failed on main before h37-review4 (``tests/report/test_json_fields.py`` names the captures); ``job-agree`` and
``count-agree`` on gpu_events_stripped, nvfuser_h200_first_call and vit_a4000_avg_batch before h37-left43.
"""

from __future__ import annotations

import re
from typing import Any

_KEPT = re.compile(r"only (\d+) steps? kept")


def json_field_problems(report: dict[str, Any]) -> list[str]:
    """Every JSON-field property (module doc) a report's JSON breaks, one line each."""
    out: list[str] = []
    for h in report.get("hosts") or []:
        if h.get("error"):
            continue
        out += vendor_problems(h) + step_count_problems(h) + note_problems(h)
        out += metric_status_problems(h["host"], h.get("findings") or [])
        out += step_confidence_problems(h) + job_agree_problems(h) + count_agree_problems(h)
    out += metric_status_problems("session", report.get("findings") or [])
    return sorted(set(out))


#: the schema's statuses (``model/schema.Status``), by strength; the strongest each severity allows its metric
_STATUS = {"good": 0, "unknown": 0, "warning": 1, "critical": 2}
_CEILING = {"critical": 2, "warning": 1, "info": 0, "ok": 0}


def metric_status_problems(where: str, findings: list[dict[str, Any]]) -> list[str]:
    """``metric-status``: each finding's metric colour is a status of the schema, within its severity."""
    out = []
    for f in findings:
        status = (f.get("metric") or {}).get("status")
        if status is None:
            continue
        if status not in _STATUS or _STATUS[status] > _CEILING.get(f.get("severity"), 0):
            out.append(f"metric-status: {where}: {f.get('id')} is {f.get('severity')} but its metric reads {status!r}")
    return out


def _ran_work(g: dict[str, Any]) -> bool:
    """A GPU of the report that ran work: kernels, or busy time (copies, collectives)."""
    return bool(g.get("kernel_count")) or bool(g.get("busy_share"))


def _snapshot(g: dict[str, Any]) -> bool:
    """The GPU's memory is a PyTorch memory snapshot's, whose allocator frames may name the build's vendor."""
    return "memory snapshot" in str((g.get("memory") or {}).get("source") or "")


#: The makers whose names a GPU's own name begins with or holds, as the boards' names spell them (read from the names'
#: words, not by the product's device tables, so the law is held to what the file named).
_MAKERS = (  # a GPU whose file's only vendor word is NCCL's (``devices.nccl_gpu``: NVIDIA's or AMD's, h37-late67)
           ("nvidia_or_amd", re.compile(r"\bcuda device of unknown vendor\b|\(a cuda device, vendor unknown\)$")),
           ("AMD", re.compile(r"^(?:AMD|Radeon)\b|\bInstinct\b|\bMI\d{3}\b|^gfx\d", re.I)),
           ("Intel", re.compile(r"^Intel\b|\bArc\(?|Data Center GPU (?:Max|Flex)", re.I)),
           ("NVIDIA", re.compile(r"^(?:NVIDIA|Tesla|GeForce|Quadro)\b", re.I)),
           # a GPU its reader found no vendor's word for (``devices.unknown``: no maker, h37-vendor64)
           ("unknown", re.compile(r"\bGPU of unknown vendor\b|\(vendor unknown\)$")))


def _maker(name: str) -> str | None:
    return next((maker for maker, words in _MAKERS if words.search(name)), None)


def _listed_vendor(job: dict[str, Any]) -> str | None:
    """The vendor whose name every GPU of ``job.gpus_listed`` ("8 x NVIDIA H200, AMD Instinct MI300X") begins with, as
    the boards' own names spell them; None where none is listed or they differ."""
    names = [re.sub(r"^\d+ x ", "", n).strip() for n in str(job.get("gpus_listed") or "").split(", ") if n.strip()]
    makers = {_maker(n) for n in names}
    return makers.pop() if len(makers) == 1 else None


def shown_vendor(h: dict[str, Any]) -> str | None:
    """The vendor a host's report shows by its own facts, besides the vendor it claims (``capture.vendor``): its GPUs'
    names (a maker's words: "AMD GPU", "Intel(R) Data Center GPU Max 1550"), the GPUs its file lists
    (``job.gpus_listed``) and the runtime whose calls a window that lost its GPU records made (``job.runtime_vendor``);
    None where they show none or disagree.  The vendor whose words every text of the host must be in
    (``contradictions.vendor_words_problems``) and the one ``capture.vendor`` names (``vendor``)."""
    job = h.get("job") or {}
    found = {_maker(str(g.get("name") or "")) for g in h.get("gpus") or []} | {_listed_vendor(job)}
    found |= {job.get("runtime_vendor")}
    found.discard(None)
    found.discard("")
    return found.pop() if len(found) == 1 else None


def vendor_problems(h: dict[str, Any]) -> list[str]:
    """``vendor``: no GPU vendor claimed for a host on whose GPUs nothing ran, but the one whose runtime made its
    calls (``job.runtime_vendor``) or whose name every GPU the file lists carries (``job.gpus_listed``; from
    0.1.0+a83, h37-window62: a window whose GPUs ran nothing is told in their vendor's words); and where the report
    shows one vendor by its own facts (:func:`shown_vendor`), ``capture.vendor`` is that one (h37-words63: every word
    of the host is in the claimed vendor's words).  ``unknown`` claims no vendor: a window whose file names none is
    told every vendor's words (h37-vendor66)."""
    vendor = (h.get("capture") or {}).get("vendor")
    job = h.get("job") or {}
    said = vendor in (job.get("runtime_vendor"), _listed_vendor(job), "unknown", "nvidia_or_amd")
    out = []
    if vendor and not said and not any(_ran_work(g) or _snapshot(g) for g in h.get("gpus") or []):
        out.append(f"vendor: {h['host']}: capture.vendor {vendor!r} with no GPU that ran work")
    shown = shown_vendor(h)
    if shown and vendor and vendor != shown:
        out.append(f"vendor: {h['host']}: capture.vendor {vendor!r} where its GPUs and calls show {shown!r}")
    return out


def step_count_problems(h: dict[str, Any]) -> list[str]:
    """``step-count``: the capture's step counts are the steps section's."""
    cap, st, host = h.get("capture") or {}, h.get("steps") or {}, h["host"]
    out = []
    if cap.get("steps_kept") != st.get("count"):
        out.append(f"step-count: {host}: capture.steps_kept {cap.get('steps_kept')} but steps.count {st.get('count')}")
    if cap.get("steps_captured") != st.get("found"):
        out.append(f"step-count: {host}: capture.steps_captured {cap.get('steps_captured')} but steps.found "
                   f"{st.get('found')}")
    found, dropped, count = st.get("found") or 0, len(st.get("dropped") or []), st.get("count") or 0
    if st.get("source") == "whole_capture":
        if found or count > 1:
            out.append(f"step-count: {host}: no step found (whole capture) but found {found}, count {count}")
    elif found - dropped != count:
        out.append(f"step-count: {host}: {found} found less {dropped} dropped is not the {count} kept")
    return out


def note_problems(h: dict[str, Any]) -> list[str]:
    """``note-numbers`` and ``note-vs-job``: the capture's notes say the fields' numbers and the job's verdict."""
    cap, host = h.get("capture") or {}, h["host"]
    out = [f"note-numbers: {host}: capture.note says {m.group(0)!r} but steps.count is {(h.get('steps') or {}).get('count')}"
           for m in _KEPT.finditer(cap.get("note") or "") if int(m.group(1)) != (h.get("steps") or {}).get("count")]
    job = h.get("job") or {}
    if cap.get("steady_state") is True and job.get("phase") == "warm-up":
        out.append(f"steady-vs-job: {host}: capture.steady_state true where the job's phase is a cold start "
                   f"({(job.get('phase_evidence') or '')[:60]!r})")
    on_cpu = job.get("kind") == "no_gpu" and "on the CPU" in (job.get("kind_evidence") or "")
    for note in [cap.get("note") or "", *(cap.get("notes") or [])]:
        if "CPU-only" in note and not on_cpu:
            out.append(f"note-vs-job: {host}: a capture note says CPU-only ({note!r}) where the job says "
                       f"{job.get('kind')!r}: {(job.get('kind_evidence') or '')[:80]!r}")
    return out


_SURE = {"low": 0, "medium": 1, "high": 2}


def step_confidence_problems(h: dict[str, Any]) -> list[str]:
    """``step-confidence``: a per-step finding no surer than the steps it rests on, never critical on low ones."""
    from tb_gpu_advisor.rules import _ABOUT_THE_CAPTURE

    st, host = h.get("steps") or {}, h["host"]
    steps = st.get("confidence") or "high"
    if st.get("source") == "whole_capture" and not st.get("iteration_guess"):
        return []  # the window analysed as one step, no claim about the job's iterations: exact for the window
    out = []
    for f in h.get("findings") or []:
        if f.get("rule") in _ABOUT_THE_CAPTURE and not f.get("saving"):
            continue  # it measures the window: a saving per step is a part of the steps whoever claims it (h37-lowconf)
        conf = f.get("confidence") or "high"
        if _SURE.get(conf, 2) > _SURE.get(steps, 2):
            out.append(f"step-confidence: {host}: {f.get('id')} reads {conf} confidence on {steps}-confidence steps")
        if steps == "low" and f.get("severity") == "critical":
            out.append(f"step-confidence: {host}: {f.get('id')} is critical on low-confidence steps")
    return out


#: the job's work (``job.work_of``) each step a fix's code runs belongs to, by the step's call
_STEP_WORK = (("training", re.compile(r"\btrain_step\(")), ("inference", re.compile(r"\bpredict_step\(|^model\(batch\)$")),
              ("any_work", re.compile(r"\brun_one_step\(")))
#: the job line's words for a kind of work, plural and singular (``report.build.kind_words``)
_LINE_WORDS = {"training": ("training steps", "a training step"),
               "inference": ("inference (forward passes)", "inference (a forward pass)"),
               "unknown": ("GPU work of an unknown kind",)}


def _work(job: dict[str, Any]) -> str:
    from tb_gpu_advisor.job import work_of

    return work_of(job.get("host_kind") or job.get("kind") or "", job.get("tags") or ())


def _fix_steps(h: dict[str, Any]) -> list[str]:
    """The steps the host's fixes run: each profiled loop's step (the line before ``prof.step()``) and each call of a
    step function in their code."""
    out = []
    for f in h.get("findings") or []:
        for a in f.get("actions") or []:
            lines = (a.get("snippet") or "").splitlines()
            out += [lines[i - 1].split("#")[0].strip() for i, x in enumerate(lines) if i and x.strip() == "prof.step()"]
            out += [m.group(0) for x in lines for m in re.finditer(r"\b(?:train_step|predict_step|run_one_step)\(", x)]
    return out


def job_agree_problems(h: dict[str, Any]) -> list[str]:
    """``job-agree``: the job line, the fixes' loop and ``job.kind`` / ``job.host_kind`` tell one job."""
    job = h.get("job") or {}
    if not job or job.get("kind") in ("serving", "no_gpu"):
        return []
    out = []
    line = (job.get("summary") or "").removeprefix("Job: ")
    said = job.get("host_kind") or job.get("kind")
    if job.get("host_kind") and line.startswith(_LINE_WORDS["unknown"]):
        out.append(f"job-agree: {h['host']}: the job line says 'unknown kind' while job.host_kind is "
                   f"{job['host_kind']!r}, whose fixes the report gives")
    elif job.get("collectives_only"):  # the window holds the GPUs' collectives alone (h37-nccl67): the line names that
        if "collectives" not in line:  # window, as no work of the job is in it to name a kind by
            out.append(f"job-agree: {h['host']}: a collectives-only window whose job line '{line[:40]}' does not say so")
    elif line and said in _LINE_WORDS and not line.startswith(_LINE_WORDS[said]):
        out.append(f"job-agree: {h['host']}: the job line '{line[:40]}' does not name the job's {said!r} work")
    work = _work(job)
    for step in _fix_steps(h):
        for w, pattern in _STEP_WORK:
            if pattern.search(step) and w != work:
                out.append(f"job-agree: {h['host']}: a fix runs '{step}' ({w}) for the job's {work} work")
    return out


def count_agree_problems(h: dict[str, Any]) -> list[str]:
    """``count-agree``: one step found (or read as at most one iteration) takes the kind's singular words."""
    job, steps = h.get("job") or {}, h.get("steps") or {}
    one = steps.get("found") == 1 or (steps.get("iteration_guess") and steps.get("count") == 1)
    line = (job.get("summary") or "").removeprefix("Job: ")
    plural = [w[0] for w in _LINE_WORDS.values() if len(w) > 1 and line.startswith(w[0])]
    if one and plural:
        return [f"count-agree: {h['host']}: '{plural[0]}' beside one step found"]
    return []
