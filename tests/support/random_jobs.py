"""A random job (``synthetic.randjobs``) through the whole analysis, and every law its report breaks: the properties
(``properties.report_violations``, ``ledger_savings_violations``), the text's one value per quantity, the job's and
the vendor's words (``contradictions``) and the JSON's agreement with itself (``json_fields``).  Shared by
``tests/report/test_random_jobs.py`` (a few dozen seeds) and ``scripts/randjobs.py`` (a time budget)."""

from __future__ import annotations

import shutil
import tempfile
import traceback

from synthetic import randjobs
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import HostReport, Report
from tb_gpu_advisor.runtime.pipeline import analyze_session


def laws_broken(report: Report) -> list[str]:
    """Every law ``report`` breaks, one line each."""
    from tb_gpu_advisor.report import render
    from tests.support.contradictions import (job_words_problems, text_number_problems, vendor_words_problems,
                                              window_words_problems)
    from tests.support.json_fields import json_field_problems
    from tests.support.properties import ledger_savings_violations, report_violations

    out = report_violations(report) + ledger_savings_violations(report)
    out += text_number_problems(render.to_text(report))
    out += job_words_problems(report) + vendor_words_problems(report) + json_field_problems(report.to_dict())
    out += window_words_problems(report)  # the words fit the window: one pass, no host (h37-words20, h37-randjobs11)
    return sorted(set(out))


def host_loop_problems(truth: dict, job: dict) -> list[str]:
    """A loop on the CPU (``host_step_ms``: a window without GPU work whose every marked step is alike) is timed by
    the job block's ``host_loop`` at its period, and books no GPU step (h37-tidy30)."""
    want = truth.get("host_step_ms")
    if want is None:
        return []
    loop = job.get("host_loop")
    if not loop:
        return [f"truth: a loop on the CPU of {want:.4g} ms a step, which the job block does not time"]
    if abs(loop["step_ms"] - want) > 1e-3:
        return [f"truth: the loop on the CPU reads {loop['step_ms']:.4g} ms a step, it ran {want:.4g}"]
    return []


def truth_problems(job: randjobs.Job, report: Report) -> list[str]:
    """Where the job's writer returned its truth (``randjobs.TRUTH``): the rules it needs (``rules``), those it does not
    (``no_rules``; ``only_rules``: none but these -- a window with no GPU work has only its quality to report), the steps the report found against the iterations
    the job ran, and its mean step against the job's period where the writer gives one (``step_ms``: every iteration
    alike).  Never more steps than the job ran (a law: no reading counts more iterations than its evidence shows);
    three iterations or more are found all; two are found both, or none at all (the whole window one step: too few to
    read a period from, said so) -- never one pass of the whole window (h37-randjobs6)."""
    truth = randjobs.TRUTH.get(job.seed)
    if not truth:
        return []
    h = report.hosts[0]
    only = truth.get("only_rules")
    out = [f"truth: `{f.rule}` on work that by construction does not need it" for f in h.findings
           if f.rule in truth.get("no_rules", ()) or (only is not None and f.rule not in only)]
    fired = {f.rule for f in h.findings}
    out += [f"truth: no `{rule}` where the job has it by construction" for rule in truth.get("rules", ())
            if rule not in fired]
    out += _unfired(truth, fired)
    bound = truth.get("small_grid_bound_ms")
    out += [f"truth: small_grid saves {f.saving.ms_per_step:.4g} ms a step, its kernels ran alone {bound:.4g} ms"
            for f in h.findings if bound is not None and f.rule == "small_grid" and f.saving is not None
            and f.saving.ms_per_step > bound * 1.001 + 1e-6]
    out += exchange_problems(truth, report)
    out += kind_problems(truth, h) + sync_name_problems(truth, h.findings) + window_problems(truth, h.findings)
    found = h.steps.get("found") if h.steps else None
    # the bounds are a job's iteration's: over the steps found, the window's whole (one pass: all the iterations)
    per = truth.get("steps", 1) / max(found or 1, 1)
    out += _saving_bounds({k: v * per for k, v in truth.get("saving_bound_ms", {}).items()}, h.findings)
    out += _input_problems(truth, h.findings)
    top, step = truth.get("step_ms_max"), h.mean_step_ms()
    if top is not None and step is not None and step > top:
        out.append(f"truth: the step is {step:.4g} ms, the process ran {top:.4g} ms")
    out += _one_pass_problems(truth, step)
    out += _profiler_step_problems(truth, h.steps or {})
    out += host_loop_problems(truth, h.job or {})
    out += _request_free_problems(truth, h.step_rows)
    out += _first_step_problems(truth, h.step_rows)
    out += leak_problems(truth, report)
    out += gpu_count_problems(truth, report) + copy_op_problems(truth, h.findings)
    if out or truth.get("steps", 0) < 2:
        return out
    ran = truth["steps"]
    if found != ran and not (ran == 2 and found == 0):
        return [f"step-truth: {found} steps found, the job ran {ran}"]
    step, period = h.mean_step_ms(), truth.get("step_ms")
    if found and period and step and abs(step - period) > 0.02 * period:
        return [f"step-truth: the mean step is {step:.4g} ms, the job's period {period:.4g} ms"]
    return []


def leak_problems(truth: dict, report: Report) -> list[str]:
    """Where the job's writer says whether its training loop leaks (``leak``: ``Scenario.truth["leak"]``, or False),
    the report says so: no memory-leak finding where nothing leaks; where it does, one, holding the bytes the leak
    keeps at the end over the ``iterations`` the history holds (h37-forms16: gradient accumulation, optimizers with and
    without per-step temporaries, ``zero_grad(set_to_none=False)``)."""
    if "leak" not in truth:
        return []
    leaks = [f for f in report.findings + [f for h in report.hosts for f in h.findings] if f.rule == "memory_leak"]
    leaks = list({id(f): f for f in leaks}.values())
    want = truth["leak"]
    if not want:
        return [f"truth: a memory leak read where none was made: {f.summary[:120]!r}" for f in leaks]
    if len(leaks) != 1:
        return [f"truth: {len(leaks)} memory-leak findings where the loop leaks {want['bytes_at_end']} B"]
    d = leaks[0].metric.detail if leaks[0].metric is not None else {}
    out = []
    if d.get("leak_end_bytes") != want["bytes_at_end"]:
        out.append(f"truth: the leak holds {d.get('leak_end_bytes')} B at the end, the loop kept {want['bytes_at_end']} B")
    if d.get("iterations") != truth["iterations"]:
        out.append(f"truth: the leak reads {d.get('iterations')} iterations, the loop ran {truth['iterations']}")
    return out


def gpu_count_problems(truth: dict, report: Report) -> list[str]:
    """Where the job's writer says how many GPUs its job ran on (``gpus``: every rank's file here, some stating no
    rank), the report is the job's one host with every GPU: a file without its rank is its process's, read with its
    job -- never a session of its own (h37-probe45r; h37-forms18)."""
    want = truth.get("gpus")
    if want is None:
        return []
    got = [len(h.gpus) for h in report.hosts]
    return [] if got == [want] else [f"truth: the job's {want} GPUs read as hosts of {got} GPUs"]


def copy_op_problems(truth: dict, findings) -> list[str]:  # noqa: ANN001 - the host's findings
    """Where the job's writer says which op made its blocking copies (``copy_op``: the op and its copies a step, an
    index's upload inside ``aten::index``), the copy finding, where there is one, names them so and leads with keeping
    the index on the device -- no batch's pinning fix (h37-probe45w; h37-forms18).  Whether there must be one is the
    writer's ``fires_if_saving_ms`` (:func:`_unfired`)."""
    want = truth.get("copy_op")
    if want is None:
        return []
    from tb_gpu_advisor.frameworks import pytorch

    found = [f for f in findings if f.rule == "excessive_memcpy"]
    if len(found) > 1:
        return [f"truth: {len(found)} copy findings where every step blocks in {want[1]} uploads of {want[0]}"]
    if not found:
        return []
    f = found[0]
    out = []
    if f"({want[0]} ×{want[1]})" not in " ".join(f.summary.split()):
        out.append(f"truth: the copy finding does not name `{want[0]}` ×{want[1]}: {f.summary[:160]!r}")
    if not f.actions or f.actions[0] != pytorch.INDEX_ON_DEVICE:
        out.append(f"truth: the index's upload is told {(f.actions[0].text if f.actions else None)!r} first")
    return out


def _one_pass_problems(truth: dict, step: float | None) -> list[str]:
    """Where the job's writer timed one pass after warm-ups of the same work (``pass_ms``: h37-survey42's framed
    pass), the step read is that pass, its GPU work to its range (``pass_range_ms``: the sync and the timing loop's
    host work in it) -- never the warm-ups with it, never the window (h37-randjobs12)."""
    want = truth.get("pass_ms")
    top = truth.get("pass_range_ms", want)
    if want is None or (step is not None and 0.97 * want <= step <= 1.01 * top):
        return []
    return [f"truth: the one timed pass is {want:.4g} ms ({top:.4g} ms its range), the step read {step!r} ms"]


def _profiler_step_problems(truth: dict, steps: dict) -> list[str]:
    """Where the job's profiler requested an activity buffer of 0.1 ms or more inside a ``ProfilerStep#n``
    (``profiler_steps``: those n, of the job's ``profiler_numbers`` first to last; ``synthetic.torchtrace.
    buffer_request``), that step is no steady step: never kept beside two kept steps that hold none (h37-survey45: the
    launch after the request waited for it; fewer clean steps left, the step stage keeps them all, as it should)."""
    held = set(truth.get("profiler_steps", ()))
    if not held or steps.get("source") != "profiler_step":
        return []
    first, last = truth["profiler_numbers"]
    kept = set(range(first, last + 1)) - {d.get("step") for d in steps.get("dropped", ())}
    if len(kept - held) < 2:
        return []
    return [f"truth: step {n} held the profiler's buffer request and is kept beside {len(kept - held)} steps that "
            f"held none" for n in sorted(kept & held)]


def _first_step_problems(truth: dict, rows) -> list[str]:  # noqa: ANN001 - the host's step rows
    """Where the job's writer times its first step's own GPU work (``first_step_ms``: a window opened on the step
    before's queue, ``torchtrace.write_loop_opened``), the first GPU step row is that long: the queue is the window's
    inheritance, never the step's (h37-loopstart)."""
    want = truth.get("first_step_ms")
    got = sorted((r for r in rows or () if r.gpu is not None), key=lambda r: r.step)
    if want is None or not got or abs(got[0].step_ms - want) <= 0.002 + 1e-3 * want:
        return []
    return [f"truth: the first step's GPU time is {got[0].step_ms:.4g} ms, its own work {want:.4g} ms"]


def _request_free_problems(truth: dict, rows) -> list[str]:  # noqa: ANN001 - the host's step rows
    """Where several ranks' profilers requested buffers of 0.1 ms or more and the job's other iterations are alike
    (``request_free_ms``: their period), no GPU's kept step is longer than that period by more than the
    ``job.one_time_call_ms`` a kept window may hold, beside two of its kept steps at the period (within 2%, and
    under 0.1 ms: a step longer by that may hold a request, and with it fewer clean steps remain): a longer one held
    a request a rank waited for (h37-ranksreq; stated as time, not by number: which GPU window holds the wait
    follows how the windows open -- the window before the request's host step with span-to-span windows, the host
    step's own where a GPU's step opens at its host's mark, h37-probe44q)."""
    free = truth.get("request_free_ms")
    if free is None:
        return []
    by_gpu: dict[int, list[float]] = {}
    for r in rows:
        if r.gpu is not None:
            by_gpu.setdefault(r.gpu, []).append(r.step_ms)
    out = []
    for g, ms in sorted(by_gpu.items()):
        steady = sum(abs(m - free) <= min(0.02 * free, 0.1) for m in ms)  # a longer one may hold 0.1 ms: a request
        longest = max(ms)
        if steady >= 2 and longest > 1.02 * free + 0.1:
            out.append(f"truth: GPU {g} keeps a step of {longest:.4g} ms beside {steady} of the request-free "
                       f"period {free:.4g} ms")
    return out


def kind_problems(truth: dict, h) -> list[str]:  # noqa: ANN001 - the host's report
    """Where the job's writer says what its NVTX words make the job (``job_kind``: "training", "serving", or "not
    training" for a numerical method's backward direction), the job stage reads that kind (h37-randjobs11)."""
    want, got = truth.get("job_kind"), (h.job or {}).get("kind")
    if want is None or (got == want if want != "not training" else got != "training"):
        return []
    return [f"truth: the job is read as {got!r}, its NVTX words say {want!r}"]


#: The windows a generated loop without kernels is read as (``job.kind.WINDOWS``): the others are no window of its.
_LOOP_WINDOWS = ("input_only", "input_on_cpu", "startup", "loop_ended")


def window_problems(truth: dict, findings) -> list[str]:  # noqa: ANN001 - the host's findings
    """Where the job's writer says what its window without kernels holds (``window``: "input_only", "input_on_cpu",
    "startup", or "cpu_model" / "cpu_loop" -- work on the CPU, no window of these kinds), the capture-quality finding says that window
    (its title, ``rules.capture_quality``'s one per window kind), never the other's (h37-inputgen)."""
    from tb_gpu_advisor.rules.capture_quality import _WINDOW_TITLES

    want = truth.get("window")
    if want is None:
        return []
    titles = [f.title for f in findings if f.rule == "capture_quality"]
    read = [w for w in _LOOP_WINDOWS if _WINDOW_TITLES.get(w) in titles]
    if read == ([want] if want in _LOOP_WINDOWS else []):
        return []
    return [f"truth: the window is read as {read or titles!r}, it is {want!r} by construction"]


def sync_name_problems(truth: dict, findings) -> list[str]:  # noqa: ANN001 - the host's findings
    """Where the job's writer names the program's syncs (``sync_names``: its own calls, no framework op around any),
    the host-sync finding that counts them (the rule's own id: its notes are ``host_sync#...``) names them by those
    calls -- never "runtime calls" it cannot search for (h37-survey41)."""
    names = truth.get("sync_names", ())
    out = []
    for f in findings:
        if f.rule != "host_sync" or "#" in f.id or not names:
            continue
        if "runtime calls" in f.summary or not any(n in f.summary for n in names):
            out.append(f"truth: the host sync names none of the program's own calls {names}: {f.summary[:160]!r}")
    return out


def _saving_bounds(bounds: dict[str, float], findings) -> list[str]:  # noqa: ANN001 - the host's findings
    """Each finding whose saving a step exceeds what the job's writer put there to save (``saving_bound_ms``, by
    rule): a part never above its whole."""
    return [f"truth: `{f.rule}` saves {f.saving.ms_per_step:.4g} ms a step, the job has {bounds[f.rule]:.4g} ms to save"
            for f in findings if f.rule in bounds and f.saving is not None
            and f.saving.ms_per_step > bounds[f.rule] * 1.01 + 5e-4]  # the report's ms to the microsecond


def _unfired(truth: dict, fired: set[str]) -> list[str]:
    """Each rule the job's writer gave work to save (``fires_if_saving_ms``: ms a step) that is silent though that
    saving reaches the rule's own bar for a mention (``<rule>.info``, a share of the job's period; a rule that
    mentions nothing below its warning, ``<rule>.warning``: host_sync, h37-forms18)."""
    from tb_gpu_advisor.common.thresholds import THRESHOLDS, T

    step = truth.get("step_ms")

    def bar(rule: str) -> float:
        return T(f"{rule}.info") if f"{rule}.info" in THRESHOLDS else T(f"{rule}.warning")

    out = [f"truth: no `{rule}`, whose work saves {v:.4g} ms of the {step:.4g} ms step by construction"
           for rule, v in truth.get("fires_if_saving_ms", {}).items()
           if step and rule not in fired and v >= 1.05 * bar(rule) * step]
    # a share of the loop's period where the job's steps are not all alike (``fires_if_share``: an offload loop's
    # kernels between waits, each sweep's last one holding the host's pause between sweeps)
    return out + [f"truth: no `{rule}`, whose work saves {v:.1%} of each iteration by construction"
                  for rule, v in truth.get("fires_if_share", {}).items() if rule not in fired and v >= 1.05 * bar(rule)]


def _input_problems(truth: dict, findings) -> list[str]:  # noqa: ANN001 - the host's findings
    """Where the report finds an input wait, what the job's writer says it is: its source (``input_source``), the
    words that must name it and those that must not (``input_words``, ``input_not_words``), and never more a step
    than the input work the job did (``input_bound_ms``)."""
    out = []
    for f in findings:
        if f.rule != "input_bound":
            continue
        d = f.metric.detail if f.metric is not None else {}
        src = truth.get("input_source")
        if src and d.get("source") != src:
            out.append(f"truth: the input wait's source is {d.get('source')!r}, the job's is {src!r}")
        out += [f"truth: the input wait does not say {w!r}" for w in truth.get("input_words", ()) if w not in f.summary]
        out += [f"truth: the input wait says {w!r}" for w in truth.get("input_not_words", ()) if w in f.summary]
        top = truth.get("input_bound_ms")
        if top is not None and d.get("input_wait_ms", 0.0) > top * 1.02:
            out.append(f"truth: the input wait is {d['input_wait_ms']:.4g} ms a step, the job's input work {top:.4g} ms")
    return out


#: Words only one kind of all-to-all's fix says (h37-a2afix): TorchRec's pipeline is the embeddings', DualPipe and
#: DeepEP the experts', Ulysses and ring attention sequence parallelism's.
EXCHANGE_WORDS = {"embeddings": ("TorchRec", "embedding"), "experts": ("expert", "DeepEP", "DualPipe"),
                  "sequence": ("Ulysses", "ring attention", "sequence parallel")}
#: Words of a training step's fix, never said to a forward pass (the job's truth ``kind`` "inference").
TRAINING_WORDS = ("auxiliary loss", "DualPipe", "optimizer", "backward", "TrainPipelineSparseDist",
                  "DistributedDataParallel", "gradient")


def exchange_problems(truth: dict, report: Report) -> list[str]:
    """Where the job's writer says what its all-to-all exchanges (``exchange``): the exposed-communication fix of an
    all-to-all fits that kind -- one of its own words, none of another kind's -- and a forward pass's none of a
    training step's."""
    kind = truth.get("exchange")
    if kind is None:
        return []
    out = []
    for f in report.findings + [f for h in report.hosts for f in h.findings]:
        if f.rule != "comm_exposed" or "AllToAll" not in f.summary:
            continue
        text = " ".join(a.text + " " + (a.snippet or "") for a in f.actions)
        if not any(w.lower() in text.lower() for w in EXCHANGE_WORDS[kind]):
            out.append(f"truth: the all-to-all exchanges {kind}, its fix names none of {EXCHANGE_WORDS[kind]}")
        out += [f"truth: the all-to-all exchanges {kind}, its fix says {w!r} ({other}'s)"
                for other, words in EXCHANGE_WORDS.items() if other != kind
                for w in words if w.lower() in text.lower()]
        if truth.get("kind") == "inference":
            out += [f"truth: a forward pass told a training fix ({w!r})" for w in TRAINING_WORDS if w in text]
    return out


def report_of(job: randjobs.Job, folder: str | None = None) -> Report:
    """The report of ``job``, written under ``folder`` (by default a scratch folder removed once read:
    :func:`reports_of`)."""
    (r,) = reports_of(job, folder)
    return r


def stepped_host(job: randjobs.Job, source: str) -> tuple[Report, HostReport]:
    """The report of ``job`` and its one host, whose steps are read from ``source`` (the premise of a seed's test)."""
    report = report_of(job)
    (host,) = report.hosts
    assert host.steps["source"] == source, host.steps["note"]
    return report, host


def reports_of(job: randjobs.Job, folder: str | None = None) -> list[Report]:
    """The report of each session ``job`` writes under ``folder`` (a trace and a memory snapshot beside it: two).
    Given no folder, the job is written to a scratch folder removed once its reports are made: a report holds what it
    read, never the files, and a suite that leaves each job's traces in /tmp fills a CI machine's disk."""
    if folder is None:
        with tempfile.TemporaryDirectory(prefix=f"job{job.seed}-") as scratch:
            return reports_of(job, scratch)
    randjobs.write(job, folder)
    return [analyze_session(s.run, s.session, s.hosts) for s in discover(folder) if s.run == f"job{job.seed}"]


def gpu_step_rows(job: randjobs.Job) -> tuple[Report, dict[int, list[float]]]:
    """The report of ``job`` (written under a scratch folder, removed after) and GPU -> its step rows' lengths (ms),
    in order: each GPU's own steps, as the tests of each rank's windows read them."""
    r = report_of(job)
    out: dict[int, list[float]] = {}
    for row in r.to_dict()["hosts"][0]["step_rows"]:
        if row["gpu"] is not None:
            out.setdefault(row["gpu"], []).append(row["step_ms"])
    return r, out


def check(job: randjobs.Job) -> list[str]:
    """The laws the report of ``job`` breaks; an exception in the analysis is one line ``crash: ...``."""
    folder = tempfile.mkdtemp(prefix="randjob")
    try:
        randjobs.TRUTH.pop(job.seed, None)
        reports = reports_of(job, folder)
        return sorted({v for r in reports for v in laws_broken(r) + truth_problems(job, r)})
    except Exception as e:  # noqa: BLE001 - a crash is a finding of the walk, with its place
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return [f"crash: {type(e).__name__}: {e} ({tb.filename.rsplit('/', 1)[-1]}:{tb.lineno})"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def walk(seeds, draw) -> set[str]:
    """Every law (:func:`check`) over the job ``draw(seed)`` draws for each of ``seeds``, asserted to hold, the broken
    ones listed job by job; returns the writers the walk drew (a walk that never drew one tests nothing of it)."""
    bad = {}
    kinds = set()
    for seed in seeds:
        job = draw(seed)
        kinds.add(job.fmt)
        found = check(job)
        if found:
            bad[str(job)] = found
    assert not bad, "\n".join(f"{k}\n    " + "\n    ".join(v) for k, v in bad.items())
    return kinds
