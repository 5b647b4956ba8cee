"""Properties that hold for ANY report or diff (issue #36 deliverable 4): checked on what a user reads, not patterns.

``contradictions.py`` and ``savings_checks.py`` guard defects seen once; the checks here are laws of accounting that a
new stage or table cannot break without one of them noticing.  Each reads only a :class:`Report` (or a diff's JSON)
and returns its violations as lines ``"<property>: <where>: <what>"``; an empty list is a report that holds them all.

* ``part<=whole`` -- no part exceeds its whole: a per-step time (a finding's "X ms per step", a table's "ms/step"
  column, a GPU's collective time, a saving, a breakdown category) is at most the step of one GPU; "X of each Y step"
  has X <= Y; "N of M things (P%)" has N <= M and P = N/M; a share is at most 100%; an exposed or blocking time is at
  most the time it is part of; a saving recovers, per breakdown group, no more than the step's ledger holds there,
  and so does "if every fix lands" (which recovers at most the step); a finding's ``..._ms_per_step`` detail is at
  most the step per GPU; the compute kernel classes (all but ``collective``) together too -- they split the step's
  compute-kernel time, each microsecond once
  (h37-classsum33: wild/extrap_parallel_kernels_gtx1060's five streams' kernels, summed, read "other 895646.8 us/step
  in a 776.994 ms step").
* ``ledger`` -- each GPU's step is attributed once: the breakdown of the host, of each GPU and of each step row has
  no negative category and adds up to its step.
* ``copy-own`` -- a ledger category of the GPU's copies or fills books no more than its own events run: a one-GPU host's
  ``memcpy_h2d`` / ``memcpy_d2h`` are at most the copies table's ``h2d`` / ``d2h`` rows, ``memcpy_d2d`` at most its
  device copies' time per step (the ``d2d``, ``p2p`` and ``other`` rows) and its ``memset`` at most its memsets' (the
  ``memset`` row), a missing row or table counting none: a fill booked as a copy breaks it (h37-fill30), and so does a
  copy the ledger books by its call's direction that the table, reading names, leaves out (h37-rocmcopy30).
* ``copy-anyway`` -- an upload's microsecond is booked once: a one-GPU host's ledger ``memcpy_h2d`` and the copies'
  time the copies finding says ran while the GPU would have idled anyway are together at most the H2D copies' time
  (h37-copy62: the ledger booked that time as copy time beside the finding's "costs the step nothing").
* ``copy-exposed`` -- the copy time no kernel ran beside has one value: on a one-GPU host the copy table's "exposed
  ms/step" of a host copy or fill is its ledger category, a device copy's at most ``memcpy_d2d``, and the copies
  finding's "blocking ms" the table's (h37-marks68: Unified Memory pages migrated under kernels read H2D 0.0062 ms
  "exposed" where the ledger booked 0; the kernels' wait for them is a column of its own).
* ``name-once`` -- a GPU whose name was inferred from its properties says why once, in the GPUs table: no finding's
  words carry the reasons ("on NVIDIA T4 (inferred from compute capability 7.5, ...)" three times in one finding,
  h37-review30); a finding says the model alone ("on NVIDIA T4").
* ``surface-facts`` -- every surface gives the facts the report knows: the MCP summary's hosts their CPU loop, why no
  GPU step is timed, their GPUs' count and the step's ledger; its findings what they free; its cards why they read as
  they do; the tab names a GPU as a sentence does, an inferred name's reasons left to the GPUs table (h37-surfaces31),
  and the summary names the GPUs as the tab's host line does (h37-review31).
* ``title-count`` -- a launch-bound title's count is the count the finding cites: "before each of its few kernels"
  only where its step runs at most ``launch_bound.step_calls`` kernels (the count the step-level diagnosis calls a
  few), "many small kernels" only where it runs more -- read off the summary's "N of M kernels per step" (M), else
  "M kernels per step", else the metric's ``kernels_per_step`` (h37-words32; h37-auditleft31 made the title follow the
  count, wild/lazy_first_launch_t4's 3 kernels a step read "many small kernels" before).
* ``in-capture`` -- a finding's trace window lies in the capture: it ends at or before the capture's end, and so
  starts by it (h37-audit31: main opened the gap after wild/mordred_rtx6000_hashjoin's last kept step 40 ms past the
  capture, and a millisecond around a memory peak in a snapshot's last half millisecond past its end).
* ``one-value`` -- a quantity has one value wherever it appears: a collective's time per step in the session's table,
  the host's table and each GPU's own (the median rank and a host's median lie among its GPUs' values, and agree on
  one host); a rank's step and exposed communication in the ranks table are its GPU's own; "AllReduce"
  columns count AllReduce only; a card and the finding that grades it show one value; a finding that grades one
  category of the step's ledger (``LEDGER_SHARES``: the idle at handoffs between streams, ``stream_handoff``) grades
  the ledger's value and prints it (h37-handoff32: the held-work finding said 13.2 ms "not outside the capture" that
  the ledger booked as "Unseen GPU work").
* ``order`` -- the findings are in the order their heading names ("ranked by estimated saving": after the findings that
  say what the capture is -- a warm-up capture, a critical problem that saves no step time -- savings never rise), and
  severity follows the saving and the confidence (a milder finding never saves more than a stronger one of no lower
  confidence).
* ``every-fix`` -- "If every fix lands" counts every saving once, info included: every finding with a saving is in the
  achievable step's list and the sum of the savings is theirs.
* ``severity`` -- a grade follows what the finding rests on and saves (issue #37 items 2 and 4): a finding that rests
  on the steps (any but those about the capture itself) and carries low confidence is never critical; a warning or a
  critical finding saves at least ``severity.warning_min_saving`` of the step (under it, a note) and a critical one at
  least ``severity.critical_min_saving``; a finding without a saving keeps its grade.
* ``fix-once`` -- one fix of the capture is printed under one finding about it; a later one refers to it by title.
* ``agree`` -- the verdict's "top:" is the list's first finding (one order: a note listed above the warnings is the top),
  and says where it was found when that is part of a session of several hosts ("(on worker7_step_12; ", "(on 5 of 8
  hosts; "); the MCP capture advice never calls a capture trustworthy whose findings say it recorded warm-up.
* ``ranges<=claim`` -- the program's ranges a finding names as holding its time ("this time lies in the program's
  own ranges `a` 467 us, `b` 76 us a step") add up to at most that time, the finding's own claim on the step's ledger
  (the host-bound finding's host time, the launch-bound one's wait): each microsecond of a step attributed once.
* ``input<=account`` -- the input-bound finding that names its pipeline's own ranges as the wait ("the input
  pipeline's own time: the program's range for fetching its batch (`next_batch` 41.9 ms) and the batch's transfer to
  the device (774 us)") names all of it: the wait is at most the parts it names (printed rounding aside), so no idle
  outside them is booked as the pipeline's (h37-forms10in: main named 41.9 ms of a 42.7 ms wait).
* ``whole-count`` -- a count of things (copies, kernels, calls) is a whole number, or says it is a per-step average
  (in words: "7.5 calls per step on average"; in a table: a column or title "per step", the mean over the kept steps).
  Its noun may follow words that qualify it ("424.5 TF ops"), and on a host of one kept step a mean can only be over
  its GPUs, so it names them ("in the step on average over its 2 GPUs", h37-words3: v100_bert's "424.5 TF ops in the
  step" and "292.5 calls in the step on average").
* ``period`` -- steps add up (h37-left46): the gaps between steps fit the period they split.  The mean gap is at most
  the period it is a share of (a step's start to the next's), and its part inside the steps (all of it but
  ``outside_steps_ms``) at most the mean step it lies in; the step rows of one GPU never overlap (a step ends by the
  next one's start: its period holds it).  With ``ledger`` (no category negative, all adding up to the step) every
  part of a step's ledger is at most the step.  On main ``wild/mordred_rtx6000_hashjoin`` read "idle 957.9 ms between
  steps on average ... of the 1.03 s from one step's start to the next (the mean step is 877.5 ms)": the gaps were
  five, one over a dropped step, the mean step six, and the gaps' in-step part outgrew the step that held it.
* ``average<=max`` -- a mean gap between steps is at most its own maximum, in words and in the detail (h37-gapsum:
  one kept step between two dropped ones read "idle 62 us between steps on average (max 40 us)").
* ``launcher<=unrecorded`` -- a Python launcher's part of a finding's unrecorded time (detail ``launcher_ms``) is at
  most that unrecorded whole (``unrecorded_ms`` on the unrecorded-idle finding, ``unexplained_ms`` on the gaps'
  check), and the gaps' part at most the unrecorded-idle finding's where both name one (h37-launcher2: the gaps hold
  the first launch's silence a step, the step the rest).
* ``per-gpu`` -- a count of kernels "per step" is one GPU's, as the step it sits beside: at most the most kernels one
  GPU of the host runs a step (on main v100_bert's two GPUs in one process read "1,086 of 1,330 kernels per step",
  each GPU running 665).
* ``every-surface`` -- each host's steps note (how the steps were found, which were dropped) is said on the text and
  the markdown report alike (on main the markdown never said it).
* ``per-rank`` -- a count per step is per rank, as the times are (h37-left57): a file of several ranks (an Nsight
  export of two processes) divides its counts by the steps and its active GPUs, one value per quantity.  A finding's
  ``kernels_per_step`` is the kernels of the kept steps (``kernel_durations_us.count``) over steps x active GPUs, its
  ``small_kernels_per_step`` at most that.  With ``per-gpu`` (h37-review8, kernels only) it checks the
  division the metrics make (``metrics.context.Context.per_step``), not the rule's.  Every other count a finding
  states per step is held to its total the same way (h37-left59): eager ops, host-placed ops (the host-op card's
  ``host_ops``), loss-scaling ops and the program's syncs -- on main v100_bert's two replicas read "849 TF ops per step
  run on the host" where each ran 424.5.  The copies too (h37-words3): ``excessive_memcpy``'s ``copies_per_step``
  against its ``copies`` per direction, a finding without that total being one the walk cannot check.
* ``words`` -- numbers read as a person writes them, in every finding's title, summary and fixes and in the job's
  evidence: a count of one takes the singular (no "1 calls", "1 GPUs"; any noun, not a list of them), no hedged plural
  ("host(s)", "launch(es)"), a range has two different ends as printed (no "1.4 ms-1.4 ms"), and a factor has no more
  than three significant digits ("about 4636.8x" says more than an estimate knows).
* ``one-count`` -- a per-step count of kernels a finding prints, in its summary and its saving's assumption, is its
  detail's count to printed precision (h37-review10: "980.5 kernels per step on average" assumed as "980";
  cloverleaf's "92 of 125 kernels per step" assumed as "92 kernels per step" where its title counts all 125).
* ``ceiling`` -- no finding is graded above what its rule's doc promises ("Never critical": the lone V100 BERT's XLA
  finding read CRITICAL); ``order`` lets a finding at that ceiling save more than a stronger one.
* ``in-use`` -- a fix the capture shows in use (``capture.applied``) is never told again, in any fix's words or code,
  on that host (d2d_v100, torch_compile_cudagraphs_inference: "or let torch.compile fuse the small ops").
* ``table-whole`` -- a table's parts never exceed the whole they are shown under: the kernels table's ``wall us`` and
  the ops table's ``kernel wall us``, per step and GPU, are at most the kernel classes' ``us_per_step`` summed, each
  class at most its kernels' own time, and a diff's kernel and op changes of a side at most its classes (h37-coldshare34:
  a diff of wild/extrap_parallel_kernels_gtx1060 showed 895.6 ms/step of kernels under 467.9 ms/step of classes).
* ``peak-floor`` -- "if every fix lands" takes the step's kernels no lower than the time their work of known FLOPs and
  bytes needs at the GPU's peaks (``achievable.peak_floor_ms``): the union of the claims on kernel time whose fix
  keeps its precision is at most the kernel time above that floor (h37-floor35, ``every_fix_above_floor``).
* ``own-floor`` -- a finding's claims on kernel time whose fix keeps the work's precision are at most its own kernels'
  time above the least their work of known FLOPs and bytes needs at the GPU's peaks (its metric's
  ``above_floor_ms_per_step``): small_grid claimed 1.18 ms of filling the SMs of GEMVs at 97% of the memory bandwidth
  (h37-pool36, ``own_floor_problems``).
* ``zero-share`` -- a share of a time above zero never prints as zero: "15 us of the 585.2 ms pass (<0.1%)", never
  "(0.0%)" (``common.fmt.pct``, the one formatter of shares; h37-coldshare34), nor a share metric's display.
* ``share-of`` -- "T ..., P% of the W step" has P = T / W, less the parts said "of it" in between
  (torch_compile_cudagraphs_inference: "idle 131 us between steps ..., 21.1% of the 221 us step").
* ``the-others`` -- one other GPU or rank is "the other GPU", never "the others" nor "the other 1 rank"
  (ddp_overlap_rtx3090: "the others spend 33.6 ms more" beside its one other GPU).  ``one-step`` walks the session's
  own findings too (the job rules') where every host kept one step, and the job's tables: no "(mean per step)" nor
  "Collectives per step" titles where every host kept one (h37-words3, ``table_scope_problems``); on a capture that
  marks no step the one pass it was read as is "the pass", never the job's step, forward pass or engine step
  (``unmarked_problems``: torch_fp16_inference_unmarked's ten forward calls read "of the 36.6 ms step").
* ``one-value`` on windows over several steps (h37-words3): the times a finding's windows claim ("kernels, step 1010
  (90.2 ms)") add up to at most its own time per step times the kept steps (d2d_v100's small-grid 5.74 ms a step).

* h37-review11: ``card-quiet`` (a card's "not flagged" words name the note its own check gave), ``ruled-out`` (no fix
  the finding's words rule out: jit or graph the step under "another graph cannot cut it"), ``one-name`` (an
  allocator's limit is never the GPU's own memory in words), ``fix-twice`` (one lever once per finding), ``premise``
  (a saving on "one launch a step (a graph's)" gives a fix that records a graph), ``version-said`` (a version said
  under a finding is the job's), ``waits-at`` (the others wait "at the AllReduce" only where they spend longer in it
  than the GPU they wait for); ``words`` also holds sizes to three significant digits ("1001 MiB").

* h37-review12: ``snippet-lang`` (a fix's code, and the MCP server's capture advice, in the language its label says),
  ``rest-of-nothing`` (a capped saving's caveat only where its cut shows), ``left-out`` (a cause in left-out steps
  saves nothing per kept step), ``no-steady`` ("no steady step is left" only of a start-up pass), ``own-work`` (the
  program's own work is the rest of the step, not of the window), ``within-judged`` (a part of a finding's time within
  the share it grades), ``framework-words`` (no other framework's API in prose), ``see-also`` (a pointer to findings
  the report holds), ``one-advice`` (the capture advice is the capture tool's own, as the capture findings' fixes).

* h37-startonly: ``no-promise`` (a report whose header says its window holds no steady step prints no achievable
  step time on any surface, nor gives one in the MCP summary).  h37-startjson: nor holds one in its JSON (the
  session's and a one-host report's host's ``achievable.achievable_step_ms`` null, ``reason`` saying why), and an
  account withholds its step only where the header says so.

* h37-review13: ``held-within`` (a step said to hold a time lasts at least that long), ``graph-launch`` (a kernel
  replayed from a graph is never held against the launch latency beside "not a launch per kernel"), ``one-cause``
  (the MFU card blames the GEMMs' dtype only where the step reaches that dtype's own peak, never beside a 16-bit card
  saying precision cannot limit the step), ``said-done`` (no saving assumes a fix the finding says is done), and
  three widened: ``agree`` (the capture advice trusts per-step averages only over ``capture.min_steps`` kept steps),
  ``one-advice`` (a serving engine's job is advised that engine's capture), ``one-step`` ("in 1 step").

* h37-lowconf: ``uncut`` (a critical on low-confidence steps depends on no step cut: it measures the window, or the
  pass a capture with no repeat is read as, and then says why it keeps its grade; ``severity`` holds a saving per step
  of the capture's own rules to the steps' ceiling too).

* h37-mfugraph: ``mfu-kernels`` (the MFU card never says no matmul is there beside the kept steps' matmul kernels:
  graph replays record no op with shapes, so "no matmul op is recorded" is no reason where GEMMs ran).

* h37-tracingoff3: ``gpu-unrecorded-reason`` (a host whose GPU side went unrecorded says no card is n/a for want of
  an ML framework; h37-review29: nor names its framework as none).

* h37-inputonly2: ``no-gpu-step`` (a host whose job holds no GPU work -- its title says "no step" -- times no GPU step:
  no GPU row's step where no step is marked, and no steps read from the GPU's bursts).  h37-nogpu2: the whole JSON --
  no step row, mean step, card's step or account of one, the session's too; h37-walk13: no card's time per step
  (its input and launch waits, its device compute); session 27: a window whose marks time none of the job's steps
  (``job.marks_no_job_step``: the loop's end) is held to it as an unmarked one; h37-tidy29: every host whose job
  says it times no GPU step (``report.verdict.no_gpu_step``), marked or not (a CPU-only host's marks).

Diffs (``diff_violations``): a per-step group, kernel class, kernel or op time of one side is at most that side's
step per GPU.

Each property failed on main before issue #36 on an example of the issue (``tests/report/test_properties.py`` names
them): ``part<=whole`` on nsys/h100_fsdp_window ("H2D (450 copies, 1.84 s per step)" in a 969 ms step), on
pytorch_ddp_straggler's roofline (aten::mm 5.94 ms/step in a 3.74 ms step), on the FSDP diff (matmul/conv
165,058.5 us/step in a 149.9 ms step), on implicit_numpy_input (copies block 612 us, H2D 632 us of it) and on "15 of 34
kernels (45.7%)"; ``one-value`` on the "AllReduce calls/step" columns that counted every collective; ``order`` on
nsys_a100_cloverleaf (a warning saving 2.8% above an info finding saving 9.4%); ``every-fix`` on every report with an
info finding's saving (torch_tiny_ops' 498 us); ``agree`` on the capture advice of amd_mi250 (a critical cold start,
"can be trusted"); ``whole-count`` on "AllReduce calls/step 15.5" and launch_bound's "calls/step" columns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise
from typing import Any

from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.model.schema import Finding, HostReport, Metric, Report, Table

#: relative and absolute slack for rounding in displayed numbers (a part may equal its whole)
_REL, _ABS_MS = 0.005, 0.002
_SEV = {"critical": 0, "warning": 1, "info": 2, "ok": 3}
_CONF = {"high": 2, "medium": 1, "low": 0}
_UNIT_MS = {"us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0}
_NUM = r"(\d[\d,]*(?:\.\d+)?)"
_TIME = _NUM + r" ?(us|µs|ms|s)\b"
_PER_STEP = re.compile(_TIME + r"(?: per step|/step)(?! on average| summed| over all)")
#: "X of each Y step", in the step's every word: "of the 36.6 ms pass" (an unmarked capture's), "forward pass", "engine step"
_OF_EACH = re.compile(_TIME + r" of (?:each|the|every) (?:(?:one|an?) )?" + _TIME + r" (?:(?:engine|forward) )?(?:step|pass)\b")
_OF_ITS = re.compile(_TIME + r" of (?:its|their) " + _TIME)
_N_OF_M = re.compile(r"(?<![\d.,])(\d[\d,]*(?:\.\d+)?) of (\d[\d,]*(?:\.\d+)?) ([a-zA-Z-]+)(?: [a-z]+){0,4}? "
                     r"\((\d+(?:\.\d+)?)%\)")
_PCT_OF = re.compile(r"(\d+(?:\.\d+)?)% of (?:the |each |its |every )")
#: a count that is not whole: its noun after up to two words that qualify it ("424.5 TF ops", "2.2 small kernels"), none
#: of them a unit or a preposition ("1.5 ms of kernels" is a time)
_FRACTIONAL_COUNT = re.compile(r"(?<![\d.,])(\d[\d,]*\.\d+) (?:(?!(?:us|µs|ms|s|ns|B|KB|MB|GB|KiB|MiB|GiB|of|in|per|a|x)\b)"
                               r"[A-Za-z][\w-]* ){0,2}(copies|copy|kernels|calls|launches|ops|syncs|collectives)\b")
#: what a mean over several GPUs names: "on average over its 2 GPUs"
_OVER_GPUS = re.compile(r"\bover (?:its|their|the) (\d+) (?:GPUs|ranks|replicas)\b")
_AVERAGE_WORDS = ("on average", "average", "avg", "mean")
#: a table column or title that says its counts are per step: a mean over the kept steps by the schema's definition
_PER_STEP_WORDS = ("/step", "per step")


def _ms(num: str, unit: str) -> float:
    return float(num.replace(",", "")) * _UNIT_MS[unit]


def _over(part: float, whole: float) -> bool:
    return part > whole * (1 + _REL) + _ABS_MS


def host_step_ms(h: HostReport) -> float | None:
    """The step of one GPU: the longest GPU step of the host (each GPU's step is the whole a per-step part is of)."""
    steps = [g.step_ms for g in h.gpus if g.step_ms]
    if steps:
        return max(steps)
    a = h.achievable or {}
    return a.get("step_ms") or (sum(v for v in h.breakdown_ms.values() if v) or None)


def _finding_text(f: Finding) -> str:
    return f"{f.title}. {f.summary}"


# --------------------------------------------------------------------------- part <= whole


def _printed_over(part: tuple[str, str], whole: tuple[str, str]) -> bool:
    """A printed part over its printed whole, beyond what rounding the two printed numbers may hide."""
    (a, ua), (b, ub) = part, whole
    return _ms(a, ua) - _time_half_ulp(a) * _UNIT_MS[ua] > _ms(b, ub) + _time_half_ulp(b) * _UNIT_MS[ub] + 1e-9


def _text_parts(where: str, text: str, step: float | None) -> list[str]:
    out = []
    if step:
        for m in _PER_STEP.finditer(text):
            v = _ms(*m.groups()) - _time_half_ulp(m.group(1)) * _UNIT_MS[m.group(2)]
            if v > step * 1.001 + 1e-6:
                out.append(f"part<=whole: {where}: '{m.group(0)}' in a {step:.3f} ms step per GPU")
    for m in _OF_ITS.finditer(text):
        if _printed_over(m.group(1, 2), m.group(3, 4)):
            out.append(f"part<=whole: {where}: '{m.group(0)}'")
    for m in _OF_EACH.finditer(text):
        if _printed_over(m.group(1, 2), m.group(3, 4)):
            out.append(f"part<=whole: {where}: '{m.group(0)}'")
    for m in _N_OF_M.finditer(text):
        n, tot = float(m.group(1).replace(",", "")), float(m.group(2).replace(",", ""))
        if n > tot:
            out.append(f"part<=whole: {where}: '{m.group(0)}'")
        elif tot and not _share_fits(m.group(1), m.group(2), m.group(4)):
            out.append(f"part<=whole: {where}: '{m.group(0)}' but {n:g}/{tot:g} is {100.0 * n / tot:.1f}%")
    for m in _PCT_OF.finditer(text):
        if float(m.group(1)) > 100.0 + 0.05:
            out.append(f"part<=whole: {where}: '{m.group(0)}'")
    mostly = re.search(r"for " + _TIME + r"[^;]*?mostly [\w ]+? \([^)]*?" + _TIME + r" per step\)", text)
    if mostly and _printed_over(mostly.group(3, 4), mostly.group(1, 2)):
        out.append(f"part<=whole: {where}: '{mostly.group(0)[:120]}': the part is larger than the whole")
    return out


def _time_half_ulp(num: str) -> float:
    """Half a unit of the last printed digit of a time: a time printed whole is rounded to its unit ("189 us" of
    188.8 us, ``fmt.ms``'s three digits), where a count printed whole is exact (h37-randjobs3)."""
    decimals = num.partition(".")[2]
    return 0.5 * 10 ** -len(decimals)


def _half_ulp(num: str) -> float:
    """Half a unit of the last printed digit: what rounding may hide in a printed number (0 for a whole count)."""
    decimals = num.partition(".")[2]
    return 0.5 * 10 ** -len(decimals) if decimals else 0.0


def _share_fits(n: str, tot: str, p: str) -> bool:
    """"N of M (P%)": P is N/M as printed, within what rounding the three printed numbers may hide."""
    a, b = float(n.replace(",", "")), float(tot.replace(",", ""))
    lo = (a - _half_ulp(n)) / (b + _half_ulp(tot)) * 100
    hi = (a + _half_ulp(n)) / max(b - _half_ulp(tot), 1e-9) * 100
    return lo - _half_ulp(p) - 1e-9 <= float(p) <= hi + _half_ulp(p) + 1e-9


def _col_unit(col: str) -> float | None:
    """ms per unit of a per-step time column ("ms/step", "busy ms/step", "us/step"), None for any other column."""
    m = re.search(r"\b(us|ms|s)/step\b", col)
    return _UNIT_MS[m.group(1)] if m else None


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    m = re.fullmatch(r"\s*(-?[\d,]+(?:\.\d+)?)\s*%?\s*", str(v))
    return float(m.group(1).replace(",", "")) if m else None


def _row_step(t: Table, row: list, h: HostReport | None, hosts: dict[str, HostReport]) -> float | None:
    """The step per GPU a table row's per-step times are of: its GPU's, else its host's."""
    host = hosts.get(str(row[t.columns.index("host")])) if "host" in t.columns else h
    if host is None:
        steps = [host_step_ms(x) for x in hosts.values()]
        return max((s for s in steps if s), default=None)
    for name in ("gpu", "GPU"):
        if name in t.columns:
            g = _num(row[t.columns.index(name)])
            for gs in host.gpus:
                if g is not None and gs.gpu == g and gs.step_ms:
                    return gs.step_ms
    return host_step_ms(host)


def table_problems(where: str, t: Table, h: HostReport | None, hosts: dict[str, HostReport]) -> list[str]:
    """Per-step times within the step, parts within their wholes, shares within 100%, counts whole."""
    out = []
    cols = t.columns
    for row in t.rows:
        step = _row_step(t, row, h, hosts)
        for i, c in enumerate(cols):
            v = _num(row[i]) if i < len(row) else None
            if v is None:
                continue
            unit = _col_unit(c)
            if unit is not None and step and _over(v * unit, step):
                out.append(f"part<=whole: {where}: {t.title!r} row {row[0]!r} {c} {row[i]} in a {step:.3f} ms step "
                           f"per GPU")
            if ("share" in c or c.startswith("of ")) and c != "of roofline" and v > (100.0 if "%" in str(row[i]) else 1.0) + 1e-3:
                out.append(f"part<=whole: {where}: {t.title!r} row {row[0]!r} {c} {row[i]} over 100%")
            if _is_count_col(c) and abs(v - round(v)) > 1e-6 and not _says_average(c + " " + t.title) \
                    and not any(w in c + " " + t.title for w in _PER_STEP_WORDS):
                out.append(f"whole-count: {where}: {t.title!r} row {row[0]!r} {c} {row[i]} is not a whole number "
                           f"and does not say it is an average")
        for part, whole in (("exposed ms/step", "ms/step"), ("blocking ms", "ms/step"), ("exposed ms", "ms")):
            if part in cols and whole in cols:
                p, w = _num(row[cols.index(part)]), _num(row[cols.index(whole)])
                if p is not None and w is not None and _over(p, w):
                    out.append(f"part<=whole: {where}: {t.title!r} row {row[0]!r} {part} {p} over {whole} {w}")
    return out


def _is_count_col(c: str) -> bool:
    return bool(re.search(r"\b(count|calls|kernels|occurrences|allocations|launches|syncs)\b", c)) and "ms" not in c \
        and "us" not in c.split() and "share" not in c


def _says_average(text: str) -> bool:
    return any(w in text.lower() for w in _AVERAGE_WORDS)


def _adds_up(where: str, parts: dict, whole: float | None) -> list[str]:
    """A ledger: each category at least 0, and the categories add up to the step they split, once."""
    if not parts or not whole:
        return []
    out = [f"ledger: {where}: {k} is {v:.3f} ms" for k, v in parts.items() if v is not None and v < -1e-6]
    total = sum(float(v or 0.0) for v in parts.values())
    if abs(total - whole) > 0.005 * whole + _ABS_MS:
        out.append(f"ledger: {where}: the categories add to {total:.3f} ms, the step is {whole:.3f} ms")
    return out


def _ledgers(h: HostReport) -> list[str]:
    """Every microsecond of each GPU's step attributed once: the host's, each GPU's and each step row's breakdown."""
    out = _adds_up(f"{h.host} breakdown", h.breakdown_ms, (h.achievable or {}).get("step_ms"))
    for g in h.gpus:
        out += _adds_up(f"{h.host}/GPU{g.gpu} breakdown", g.breakdown, g.step_ms)
    for r in h.step_rows:
        out += _adds_up(f"{h.host} step {r.step}" + (f" GPU{r.gpu}" if r.gpu is not None else ""), r.breakdown,
                        r.step_ms)
    return out


def _host_parts(h: HostReport) -> list[str]:
    out = _ledgers(h)
    step = host_step_ms(h)
    if not step:
        return out
    for k, v in (h.breakdown_ms or {}).items():
        if v and _over(v, step):
            out.append(f"part<=whole: {h.host}: breakdown {k} {v:.3f} ms in a {step:.3f} ms step")
    for g in h.gpus:
        for typ, vals in (g.collectives or {}).items():
            _, t, exposed = (vals + [None] * 3)[:3]
            if g.step_ms and t and _over(t, g.step_ms):
                out.append(f"part<=whole: {h.host}/GPU{g.gpu}: {typ} {t:.3f} ms per step in a {g.step_ms:.3f} ms step")
            if t is not None and exposed and _over(exposed, t):
                out.append(f"part<=whole: {h.host}/GPU{g.gpu}: {typ} exposed {exposed:.3f} ms of {t:.3f} ms")
    for row in h.kernel_classes or []:
        us = row.get("us_per_step") or 0.0
        if _over(us / 1000.0, step):
            out.append(f"part<=whole: {h.host}: kernel class {row.get('class')} {us:.1f} us/step in a {step:.3f} ms step")
    # the compute classes split the step's compute-kernel time, each microsecond in one of them (the collectives run on
    # streams of their own, overlapping it by design: their class is the communication tables' time, a whole of its own)
    together = sum(row.get("us_per_step") or 0.0 for row in h.kernel_classes or [] if row.get("class") != "collective")
    if _over(together / 1000.0, step):
        out.append(f"part<=whole: {h.host}: compute kernel classes together {together:.1f} us/step in a {step:.3f} ms step")
    for f in h.findings:
        if f.saving is not None and _over(f.saving.ms_per_step, step):
            out.append(f"part<=whole: {f.id}: saves {f.saving.ms_per_step:.3f} ms of a {step:.3f} ms step")
    return out


def _step_of_gpu(h: HostReport, gpu: int, step: int) -> float | None:
    """One step's length on one GPU as the report's step rows give it (a row of the host's, ``gpu`` null, where the
    rows are not per GPU); None where no row holds it."""
    rows = [r for r in h.step_rows or [] if r.step == step and r.gpu in (gpu, None)]
    return max((r.step_ms for r in rows), default=None)


def memory_offset_problems(h: HostReport) -> list[str]:
    """A time "into a step" lies within that step: a GPU's memory peak placed ``peak_step_offset_ms`` into step N is
    at most step N's length on that GPU (h37-left20: v100_bert's GPU 6 peaked "665.9 ms into step 0" of its 21.3 ms
    step -- an offset from the host-wide window of two GPUs 648 ms apart)."""
    out = []
    for g in h.gpus:
        m = g.memory or {}
        off, step = m.get("peak_step_offset_ms"), m.get("peak_step")
        if off is None or step is None:
            continue
        whole = _step_of_gpu(h, g.gpu, int(step))
        if off < 0 or (whole is not None and _over(off, whole)):
            out.append(f"part<=whole: {h.host}/GPU{g.gpu}: memory peak {off:.3f} ms into step {step}, a "
                       f"{whole if whole is not None else float('nan'):.3f} ms step")
    return out


#: the memory findings whose saving is bytes the allocated peak holds (the OOM's are of the moment it failed, the
#: fragmentation finding's of the reserve beyond the peak: other wholes)
_PEAK_SAVINGS = ("activation_memory", "memory_near_capacity", "memory_leak")
#: the words a memory finding says how much of its saving another's frees too with (``activation_memory._overlap``)
_OVERLAP = re.compile(r"At least ([\d.,]+) (GiB|MiB|KiB|B) of them are bytes")
_BYTES = {"GiB": 2 ** 30, "MiB": 2 ** 20, "KiB": 2 ** 10, "B": 1}


def memory_savings_problems(h: HostReport) -> list[str]:
    """The memory findings' savings on one GPU, less the overlaps they state, never exceed its allocated peak -- nor the
    activations' findings' the peak less its held memory (weights, state: no such fix frees them): a part never
    exceeds its whole (session 41-42 Left, h37-probe42k: side by side, the kept forward's 8.16 GiB and the
    attention finding's 1.41 GiB on a real CS336 forward read as more than the peak could free until the second said
    how much of it the first frees too).  Printed overlaps are read at their printed precision (three digits)."""
    out: list[str] = []
    peaks = {g.gpu: (g.memory or {}).get("peak_allocated_bytes") for g in h.gpus}
    by_gpu: dict[int, list[Finding]] = {}
    for f in h.findings:
        gpu = f.metric.detail.get("gpu") if f.metric is not None else None
        if f.rule in _PEAK_SAVINGS and f.saving_bytes and isinstance(gpu, int):
            by_gpu.setdefault(gpu, []).append(f)
    for gpu, every in by_gpu.items():
        mem = next(((g.memory or {}) for g in h.gpus if g.gpu == gpu), {})
        peak = peaks.get(gpu)
        if peak:  # the activations' findings free what the peak holds above its held memory, the others any of it
            acts = [f for f in every if f.rule == "activation_memory"]
            out += _savings_over(h.host, gpu, acts, peak - int((mem.get("breakdown") or {}).get("held", 0)))
            out += _savings_over(h.host, gpu, every, peak)
    return out


#: a memory snapshot's source (``GpuMemory.source``): its totals count the caching allocator's blocks
_SNAPSHOT_SOURCE = "PyTorch memory snapshot"
#: the caching allocator's least block (``kMinBlockSize``): every block, and so every sum of blocks, a multiple of it
_LEAST_BLOCK = 512
#: the memory findings' details that are bytes of blocks live at the peak (or at the history's end)
_BLOCK_DETAILS = ("kept_bytes", "cache_bytes", "per_iteration_bytes", "leak_end_bytes", "peak_allocated_bytes")


def _beyond_said(h: HostReport) -> bool:
    """The host's read says its history allocates beyond its segments (``formats.snapshot.reader``'s damage,
    h37-huntsnap65): a generated or edited snapshot, whose levels are its own sums -- the one place a peak allocated
    above the peak reserved is the file's, said, and not the report's error."""
    from tb_gpu_advisor.formats.snapshot.reader import NOT_ONE_ALLOCATOR

    return any(NOT_ONE_ALLOCATOR in d for d in h.damage)


def memory_unit_problems(h: HostReport) -> list[str]:
    """``one-unit`` (h37-snap64): each of a GPU's memory quantities in one unit, each part within its whole.  The
    breakdown of the allocated peak adds up to it, no category and no op holding more than its category's share;
    the peak allocated within the peak reserved (but where the read says its history is no allocator's record), the
    reserve in use within it; an OOM's kinds add up to what was
    allocated then, within what was reserved; a step's peak within the peaks.  A snapshot's totals count the caching
    allocator's blocks (512-byte multiples), so every part of them does too: a sum of the tensors' requests beside
    them (a 160,000,004 B gradient in a 160,000,512 B block) left each rounding to whatever category was the
    remainder ("held across steps")."""
    out = []
    said = [f for f in h.findings if f.metric is not None and f.rule in _PEAK_SAVINGS]
    for g in h.gpus:
        m = g.memory or {}
        peak, res = m.get("peak_allocated_bytes"), m.get("peak_reserved_bytes")
        where = f"{h.host}/GPU{g.gpu}"
        bd = {k: int(v) for k, v in (m.get("breakdown") or {}).items()}
        if peak is not None and bd:
            if any(v < 0 for v in bd.values()) or sum(bd.values()) > peak:
                out.append(f"one-unit: {where}: the peak's breakdown {bd} is no part of its {peak:,} B")
            elif m.get("baseline") == "absolute" and sum(bd.values()) != peak:
                out.append(f"one-unit: {where}: the peak's breakdown sums to {sum(bd.values()):,} B, not its {peak:,} B")
        by_cat: dict[str, int] = {}
        for _name, cat, size, _count in m.get("top") or []:
            by_cat[cat] = by_cat.get(cat, 0) + int(size)
        out += [f"one-unit: {where}: the ops holding {c} hold {v:,} B of its {bd.get(c, 0):,} B"
                for c, v in by_cat.items() if bd and v > bd.get(c, 0)]
        if (m.get("held_by_lifetime_bytes") or 0) > bd.get("held", 0):
            out.append(f"one-unit: {where}: held by its lifetime {m['held_by_lifetime_bytes']:,} B over held")
        if peak is not None and res is not None and res >= 0 and peak > res and not _beyond_said(h):
            out.append(f"one-unit: {where}: peak allocated {peak:,} B over peak reserved {res:,} B")
        if res is not None and (m.get("peak_reserved_in_use_bytes") or 0) > res:
            out.append(f"one-unit: {where}: reserved in use {m['peak_reserved_in_use_bytes']:,} B over {res:,} B")
        for row in m.get("step_peaks") or []:
            _step, top, top_res, start = (list(row) + [None] * 4)[:4]
            if start is not None and top is not None and start > top:
                out.append(f"one-unit: {where}: step {_step} starts at {start:,} B above its peak {top:,} B")
            if top_res is not None and top is not None and top > top_res:
                out.append(f"one-unit: {where}: step {_step}'s peak {top:,} B over its reserved {top_res:,} B")
        for o in m.get("ooms") or []:
            kinds = sum(int(v) for v in (o.get("by_category") or {}).values())
            if kinds and kinds != o.get("allocated_bytes"):
                out.append(f"one-unit: {where}: an OOM's kinds sum to {kinds:,} B, not the {o['allocated_bytes']:,} B "
                           f"allocated then")
            if o.get("reserved_bytes") is not None and o["allocated_bytes"] > o["reserved_bytes"] >= 0:
                out.append(f"one-unit: {where}: an OOM's allocated {o['allocated_bytes']:,} B over its reserved")
        if not str(m.get("source", "")).startswith(_SNAPSHOT_SOURCE):
            continue
        blocks = {"peak allocated": peak, "peak reserved": res, "start": m.get("start_bytes"),
                  **{f"held by {k}": v for k, v in bd.items()},
                  **{f"op {t[0]} ({t[1]})": t[2] for t in m.get("top") or []},
                  **{f"OOM {k}": v for o in m.get("ooms") or [] for k, v in (o.get("by_category") or {}).items()},
                  **{f"OOM live block {k}": b[0] for o in m.get("ooms") or [] for k, b in enumerate(o.get("live") or [])},
                  **{f"{f.id} {k}": f.metric.detail.get(k) for f in said if f.metric.detail.get("gpu") == g.gpu
                     for k in _BLOCK_DETAILS}}
        out += [f"one-unit: {where}: {what} {v:,} B is no sum of the allocator's {_LEAST_BLOCK}-byte blocks"
                for what, v in blocks.items() if isinstance(v, int) and v % _LEAST_BLOCK]
    return out


def _savings_over(host: str, gpu: int, fs: list[Finding], peak: int) -> list[str]:
    """:func:`memory_savings_problems` for findings ``fs`` against the bytes ``peak`` they can free."""
    out = []
    if len(fs) >= 2:
        said = [(n, u) for f in fs for n, u in _OVERLAP.findall(f.summary)]
        shared = sum(float(n.replace(",", "")) * _BYTES[u] for n, u in said)
        slack = sum(_half_ulp(n) * _BYTES[u] for n, u in said) + 0.005 * peak
        total = sum(int(f.saving_bytes or 0) for f in fs)
        if total - shared > peak + slack:
            out.append(f"part<=whole: {host}/GPU{gpu}: memory savings {total / 2 ** 30:.2f} GiB "
                       f"({', '.join(f.rule for f in fs)}) less {shared / 2 ** 30:.2f} GiB stated overlap, over the "
                       f"{peak / 2 ** 30:.2f} GiB they can free of the allocated peak")
    return out


def ledger_savings_violations(report: Report) -> list[str]:
    """A finding's saving recovers, per breakdown group, no more than the step's ledger holds there (part of
    :func:`report_violations`; alone, for the test that names it)."""
    return sorted({v for h in report.hosts if h.error is None for f in h.findings
                   for v in _recovers_within_ledger(f, h.breakdown_ms) + _recovers_within_classes(f, h.kernel_classes)})


def _recovers_within_ledger(f: Finding, breakdown_ms: dict) -> list[str]:
    """A saving recovers time the step's ledger holds: per breakdown group, no more than the step spends there."""
    from tb_gpu_advisor.rules.savings import GROUPS

    if f.saving is None or not breakdown_ms:
        return []
    per: dict[str, float] = {}
    for r in f.saving.recovers:
        per[r["group"]] = per.get(r["group"], 0.0) + float(r["ms"])
    out = []
    for g, v in per.items():
        held = sum(float(breakdown_ms.get(c) or 0.0) for c in GROUPS.get(g, ()))
        if _over(v, held):
            out.append(f"part<=whole: {f.id}: recovers {v:.3f} ms of {g} time, the step holds {held:.3f} ms")
    return out


def _class_ms(kernel_classes: list | None) -> dict[str, float]:
    """The step's kernel time per class a saving's pool speaks of (``rules.savings.POOL_CLASS``: "matmul", "other"),
    ms per step and GPU, from the report's ``kernel_classes`` (the kernels' time inside the kept steps, as the ledger
    paints it): "matmul/conv" is the matrix kernels' time, every class but it and the collectives the others'."""
    out = {"matmul": 0.0, "other": 0.0}
    for c in kernel_classes or ():
        if c.get("class") != "collective":
            out["matmul" if c.get("class") == "matmul/conv" else "other"] += float(c.get("us_per_step") or 0.0) / 1e3
    return out


def _recovers_within_classes(f: Finding, kernel_classes: list | None) -> list[str]:
    """A saving of kernel time recovers, per kernel class its pools speak of, no more than the step's kernels of that
    class take inside the steps (h37-ledger23: a fusible chain's kernels summed whole where the last ran past the kept
    step; a part of ``device_compute`` finer than its group's law)."""
    from tb_gpu_advisor.rules.savings import POOL_CLASS

    if f.saving is None or not kernel_classes:
        return []
    per: dict[str, float] = {}
    for r in f.saving.recovers:
        if r.get("pool") in POOL_CLASS:
            per[POOL_CLASS[r["pool"]]] = per.get(POOL_CLASS[r["pool"]], 0.0) + float(r["ms"])
    held = _class_ms(kernel_classes)
    return [f"part<=whole: {f.id}: recovers {v:.3f} ms of {c} kernel time, the step's {c} kernels take {held[c]:.3f} ms"
            for c, v in per.items() if _over(v, held[c])]


#: a finding's detail key holding kernel time of one class per step -> that class (:func:`_class_ms`): the fusible
#: chains' kernels (element-wise), an unfused attention run's matmuls and the kernels between them
_DETAIL_CLASS = {"chain_kernel_ms_per_step": "other", "matmul_ms_per_step": "matmul", "between_ms_per_step": "other"}


def _detail_within_classes(f: Finding, kernel_classes: list | None) -> list[str]:
    """A finding's kernel time of a class per step (its metric's detail, :data:`_DETAIL_CLASS`) is a part of the
    step's kernels of that class inside the steps (h37-ledger23: a chain's element-wise kernels summed whole, the last
    running past the kept step, read more than every element-wise kernel of the step)."""
    if f.metric is None or not kernel_classes:
        return []
    held = _class_ms(kernel_classes)
    return [f"part<=whole: {f.id}: {k} {v:.3f} ms, the step's {_DETAIL_CLASS[k]} kernels take "
            f"{held[_DETAIL_CLASS[k]]:.3f} ms" for k, v in (f.metric.detail or {}).items()
            if k in _DETAIL_CLASS and isinstance(v, (int, float)) and not isinstance(v, bool)
            and _over(v, held[_DETAIL_CLASS[k]])]


# --------------------------------------------------------------------------- one value


def _collective_ms(t: Table | None) -> dict[str, tuple[float | None, float | None]]:
    """collective type -> (calls, ms) per step of a collectives table."""
    if t is None or "collective" not in t.columns or "ms" not in t.columns:
        return {}
    i, j = t.columns.index("collective"), t.columns.index("ms")
    k = t.columns.index("calls") if "calls" in t.columns else None
    return {str(r[i]): (_num(r[k]) if k is not None else None, _num(r[j])) for r in t.rows}


def _within(where: str, what: str, v: float | None, values: list[float]) -> list[str]:
    if v is None or not values:
        return []
    lo, hi = min(values), max(values)
    if v < lo * (1 - _REL) - _ABS_MS or v > hi * (1 + _REL) + _ABS_MS:
        return [f"one-value: {where}: {what} {v:.3f} outside its GPUs' {lo:.3f}-{hi:.3f}"]
    return []


def _collective_values(report: Report) -> list[str]:
    out = []
    every: dict[str, list[float]] = {}
    for h in report.hosts:
        mine: dict[str, list[float]] = {}
        for g in h.gpus:
            for typ, vals in (g.collectives or {}).items():
                if len(vals) > 1 and vals[1] is not None:
                    mine.setdefault(typ, []).append(float(vals[1]))
        for typ, v in mine.items():
            every.setdefault(typ, []).extend(v)
        for typ, (_, ms) in _collective_ms(h.communication).items():
            out += _within(f"{h.host} collectives table", f"{typ} ms per step", ms, mine.get(typ, []))
        for g in h.gpus:  # the GPU table's "collectives/step" is every collective type's calls, one count
            calls = sum(float(v[0] or 0.0) for v in (g.collectives or {}).values())
            if g.collectives and abs(calls - float(g.collective_calls_per_step or 0.0)) > 0.011:
                out.append(f"one-value: {h.host}/GPU{g.gpu}: {g.collective_calls_per_step} collective calls per step, "
                           f"its collectives add to {calls:g}")
        active = [g for g in h.gpus if g.kernel_count]
        for g in active:
            ar = (g.collectives or {}).get("AllReduce")
            for f in h.findings:
                for t in f.evidence:
                    out += _allreduce_columns(f"{f.id}", t, g.gpu, ar)
    session = _collective_ms(report.collectives)
    for typ, (_, ms) in session.items():
        out += _within("session collectives table", f"{typ} ms per step", ms, every.get(typ, []))
    if len(report.hosts) == 1:  # one host: the job's table and the host's are one quantity, per step and GPU
        for typ, (_, ms) in _collective_ms(report.hosts[0].communication).items():
            other = session.get(typ, (None, None))[1]
            if ms is not None and other is not None and abs(ms - other) > max(_ABS_MS, _REL * max(ms, other)):
                out.append(f"one-value: {typ} takes {other:.3f} ms per step in the session's collectives table and "
                           f"{ms:.3f} ms in {report.hosts[0].host}'s")
    return out


def _rank_values(report: Report) -> list[str]:
    """The ranks table's step and exposed communication of a rank are its GPU's own step and ledger entry."""
    t = report.ranks
    if t is None or not {"rank", "step ms", "exposed comm ms"} <= set(t.columns):
        return []
    gpus = {(h.host, g.gpu): g for h in report.hosts for g in h.gpus}
    out = []
    for row in t.rows:
        m = re.search(r"([^()\s]+)/GPU(\d+)\)?$", str(row[t.columns.index("rank")]))
        g = gpus.get((m.group(1), int(m.group(2)))) if m else None
        if g is None or g.step_ms is None:
            continue
        for col, mine in (("step ms", g.step_ms), ("exposed comm ms", (g.breakdown or {}).get("collectives") or 0.0)):
            v = _num(row[t.columns.index(col)])
            if v is not None and abs(v - mine) > _ABS_MS + _REL * mine:
                out.append(f"one-value: ranks table {row[0]} {col} {v:g}, its GPU's own {mine:.3f}")
    return out


def _allreduce_columns(where: str, t: Table, gpu: int, ar: list | None) -> list[str]:
    """An "AllReduce calls/step" or "AllReduce ms/step" cell is the GPU's AllReduce, not every collective's."""
    if "gpu" not in t.columns or "host" in t.columns:
        return []
    out = []
    for row in t.rows:
        if _num(row[t.columns.index("gpu")]) != gpu:
            continue
        for col, idx in (("AllReduce calls/step", 0), ("AllReduce ms/step", 1)):
            if col in t.columns:
                v = _num(row[t.columns.index(col)]) or 0.0
                want = float(ar[idx] or 0.0) if ar else 0.0
                if abs(v - want) > max(0.011, _REL * want):
                    out.append(f"one-value: {where}: GPU{gpu} {col} {v:g} but its AllReduce is {want:g}")
    return out


def _shares(where: str, metrics: Iterable) -> list[str]:
    """A share (a card's or a finding's metric) is a part of its whole: between 0 and 100%."""
    return [f"part<=whole: {where}: {m.id} is a share of {m.display}" for m in metrics
            if m is not None and m.unit == "share" and m.value is not None and not -1e-9 <= m.value <= 1.0005]


def _detail_shares(where: str, findings: Iterable[Finding]) -> list[str]:
    """A share a finding's metric holds in its detail (a key ending in ``share``: the part of the step in small grids,
    the eligible share of the kernel time) is a part of its whole too, whether or not the text prints it: between 0 and
    100% (h37-smallgrid: ``underfilled_kernel_share`` 1.528, a 1.5 ms kernel counted whole in a 137 us step)."""
    out = []
    for f in findings:
        detail = (f.metric.detail if f.metric is not None else None) or {}
        for k, v in detail.items():
            if k.endswith("share") and isinstance(v, (int, float)) and not isinstance(v, bool) \
                    and not -1e-9 <= v <= 1.0005:
                out.append(f"part<=whole: {where}: {f.id} {k} is {v:.4f}")
    return out


def _precision_parts(h: HostReport) -> list[str]:
    """The 16-bit card's parts of the known-precision kernel time (fp16, bf16, 8-bit) never add up past it, and a
    part of 8-bit time the card's detail holds is said on the card (an FP8 model read "16-bit kernel time 17.6%" as
    if the rest ran in fp32)."""
    out = []
    for c in h.headline or []:
        d = c.detail or {}
        if c.id != "sixteen_bit_share" or c.value is None:
            continue
        eight = d.get("eight_bit_share") or 0.0
        if c.value + eight > 1.0005:
            out.append(f"part<=whole: {h.host}: 16-bit {c.value:.3f} + 8-bit {eight:.3f} of the known kernel time")
        if eight >= 0.005 and "8-bit" not in c.display:
            out.append(f"one-value: {h.host}: the 16-bit card {c.display!r} leaves out its {eight:.1%} of 8-bit time")
    return out


#: A finding metric's id -> the one ledger category (``breakdown_ms``) whose share of the step it is.
LEDGER_SHARES = {"handoff_share": "stream_handoff"}


def ledger_share_problems(h: HostReport) -> list[str]:
    """A finding that grades one category of the step's ledger (:data:`LEDGER_SHARES`) shows the ledger's share of the
    step and prints the ledger's time: one value, one name (``one-value``)."""
    out = []
    step = sum(v for v in (h.breakdown_ms or {}).values() if v)
    for f in h.findings:
        cat = LEDGER_SHARES.get(f.metric.id) if f.metric is not None else None
        if cat is None or not step:
            continue
        v = (h.breakdown_ms or {}).get(cat)
        if v is None:
            out.append(f"one-value: {h.host}: {f.id} grades {cat}, which the ledger does not hold")
            continue
        if f.metric.value is not None and abs(f.metric.value - v / step) > 0.0011:
            out.append(f"one-value: {h.host}: {f.id} grades {f.metric.value:.4f} of the step, the ledger's {cat} "
                       f"{v / step:.4f}")
        said = re.search(_NUM + r" ?(us|µs|ms|s) of each", f.summary)
        if said and abs(_ms(*said.groups()) - v) > _time_half_ulp(said.group(1)) * _UNIT_MS[said.group(2)] + 1e-9:
            out.append(f"one-value: {h.host}: {f.id} says {said.group(0)} step, the ledger's {cat} {v:.4f} ms")
    return out


def _card_values(h: HostReport) -> list[str]:
    """A card graded by a finding shows the finding's number."""
    out = _shares(h.host, list(h.headline or []) + [f.metric for f in h.findings]) + _precision_parts(h)
    out += _detail_shares(h.host, h.findings)
    for c in h.headline or []:
        by = (c.detail or {}).get("graded_by") or {}
        for f in h.findings:
            if f.metric is None or f.metric.id != c.id or f.id != by.get("finding"):
                continue
            if c.value is not None and f.metric.value is not None and abs(c.value - f.metric.value) > 0.0011:
                out.append(f"one-value: {h.host}: card {c.id} {c.display} but {f.id} says {f.metric.display}")
    return out


# --------------------------------------------------------------------------- order, severity, totals, agreement


def _leads(f: Finding) -> bool:
    """Findings that say what the capture is come first whatever they save (a warm-up capture; a capture that lost
    part of its GPU records, whose other findings read the recorded part only; a critical problem that saves no step
    time, such as an out-of-memory error or a capture without GPU work; a run that failed and a capture without GPU
    activity whatever they save or grade); a start-up warning over a mixed window is no warm-up capture."""
    warm_up = f.severity == "critical" or (f.severity == "warning" and _phase(f) != "mixed")
    return (f.rule == "cold_start" and warm_up) or _lead_kind(f) < 2 or \
        (f.rule == "capture_quality" and f.metric is not None and f.metric.id == "active_gpus") or \
        (f.severity == "critical" and (f.saving is None or not f.saving.ms_per_step))


def _phase(f: Finding) -> str | None:
    """The window's phase a start-up finding read: a warning over a window the program's own work mostly fills
    (``mixed``) is no warm-up capture, and ranks by its saving (docs/rules.md, Ranking; 773dfd00)."""
    return (f.metric.detail or {}).get("phase") if f.metric is not None else None


def _saving(f: Finding) -> float:
    return round(f.saving.ms_per_step, 2) if f.saving else 0.0


def _capture_leads(f: Finding, fs: list[Finding]) -> bool:
    """A warning about the capture that saves nothing leads the notes when no problem saves step time: it is then the
    one problem of the report (h37-left19: compiled_a100_triton's "Too few steps" under a note)."""
    if not _placed_as_capture(f) or f.severity not in ("critical", "warning") or _saving(f):
        return False
    return not any(_saving(g) for g in fs if g.severity in ("critical", "warning"))


def _placed_as_capture(f: Finding) -> bool:
    """A finding about the capture, or the one that the host's time was not recorded (its time known, its saving not,
    its fix the capture's: h37-serve34), placed as the capture's warnings are."""
    return f.rule in _NOT_OF_THE_STEPS or (f.rule == "unexplained_idle" and f.id.endswith("#unrecorded"))


def _placed_saving(f: Finding, fs: list[Finding]) -> float:
    """The saving a finding is ranked by: its own, except a warning about the capture that saves nothing, which is
    listed right after the last critical or warning finding that saves step time (docs/rules.md, Ranking;
    h37-review16: d2d_v100's "Too few steps" below a note saving 2.30 ms under warnings saving 16.5 ms and more)."""
    if _placed_as_capture(f) and f.severity in ("critical", "warning") and not _saving(f):
        graded = [_saving(g) for g in fs if g.severity in ("critical", "warning") and _saving(g)]
        if graded:
            return min(graded)
    return _saving(f)


def order_problems(where: str, findings: list[Finding]) -> list[str]:
    out = []
    fs = [f for f in findings if f.severity != "ok"]
    lead = [f for f in fs if _leads(f) or _capture_leads(f, fs)]
    rest = [f for f in fs if f not in lead]
    if fs[:len(lead)] != lead:
        out.append(f"order: {where}: a finding that leads ({[f.id for f in lead]}) is not first")
    for a, b in pairwise(rest):
        sa, sb = _placed_saving(a, fs), _placed_saving(b, fs)
        if sb > sa:
            out.append(f"order: {where}: {a.id} ({a.severity}, saves {sa} ms as ranked) ranked above {b.id} "
                       f"({b.severity}, saves {sb} ms as ranked)")
        elif sa == sb == 0.0 and _SEV.get(b.severity, 9) < _SEV.get(a.severity, 9):
            out.append(f"order: {where}: {a.id} ({a.severity}) ranked above {b.id} ({b.severity}), neither saving "
                       f"step time: among those, severity comes first")
    out += _lead_order_problems(where, lead)
    for a in fs:
        for b in fs:
            if a.saving is None or b.saving is None or _SEV.get(a.severity, 9) <= _SEV.get(b.severity, 9):
                continue  # a is milder than b from here on
            if a.severity == "warning" and _never_critical(a):
                continue  # at its rule's ceiling (``ceiling``): the grade its rule promises outranks the saving's
            if a.severity == "info" and _guessed_gap_note(a):
                continue  # at the guessed steps' ceiling (docs/rules.md, "Guessed steps"): a gap between them is a note
            if a.saving.percent_of_step > b.saving.percent_of_step + 0.5 and \
                    _CONF.get(a.confidence, 2) >= _CONF.get(b.confidence, 2):
                out.append(f"order: {where}: {a.id} is {a.severity} saving {a.saving.percent_of_step:.1f}% but "
                           f"{b.id} is {b.severity} saving {b.saving.percent_of_step:.1f}% at no higher confidence")
    return out


def _lead_kind(f: Finding) -> int:
    """Which of the leading findings ``f`` is, in the order the heading's ranking names them (docs/rules.md,
    Ranking): a run that failed (its program died, or a launch was refused), then a capture that lost part of its GPU
    records, then a warm-up capture, then any other (a critical problem that saves no step time, a capture problem
    that is the report's one)."""
    if f.severity == "critical" and f.metric is not None and f.metric.id in ("program_failed", "refused_launches"):
        return 0
    if f.rule == "capture_quality" and f.metric is not None and f.metric.id == "lost_launch_share":
        return 1
    return 2 if f.rule == "cold_start" else 3


def _lead_order_problems(where: str, lead: list[Finding]) -> list[str]:
    """``order`` among the leading findings: what the run is before what the capture kept of it, and both before the
    rest (h37-hostalloc32: the law held only that the leads come first, in any order)."""
    return [f"order: {where}: leading {a.id} listed above leading {b.id}, which the ranking puts first"
            for a, b in pairwise(lead) if _lead_kind(b) < _lead_kind(a)]


#: Findings about the capture itself or the allocator's own totals: they do not rest on the steps, so the steps'
#: confidence does not grade them (the rules stage's ``_ABOUT_THE_CAPTURE``, restated here as the checker's own).
_NOT_OF_THE_STEPS = ("capture_quality", "cold_start", "oom_snapshot", "memory_fragmentation")


def severity_problems(where: str, findings: list[Finding]) -> list[str]:
    """``severity``: low confidence in the steps is never critical; a grade is earned by the share of the step saved."""
    out = []
    warn, crit = T("severity.warning_min_saving") * 100, T("severity.critical_min_saving") * 100
    for f in findings:
        if f.severity == "critical" and f.confidence == "low" and (f.rule not in _NOT_OF_THE_STEPS or f.saving):
            out.append(f"severity: {where}: {f.id} is critical on low-confidence steps")
        if f.saving is None or f.severity not in ("critical", "warning"):
            continue
        floor = crit if f.severity == "critical" else warn
        if f.saving.percent_of_step < floor:
            out.append(f"severity: {where}: {f.id} is {f.severity} but saves {f.saving.percent_of_step:.2f}% of the "
                       f"step (under {floor:g}%)")
    return out


#: why a critical keeps its grade on a pass read whole (the rules' ``KEPT_ON_ONE_PASS``, in the checker's own words)
_KEPT_UNCUT = re.compile(r"no cut of steps changes it")


def uncut_problems(h: HostReport) -> list[str]:
    """``uncut`` (h37-lowconf): a critical on low-confidence steps depends on no step cut.  Where the steps are a guess
    (GPU bursts; the window read as one iteration from them, ``iteration_guess``), a time per step is a part of steps
    as guessed -- the saving and the step it is a share of alike -- whichever rule claims it, the capture's own rules
    too (kokkos_8361a6b: the cold start's "3.26 ms/step (40% of step)" CRITICAL on two steps cut from GPU bursts that
    span 16 ms of its 562 ms window).  Two criticals stand there: one that claims no time per step and measures the
    window (a finding about the capture itself or the allocator's totals), and one on a capture read whole as one pass
    because nothing repeats, whose per-step time is the pass's total, exact wherever a step could be cut -- and says
    so beside the steps' "low confidence" (hip_vector_add_mi300a: copies block 1.07 s of the 1.10 s pass)."""
    st = h.steps if isinstance(h.steps, dict) else {}
    if st.get("confidence") != "low":
        return []
    whole = st.get("source") == "whole_capture" and not st.get("iteration_guess")
    out = []
    for f in h.findings:
        if f.severity != "critical" or (f.saving is None and f.rule in _NOT_OF_THE_STEPS):
            continue
        if not whole:
            out.append(f"uncut: {h.host}: {f.id} is critical on steps cut from {st.get('source')} (low confidence)"
                       + (f", saving {f.saving.ms_per_step:.3g} ms of each guessed step" if f.saving else ""))
        elif f.saving is not None and not _KEPT_UNCUT.search(f.summary):
            out.append(f"uncut: {h.host}: {f.id} is critical on a pass read whole (low confidence) and does not say "
                       f"why it keeps its grade")
    return out


def every_fix_problems(where: str, findings: list[Finding], achievable: dict) -> list[str]:
    saving = [f for f in findings if f.severity != "ok" and f.saving is not None and f.saving.ms_per_step > 0]
    if not saving:
        return []
    if not achievable:
        return [f"every-fix: {where}: savings but no 'if every fix lands'"]
    missing = sorted({f.id for f in saving} - set(achievable.get("findings") or []))
    out = [f"every-fix: {where}: 'if every fix lands' leaves out {missing}"] if missing else []
    total = sum(f.saving.ms_per_step for f in saving if f.id in set(achievable.get("findings") or []))
    if abs(total - float(achievable.get("sum_of_savings_ms") or 0.0)) > 0.002 * max(1, len(saving)):
        out.append(f"every-fix: {where}: sum of savings {achievable.get('sum_of_savings_ms')} but they add to {total:.3f}")
    return out


def fix_once_problems(where: str, findings: list[Finding]) -> list[str]:
    """``fix-once``: a fix of the capture is printed under one finding about the capture; a later one refers to it
    (cold_a100_alexnet printed "Skip the first calls" under three findings, one of them "The capture is long")."""
    seen: dict[str, str] = {}
    out = []
    for f in findings:
        if f.rule not in _NOT_OF_THE_STEPS or f.severity == "ok":
            continue
        for a in f.actions:
            if a.text in seen and not a.text.startswith("The fix under "):
                out.append(f"fix-once: {where}: {f.id} repeats the fix of {seen[a.text]}: '{a.text[:50]}'")
            seen.setdefault(a.text, f.id)
    return out


def fix_given_problems(where: str, findings: list[Finding]) -> list[str]:
    """``fix-given``: every finding but the healthy verdict says what to change (a note of one-time costs outside the
    steps had none: pipit's MPI saxpy, a program advised in CUDA words, was left with a bare note)."""
    return [f"fix-given: {where}: {f.id} has no fix" for f in findings if f.severity != "ok" and not f.actions]


#: A window's label that claims a stretch of time: "... step 0 (19.0 ms)".
_CLAIMED_TIME = re.compile(r"\([\d.,]+ (?:us|ms|s)\)$")


def window_once_problems(where: str, findings: list[Finding]) -> list[str]:
    """``window-once``: two findings of a host never show the same trace window (label, step and times): one stretch
    said by two findings is a part said beside its whole, or a finding said twice (h37-review5: vit_a4000_avg_batch's
    unrecorded-idle warning and host_sync's unrecorded note both showed "unrecorded host time, step 0 (19.0 ms)",
    the note's own text saying 15.4 ms)."""
    seen: dict[tuple, str] = {}
    out = []
    for f in findings:
        for w in f.windows:
            if not _CLAIMED_TIME.search(w.label):
                continue  # a point shown (a memory peak "5.05 GiB at 710.6 ms"), no stretch of time claimed
            key = (w.label, w.step, w.gpu, round(w.start_ms, 3), round(w.end_ms, 3))
            if key in seen and seen[key] != f.id:
                out.append(f"window-once: {where}: {f.id} shows {seen[key]}'s window '{w.label}'")
            seen.setdefault(key, f.id)
    return out


def window_value_problems(where: str, h: HostReport) -> list[str]:
    """``one-value``: on a host that keeps one step, a finding's trace window claims the time its summary says of that
    step -- its per-step time in whichever wording the rule states it (:func:`said_per_step`) and the window's "label,
    step N (Z)" print one value (h37-left56: vit_a4000_avg_batch's copies "block the GPU for 25.0 ms of each 116.3 ms
    step" above the window "copies, step 0 (25.1 ms)": the summary read the copies' own exposed time, the window the
    ledger's copy category, which holds the memsets too)."""
    kept = int((h.capture or {}).get("steps_kept") or 0)
    if kept != 1:
        return _window_sum_problems(where, h, kept) + _bare_window_problems(where, h)
    out = _bare_window_problems(where, h)
    for f in h.findings:
        said = said_per_step(f.summary)
        if said is None:
            continue
        x, xu = said.group(1), said.group(2)
        for w in f.windows:
            claim = _WINDOW_CLAIM.search(w.label)
            if claim is None or w.gpu is not None:
                continue
            z, zu = claim.group(1), claim.group(2)
            a, b = _ms(x, xu), _ms(z, zu)
            ea, eb = _time_half_ulp(x) * _UNIT_MS[xu], _time_half_ulp(z) * _UNIT_MS[zu]
            # one value printed twice where its roundings share more than a point (25.0 and 25.1 share 25.05 only)
            if x + xu != z + zu and not (a - ea < b + eb - 1e-9 and b - eb < a + ea - 1e-9):
                out.append(f"one-value: {where}: {f.id} says '{said.group(0)}' and shows the window '{w.label}'")
    return out


#: the host-bound finding's own time: "P% of the Y step; for X of it (Q%)" (h37-ledger59: wild/profiler_wait_rtx5070ti's
#: "for 3.62 ms of it" under the window "host work, the pass (4.52 ms)", the profiler's buffer request in the window's)
_FOR_OF_IT = re.compile(r"\bfor " + _TIME + r" of it \(")
#: the time a finding grades per step, in every way the rules say it (h37-windows60: each rule's text and the
#: frameworks' and devices' word tables grepped): "X of each Y step" / "X of the Y pass", "P% of the Y step (X",
#: "(X per step)" / "(X in the step)", "for X of it (", "X of host work ... (P% of each Y step)", "X a step"
_FINDING_PER_STEP = (_OF_EACH, re.compile(r"% of (?:each|the) [\d.,]+ ?(?:us|µs|ms|s) [\w ]*?(?:step|pass) \(" + _TIME),
                     re.compile(r"\(" + _TIME + r" (?:per step|in the [\w ]+?)\)"), _FOR_OF_IT,
                     re.compile(_TIME + r" of [A-Za-z' ]{3,60}? \(\d+(?:\.\d+)?% of (?:each|the) "),
                     re.compile(_TIME + r" (?:a|per) (?:step|pass)\b(?! on average| summed| over all)"))


def _bare_window_problems(where: str, h: HostReport) -> list[str]:
    """``one-value``: a finding that states its time per step prints on each of its step windows the step's value of
    it, or says the capture has none ("(not measured per step)", ``rules.base.UNMEASURED``) -- a window naming its step
    alone dropped the number unsaid (h37-windows60: the small-grid kernels' "steps with the most kernel time, step 3",
    the syncs' "GPU idle, step 0", the unrecorded time's "unrecorded host time, the pass" where another finding took a
    part of it)."""
    return [f"one-value: {where}: {f.id} says '{said.group(0)}' and its window '{w.label}' claims no value and says "
            f"none is measured" for f in h.findings if (said := said_per_step(f.summary)) is not None
            for w in f.windows if w.gpu is None and _BARE_STEP.search(w.label)]


#: a step window naming its step alone: "label, step N" / "label, the pass", no value and no word of why
_BARE_STEP = re.compile(r", (?:step -?\d+|the pass|the step)$")


def said_per_step(summary: str) -> re.Match[str] | None:
    """The time a finding's ``summary`` says of each step, in any of its wordings (``_FINDING_PER_STEP``): the first
    stated, its headline -- later ones are its parts ("152.0 ms of each 321.3 ms step ... (152.0 ms a step, ...)")."""
    text = " ".join(summary.split())
    found = [m for m in (r.search(text) for r in _FINDING_PER_STEP) if m is not None]
    return min(found, key=lambda m: m.start(1)) if found else None


def _window_sum_problems(where: str, h: HostReport, kept: int) -> list[str]:
    """``one-value`` over several kept steps: the steps a finding's windows show are some of the kept steps, so the
    times their labels claim ("label, step N (Z)") add up to at most the finding's own time per step (its first "X
    of each Y step" / "X per step") times the kept steps -- no part exceeds its whole (h37-words3: d2d_v100's
    small-grid finding of 5.74 ms per step over 4 steps showed "kernels, step 1010 (90.2 ms)", every kernel's time)."""
    out = []
    for f in h.findings:
        said = said_per_step(f.summary)
        if said is None or not kept:
            continue
        # times, each printed to its unit's last digit: "24 us" is 23.5..24.5 us, no exact count (h37-zero12law)
        x = _ms(*said.group(1, 2)) + _time_half_ulp(said.group(1)) * _UNIT_MS[said.group(2)]
        shown = [(w.label, _WINDOW_CLAIM.search(w.label)) for w in f.windows if w.gpu is None]
        claims = [(label, m) for label, m in shown if m is not None]
        total = sum(_ms(*m.group(1, 2)) - _time_half_ulp(m.group(1)) * _UNIT_MS[m.group(2)] for _, m in claims)
        if claims and _over(total, x * kept):
            out.append(f"one-value: {where}: {f.id} says '{said.group(0)}' over {kept} steps and shows windows "
                       f"claiming {total:.3f} ms: {[label for label, _ in claims]}")
    return out


#: a window's claimed time on its step: "label, step N (Z ms)", or "label, the pass (Z ms)" on the one pass of an
#: unmarked capture (``rules.base.Ctx.step_name``)
_WINDOW_CLAIM = re.compile(r", (?:step -?\d+|the pass|the step) \(" + _TIME + r"\)$")


def claims_once_problems(where: str, findings: list[Finding], breakdown_ms: dict, noted: bool = True) -> list[str]:
    """``claims-once``: two findings whose savings recover the same ledger group and do not name each other in their
    overlap note claim together no more than the step's ledger holds there -- one stretch of a step is never claimed
    twice unsaid (h37-left52: host_sync's drained queue and step_gaps' unrecorded time were the same 3 ms).  With
    ``noted`` False an overlap note excuses nothing: for a case built so that no two causes share a stretch."""
    from tb_gpu_advisor.rules.savings import GROUPS

    if not breakdown_ms:
        return []
    per: dict[str, dict[str, float]] = {}
    for f in findings:
        if f.saving is None:
            continue
        for r in f.saving.recovers:
            per.setdefault(r["group"], {})
            per[r["group"]][f.id] = per[r["group"]].get(f.id, 0.0) + float(r["ms"])
    by_id = {f.id: f for f in findings}
    out = []
    for g, claims in per.items():
        held = sum(float(breakdown_ms.get(c) or 0.0) for c in GROUPS.get(g, ()))
        ids = sorted(claims)
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                said = noted and (b in (by_id[a].saving.overlaps or ()) or a in (by_id[b].saving.overlaps or ()))
                if not said and _over(claims[a] + claims[b], held):
                    out.append(f"claims-once: {where}: {a} and {b} recover {claims[a] + claims[b]:.3f} ms of {g} "
                               f"time together, unsaid as an overlap; the step holds {held:.3f} ms")
    return out


def profiled_loops(text: str) -> list[str]:
    """The step each profiled loop in ``text`` runs: the line before each ``prof.step()`` (its comment dropped), in a
    fix's code, a capture advice or a rendered report (code indented or fenced alike)."""
    lines = (text or "").splitlines()
    return [lines[i - 1].split("#")[0].strip() for i, line in enumerate(lines) if i and line.strip() == "prof.step()"]


def loop_once_problems(where: str, findings: list[Finding], advice: str = "") -> list[str]:
    """``loop-once``: every profiled loop a host's fixes and its job's capture advice (``job.capture_advice``, which
    the MCP server and the tab show) print runs the same step: one job, one loop (h37-review5: cold_a100_alexnet's
    cold-start fix looped ``run_one_step()`` while the few-passes and long-capture fixes of the same forward-pass job
    looped ``model(batch)``; h37-left43: its capture advice looped ``run_one_step()``, the MCP server's
    ``train_step(x, y)``)."""
    steps: dict[str, str] = {}
    for f in findings:
        for a in f.actions:
            for step in profiled_loops(a.snippet or ""):
                steps.setdefault(step, f.id)
    for step in profiled_loops(advice):
        steps.setdefault(step, "the job's capture advice")
    if len(steps) < 2:
        return []
    return [f"loop-once: {where}: the fixes loop {' and '.join(sorted(steps))} ({', '.join(sorted(set(steps.values())))})"]


def surface_loop_problems(where: str, text: str, report: Report) -> list[str]:
    """``loop-once`` on a surface that shows a report whole (the text report, the MCP server's capture advice, the
    tab's payload as text): where every host's fixes and advice loop one step, the surface prints no other."""
    own: set[str] = set()
    for h in report.hosts:
        own.update(profiled_loops((h.job or {}).get("capture_advice") or ""))
        own.update(s for f in h.findings for a in f.actions for s in profiled_loops(a.snippet or ""))
    shown = set(profiled_loops(text))
    if len(own) != 1 or shown <= own:
        return []
    return [f"loop-once: {where}: prints {' and '.join(sorted(shown - own))} beside the job's {own.pop()}"]


def agree_problems(report: Report) -> list[str]:
    out = []
    listed = [f for f in report.findings if f.severity != "ok"]
    bad = [f for f in listed if f.severity in ("critical", "warning")]
    m = re.search(r" — top: (.*)$", report.verdict or "")
    if bad and m and not m.group(1).removeprefix("a note, ").startswith(listed[0].title):
        out.append(f"agree: verdict top '{m.group(1)[:60]}' is not the list's first finding '{listed[0].title[:60]}'")
    analysed = [h for h in report.hosts if h.error is None]
    if bad and m and len(analysed) > 1:  # a top found on part of the session says where (h37-left43)
        top = listed[0]
        part = top.host or (f"{len(set(top.hosts))} of {len(analysed)} hosts" if 0 < len(set(top.hosts)) < len(analysed)
                            else None)
        if part and f"(on {part}" not in m.group(1):
            out.append(f"agree: verdict top '{m.group(1)[:60]}' does not say it was found on {part} alone")
    warmup = [f for f in report.findings if f.rule == "cold_start" and f.severity in ("critical", "warning")]
    from tb_gpu_advisor.serve.mcp_server import capture_advice_text

    advice = capture_advice_text(report)
    if warmup and "can be trusted" in advice:
        out.append(f"agree: capture advice trusts a capture whose finding {warmup[0].id} says it recorded warm-up")
    # h37-review13: per-step averages rest on the kept steps; the too-few-steps check's bound (capture.min_steps) is
    # what makes them trustworthy, whatever grade that check gives a serving step or a forward pass
    few = {h.host: (h.steps or {}).get("count") or 0 for h in report.hosts if h.error is None}
    few = {k: v for k, v in few.items() if v < T("capture.min_steps")}
    if few and "can be trusted for per-step averages" in advice:
        host, n = next(iter(few.items()))
        out.append(f"agree: capture advice trusts per-step averages where {host} kept {n} steps "
                   f"(fewer than {T('capture.min_steps'):g})")
    return out


def _count_text(where: str, text: str, h: HostReport | None = None) -> list[str]:
    """``whole-count`` in words: a count that is not whole says it is a mean; on a host of one kept step it can be no
    mean over steps, so it names the GPUs it is a mean over (``per-rank``, h37-words3: v100_bert's two replicas read
    "424.5 TF ops in the step" and "292.5 calls in the step on average")."""
    out = []
    one_step = h is not None and isinstance(h.steps, dict) and h.steps.get("count") == 1
    ranks = _ranks(h) if h is not None else 1
    for sentence in re.split(r"(?<=[.;])\s", text):
        for m in _FRACTIONAL_COUNT.finditer(sentence):
            if not _says_average(sentence):
                out.append(f"whole-count: {where}: '{m.group(0)}' is not a whole number and does not say it is "
                           "an average")
            elif one_step and not any(int(g) == ranks for g in _OVER_GPUS.findall(sentence[m.start():])):
                out.append(f"whole-count: {where}: '{m.group(0)}' in a capture of one step is a mean over its "
                           f"{ranks} GPUs and does not say so")
    return out


#: a lone 1 before a plural: any word ending in s, save the units and the nouns whose singular ends in s (class, bus,
#: analysis) -- "1 ms", "1 class" are right, "1 calls", "1 GPUs" are not -- also after up to two lower-case words that
#: qualify it ("1 first-time runtime calls", "1 compilation spans"), a verb left out ("1 step was"); a 1 that is a
#: name's number is no count ("GPU 1 reserves", "rank 1 waits": wild/compiled_v100_param_allreduce's rank 1)
_ONE_PLURAL = re.compile(r"(?<![^\s(])(?<!GPU )(?<!rank )(?<!device )(?<!stream )(?<!Stream )(?<!step )(?<!Step )1 (?!(?:ms|us|µs|ns|ps|s)\b)((?:[a-z][\w/-]*[^\W_] ){0,2}(?!(?:was|has|does|goes)\b)[A-Za-z][\w-]*?[^sui'’]s)\b")  # a possessive ("1 step before GPU1's capture") is no plural
_HEDGED_PLURAL = re.compile(r"\b[A-Za-z]+\((?:s|es)\)")
_RANGE = re.compile(r"(?<![\d.,])(\d[\d,]*(?:\.\d+)?) ?(us|µs|ms|s|GiB|MiB|%)? ?[-–] ?(\d[\d,]*(?:\.\d+)?) ?(us|µs|ms|s|GiB|MiB|%)")
_FACTOR = re.compile(r"(?<![\d.,])(\d[\d,]*\.\d+)x\b")
_BIG_SIZE = re.compile(r"(?<![\d.,])\d,?\d{3}(?:\.\d+)? (?:KiB|MiB|GiB)\b")
#: a binary unit spelt otherwise than IEC's, beside the listing's "KiB" (h37-review14)
_NOT_IEC = re.compile(r"(?<![\d.,])\d[\d,]*(?:\.\d+)? kiB\b")
#: a lone 1 before a quoted name and a plural noun (h37-review14: "1 `step[DECODE bs=32]` host events")
_ONE_NAMED_PLURAL = re.compile(r"(?<![\d.,])1 `[^`]+` (?:[a-z]+ )?(?:events|ranges|calls|spans|ops|kernels)\b")
#: a count printed to hundredths (h37-review14): "0.877 matmul/conv kernels ran on average" -- counts per step are
#: printed to a tenth (``rules.base.Ctx.count_per_step``)
_FINE_COUNT = re.compile(r"(?<![\d.,])\d[\d,]*\.\d{2,} (?!(?:ms|us|µs|ns|s|B|KiB|MiB|GiB|kB|MB|GB|x)\b)"
                         r"(?:[a-z/-]+ ){0,2}(?:kernels|calls|launches|ops|copies|syncs|events)\b")
#: a time under a millisecond in ms to three decimals and more (h37-review14: "13.8 ms typical pause, against 0.0053 ms
#: between launches"): ``common.fmt.ms`` prints it in us, as every other time of the report
_FINE_MS = re.compile(r"(?<![\d.,])0\.\d{3,} ms\b")
#: a share of "it" / "them" -- the thing just named -- above all of it (h37-review14: rocprof_aiter_mi355x's gap
#: "outside every step's window (123.6% of it)")
_SHARE_OF_IT = re.compile(r"(?<![\d.,])(\d[\d,]*(?:\.\d+)?)% of (?:it|them)\b")
#: "per step" twice in one clause (h37-review14): "5 calls per step taking 91 us per step" -- the count said it
_PER_STEP_TWICE = re.compile(r"\b(per step|in the step)\b(?:(?! [A-Z])[^,;.()]){1,80}?\b\1\b")


def words_problems(where: str, text: str) -> list[str]:
    """``words``: a count of one with a plural noun, a hedged plural, a range whose ends print equal, a factor printed
    to more than three significant digits."""
    out = [f"words: {where}: '{m.group(0)}' (one takes the singular)" for m in _ONE_PLURAL.finditer(text)]
    out += [f"words: {where}: '{m.group(0)}' (a hedged plural)" for m in _HEDGED_PLURAL.finditer(text)]
    for m in _RANGE.finditer(text):
        a, ua, b, ub = m.groups()
        if a == b and (ua or ub) == ub:
            out.append(f"words: {where}: '{m.group(0)}' (a range of equal ends)")
    for m in _FACTOR.finditer(text):
        if len(m.group(1).replace(",", "").replace(".", "").lstrip("0")) > 3:
            out.append(f"words: {where}: '{m.group(0)}' (a factor printed to more digits than an estimate holds)")
    # a size in binary units has three significant digits: 1,000 of a unit is the next one's 0.98 (h37-review11:
    # snapshot_windows_gpt's "1001 MiB is held across steps" beside "11.1 GiB", "13.0 GiB")
    out += [f"words: {where}: '{m.group(0)}' (a size past 999 of its unit)" for m in _BIG_SIZE.finditer(text)]
    out += [f"words: {where}: '{m.group(0)}' (IEC's binary unit is KiB, as the listing says)" for m in _NOT_IEC.finditer(text)]
    out += [f"words: {where}: '{m.group(0)}' (a count printed to hundredths)" for m in _FINE_COUNT.finditer(text)]
    out += [f"words: {where}: '{m.group(0)}' (one takes the singular)" for m in _ONE_NAMED_PLURAL.finditer(text)]
    out += [f"words: {where}: '{m.group(0)}' (a time under 1 ms is printed in us)" for m in _FINE_MS.finditer(text)]
    out += [f"part<=whole: {where}: '{m.group(0)}' (a part above its whole)" for m in _SHARE_OF_IT.finditer(text)
            if float(m.group(1).replace(",", "")) > 100.0]
    out += [f"words: {where}: '{m.group(0)}' (said twice in one clause)"
            for m in _PER_STEP_TWICE.finditer(" ".join(text.split()))]
    return out


def _strings(v: Any) -> Iterable[str]:
    """Every string inside a JSON-like value."""
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from _strings(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _strings(x)


#: a part of "each" step or a count "per step" -- words of a mean over several steps (a time or a count after "per
#: step" / "a step", "of each 20.6 ms step"): where the host kept one step they mean that one step
_EACH_STEP = re.compile(r"\beach [\d.,]+ ?(?:ms|us|µs|s) [\w -]{0,20}?(?:step|pass)\b|\bper step\b"
                        r"|\b\d[\d.,]* ?(?:ms|us|µs|s) a step\b|\bin 1 step\b")


def one_step_problems(h: HostReport, findings: list[Finding] | None = None, where: str = "") -> list[str]:
    """``one-step``: a host that kept one step says "of the 20.6 ms step", never "of each 20.6 ms step" or "per
    step", in its findings' own words (title, summary, saving's assumption; a fix's text is advice for the next
    capture's loop, not this one's numbers) -- ``rules.base.Ctx.of_step`` is the phrase's one home (h37-left60:
    gpt2_b200_one_step read "8 kernels ... 116 us per step", sglang_b300_decode "11.7% of each 8.72 ms step").
    ``findings``: the session's own (job rules: ``metrics.job.JobView.of_step``) where every host kept one step."""
    steps = h.steps if isinstance(h.steps, dict) else {}
    if steps.get("count") != 1:
        return []
    out = []
    for f in h.findings if findings is None else findings:
        text = " ".join([f.title, f.summary, f.saving.assumption if f.saving else ""])
        out += [f"one-step: {where}{f.id}: '{m.group(0)}' in a capture of one step" for m in _EACH_STEP.finditer(text)]
    return out


#: the step a number is of, named as one of the job's own: "of the 36.6 ms step", "11.8 ms in the step", "in the
#: forward pass", "Too few engine steps" (not the step as a notion: "moved out of the step")
_JOB_STEP = re.compile(r"\b(?:of|in) (?:the|each) [\d.,]+ ?(?:us|µs|ms|s) (?:engine step|forward pass|step)\b"
                       r"|\b(?:us|µs|ms|s) (?:in|of) the step\b|\bin the (?:engine step|forward pass)\b"
                       r"|\bToo few (?:steps|forward passes|engine steps)\b")


def unmarked_problems(h: HostReport) -> list[str]:
    """``one-step`` on a capture that marks no step (``steps.types.UNMARKED_SOURCES``: the whole window, or the one
    pass it was read as, which may hold several calls of the model): its findings call that step "the pass", never one
    of the job's steps or forward passes, nor count too few of them (h37-words3: torch_fp16_inference_unmarked's ten
    forward calls read "of the 36.6 ms step" and "Only 1 forward pass was kept")."""
    from tb_gpu_advisor.steps.types import UNMARKED_SOURCES

    if not isinstance(h.steps, dict) or h.steps.get("source") not in UNMARKED_SOURCES:
        return []
    out = []
    for f in h.findings:
        text = " ".join([f.title, f.summary, f.saving.assumption if f.saving else ""])
        out += [f"one-step: {h.host}: {f.id}: '{m.group(0)}' where no step is marked (the capture is read as one pass)"
                for m in _JOB_STEP.finditer(text)]
    return out


def table_scope_problems(report: Report) -> list[str]:
    """``one-step`` over the job's tables: where every host kept one step, a table of the job (the ranks and the
    collectives views, a session finding's evidence, a host's collectives) says what its numbers are -- that step's,
    no "mean per step" nor "per step" -- unless its rows are the steps themselves (first column "step")
    (h37-words3: the lone V100 BERT's "GPUs (mean per step)", the FSDP pair's "Collectives per step (median rank)")."""
    hosts = [h for h in report.hosts if h.error is None]
    if not hosts or not all(isinstance(h.steps, dict) and h.steps.get("count") == 1 for h in hosts):
        return []
    tables = [("session", t) for t in (report.ranks, report.collectives) if t is not None]
    tables += [(f.id, t) for f in report.findings if f.host is None for t in f.evidence]
    tables += [(h.host, h.communication) for h in hosts if h.communication is not None]
    return [f"one-step: {where}: table '{t.title}' in a capture of one step" for where, t in tables
            if re.search(r"\bper step\b", t.title) and "step" not in t.columns]


#: "the others" / "the other 1 GPU": a plural beside one other (h37-review10: ddp_overlap_rtx3090's two GPUs read "the
#: others spend 33.6 ms more"; rank_straggler composed "The other 1 rank wait")
_THE_OTHERS = re.compile(r"\b[Tt]he others\b")
_OTHER_ONE = re.compile(r"\b[Tt]he other 1 \w+")


def others_problems(where: str, peers: int, findings: list[Finding]) -> list[str]:
    """``the-others``: beside ``peers`` GPUs or ranks in all, a finding's words about "the others" are of ``peers - 1``
    of them: one other is "the other GPU", never "the others" nor "the other 1 GPU"."""
    out = []
    for f in findings:
        text = " ".join([f.title, f.summary, f.saving.assumption if f.saving else ""])
        out += [f"the-others: {where}: {f.id}: '{m.group(0)}' beside one other" for m in _OTHER_ONE.finditer(text)]
        if peers == 2:
            out += [f"the-others: {where}: {f.id}: '{m.group(0)}' beside one other" for m in _THE_OTHERS.finditer(text)]
    return out


def _words(h: HostReport | None, findings: list[Finding]) -> list[str]:
    out = []
    for f in findings:
        text = " ".join([f.title, f.summary] + [a.text for a in f.actions] + [f.saving.assumption if f.saving else ""])
        out += words_problems(f.id, text)
    if h is not None:
        out += words_problems(f"{h.host} job", " ".join(_strings(h.job)))
        # the cards' words too (h37-review14: the MFU card's "0.877 matmul/conv kernels ran on average")
        out += words_problems(f"{h.host} cards", " ".join(t for m in h.headline for t in _strings(vars(m))))
    return out


#: a step said on a one-pass host (h37-onepass2): "step", "steps", "per step", "per-step", "step-time"
#: (not after a dot: a program's own dotted name, ``Optimizer.step#SGD.step``, DeepSpeed's
#: ``DeepSpeedZeroOptimizer_Stage3.step`` quoted where its host waited, is its word, not the report's)
_A_STEP = re.compile(r"(?<!\.)\b(?:per[- ])?steps?\b", re.I)
#: the step words a one-pass report needs, each removed before :data:`_A_STEP` reads the text, with why:
#: - that the capture holds no step ("no step markers found", "No step is marked", "no steady step is left", "not of
#:   a guessed step", "no cut of steps", "no step marker bounds the host time before a step's first op"): the reading
#:   of the window says what it lacks;
#: - what its numbers are ("every per-step number is the pass's total", "per-step numbers are capture totals"): the
#:   note that maps the per-step fields of the schema to the pass;
#: - advice for the next capture ("capture a few steady-state steps", "keep it on several steps", "about ten seconds
#:   of steady-state steps"): steps the user is asked to record, not ones this capture holds;
#: - "only 1 step kept": the capture note's count, the step reading's own word;
#: - "optimizer step": the name of the update call (``optimizer.step()``), not a step of the loop;
#: - the fix a saving assumes, in its framework's words for the program's loop it changes ("values are read every N
#:   steps, not every step", copies "kept on the GPU between steps"): advice, as a fix's text is.
_NEEDED_STEP = re.compile(
    r"\b[Nn]o (?:\w+ )?steps?\b(?: marker\b[^.;:]*?\ba step's\b)?|\bnot of a (?:\w+ )?step\b|\bno cut of steps\b"
    r"|\bper-step numbers? (?:is|are)\b|\b(?:a few|several|seconds of) (?:steady-state |steady )?steps\b"
    r"|\bonly 1 step kept\b|\boptimizer steps?\b|\bevery N steps(?:, not every step)?|\bon the GPU between steps\b")


def _one_pass_texts(h: HostReport) -> Iterable[tuple[str, str]]:
    """(where, text) of what a one-pass host's report says in its own words: its tables' titles, each finding's title,
    summary, saving's assumption, evidence titles and metric, each card's label, meaning and words.  Not read: a fix's
    text (advice for the next capture's loop: "call prof.step() once per step"), a threshold's source (a stock tool's
    words, quoted), the tables' columns ("ms/step": the schema's keys, read by name by the tab's charts), the capture
    and steps notes and the capture-quality finding's summary (the step reading's account of the steps it did not
    find, and how to record them: its subject is the steps)."""
    for name in ("kernels", "ops", "memcpy", "roofline", "communication"):
        t = getattr(h, name)
        if t is not None:
            yield f"{name} table", t.title
    for f in h.findings:
        yield f"{f.id} title", f.title
        yield f"{f.id} summary", f.summary if f.rule != "capture_quality" else ""
        yield f"{f.id} assumption", f.saving.assumption if f.saving else ""
        yield from ((f"{f.id} evidence", t.title) for t in f.evidence)
        if f.metric is not None and f.metric.id != "steps_kept":  # the count of steps the capture-quality finding grades
            yield f"{f.id} metric", f"{f.metric.label}; {f.metric.meaning}"
    for m in h.headline:
        said = m.detail.values() if isinstance(m.detail, dict) else ()
        yield f"{m.id} card", "; ".join([m.label, m.meaning or "", *(v for v in said if isinstance(v, str))])


def one_pass_words_problems(h: HostReport) -> list[str]:
    """``one-pass-words`` (h37-onepass2): a host read as one pass (its one kept step is the unmarked window or pass,
    ``steps.types.UNMARKED_SOURCES``) says "the pass", never "step", "steps" or "per step", in its tables' titles,
    findings and cards (:func:`_one_pass_texts`), but for the words :data:`_NEEDED_STEP` allows: on main the kernel
    table read "Top GPU kernels (kept steps, all GPUs)", the copies "Memory copies per step" and the MFU card "no GPU
    kernels in kept steps" beside findings saying "of the 28.5 ms pass"."""
    from tb_gpu_advisor.steps.types import UNMARKED_SOURCES

    steps = h.steps if isinstance(h.steps, dict) else {}
    if steps.get("count") != 1 or steps.get("source") not in UNMARKED_SOURCES:
        return []
    return [f"one-pass-words: {h.host}: {where}: '...{said[max(0, m.start() - 50):m.end() + 20]}...'"
            for where, text in _one_pass_texts(h) for said in [_NEEDED_STEP.sub("", text or "")]
            for m in _A_STEP.finditer(said)]


# --------------------------------------------------------------------------- entry points


def _tables(h: HostReport) -> Iterable[tuple[str, Table]]:
    for name in ("memcpy", "roofline", "communication"):
        t = getattr(h, name)
        if t is not None:
            yield f"{h.host} {name}", t
    for f in h.findings:
        for t in f.evidence:
            yield f.id, t


def every_fix_within_step(where: str, achievable: dict, breakdown_ms: dict | None = None) -> list[str]:
    """"If every fix lands" is a part of the step: what it recovers is at most the step (and, per breakdown group, at
    most what the step's ledger holds there), and the step it promises lies between 0 and the step."""
    from tb_gpu_advisor.rules.savings import GROUPS

    step = (achievable or {}).get("step_ms")
    if not step:
        return []
    out = []
    rec, left = float(achievable.get("recoverable_ms") or 0.0), achievable.get("achievable_step_ms")
    if _over(rec, step):
        out.append(f"part<=whole: {where}: 'if every fix lands' recovers {rec:.3f} ms of a {step:.3f} ms step")
    if left is not None and (left < -_ABS_MS or _over(left, step) or left < step - rec - _ABS_MS - _REL * step):
        out.append(f"part<=whole: {where}: 'if every fix lands' promises {left:.3f} ms from a {step:.3f} ms step "
                   f"recovering {rec:.3f} ms")
    for g, v in (achievable.get("by_group") or {}).items() if breakdown_ms else ():
        held = sum(float(breakdown_ms.get(c) or 0.0) for c in GROUPS.get(g, ()))
        if _over(float(v), held):
            out.append(f"part<=whole: {where}: 'if every fix lands' recovers {v:.3f} ms of {g} time, the step holds "
                       f"{held:.3f} ms")
    return out


def every_fix_above_floor(where: str, achievable: dict, breakdown_ms: dict | None, findings: list[Finding],
                          floor_ms: float | None = None) -> list[str]:
    """``peak-floor``: "if every fix lands" never takes the step's kernels below the time their work of known FLOPs and
    bytes needs at the GPU's peaks: the union of the claims on the pools whose fix keeps the work's precision
    (``savings.FLOORED_POOLS``) is at most the step's kernel time (``breakdown_ms.device_compute``) less that floor
    (``floor_ms``, else the account's ``peak_floor_ms``).  One finding's claim was capped so (h37-floor34); two on two
    such pools added up past it (h37-floor35: small_grid's GEMV claim beside xla_not_used's fusion of element-wise
    kernels promised 3.13 ms of the 2.07 ms above a decode's floor)."""
    from tb_gpu_advisor.rules.savings import FLOORED_POOLS

    floor = floor_ms if floor_ms is not None else (achievable or {}).get("peak_floor_ms")
    if floor is None or not breakdown_ms or not (achievable or {}).get("step_ms"):
        return []
    ids = set(achievable.get("findings") or [])
    best: dict[str, float] = {}
    for f in findings:
        if f.id in ids and f.saving is not None:
            for r in f.saving.recovers:
                if r["group"] == "compute" and r["pool"] not in FLOORED_POOLS:
                    best[r["pool"]] = max(best.get(r["pool"], 0.0), float(r["ms"]))
    above = max(0.0, float(breakdown_ms.get("device_compute") or 0.0) - float(floor))
    floored = float((achievable.get("by_group") or {}).get("compute") or 0.0) - sum(best.values())
    if _over(floored, above):
        return [f"peak-floor: {where}: 'if every fix lands' recovers {floored:.3f} ms of kernel time that keeps its "
                f"precision, the step's kernels above the {float(floor):.3f} ms their work needs at the GPU's peaks "
                f"{above:.3f} ms"]
    return []


def own_floor_problems(where: str, f: Finding) -> list[str]:
    """``own-floor``: the claims of ``f`` on the pools whose fix keeps the work's precision
    (``savings.FLOORED_POOLS``) add up to at most its metric's ``above_floor_ms_per_step`` -- its own kernels' time
    above their peaks' floor -- where it says one (h37-pool36)."""
    from tb_gpu_advisor.rules.savings import FLOORED_POOLS

    above = (f.metric.detail or {}).get("above_floor_ms_per_step") if f.metric is not None else None
    if above is None or f.saving is None:
        return []
    claimed = sum(float(r["ms"]) for r in f.saving.recovers if r["group"] == "compute" and r["pool"] in FLOORED_POOLS)
    if _over(claimed, float(above)):
        return [f"own-floor: {where}: {f.id} claims {claimed:.3f} ms of kernel time, its own kernels' time above "
                f"their peaks' floor {float(above):.3f} ms"]
    return []


def _detail_parts(f: Finding, step: float | None) -> list[str]:
    """A finding's per-step figures (its metric's ``..._ms_per_step`` details) are per GPU: at most the step."""
    if not step or f.metric is None:
        return []
    return [f"part<=whole: {f.id}: {k} {v:.3f} ms in a {step:.3f} ms step per GPU"
            for k, v in (f.metric.detail or {}).items()
            if k.endswith("ms_per_step") and isinstance(v, (int, float)) and not isinstance(v, bool) and _over(v, step)]


_GAP_SAID = re.compile(r"idle " + _TIME + r" between steps on average.*?% of the " + _TIME +
                       r"(?: step| from one step's start to the next \((?:the mean step is|the steps a gap follows "
                       r"average) " + _TIME + r")")


_GAP_MAX_SAID = re.compile(r"idle " + _TIME + r" between steps on average \(max " + _TIME + r"\)")


def gap_max_problems(where: str, f: Finding) -> list[str]:
    """``average<=max``: a mean gap is at most its own maximum, in words and in the detail (h37-gapsum: one kept
    step between two dropped ones read "idle 62 us between steps on average (max 40 us)", the mean per step beside
    the longest single gap)."""
    out = []
    said = _GAP_MAX_SAID.search(" ".join(f.summary.split()))
    if said and _over(_ms(*said.group(1, 2)) - _time_half_ulp(said.group(1)) * _UNIT_MS[said.group(2)],
                      _ms(*said.group(3, 4)) + _time_half_ulp(said.group(3)) * _UNIT_MS[said.group(4)]):
        out.append(f"average<=max: {where}: {f.id}: a mean gap of {said.group(1)} {said.group(2)} over its maximum "
                   f"{said.group(3)} {said.group(4)}")
    d = (f.metric.detail if f.metric else None) or {}
    avg, most = d.get("avg_gap_ms"), d.get("max_gap_ms")
    if avg is not None and most is not None and _over(float(avg), float(most)):
        out.append(f"average<=max: {where}: {f.id}: detail avg_gap_ms {avg} over max_gap_ms {most}")
    return out


def launcher_part_problems(where: str, h: HostReport) -> list[str]:
    """``launcher<=unrecorded``: each finding's ``launcher_ms`` within its own unrecorded whole, and the gaps' part
    within the unrecorded-idle finding's launcher time where both are said."""
    out, parts = [], {}
    for f in h.findings:
        d = (f.metric.detail if f.metric else None) or {}
        part = d.get("launcher_ms")
        if part is None:
            continue
        whole = d.get("unexplained_ms", d.get("unrecorded_ms"))
        parts[f.rule] = float(part)
        if whole is None or _over(float(part), float(whole)):
            out.append(f"launcher<=unrecorded: {where}: {f.id}: launcher_ms {part} over its unrecorded whole {whole}")
    if "step_gaps" in parts and "unexplained_idle" in parts and _over(parts["step_gaps"], parts["unexplained_idle"]):
        out.append(f"launcher<=unrecorded: {where}: the gaps' launcher_ms {parts['step_gaps']} over the launcher's "
                   f"{parts['unexplained_idle']}")
    return out


def period_problems(where: str, h: HostReport) -> list[str]:
    """``period``: the gaps fit the period they split, their in-step part the step; step rows never overlap; a mean
    gap is at most its maximum (:func:`gap_max_problems`)."""
    out = []
    for f in h.findings:
        if f.rule != "step_gaps":
            continue
        out += gap_max_problems(where, f)
        said = _GAP_SAID.search(" ".join(f.summary.split()))
        if not said:
            continue
        gap, whole = _ms(*said.group(1, 2)), _ms(*said.group(3, 4))
        step = _ms(*said.group(5, 6)) if said.group(5) else whole
        outside = float(((f.metric.detail if f.metric else None) or {}).get("outside_steps_ms") or 0.0)
        slack = _time_half_ulp(said.group(1)) * _UNIT_MS[said.group(2)]
        if _over(gap - slack, whole + _time_half_ulp(said.group(3)) * _UNIT_MS[said.group(4)]):
            out.append(f"period: {where}: {f.id}: a mean gap of {gap:.3f} ms in a {whole:.3f} ms period")
        if _over(gap - outside - slack, step + (_time_half_ulp(said.group(5)) * _UNIT_MS[said.group(6)] if said.group(5)
                                                  else 0.0)):
            out.append(f"period: {where}: {f.id}: {gap - outside:.3f} ms of the mean gap lies in the steps, over the "
                       f"{step:.3f} ms mean step")
    rows: dict = {}
    for r in h.step_rows or []:
        rows.setdefault(r.gpu, []).append(r)
    for gpu, rs in rows.items():
        rs = sorted(rs, key=lambda r: r.start_ms)
        for a, b in pairwise(rs):
            if a.start_ms + a.step_ms > b.start_ms + 0.005 * a.step_ms + _ABS_MS:
                out.append(f"period: {where}: step {a.step}{'' if gpu is None else f' GPU{gpu}'} ends at "
                           f"{a.start_ms + a.step_ms:.3f} ms, after step {b.step} starts at {b.start_ms:.3f} ms")
    return out


_KERNELS_PER_STEP = re.compile(r"(?<![\d.,])(\d[\d,]*(?:\.\d+)?) (?:small )?kernels per step")


def gpu_count_problems(where: str, h: HostReport) -> list[str]:
    """``per-gpu``: a count of kernels "per step" is one GPU's, as the step it is read beside: at most the most kernels
    one GPU of the host ran a step, its collectives' included (h37-review8: v100_bert's launch-bound finding read
    "1,086 of 1,330 kernels per step" in the 20.6 ms step of one GPU, where each of its two GPUs ran 665)."""
    steps = int((h.steps or {}).get("count") or 0)
    per_gpu = [g.kernel_count / steps + float(g.collective_calls_per_step or 0.0) for g in h.gpus
               if steps and g.kernel_count]
    if len(per_gpu) < 2:
        return []  # one GPU: its count is the host's
    most = max(per_gpu)
    out = []
    for f in h.findings:
        for m in _KERNELS_PER_STEP.finditer(" ".join(_finding_text(f).split())):
            if float(m.group(1).replace(",", "")) > most * (1 + _REL) + 0.5:
                out.append(f"per-gpu: {where}: {f.id}: '{m.group(0)}', where a GPU runs at most {most:,.1f} a step")
    return out


_NAMED_RANGES = re.compile(r"lies in the program's own ranges (.*?) (?:a step|in the (?:step|forward pass|engine step|pass))\b")
_RANGE_PART = re.compile(r"`[^`]*` " + _TIME)


def _claimed_ms(f: Finding) -> float | None:
    """The time a finding claims of the step's ledger, per step, where it names ranges holding it: the host-bound
    finding's recovered host time (its ``host_own`` pool), the launch-bound one's wait (``launch_wait_ms``)."""
    if f.rule == "launch_bound" and f.metric is not None:
        v = (f.metric.detail or {}).get("launch_wait_ms")
        return float(v) if isinstance(v, (int, float)) else None
    if f.saving is not None:
        own = [float(r["ms"]) for r in f.saving.recovers if r.get("pool") == "host_own"]
        return sum(own) if own else None
    return None


def ranges_within_claim(where: str, f: Finding) -> list[str]:
    """``ranges<=claim``: the ranges a finding names add up to at most its own time (printed rounding aside)."""
    said = _NAMED_RANGES.search(" ".join(f.summary.split()))
    claim = _claimed_ms(f) if said else None
    if claim is None:
        return []
    parts = [(m.group(1), m.group(2)) for m in _RANGE_PART.finditer(said.group(1))]
    low = sum(_ms(n, u) - _time_half_ulp(n) * _UNIT_MS[u] for n, u in parts)
    return ([f"ranges<=claim: {where}: ranges '{said.group(1)[:100]}' add up to {low:.3f} ms, over the finding's "
             f"{claim:.3f} ms"] if _over(low, claim) else [])


#: The input wait in the pipeline's own events, as its finding names them (h37-forms10in, h37-forms10num): the clause
#: after "the input pipeline's own time: ", up to the next clause (", over 3 steps", "; all of it ...").
_INPUT_ACCOUNT = re.compile(r"the input pipeline's own time: ((?:`[^`]*`|[^`;])*?)(?=, over |; |$)")
#: The rest of the parts named together: the program's smaller ranges, or the pipeline's own functions' smaller ops
#: ("the ops of tf.data's own functions ... (`GatherV2:GatherV2` 2.42 ms, other ops 68 us)", h37-xla64).
_OTHER_RANGES = re.compile(r"other (?:ranges|ops) " + _TIME)
#: A part of the input wait as the finding states it: "(9.43 ms a step, 38.9% of the step)" (h37-forms10num).
_INPUT_PART = re.compile(r"\(" + _TIME + r" (?:a step|in the [a-z ]+?), \d+(?:\.\d+)?% of the [a-z ]+?\)")
#: The batch's transfer to the device the ledger books beside the pipeline's events.
_INPUT_PUT = re.compile(r"the batch's transfer to the device \(" + _TIME + r"\)")
#: Whose first op or launch the input time runs up to: "each step's", or the one step's in the job's word ("the
#: pass's", "the forward pass's": ``rules.input_bound._each_step``, h37-probe47p).
_INPUT_OWNER = r"(?:each step|the [a-z ]+?)'s"
#: The input wait in the host time before each step's first op, standing for an untraced loader.
_INPUT_LEAD = re.compile(r"the host time (?:before " + _INPUT_OWNER + r" first op|from " + _INPUT_OWNER + r" start to its "
                         r"batch's put to the device) (\([^)]*\)): the capture records no input pipeline event")
#: The batch's transfer said beside the untraced lead, a part of the same account (h37-tiny37: real-h100-jax
#: ``input_bound``, 10.1 ms of lead and "4.76 ms of the wait (32.0%) the batch's transfer to the device").
_LEAD_PUT = re.compile(r"(?:all of it \(" + _TIME + r"\)|" + _TIME + r" of the wait \(\d+(?:\.\d+)?%\)) the batch's "
                       r"transfer to the device")
#: The whole wait as the batch's transfer, with no lead beside it (h37-tiny37: real-h100-jax ``implicit_numpy_input``,
#: "all of it (2.49 ms) the batch's transfer to the device"): the transfer is then the whole account.
_WHOLE_PUT = re.compile(r"all of it \(" + _TIME + r"\) the batch's transfer to the device")
#: The host's own ops or the program's own frames holding most of the input wait (each a part, not the whole account).
_INPUT_HELD = re.compile(r"(?:the host's own (?:ops|Python calls|ops and Python calls) before "
                         + _INPUT_OWNER + r" first launch|held by the program's own "
                         r"input preparation): ((?:`[^`]*` " + _TIME + r"(?:, )?)+)")


def _input_parts(text: str) -> tuple[list[tuple[str, str]], bool, str] | None:
    """The parts of the input wait its finding names (number, unit), whether they are its whole account (the
    pipeline's ranges, event and transfer, or the untraced lead; the host's ops and frames name only most of it) and
    the words they were read from; None where it names none."""
    said = _INPUT_ACCOUNT.search(text)
    if said is not None:
        c = said.group(1)
        parts = [(m.group(1), m.group(2)) for r in (_RANGE_PART, _OTHER_RANGES, _INPUT_PART, _INPUT_PUT)
                 for m in r.finditer(c)]
        return parts, True, said.group(0)
    said = _INPUT_LEAD.search(text)
    if said is not None:
        put = [(m.group(1) or m.group(3), m.group(2) or m.group(4)) for m in _LEAD_PUT.finditer(text)]
        return [(m.group(1), m.group(2)) for m in _INPUT_PART.finditer(said.group(1))] + put, True, said.group(0)
    said = _WHOLE_PUT.search(text)
    if said is not None:
        return [(said.group(1), said.group(2))], True, said.group(0)
    said = _INPUT_HELD.search(text)
    if said is not None:
        return [(m.group(1), m.group(2)) for m in _RANGE_PART.finditer(said.group(1))], False, said.group(0)
    return None


def input_account_problems(where: str, f: Finding) -> list[str]:
    """``input<=account``: every input finding names the parts of its wait, with their times (h37-forms10num: main's
    iterator and untraced-loader words named none); the wait is at most the parts it names as its whole account
    (the pipeline's ranges or event with the transfer beside them, the untraced lead), and no more than the wait is
    named (printed rounding aside, as ``part<=whole`` allows)."""
    if f.rule != "input_bound" or f.metric is None:
        return []
    wait = (f.metric.detail or {}).get("input_wait_ms")
    if not isinstance(wait, (int, float)):
        return []
    read = _input_parts(" ".join(f.summary.split()))
    if read is None:
        return [f"input<=account: {where}: the input finding names no part of its {wait:.3f} ms wait with its time"]
    parts, whole, words = read
    high = sum(_ms(n, u) + _time_half_ulp(n) * _UNIT_MS[u] for n, u in parts)
    low = sum(_ms(n, u) - _time_half_ulp(n) * _UNIT_MS[u] for n, u in parts)
    out = ([f"input<=account: {where}: the input wait {wait:.3f} ms is over the {high:.3f} ms its finding names as "
            f"the pipeline's own ({words[:120]!r})"] if whole and _over(float(wait), high) else [])
    return out + ([f"input<=account: {where}: the parts named of the input wait add up to {low:.3f} ms, over the wait "
                   f"{wait:.3f} ms ({words[:120]!r})"] if _over(low, float(wait)) else [])


def input_finding(summary: str, wait_ms: float) -> Finding:
    """An input finding around ``summary`` with its ledger wait ``wait_ms``: what ``input<=account`` reads, for the
    law's own tests (h37-forms10in, h37-forms10num)."""
    metric = Metric(id="input_wait_share", label="Input wait share of step", value=0.84, unit="share", display="84.0%",
                    good_direction="lower", status="critical", meaning="", threshold=0.05,
                    detail={"input_wait_ms": wait_ms, "source": "pipeline"})
    return Finding(id="input_bound:node0", rule="input_bound", severity="critical", title="Input-bound",
                   summary=summary, guide_section="§1.1", metric=metric)


def _ranks(h: HostReport) -> int:
    """The GPUs a host's per-step numbers are shared among: those with kernels or collectives; where none has any,
    those with device work in the kept steps (``busy_share``: copies -- h37-xplane3, 4 GPUs that only copied); at
    least 1."""
    ran = sum(1 for g in h.gpus if (g.kernel_count or 0) > 0 or (g.collective_calls_per_step or 0) > 0)
    return max(1, ran or sum(1 for g in h.gpus if (g.busy_share or 0) > 0))


#: The counts a finding states per step, each with where the report holds the same count over the kept steps (every
#: rank's): ``(rule, detail key per step, detail key of the total)``; a total of None is read off the report elsewhere
#: (``_count_totals``).  Kernels (launch_bound), eager ops, host-placed ops, loss-scaling ops, the program's syncs.
_PER_STEP_COUNTS = (
    ("launch_bound", "kernels_per_step", None),
    ("eager_execution", "eager_ops_per_step", "eager_ops"),
    ("host_op_placement", "host_ops_per_step", None),
    ("loss_scaling_gaps", "ops_per_step", "ops"),
    ("host_sync", "syncs_per_step", "syncs"),
)


def _count_totals(h: HostReport) -> dict[str, Any]:
    """The counts over the kept steps the report holds outside the findings: the kernels (``kernel_durations_us``) and
    the host-placed ops (the host-op card's ``host_ops``)."""
    card = next((c for c in h.headline or [] if getattr(c, "id", None) == "host_op_share"), None)
    return {"kernels_per_step": (h.kernel_durations_us or {}).get("count"),
            "host_ops_per_step": ((card.detail or {}).get("host_ops") if card is not None else None)}


def per_rank_problems(h: HostReport) -> list[str]:
    """``per-rank``: every count per step a finding states (kernels, eager ops, host-placed ops, loss-scaling ops,
    syncs) is its count over the kept steps divided as the times are: by the steps x the active GPUs."""
    steps = (h.steps or {}).get("count") or 0
    if not steps:
        return []
    ranks = _ranks(h)
    elsewhere = _count_totals(h)
    out: list[str] = []
    for f in h.findings:
        d = (f.metric.detail if f.metric is not None else None) or {}
        for rule, key, total_key in _PER_STEP_COUNTS:
            if f.rule != rule and key != "kernels_per_step":  # kernels per step: whichever finding states them
                continue
            said, total = d.get(key), d.get(total_key) if total_key else elsewhere.get(key)
            if not isinstance(said, (int, float)) or not isinstance(total, (int, float)):
                continue
            per_rank = total / (steps * ranks)
            if abs(said - per_rank) > max(0.01, _REL * per_rank):
                out.append(f"per-rank: {f.id}: {said:g} {key.replace('_', ' ')}, where the kept steps hold {total:g} "
                           f"over {steps} steps x {ranks} GPUs = {per_rank:g} per step and GPU")
        said, total = d.get("copies_per_step"), d.get("copies")  # excessive_memcpy: per direction
        for direction, n in (said.items() if isinstance(said, dict) and isinstance(total, dict) else ()):
            per_rank = float(total.get(direction) or 0) / (steps * ranks)
            if abs(float(n) - per_rank) > max(0.01, _REL * per_rank):
                out.append(f"per-rank: {f.id}: {float(n):g} {direction} copies per step, where the kept steps hold "
                           f"{total.get(direction)} over {steps} steps x {ranks} GPUs = {per_rank:g} per step and GPU")
        if f.rule == "excessive_memcpy" and not isinstance(said, dict):
            out.append(f"per-rank: {f.id}: its copies per step have no total in its detail to be checked against")
        kps, small = d.get("kernels_per_step"), d.get("small_kernels_per_step")
        if isinstance(kps, (int, float)) and isinstance(small, (int, float)) and _over(small, kps):
            out.append(f"per-rank: {f.id}: {small:g} small kernels per step of {kps:g}")
    return out


_KERNELS_OF = re.compile(r"(?<![\d.,])" + _NUM + r" of " + _NUM + r" kernels? per step")
# (a mean over several GPUs says so before the graphs' clause: "on average over its 2 GPUs, not already in graphs")
_KERNELS_SAID = re.compile(r"(?<![\d.,])" + _NUM + r" (small )?kernels? per step(?: on average(?: over its \d+ \w+)?)?"
                           r"(, not already in graphs)?")


def count_value_problems(where: str, f: Finding) -> list[str]:
    """``one-count``: a count a finding prints per step, in its summary and in its saving's assumption alike, is the
    count of its detail, printed to its precision -- one value wherever it is said (h37-review10: fsdp_mfu_before's
    launch-bound finding read "424 of 980.5 kernels per step on average" and assumed "980 kernels per step";
    cloverleaf's assumed "92 kernels per step", its 92 small ones, beside "92 of 125 kernels per step")."""
    d = (f.metric.detail if f.metric is not None else None) or {}
    text = " ".join((f.summary + " " + (f.saving.assumption if f.saving is not None else "")).split())
    said = []
    for m in _KERNELS_OF.finditer(text):
        said += [("small_kernels_per_step", m.group(1), m.group(0)), ("kernels_per_step", m.group(2), m.group(0))]
    for m in _KERNELS_SAID.finditer(text):
        said.append(("small_kernels_per_step" if m.group(2) else "kernels_per_step", m.group(1), m.group(0)))
    out = []
    for key, num, words in said:
        ref = d.get(key)
        if words.endswith("not already in graphs") and isinstance(ref, (int, float)):
            # those a graph can still batch: the count's launches outside graphs (h37-left60), no more than its kind's
            ref = min(ref, d.get("kernels_outside_graphs_per_step", ref))
        if isinstance(ref, (int, float)) and abs(float(num.replace(",", "")) - ref) > _half_ulp(num) + 1e-6:
            out.append(f"one-count: {where}: {f.id}: '{words}', where its {key} is {ref:g}")
    return sorted(set(out))


#: the launch-bound titles that count the step's kernels (``rules/launch_bound``): a few, or many small ones
_FEW_TITLE = "before each of its few kernels"
_MANY_TITLE = "many small kernels"


def _cited_kernels(f: Finding) -> float | None:
    """The kernels a step a finding cites: its summary's "N of M kernels per step" (M), else "M kernels per step" (not
    the small ones alone), else its metric's ``kernels_per_step``; None where none is given."""
    text = " ".join(f.summary.split())
    if (m := _KERNELS_OF.search(text)) is not None:
        return float(m.group(2).replace(",", ""))
    said = [m for m in _KERNELS_SAID.finditer(text) if not m.group(2)]
    if said:
        return float(said[0].group(1).replace(",", ""))
    ref = ((f.metric.detail if f.metric is not None else None) or {}).get("kernels_per_step")
    return float(ref) if isinstance(ref, (int, float)) else None


def title_count_problems(where: str, findings: list[Finding]) -> list[str]:
    """``title-count`` (module doc): a launch-bound title says "few kernels" only of a step of at most
    ``launch_bound.step_calls`` kernels, "many small kernels" only of a step of more, as the finding cites them."""
    few = T("launch_bound.step_calls")
    out = []
    for f in findings:
        if f.rule != "launch_bound" or not f.title or (n := _cited_kernels(f)) is None:
            continue
        if _FEW_TITLE in f.title and not 0 < n <= few:
            out.append(f"title-count: {where}: {f.id} is titled '{_FEW_TITLE}' beside {n:g} kernels per step (a few: "
                       f"at most {few:g})")
        if _MANY_TITLE in f.title and n <= few:
            out.append(f"title-count: {where}: {f.id} is titled '{_MANY_TITLE}' beside {n:g} kernels per step (a few: "
                       f"at most {few:g})")
    return out


_NEVER_CRITICAL = re.compile(r"(?:^|[.!]\s+)Never critical\b")


def _guessed_gap_note(f: Finding) -> bool:
    """``f`` is held at info by the guessed steps' ceiling (docs/rules.md, "Guessed steps": on steps of low confidence
    a gap between steps is at most info; ``rules._may_be``) -- whatever it saves, as a "Never critical" warning is
    held at warning (h37-left63: a 48.5% gap between GPU bursts, a note beside a 45.2% warning)."""
    from tb_gpu_advisor.rules import _may_be

    return f.confidence == "low" and not _may_be(f, "warning")


def _never_critical(f: Finding) -> bool:
    from tb_gpu_advisor.rules.registry import REGISTRY

    r = REGISTRY.get(f.rule)
    return r is not None and bool(_NEVER_CRITICAL.search(r.doc))


def ceiling_problems(where: str, findings: list[Finding]) -> list[str]:
    """``ceiling``: a finding is never graded above what its rule's documentation (``docs/rules.md``, the rule's own
    doc) promises -- "Never critical" holds whatever grading follows the rule's (h37-review10: v100_bert's
    "XLA is off" read CRITICAL, raised to the criticals it out-saved, where its doc says "Never critical: the guide
    calls XLA optional")."""
    out = []
    for f in findings:
        if f.severity == "critical" and _never_critical(f):
            out.append(f"ceiling: {where}: {f.id} is critical, where its rule's doc says it never is")
    return out


#: How a fix names each fix a trace can show in use (``capture.applied``'s keys): in its words, in its code
_IN_USE_NAMES = {"compiled": (r"torch\.compile\b", r"torch\.compile\("),
                 "cuda_graphs": (r"\b(?:CUDA|HIP|XPU) graphs?\b", r"torch\.(?:cuda|xpu)\.graph\(|Graph\(\)|make_graphed_callables"),
                 "fused_optimizer": (r"fused=True|\bfused optimizer\b", r"fused=True"),
                 # tf.data's own levers (a parallel stage, a prefetch stage: their iterators in the trace); not a
                 # prefetch to the device, a copy's lever
                 "tf_data_parallel": (r"num_parallel_calls|\bparallel(?:ize)?\b[^.;]*\b(?:tf\.data|map)\b",
                                      r"num_parallel_calls"),
                 "tf_data_prefetch": (r"\bprefetch(?:es|ing)?\b(?!\s+to\s+the\s+(?:GPU|device))(?!_to)",
                                      r"\.prefetch\("),
                 # uploads from pinned memory, asynchronous (the copy records' memory kind, no call holding the
                 # host): pinning them or copying them non_blocking, in words or code -- not a read-back's own pinned
                 # destination (``_NOT_UPLOAD``), a lever of the copies back
                 "pinned_async_h2d": (r"\bcop(?:y|ies|ied)\b[^.;]*\basynchronous(?:ly)?\b[^.;]*\bpinned\b|"
                                      + r"\binto pinned memory\b|\bpin_memory=True\b|\bnon_blocking\b",
                                      r"non_blocking=True|pin_memory(?:=True|\(\))"),
                 # uploads asking for non_blocking=True (their copy ops' recorded inputs), pageable or not: the flag,
                 # in words or code (h37-nonblock33)
                 "non_blocking_h2d": (r"\bnon_blocking\b", r"non_blocking=True")}
#: Per fix in use, a clause or line that names it for another object: a read-back's pinned destination is no upload
_NOT_UPLOAD = re.compile(r"\bdestination\b|\bback\b|\bbuf\b", re.IGNORECASE)
_OTHER_OBJECT = {"pinned_async_h2d": _NOT_UPLOAD, "non_blocking_h2d": _NOT_UPLOAD}
#: A clause that names a fix without telling it again: keeping it on, what it needs, its graph mode
_NOT_TOLD = re.compile(r"\bkeep\b|\balready\b|reduce-overhead|\bmode\b|\bneeds\b|\bwithout\b|\boff\b", re.I)
_CLAUSES = re.compile(r"[.;:]\s+|\s+--\s+|,\s+or\s+|\(|\)")


def in_use_problems(where: str, h: HostReport) -> list[str]:
    """``in-use``: a fix the capture shows in use (``capture.applied``: torch.compile's kernels, graph launches, a
    fused optimizer's kernels) is never told again, in a fix's words or code, under any finding of that host -- the
    host's own "Already in use, so not suggested" says so (h37-review10: d2d_v100's and
    torch_compile_cudagraphs_inference's small-grid fix ended "or let torch.compile fuse the small ops", beside
    torch.compile's kernels in the trace).  A clause that keeps it on, names what it needs or its graph mode is no
    telling."""
    applied = (h.capture or {}).get("applied") or {}
    out = []
    for key in applied:
        names = _IN_USE_NAMES.get(key)
        if names is None:
            continue
        words, code = (re.compile(x) for x in names)
        other = _OTHER_OBJECT.get(key)

        def tells(text: str, pattern: re.Pattern, other: re.Pattern | None = other) -> bool:
            return bool(pattern.search(text)) and not _NOT_TOLD.search(text) and not (other and other.search(text))

        for f in h.findings:
            for a in f.actions:
                told = [c for c in _CLAUSES.split(" ".join(a.text.split())) if tells(c, words)]
                told += [ln for ln in (a.snippet or "").splitlines() if tells(ln, code)]
                if told:
                    out.append(f"in-use: {where}: {f.id} tells {key} again ('{told[0].strip()[:80]}'), which the capture "
                               f"shows in use: {applied[key][:60]}")
    return out


def card_quiet_problems(where: str, h: HostReport) -> list[str]:
    """``card-quiet``: a card's "not flagged" words beside a finding of the check that owns the card name that finding:
    a check that fired (as a note) never reads "did not fire" or "below this check's level" on its card (h37-review11:
    the JAX block_until_ready runs', cloverleaf's and resnet50_num_workers_0/4's launch card read "the rest is below
    this check's level" beside the launch-bound check's own note)."""
    from tb_gpu_advisor.rules.headline import card_rule

    out = []
    for c in h.headline or []:
        said = (c.detail or {}).get("not_flagged")
        owner = card_rule(c.id)
        if not said or owner is None:
            continue
        fired = [f for f in h.findings if f.rule == owner]
        if fired and not any(f.title in said for f in fired):
            out.append(f"card-quiet: {where}: card {c.id} says '{said[:90]}' beside {fired[0].id} "
                       f"('{fired[0].title[:50]}', {fired[0].severity})")
    return out


def limit_name_problems(where: str, h: HostReport) -> list[str]:
    """``one-name``: a capacity the memory table calls the allocator's limit ("279 GiB (allocator limit)") is never
    the GPU's own memory in a finding's words ("of its 279 GiB", "before the GPU is 90% full" beside that figure):
    one quantity, one name (h37-review11: jax_mi355x, XLA's limit 97.0% of the GPU's 288 GiB)."""
    from tb_gpu_advisor.common.fmt import gb

    out = []
    for g in h.gpus:
        m = g.memory or {}
        cap = m.get("capacity_bytes")
        if m.get("capacity_source") != "allocator limit" or not cap:
            continue
        its = re.compile(r"\bof its " + re.escape(gb(cap)) + r"\b(?! limit)")
        for f in h.findings:
            if f.gpu not in (None, g.gpu):
                continue
            text = " ".join(_finding_text(f).split())
            if its.search(text) or (gb(cap) in text and "the GPU is 90% full" in text):
                out.append(f"one-name: {where}: {f.id} calls GPU{g.gpu}'s {gb(cap)} the GPU's own, where its memory "
                           f"table says it is the allocator's limit")
    return out


_FIX_CLAUSE = re.compile(r"[.;:,]\s+|\s+--\s+|[()]")


def _levers(text: str) -> set[str]:
    """A fix's words as levers: its clauses of three words or more, lower case, without a leading "or"/"and"."""
    out = set()
    for c in _FIX_CLAUSE.split(" ".join(text.split())):
        c = re.sub(r"^(?:or|and|also|then)\s+", "", c.strip(), flags=re.I).rstrip(".").lower()
        if len(c.split()) >= 3:
            out.add(c)
    return out


#: A fix headed by the framework it is for, where the capture does not say which (``frameworks._either_writer``:
#: "If JAX wrote the capture: ", "If TensorFlow ran the work: ").
_HEAD = re.compile(r"^If (\w+) (?:wrote the capture|ran the work): ")


def _headed(text: str) -> tuple[str | None, str]:
    """(the framework a fix is headed for, or None; its text without the heading)."""
    m = _HEAD.match(text)
    return (m.group(1), text[m.end():]) if m else (None, text)


def fix_twice_problems(where: str, findings: list[Finding]) -> list[str]:
    """``fix-twice``: one finding names each lever once -- no two of its fixes share a clause (h37-review11:
    resnet50_num_workers_4's launch-bound finding read "Make each kernel do more work: ..., or raise the batch size."
    and then "Or raise the batch size, so each launch does more GPU work.").  Fixes headed for different frameworks
    (a capture that does not say which ran the work) are alternatives, and a heading no lever (h37-vendor66)."""
    out = []
    for f in findings:
        for i, a in enumerate(f.actions):
            for b in f.actions[i + 1:]:
                (ha, ta), (hb, tb) = _headed(a.text), _headed(b.text)
                if ha and hb and ha != hb:  # alternatives: each front end's reader reads one of them
                    continue
                both = _levers(ta) & _levers(tb)
                if both:
                    out.append(f"fix-twice: {where}: {f.id} tells '{sorted(both)[0]}' in two of its fixes")
    return out


#: a saving whose premise is one launch a step, a graph's
_GRAPH_PREMISE = re.compile(r"one launch (?:a|per|in the) \w+(?: \w+)? \(a graph's\)")
#: a fix that puts a graph (or a compiled program XLA replays as one) in place, in its words or code
_GRAPH_FIX = re.compile(r"graph|\bjax\.jit\b|\bjit_compile\b|\btf\.function\b|\blax\.scan\b", re.I)


def premise_fix_problems(where: str, findings: list[Finding]) -> list[str]:
    """``premise``: a saving that assumes a fix the finding gives -- "launch wait reduced to one launch a step (a
    graph's)" beside at least one fix that records a graph, unless the finding says graphs are in use already
    (h37-review11: resnet50_num_workers_0/4, PyTorch 1.8-1.10, claimed 12.8-23.2 ms from a graph beside TorchScript
    and a bigger batch: the old version's fixes held none)."""
    out = []
    for f in findings:
        said = " ".join(f.saving.assumption.split()) if f.saving is not None and f.saving.assumption else ""
        if not _GRAPH_PREMISE.search(said) or "Already in use, so not suggested" in f.summary and "graph" in f.summary:
            continue
        if not any(_GRAPH_FIX.search(a.text + " " + (a.snippet or "")) for a in f.actions):
            out.append(f"premise: {where}: {f.id} saves on 'one launch a step (a graph's)' and gives no fix that "
                       f"records a graph")
    return out


_WRITTEN_BY = re.compile(r"written by (PyTorch|TensorFlow|JAX) (\d+(?:\.\d+)*(?:-\d+(?:\.\d+)*)?)")


def version_said_problems(where: str, h: HostReport) -> list[str]:
    """``version-said``: a finding or fix that says which framework version wrote the trace says the job's own
    ("written by PyTorch 1.13" in the job line, never "this trace was written by PyTorch 1.8-1.10" under a finding:
    h37-review11, the legacy fixes' fixed words)."""
    job = (h.job or {}).get("version") or ""
    out = []
    for f in h.findings:
        for text in [f.summary] + [a.text for a in f.actions]:
            for m in _WRITTEN_BY.finditer(" ".join(text.split())):
                if f"{m.group(1)} {m.group(2)}" != job:
                    out.append(f"version-said: {where}: {f.id} says '{m.group(0)}' where the job says "
                               f"'{job or 'no version'}'")
    return out


_JOB_RELEASES = re.compile(r"PyTorch (\d+)\.(\d+)(?:-(\d+)\.(\d+))?")
#: (what a fix's code writes, the first PyTorch release that has it); the older spelling is the job's only where its
#: oldest release may lack the newer one: ``torch.autocast`` came with 1.10 (PyTorch's amp docs), torch.compile 2.0
_SINCE = (("torch.autocast(", (1, 10)), ("torch.compile(", (2, 0)))
_OLD_SPELLING = (("torch.cuda.amp.autocast(", (1, 10)),)


def _job_releases(h: HostReport) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The PyTorch releases the job line states (oldest, newest), None where it dates none."""
    m = _JOB_RELEASES.fullmatch((h.job or {}).get("version") or "")
    if m is None:
        return None
    low = (int(m.group(1)), int(m.group(2)))
    return low, (int(m.group(3)), int(m.group(4))) if m.group(3) else low


def release_fit_problems(where: str, h: HostReport) -> list[str]:
    """``release-fit``: a fix is spelled for the releases the trace states -- its code calls nothing newer than the
    oldest of them (``torch.autocast`` on a trace that may be 1.9), and no older spelling where every one of them has
    the newer (``torch.cuda.amp.autocast`` for a trace stating 1.12); where the trace dates no release, nothing
    (h37-review16: the ``torch.cuda.amp`` fix, "PyTorch 1.8-1.10 spell it", was keyed to any release before 2.0)."""
    rel = _job_releases(h)
    if rel is None:
        return []
    low, _high = rel
    out = []
    for f in h.findings:
        for a in f.actions:
            code = a.snippet or ""
            for call, since in _SINCE:
                if call in code and low < since:
                    out.append(f"release-fit: {where}: {f.id}'s fix calls {call}) (PyTorch {since[0]}.{since[1]} on) "
                               f"for a job of {h.job.get('version')}")
            for call, since in _OLD_SPELLING:
                if call in code and low >= since:
                    out.append(f"release-fit: {where}: {f.id}'s fix calls {call}) where {h.job.get('version')} "
                               f"spells it anew")
    return out


_WAITS_AT = re.compile(r"waits for it at the AllReduce \((?:the others spend|the other GPU spends|the other [\d,]+ GPUs "
                       r"spend) " + _TIME + r" (?:per step|in the step|a step) in collectives, GPU\d+ " + _TIME + r"\)")


def waits_at_problems(where: str, findings: list[Finding]) -> list[str]:
    """``waits-at``: "every replica waits for it at the AllReduce" is said where the others' collective time shows the
    wait -- more than the busiest GPU's own (h37-review11: demo multi_gpu_gpu0_oversubscribed's others spent 149 us in
    collectives beside GPU0's 150 us, their wait 3.45 ms a step outside them)."""
    out = []
    for f in findings:
        for m in _WAITS_AT.finditer(" ".join(f.summary.split())):
            if _ms(m.group(1), m.group(2)) <= _ms(m.group(3), m.group(4)):
                out.append(f"waits-at: {where}: {f.id} says the others wait at the AllReduce, where they spend no more "
                           f"in it than the GPU they wait for: '{m.group(0)[-70:]}'")
    return out


#: the graph-replay finding's own words: its wait is the host's preparation of each replay, which no graph cuts
_NO_GRAPH_CUTS = re.compile(r"another graph cannot cut it")
#: a fix that compiles, jits, fuses or graphs the step (or the forward pass: JAX's jit in the words of a forward
#: pass's job, h37-words32) -- what that finding's words rule out
_GRAPH_THE_STEP = re.compile(r"\b(?:jit|compile|fuse)s? the (?:whole )?(?:step|model|small ops|forward pass)\b|\bruns? as a graph\b|"
                             r"\btorch\.compile\b|\bjit_compile\b|\bcapture (?:it|them|the \w+) (?:in|as) an? "
                             r"(?:CUDA |HIP )?graph", re.I)


def ruled_out_fix_problems(where: str, findings: list[Finding]) -> list[str]:
    """``ruled-out``: a finding never gives a fix its own words rule out -- the wait before graph replays, which
    "another graph cannot cut", is never told to jit, compile, fuse or graph the step (h37-review11: the JAX
    block_until_ready runs, whose step is one jitted program replayed from XLA's command buffers, read "jit the whole
    step as one function ... un-jitted jnp calls each dispatch their own kernel" under it: the framework had no
    fix for the variant and gave the check's general one)."""
    out = []
    for f in findings:
        if not _NO_GRAPH_CUTS.search(" ".join(f.summary.split())):
            continue
        for a in f.actions:
            m = _GRAPH_THE_STEP.search(" ".join(a.text.split()))
            if m:
                out.append(f"ruled-out: {where}: {f.id} says another graph cannot cut its wait, yet tells "
                           f"'{m.group(0)}' ({a.text[:60]})")
    return out


_SHARE_AFTER = re.compile(r"(?P<t>\d[\d,]*(?:\.\d+)?) ?(?P<tu>us|µs|ms|s)\b(?P<mid>(?:[^%;()]|\([^()]*\)){0,300}?), "
                          r"(?P<p>\d+(?:\.\d+)?)% of (?:the |each )?(?P<w>\d[\d,]*(?:\.\d+)?) ?(?P<wu>us|µs|ms|s)\b")
_OF_IT = re.compile(_TIME + r" of it\b")


def share_of_time_problems(where: str, f: Finding) -> list[str]:
    """``share-of``: a share printed after a time is that time's share of the whole it names, less the parts said to
    be "of it" in between ("131 us ... (84 us of it the host dispatching ...), 21.1% of the 221 us step": (131 - 84) /
    221), to printed precision and a twentieth of the share for parts under a twentieth of the time left unsaid
    (h37-review10: torch_compile_cudagraphs_inference read "idle 131 us between steps on average (max 142 us), 21.1% of
    the 221 us step", 59% as printed: the share left out the launch-bound finding's 84 us without saying so)."""
    text = " ".join(f.summary.split())
    out = []
    for m in _SHARE_AFTER.finditer(text):
        if ". " in m.group("mid"):
            continue  # another sentence: the share is not of this time
        t, w = _ms(m.group("t"), m.group("tu")), _ms(m.group("w"), m.group("wu"))
        parts = sum(_ms(n, u) for n, u in _OF_IT.findall(m.group("mid")))
        if not w:
            continue
        want, p = 100 * (t - parts) / w, float(m.group("p"))
        # the share is printed to its own digits too: "4%" of a 4.49% share, whose part and whole print as 4.51%
        half = 0.5 * 10 ** -len(m.group("p").partition(".")[2])
        if abs(p - want) > 0.06 * 100 * t / w + max(0.15, half):
            out.append(f"share-of: {where}: {f.id}: '{m.group(0)[:120]}' is {want:.1f}% as printed, not {p:g}%")
    for m in _OF_STEP_SHARE.finditer(text):
        (t, tu), (w, wu), p = m.group(1, 2), m.group(3, 4), m.group("p")
        ht, hw = _time_half_ulp(t) * _UNIT_MS[tu], _time_half_ulp(w) * _UNIT_MS[wu]
        lo = (_ms(t, tu) - ht) / (_ms(w, wu) + hw) * 100
        hi = (_ms(t, tu) + ht) / max(_ms(w, wu) - hw, 1e-12) * 100
        if not lo - _half_ulp(p) - 1e-9 <= float(p) <= hi + _half_ulp(p) + 1e-9:
            out.append(f"share-of: {where}: {f.id}: '{m.group(0)}' is {100 * _ms(t, tu) / _ms(w, wu):.1f}% as "
                       f"printed, not {p}%")
    return out


#: a time of the step with its share right after it: "717 us of each 3.40 ms step (9.3%)" -- the share is that time's
#: (h37-review61b: excessive_memcpy printed the ledger's 717 us beside the 9.3% it graded, its part on the critical path)
_OF_STEP_SHARE = re.compile(_TIME + r" of (?:each|the) " + _TIME + r" (?:step|pass) \((?P<p>\d+(?:\.\d+)?)%\)")


#: a time and, in the same clause, a share printed in parentheses after the whole it is of: "15 us of the 585.2 ms
#: pass (0.0%)", "29.0 ms of the steps' 5.26 s in all (0.6%)"
_TIME_SHARE = re.compile(_TIME + r" of [^;()%]{0,60}?" + _TIME + r"[^;()%.]{0,40}? \((?P<p>\d+(?:\.\d+)?)%\)")


def zero_share_problems(where: str, text: str) -> list[str]:
    """``zero-share``: a share of a time printed above zero never reads "0.0%" (``common.fmt.pct`` writes "<0.1%"),
    nor does a metric's display whose value is above zero -- "the GPU waiting in them 15 us of the 585.2 ms pass
    (0.0%)" said the wait was none (h37-coldwords33 *Left* 2: wild/pexsi_a100_pageable_sync)."""
    out = []
    for m in _TIME_SHARE.finditer(" ".join(text.split())):
        if _ms(m.group(1), m.group(2)) > 0 and float(m.group("p")) == 0:
            out.append(f"zero-share: {where}: '{m.group(0)[:120]}' prints a share of zero beside a time above zero")
    return out


def _metric_zero_problems(where: str, f: Finding) -> list[str]:
    """``zero-share`` on a finding's metric: a share above zero whose display reads 0% at its digits."""
    mt = f.metric
    if mt is None or mt.unit != "share" or not isinstance(mt.value, (int, float)) or mt.value <= 0:
        return []
    if re.match(r"0(?:\.0+)?%", str(mt.display or "")):
        return [f"zero-share: {where}: {f.id}: metric {mt.id} {mt.value:g} displays {mt.display!r}"]
    return []


#: a line of code only Python reads: an import, a ``with`` block, a call on a module's attribute or an assignment of a call
_PY_LINE = re.compile(r"^(?:from [\w.]+ import |import [\w.]+|with .+:$|[\w.\[\]]+ = [\w.]+\(|[\w.]+\.\w+\(.*\)$)")
#: a line only a shell reads: a command-line tool, an environment variable set for a command
_SHELL_LINE = re.compile(r"^(?:export|unset|nsys|ncu|nvidia-smi|rocm-smi|rocprof\w*|xpu-smi|tb-gpu-advisor|pip3?|torchrun|export|"
                         r"python3?|\./\S+)\s|^[A-Z][A-Z0-9_]+=\S")


def snippet_lang_problems(where: str, findings: list[Finding]) -> list[str]:
    """``snippet-lang`` (h37-review12): a fix's code is in the language its label says, so the markdown report fences
    it as that and a reader pastes it where it runs.  A "shell" snippet holds no line only Python reads (``from
    rpdTracerControl import ...``: rocmProfileData's and torch.profiler's window fixes were labelled shell), a "python"
    one no command line (``nsys profile ...``).  Comment lines say nothing either way."""
    out = []
    for f in findings:
        for a in f.actions:
            if not a.snippet:
                continue
            lines = [ln.split("  #")[0].strip() for ln in a.snippet.splitlines()]
            lines = [ln for ln in lines if ln and not ln.startswith("#")]
            wrong = {"shell": _PY_LINE, "python": _SHELL_LINE}.get(a.snippet_lang or "")
            bad = [ln for ln in lines if wrong is not None and wrong.search(ln)]
            if bad:
                out.append(f"snippet-lang: {where}: {f.id}'s fix code is labelled {a.snippet_lang} but reads "
                           f"'{bad[0][:70]}'")
    return out


#: the clause a capped saving adds (``rules.base.CAPPED_SHARE``/``CAPPED``): the shares that shorten the step and the
#: time a host-bound fix would add back
_CAPPED = re.compile(r"shortens the step \(([^)]*)\): the GPU idles waiting for the host the rest of the time, so a "
                     r"faster kernel there only lengthens that idle \(" + _TIME)
_AT_MOST_CAP = re.compile(r"at most the " + _TIME + r" of kernel time .{0,80}?the rest of the time, .{0,80}?idle \(" + _TIME)


def rest_of_nothing_problems(where: str, findings: list[Finding]) -> list[str]:
    """``rest-of-nothing`` (h37-review12): a caveat is about something its own numbers show.  A saving capped to the
    kernel time the GPU's next work waited for says "the GPU idles waiting for the host the rest of the time" only
    where a rest is printed: not after shares that all read 100.0% (hta_v100: "(100.0% of the matmul/convolution
    kernels' time, 100.0% of the other kernels' time): ... the rest of the time ... (7 us more ...)"), nor with a
    cut that reads 0 (nvllm_gb10_lost_tail: "(0 us more once the host-bound fix lands)") -- a cut under the saving's
    printed precision changes nothing the reader sees."""
    out = []
    for f in findings:
        text = " ".join((f.saving.assumption if f.saving else "").split())
        for m in _CAPPED.finditer(text):
            shares = re.findall(r"(\d+(?:\.\d+)?)%", m.group(1))
            if shares and all(float(x) >= 100.0 for x in shares):
                out.append(f"rest-of-nothing: {where}: {f.id} says 'the rest of the time' after '{m.group(1)[:70]}'")
            if _ms(m.group(2), m.group(3)) == 0:
                out.append(f"rest-of-nothing: {where}: {f.id} caps its saving by '{m.group(2)} {m.group(3)}'")
        for m in _AT_MOST_CAP.finditer(text):
            if _ms(m.group(3), m.group(4)) == 0:
                out.append(f"rest-of-nothing: {where}: {f.id} caps its saving by '{m.group(3)} {m.group(4)}'")
    return out


_LEFT_OUT = re.compile(r"\bholding (?:them|it) (?:was|were) left out\b")


def left_out_problems(where: str, findings: list[Finding]) -> list[str]:
    """``left-out`` (h37-review12): a cause said to lie in the steps left out of the averages saves nothing per kept
    step.  A finding whose saving is time in the kept steps never says the steps "holding them" were left out
    (nvfuser_h200_gtest: "The GPU sits idle 10.3 ms of each 18.4 ms step ... inside one-time costs ... The 1 step
    holding them was left out of the averages" -- the compilation's step was, its first launches lay in the six kept
    ones)."""
    return [f"left-out: {where}: {f.id} saves {f.saving.ms_per_step} ms per kept step of what it says the steps left "
            f"out hold" for f in findings
            if f.saving is not None and (f.saving.ms_per_step or 0) > 0 and _LEFT_OUT.search(" ".join(f.summary.split()))]


def no_gpu_step_problems(where: str, h: HostReport) -> list[str]:
    """``no-gpu-step`` (h37-inputonly2; the whole JSON from h37-nogpu2): a host whose job's reading says its window
    times no GPU step (``report.verdict.no_gpu_step``: the title says "no step") shows none -- no GPU row's step, no
    step row, no mean step (``mean_step_ms``: the account's step, else the ledger's parts summed), no card's step and
    no account of one; and its steps are not the GPU's bursts (input_only_rtx4090_unetr: a DataLoader loop's 24
    uploads read as 3 "GPU burst" steps, the GPUs table's "step ms 3,727.67" under that title; then its JSON's one
    5,723.57 ms "step" in its step rows, cards and account beside a null GPU row).  From h37-tidy29 whether or not the
    window marks steps: a CPU-only host's marks time its host's loop, no GPU step (``h200_jobs/torch_cpu_only``: 4
    step rows of 88 ms under the title "no step: the window holds no GPU work")."""
    from tb_gpu_advisor.report.verdict import no_gpu_step

    # a window whose marks time none of the job's steps holds none, whatever its kind (h37-loopend2: the loop's end
    # whose GPU drained the last step's queue reads as training, and times no step either)
    if not no_gpu_step(h.job or {}):
        return []
    out = [f"no-gpu-step: {where}: GPU{g.gpu}'s row times a step of {g.step_ms:,.2f} ms in a window without GPU work"
           for g in h.gpus if g.step_ms is not None]
    out += [f"no-gpu-step: {where}: {what} in a window without GPU work" for what in _json_steps(h)]
    if isinstance(h.steps, dict) and h.steps.get("source") == "gpu_busy_clusters":
        out.append(f"no-gpu-step: {where}: steps read from the GPU's bursts in a window without GPU work")
    return out


def unrecorded_reason_problems(where: str, h: HostReport) -> list[str]:
    """``gpu-unrecorded-reason`` (h37-tracingoff3): a host whose window's GPU side went unrecorded (``gpu_unrecorded``:
    CUDA tracing off) says no card is n/a for want of an ML framework -- none could be seen; the reason is the record
    (wild/tracing_off_nvtx_a10_train's "no ML framework in the capture" under 15 training iterations of python).
    h37-review29: nor does its capture's framework name (``capture.framework_name``, the tab's "capture of ...")."""
    if not (h.job or {}).get("gpu_unrecorded"):
        return []
    named = str((h.capture or {}).get("framework_name") or "")
    return [f"gpu-unrecorded-reason: {where}: card {c.id} says {why!r}" for c in h.headline
            for why in [str((c.detail or {}).get("not_applicable") or c.meaning or "")] if "no ML framework" in why] + \
        ([f"gpu-unrecorded-reason: {where}: its framework is {named!r}"] if "no ML framework" in named else [])


def _json_steps(h: HostReport) -> list[str]:
    """Where a host's JSON holds a step time: its step rows, its mean step, its cards' ``avg_step_ms``, its account."""
    out = [f"{len(h.step_rows)} step rows"] if len(h.step_rows) else []
    if (mean := h.mean_step_ms()) is not None:
        out.append(f"a mean step of {mean:,.2f} ms")
    out += [f"card {c.id} holds a step of {c.detail['avg_step_ms']:,.2f} ms" for c in h.headline
            if isinstance(c.detail, dict) and c.detail.get("avg_step_ms") is not None]
    out += _card_per_step(h.headline)
    if isinstance(h.achievable, dict) and h.achievable.get("step_ms") is not None:
        out.append(f"the account holds a step of {h.achievable['step_ms']:,.2f} ms")
    return out


#: The card details that are a ledger part's ms per step (the input and launch cards' ``ms_per_step``, the device
#: share card's ``device_compute_ms``): numbers of a step, so null where there is none (h37-walk13).
_PER_STEP_DETAIL = ("ms_per_step", "device_compute_ms")


def _card_per_step(cards) -> list[str]:  # noqa: ANN001 - a report's or host's headline cards
    """The cards whose detail states a time per step (:data:`_PER_STEP_DETAIL`): a window without a step holds none,
    not 0.0 ms (h37-walk13: input_only_rtx4090_unetr's input and launch cards said 0.0 ms beside their null step)."""
    return [f"card {c.id} holds {k} {c.detail[k]}" for c in cards if isinstance(c.detail, dict)
            for k in _PER_STEP_DETAIL if c.detail.get(k) is not None]


def no_gpu_session_step_problems(report: Report) -> list[str]:
    """``no-gpu-step`` of the session: where every host holds no GPU step (:func:`no_gpu_step_problems`' premise), the
    session's account and cards hold none either (the merge reads the hosts' one value)."""
    from tb_gpu_advisor.report.verdict import no_gpu_step

    hosts = [h for h in report.hosts if h.error is None]
    if not hosts or not all(no_gpu_step(h.job or {}) for h in hosts):
        return []
    out = [f"no-gpu-step: session: card {c.id} holds a step of {c.detail['avg_step_ms']:,.2f} ms in a window "
           f"without GPU work" for c in report.headline
           if isinstance(c.detail, dict) and c.detail.get("avg_step_ms") is not None]
    out += [f"no-gpu-step: session: {what} in a window without GPU work" for what in _card_per_step(report.headline)]
    if isinstance(report.achievable, dict) and report.achievable.get("step_ms") is not None:
        out.append(f"no-gpu-step: session: the account holds a step of {report.achievable['step_ms']:,.2f} ms in a "
                   f"window without GPU work")
    return out


def no_steady_problems(where: str, h: HostReport) -> list[str]:
    """``no-steady`` (h37-review12): "no steady step is left" is said of a host whose kept steps are its start-up: one
    pass, or steps whose ledger is start-up as a start-up window's is (at least ``job.warmup_share``).  Several steps
    that are mostly the program's own work are what the other findings analyse (streams_pinned_copies: "No steady step is left
    to analyse apart from them: every number below describes the start-up" beside two kept steps of 50.6 ms, 8.6% of
    them start-up, and a copy finding on the transfers that make the rest)."""
    steps = (h.steps or {}).get("count") if isinstance(h.steps, dict) else None
    b = h.breakdown_ms or {}
    total = sum(v for v in b.values() if v)
    share = (b.get("startup") or 0.0) / total if total else 0.0
    if not steps or steps <= 1 or share >= T("job.warmup_share"):
        return []
    return [f"no-steady: {where}: {f.id} says no steady step is left beside {steps} kept steps, {share:.1%} of them "
            f"start-up" for f in h.findings if "no steady step is left" in " ".join(f.summary.split()).lower()]


_PART_OF_STEP = re.compile(r"\((\d+(?:\.\d+)?)% of the (?:step|pass|forward pass|engine step)\)")


def within_judged_problems(where: str, findings: list[Finding]) -> list[str]:
    """``within-judged`` (h37-review12): a part of the time a finding judges, said as "(P% of the step)" in its summary,
    is at most the share the finding grades (its metric, a share of the step): the unrecorded part of the gaps inside
    the gaps' own share (torch_compile_cudagraphs_inference: "19.7% of the 221 us step outside input wait ...; 47 us a
    step (21.1% of the step) no runtime call ... covers" -- the sync's idle, left out of the share, left in the part)."""
    out = []
    for f in findings:
        mt = f.metric
        if mt is None or mt.unit != "share" or mt.value is None or not 0 < mt.value <= 1:
            continue
        for p in _PART_OF_STEP.findall(" ".join(f.summary.split())):
            if float(p) > 100 * mt.value + _half_ulp(p) + 0.05:
                out.append(f"within-judged: {where}: {f.id} says a part of {p}% of the step beside its own "
                           f"{mt.display} ({mt.label})")
    return out


_OWN_WORK = re.compile(r"The other (\d+(?:\.\d+)?)% of the (\w+(?: \w+)?) is the program's own work, analysed below")


def own_work_problems(where: str, findings: list[Finding]) -> list[str]:
    """``own-work`` (h37-review12): what a finding says is "the program's own work, analysed below" is the rest of the
    step its own share is of -- the share of the step, never of the window, most of which may lie outside every step
    (ddp_overlap_rtx3090: "62.8%" of the pass in start-up, then "The other 82.2% of the window is the program's own
    work, analysed below" beside 2.39 s of set-up before the pass that no step holds)."""
    out = []
    for f in findings:
        mt = f.metric
        for p, whole in _OWN_WORK.findall(" ".join(f.summary.split())):
            if whole == "window" or (mt is not None and mt.unit == "share" and mt.value is not None
                                     and abs(float(p) + 100 * mt.value - 100) > 0.1):
                out.append(f"own-work: {where}: {f.id} says the other {p}% of the {whole} is analysed beside its "
                           f"{mt.display if mt else '?'} of the step")
    return out


#: the words that name one framework's API in prose: autocast and ``torch.*`` are PyTorch's, ``tf.*`` TensorFlow's,
#: ``jax.*`` JAX's
_FRAMEWORK_WORDS = {"pytorch": re.compile(r"\bautocast\b|\btorch\.\w"), "tensorflow": re.compile(r"\btf\.\w"),
                    "jax": re.compile(r"\bjax\.\w")}


def framework_words_problems(where: str, h: HostReport) -> list[str]:
    """``framework-words`` (h37-review12): a finding's prose (title, summary, assumption, the fixes' words) names no
    other framework's API than the capture's own -- the frameworks own their words, a rule asks for them (the lone
    TensorFlow 2.4 BERT read "autocast casting the fp32 weights again on every call" under its dtype casts: PyTorch's
    autocast, in ``rules/dtype_casts`` itself).  Code is not read: a fix's snippet may show another framework's way.
    A capture whose work another framework ran (``capture.work_framework``: a JAX program under ``torch.profiler``,
    h37-jaxwords65) speaks both: the writer's words to record it, the work's to change it."""
    fw = (h.capture or {}).get("framework") if isinstance(h.capture, dict) else None
    if fw not in _FRAMEWORK_WORDS:
        return []
    own = {fw, (h.capture or {}).get("work_framework") or fw}
    out = []
    for f in h.findings:
        text = " ".join([f.title, f.summary, f.saving.assumption if f.saving else ""] + [a.text for a in f.actions])
        for other, pat in _FRAMEWORK_WORDS.items():
            if other not in own and (m := pat.search(text)) is not None:
                out.append(f"framework-words: {where}: {f.id} names {other}'s '{m.group(0)}' to a {fw} capture: "
                           f"'{text[max(0, m.start() - 40):m.end() + 30]}'")
    return out


#: the pointers a reader follows, and the rules whose findings they point to (``rules.base.POINTERS``, as read)
_POINTERS = {"(see the straggler findings)": ("rank_straggler", "node_straggler", "gpu_imbalance", "launch_skew"),
             "(see imbalance and launch skew)": ("gpu_imbalance", "launch_skew", "rank_straggler", "node_straggler")}


def see_also_problems(report: Report) -> list[str]:
    """``see-also`` (h37-review12): a sentence that sends the reader to other findings ("(see the straggler
    findings)", "(see imbalance and launch skew)": ``rules.base.POINTERS``) is said only where one of them is in the
    report -- the session's findings or the host's own (demo multi_host's AllReduce note pointed to straggler
    findings in a report of one note; ddp_overlap_rtx3090's to imbalance and launch skew, neither there)."""
    session = {f.rule for f in report.findings}
    out = []
    for h in report.hosts:
        seen = session | {f.rule for f in h.findings}
        for f in list(h.findings) + [f for f in report.findings if f.host in (None, h.host)]:
            for words, targets in _POINTERS.items():
                if words in " ".join(f.summary.split()) and not seen.intersection(targets):
                    out.append(f"see-also: {h.host}: {f.id} says '{words}' in a report without one")
    return out


_FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)
#: a capture tool's own way to record the steady state, as its fixes write it
_CAPTURE_TOOLS = ("nsys profile", "rpdTracerControl")


def capture_advice_problems(report: Report) -> list[str]:
    """``one-advice`` (h37-review12): how to record a better capture is one advice on every surface.  Where a finding
    about the capture tells the capture tool's own way to record (an Nsight window's ``nsys profile
    --capture-range``, rocmProfileData's ``rpdTracerControl``), the job's capture advice (the MCP server's "Recording
    a better capture", the tab's) tells that tool too, not torch.profiler's schedule, which moves no Nsight window
    (nvllm_gb10_lost_tail); and the MCP server fences each snippet in its language (``snippet-lang``: vLLM's
    ``VLLM_TORCH_PROFILER_DIR=... vllm serve`` was fenced as Python)."""
    from tb_gpu_advisor.serve.mcp_server import capture_advice_text

    out = []
    for h in report.hosts:
        advice = (h.job or {}).get("capture_advice") or ""
        if not advice or h.error is not None:
            continue
        told = " ".join(a.snippet or "" for f in h.findings if f.rule in ("cold_start", "capture_quality")
                        for a in f.actions)
        for tool in _CAPTURE_TOOLS:
            if tool in told and tool not in advice:
                out.append(f"one-advice: {h.host}: its capture findings tell '{tool}', its capture advice "
                           f"'{advice.strip().splitlines()[0][:60]}'")
    # h37-review13: a job a serving engine runs is advised that engine's own way to profile it, never another's
    # (sglang_b300_decode's advice led with vLLM's ``VLLM_TORCH_PROFILER_DIR=... vllm serve``)
    from tb_gpu_advisor.frameworks import engines

    for h in report.hosts:
        advice = (h.job or {}).get("capture_advice") or ""
        mine = (h.job or {}).get("engine_id")
        if not advice or not mine or h.error is not None:
            continue
        for e in engines.ENGINES:
            line = next((a.snippet.splitlines()[0] for a in e.capture if a.snippet), None)
            if e.id != mine and line and line in advice:
                out.append(f"one-advice: {h.host}: a job {mine} runs is advised {e.name}'s capture '{line[:50]}'")
    for lang, code in _FENCE.findall(capture_advice_text(report)):
        lines = [ln.split("  #")[0].strip() for ln in code.splitlines()]
        lines = [ln for ln in lines if ln and not ln.startswith("#")]
        wrong = {"sh": _PY_LINE, "shell": _PY_LINE, "python": _SHELL_LINE}.get(lang)
        bad = [ln for ln in lines if wrong is not None and wrong.search(ln)]
        if bad:
            out.append(f"snippet-lang: mcp capture_advice: code fenced {lang} reads '{bad[0][:70]}'")
    return out


#: a kernel set against the time a launch takes ("about the 20-40 us launch latency itself", "about 2x shorter than the
#: 20-40 us a launch takes", ``rules.launch_bound._against_latency``)
_AGAINST_LAUNCH = re.compile(r"launch latency itself|shorter than the [\d.]+-[\d.]+ us a launch takes")


def graph_launch_problems(where: str, findings: list[Finding]) -> list[str]:
    """``graph-launch`` (h37-review13): a finding that says the wait is "not a launch per kernel" (the kernels replay
    from graphs, one launch each) never holds a kernel against the launch latency, as if each of its calls paid one
    (sglang_b300_decode, the JAX H200 waits: "Top offender: ... ~24.6 us each -- about the 20-40 us launch latency
    itself" beside "98.2% of kernel time already runs from CUDA graphs ... not a launch per kernel")."""
    out = []
    for f in findings:
        text = " ".join(f.summary.split())
        if "not a launch per kernel" in text and (m := _AGAINST_LAUNCH.search(text)):
            out.append(f"graph-launch: {where}: {f.id} says '{m.group(0)}' of a kernel replayed from a graph, beside "
                       f"'not a launch per kernel'")
    return out


_DTYPE_HOLDS = re.compile(r"(\d+(?:\.\d+)?)% of the (\w+) peak its GEMMs run in\b.*?the \2 math holds MFU down")
_PRECISION_CANNOT = re.compile(r"MatMul/Conv kernels are [\d.]+% of the kernel time, under the [\d.]+% at which "
                               r"precision limits the step")


def one_cause_problems(where: str, h: HostReport) -> list[str]:
    """``one-cause`` (h37-review13): the MFU card blames the GEMMs' dtype ("the fp32 math holds MFU down") only where
    the step reaches that dtype's own peak as a healthy step reaches MFU's (``mfu_low.mfu``) -- under it even the
    dtype's peak leaves MFU low, and the step's other time holds it down -- and never beside a 16-bit card that says
    precision cannot limit the step (tiny_block_h100_infer: a host-bound step at "2.7% of the tf32 peak its GEMMs run
    in ... the tf32 math holds MFU down"; dlrm_a100_alltoall: 22.9%, beside "MatMul/Conv kernels are 5.6% of the kernel
    time, under the 10.0% at which precision limits the step")."""
    texts = {c.id: " ".join(f"{c.display}; {c.meaning}; not flagged: {(c.detail or {}).get('not_flagged') or ''}"
                            .split()) for c in h.headline}
    mfu = texts.get("mfu", "")
    m = _DTYPE_HOLDS.search(mfu)
    if not m:
        return []
    out = []
    if float(m.group(1)) < 100 * T("mfu_low.mfu") - _half_ulp(m.group(1)):
        out.append(f"one-cause: {where}: the MFU card blames the {m.group(2)} math at {m.group(1)}% of the "
                   f"{m.group(2)} peak, under the {100 * T('mfu_low.mfu'):g}% MFU a healthy step reaches")
    if _PRECISION_CANNOT.search(texts.get("sixteen_bit_share", "")):
        out.append(f"one-cause: {where}: the MFU card blames the {m.group(2)} math beside a 16-bit card saying "
                   f"precision cannot limit the step")
    return out


#: the MFU card's reason saying no matmul work is there: "no matmul, convolution or attention op is recorded", "holds no
#: matmul or convolution in any module"
_NO_MATMUL_SAID = re.compile(r"\bno matmul\b", re.I)


def mfu_kernels_problems(where: str, h: HostReport) -> list[str]:
    """``mfu-kernels`` (h37-mfugraph): the MFU card never says no matmul is there beside matmul kernels of the kept steps
    (``kernel_classes``: every kernel by class) -- sglang_b300_decode's and sglang_mi300x_decode's cards read "n/a: no
    matmul, convolution or attention op is recorded in the trace" over 193 and 181 GEMM/attention kernels a step
    replayed from graphs, whose replays record no op with shapes."""
    card = next((c for c in h.headline if c.id == "mfu"), None)
    if card is None or card.value is not None:
        return []
    why = " ".join(f"{card.display}; {card.meaning}".split())
    ran = sum(float(c.get("launches_per_step") or 0) for c in h.kernel_classes if c.get("class") == "matmul/conv")
    if _NO_MATMUL_SAID.search(why) and ran > 0:
        return [f"mfu-kernels: {where}: the MFU card says \"{_NO_MATMUL_SAID.search(why).group(0)}\" beside "
                f"{ran:g} matmul/conv kernels per step"]
    return []


def said_done_problems(where: str, findings: list[Finding]) -> list[str]:
    """``said-done`` (h37-review13): a saving never rests on doing what the finding's own words say is done already --
    copies that "already come from pinned memory, asynchronously" are not assumed to gain from "pinned memory and
    non_blocking copies" (streams_pinned_copies: its 45.8 ms saving assumed exactly that)."""
    out = []
    for f in findings:
        said = " ".join(f.summary.split())
        assumed = " ".join((f.saving.assumption if f.saving else "").split())
        # the pinning lever in any framework's words (``memcpy:levers``: PyTorch's, or the generic "pinned host memory")
        if "already come from pinned memory" in said and re.search(r"pinned (host )?memory and \w+ copies", assumed):
            out.append(f"said-done: {where}: {f.id} assumes pinned memory and non_blocking copies of copies it says "
                       f"already come from pinned memory, asynchronously")
    return out


#: "The 1 step holding them was left out": a step left out of the averages said to hold all of a finding's one-time costs
_HOLDING = re.compile(r"\bThe (\d+) steps? holding them (?:was|were) left out")


def held_within_problems(where: str, h: HostReport) -> list[str]:
    """``held-within`` (h37-review13): a step said to hold a time holds no more than it lasts.  "The 1 step holding
    them was left out" of one-time costs of T ms needs the steps left out as warm-up to last at least T: their own
    length where the report gives it (``steps.dropped[].ms``), else -- a first step left out lies before the first kept
    one -- the capture's time before the first kept step (nvllm_gb10_lost_tail: 631.8 ms of module loading "held" by a
    first step of 13.9 ms, which begins 255.6 ms into the capture; cloverleaf_a100_cuda: a 234.3 ms cudaMalloc before
    its left-out first step of 32.1 ms)."""
    steps = h.steps if isinstance(h.steps, dict) else {}
    warm = [d for d in steps.get("dropped") or [] if str(d.get("reason", "")).startswith("warm-up")]
    out = []
    for f in h.findings:
        said = _HOLDING.search(" ".join(f.summary.split()))
        held = ((f.metric.detail or {}) if f.metric else {}).get("one_time_ms")
        if not said or held is None or not warm:
            continue
        if all(d.get("ms") is not None for d in warm):
            bound, what = sum(float(d["ms"]) for d in warm), "last"
        else:
            rows = sorted((r for r in h.step_rows if r.gpu is None), key=lambda r: r.start_ms) or \
                sorted(h.step_rows, key=lambda r: r.start_ms)
            if not rows or any(d.get("step") is None or d["step"] >= rows[0].step for d in warm):
                continue
            bound = rows[0].start_ms - float((h.capture or {}).get("window_start_ms") or 0.0)
            what = "lie before the first kept step, which begins"
        if float(held) > bound * (1 + _REL) + _ABS_MS:
            out.append(f"held-within: {where}: {f.id} says {said.group(0)!r} of {float(held):.1f} ms of one-time "
                       f"costs, but the steps left out {what} {bound:.1f} ms")
    return out


#: a rate as printed: FLOP/s (or OP/s, 8-bit) and bytes/s, with its scale
_RATE = re.compile(r"(?<![\d.,])(\d[\d,]*(?:\.\d+)?) ?(P|T|G|M)(FLOP|OP)/s\b|(?<![\d.,])(\d[\d,]*(?:\.\d+)?) ?"
                   r"(T|G|M|Ti|Gi|Mi)B/s\b")
_SCALE = {"P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6, "Ti": 2.0 ** 40, "Gi": 2.0 ** 30, "Mi": 2.0 ** 20}


def _known_gpus(h: HostReport) -> list[tuple[str, tuple[int, int] | None]]:
    """The host's GPUs the report names: those that ran work (``gpus``), else the ones the profiled process listed
    (``job.gpus_listed``, "8 x NVIDIA H200"), with their compute capability where known."""
    def cc(g) -> tuple[int, int] | None:  # noqa: ANN001
        try:
            major, minor = str(g.compute_capability).split(".")
            return int(major), int(minor)
        except (AttributeError, ValueError):
            return None
    named = [(g.name, cc(g)) for g in h.gpus if g.name]
    if named:
        return named
    listed = str((h.job or {}).get("gpus_listed") or "")
    return [(re.sub(r"^\d+ x ", "", n.strip()), None) for n in listed.split(", ") if n.strip()]


def printed_rates(h: HostReport) -> list[tuple[str, str, float, str]]:
    """Every rate the host's report prints, as (where, as printed, value per second, "flops" | "bytes"): in any words
    of its JSON (findings, job, cards, notes) but the documents it quotes for a peak, and in any table's "TFLOP/s"
    column."""
    import json

    def said(v: Any) -> Iterable[str]:  # every string but a document quoted for a peak (``peak_source``: "MI250
        # 3,277 GB/s peak memory bandwidth, halved": the datasheet's figure, said as such)
        if isinstance(v, dict):
            for k, x in v.items():
                if not str(k).endswith("source"):
                    yield from said(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                yield from said(x)
        elif isinstance(v, str):
            yield v

    whole = json.loads(h.to_json())  # every word the host's report holds: findings, job, cards, tables, notes
    texts = [(f.get("id", "finding"), t) for f in whole.pop("findings", []) for t in said(f)]
    texts += [(key, t) for key, v in whole.items() for t in said(v)]
    out = []
    for where, text in texts:
        for m in _RATE.finditer(" ".join(str(text).split())):
            if m.group(1):
                out.append((where, m.group(0), float(m.group(1).replace(",", "")) * _SCALE[m.group(2)], "flops"))
            else:
                out.append((where, m.group(0), float(m.group(4).replace(",", "")) * _SCALE[m.group(5)], "bytes"))
    for where, t in _tables(h):
        for i, col in enumerate(t.columns):
            if col.strip() == "TFLOP/s":
                out += [(where, f"{col} {v:,.1f}", v * 1e12, "flops") for row in t.rows
                        if (v := _num(row[i] if i < len(row) else None)) is not None]
    return out


def peak_rate_problems(h: HostReport) -> list[str]:
    """``peak`` (h37-peak): no kernel beats its GPU's peak, so no rate the report prints (:func:`printed_rates`:
    FLOP/s in any words or TFLOP/s column, bytes/s) exceeds the best dense peak of any dtype, or the memory bandwidth
    (``devices.peaks``), of the GPUs the host names where they are known (:func:`_known_gpus`), beyond the margin the
    metrics themselves allow (``flops.max_peak_share``).  A rate over a duration that is not the work's device time (an
    op's asynchronous return on the host) is no GPU's speed: on main wild/gemm_h200_cuda_unrecorded read
    "`aten::matmul` ... returned after 84.7 us for 240.5 GFLOP (2.84 PFLOP/s)" on an H200 whose best peak is 1,979
    TFLOP/s (fp8)."""
    from tb_gpu_advisor import devices
    from tb_gpu_advisor.devices.peaks import DTYPES

    gpus = _known_gpus(h)

    def best(dtypes: Iterable[int]) -> float | None:
        return max((p.value for n, c in gpus for d in dtypes if (p := devices.peak_flops(n, c, d)) is not None),
                   default=None)

    band = [p.value for n, c in gpus if (p := devices.memory_bandwidth(n, c)) is not None]
    # the peaks the report itself took for its GPUs (the MFU card's): a name that does not say its variant (Intel's
    # "Data Center GPU Max 1550" by its memory) is told apart by what the pipeline read, which a name alone cannot
    own = [(m.detail or {}) for m in h.headline if m.id == "mfu"]
    said = {k: [float(d[k]) for d in own if isinstance(d.get(k), (int, float))]
            for k in ("peak_flops", "dtype_peak_flops", "memory_bandwidth")}
    top = {"flops": max([x for x in [best(DTYPES)] if x] + said["peak_flops"] + said["dtype_peak_flops"], default=None),
           "bytes": max(band + said["memory_bandwidth"], default=None)}
    margin = T("flops.max_peak_share")
    out = [f"peak: {h.host} {where}: {said!r} exceeds the best peak of the host's GPUs "
           f"({top[kind] / 1e12:,.1f} {'TFLOP/s' if kind == 'flops' else 'TB/s'})"
           for where, said, v, kind in printed_rates(h) if top[kind] and v > top[kind] * margin]
    for where, t in _tables(h):  # a row that names its dtype is held to that dtype's own peak
        if "TFLOP/s" in t.columns and "precision" in t.columns:
            i, k = t.columns.index("TFLOP/s"), t.columns.index("precision")
            roof = t.columns.index("roofline TFLOP/s") if "roofline TFLOP/s" in t.columns else None
            for row in t.rows:
                v, name = _num(row[i]), str(row[k])
                peak = best([devices.PRECISIONS.index(name)]) if name in devices.PRECISIONS else None
                if peak and roof is not None and (r := _num(row[roof])):  # the row's own roofline: its GPU's, as read
                    peak = max(peak, r * 1e12)
                if v is not None and peak and v * 1e12 > peak * margin:
                    out.append(f"peak: {where}: {row[0]} at {v:,.1f} TFLOP/s exceeds the {name} peak of the host's "
                               f"GPUs ({peak / 1e12:,.1f} TFLOP/s)")
    return out


def recorded_minority_problems(where: str, findings: list[Finding]) -> list[str]:
    """``recorded-minority`` (h37-review14): where most launches the runtime accepted lost their kernel records (the
    capture's ``lost_launch_share`` finding over a half), no finding about the recorded steps is critical -- they are
    the smaller part of the GPU work, and a critical claims the job's step (nvllm_gb10_lost_tail: small_grid critical
    on the 0.6% of its launches that kept a record)."""
    from tb_gpu_advisor.rules import _ABOUT_THE_CAPTURE, LOST_RECORDS_METRIC

    lost = [f.metric.value for f in findings if f.metric is not None and f.metric.id == LOST_RECORDS_METRIC]
    if not lost or not lost[0] or lost[0] <= 0.5:
        return []
    return [f"recorded-minority: {where}: {f.id} is critical on the recorded {1 - lost[0]:.1%} of the launches"
            for f in findings if f.severity == "critical" and (f.rule not in _ABOUT_THE_CAPTURE or f.saving)]


#: a finding saying the whole of its time is no step's ("no step's time holds it / them": it shortens the run)
_NO_STEPS_TIME = re.compile(r"no step's time holds (?:it|them)\b")


def no_steps_time_problems(where: str, findings: list[Finding]) -> list[str]:
    """``no-step-time`` (h37-review14): a finding that says no step's time holds its time saves no step time
    (rocprof_aiter_mi355x: "this gap lies between them ...: no step's time holds it" and "Assuming the gaps lie
    between the steps' windows" beside "saves ~7.84 ms/step (98% of step)" -- two gaps inside the guessed steps hold
    that, the 400.5 ms stretch outside them is the 92.7% said)."""
    out = []
    for f in findings:
        text = " ".join(f"{f.summary} {f.saving.assumption if f.saving else ''}".split())
        if f.saving is not None and f.saving.percent_of_step >= 0.5 and _NO_STEPS_TIME.search(text):
            out.append(f"no-step-time: {where}: {f.id} says no step's time holds its time, and saves "
                       f"{f.saving.percent_of_step:.1f}% of the step")
    return out


#: A sentence that claims how busy the GPU was: its utilization raised, its idle time (``unrecorded_gpu_claims``).
_GPU_BUSY_CLAIM = re.compile(r"\b(?:raises?|raising|would raise|raise) (?:the )?(?:device|GPU)(?:'s)? utili[sz]ation"
                             r"|\b(?:the )?GPU(?:'s)? idle(?: time)?\b|\bidle GPU\b|\bGPU (?:idles|idled|sits idle|sat idle"
                             r"|is idle|was idle)\b|\bdevice (?:idles|idled|is idle|was idle)\b", re.I)
#: ... unless the sentence says the capture cannot show it.
_CANNOT_SHOW = re.compile(r"cannot show|can't show|not in (?:it|this capture)|no record|not recorded|unrecorded|"
                          r"skipped|cannot be judged|not judged", re.I)


def no_gpu_work_recorded(h: HostReport) -> bool:
    """The host's capture holds no record of the GPU's work: no GPU ran a kernel and no copy is tabled."""
    return not any(g.kernel_count for g in h.gpus) and not (h.memcpy is not None and h.memcpy.rows)


def unrecorded_gpu_claims(h: HostReport) -> list[str]:
    """``no-gpu-work`` -- a capture that recorded no GPU work (:func:`no_gpu_work_recorded`: CUDA tracing off, the GPU
    tracer's records lost, a start-up-only window, a CPU-only XPlane) makes no claim of how busy its GPU was: no
    finding says its utilization would rise or names its idle time, except to say the capture cannot show it.  Why
    (h37-jax61): a Kineto trace with CUDA unrecorded and the allocator's events read "A larger batch raises device
    utilization" of a GPU whose work it never saw."""
    if not no_gpu_work_recorded(h):
        return []
    out = []
    for f in h.findings:
        for sentence in re.split(r"(?<=[.:;])\s+", _finding_text(f)):
            if _GPU_BUSY_CLAIM.search(sentence) and not _CANNOT_SHOW.search(sentence):
                out.append(f"no-gpu-work: {h.host}: {f.id} claims the GPU's use with no GPU work recorded: "
                           f"{sentence[:160]!r}")
    return out


def unrecorded_ranks(report: Report) -> list[str]:
    """The session's job ranks with no GPU work recorded beside ranks that ran it: each host's ``job.idle_rank_labels``
    (a node's ranks read as one host) and each host with no GPU work recorded (:func:`no_gpu_work_recorded`) where
    another host ran some; [] where every rank read ran GPU work."""
    hosts = [h for h in report.hosts if h.error is None]
    out = [str(x) for h in hosts for x in (h.job or {}).get("idle_rank_labels") or ()]
    if any(not no_gpu_work_recorded(h) for h in hosts):
        out += [h.host for h in hosts if no_gpu_work_recorded(h) and ((h.job or {}).get("kind") == "no_gpu" or
                (h.job or {}).get("runtime_vendor") or (h.job or {}).get("gpu_unrecorded"))]
    return out


#: A finding's sentence that reads a rate or a verdict off a collective's transfer: a bus bandwidth, a share of the
#: link, or the AllReduce against its expected time.
_TRANSFER_CLAIM = re.compile(r"GB/s of bus bandwidth|× the expected|x the expected")


def types_apart_from(report: Report) -> set[str]:
    """The collective types no process group of which holds a rank with no GPU work recorded: every GPU that ran the
    type lists its groups' ranks (``GpuSummary.collective_ranks``) and those ranks are all GPUs' of the session that
    ran work, or none of them is an unrecorded rank's number (``job.idle_rank_numbers``, where each idle rank's is
    known and no host file of its own is unrecorded).  A call waits only for its own group (h37-group63)."""
    gpus = [g for h in report.hosts if h.error is None for g in h.gpus if g.kernel_count]
    recorded = {g.rank for g in gpus if g.rank is not None}
    idle = [(h.job or {}).get("idle_rank_numbers") for h in report.hosts if h.error is None
            if (h.job or {}).get("idle_rank_labels")]
    numbers = ({x for n in idle for x in n} if all(isinstance(n, list) and all(x >= 0 for x in n) for n in idle)
               and len(unrecorded_ranks(report)) == sum(len(n) for n in idle) else None)
    out = set()
    for t in {t for g in gpus for t in g.collectives}:
        ran = [g for g in gpus if t in g.collectives]
        if not all(t in (g.collective_ranks or {}) for g in ran):
            continue
        members = {x for g in ran for x in g.collective_ranks[t]}
        if members <= recorded or numbers is not None and not members & numbers:
            out.add(t)
    return out


def unrecorded_rank_claims(report: Report) -> list[str]:
    """``no-gpu-rank`` -- a session holding ranks of the job whose GPU work was not recorded beside ranks that ran it
    (:func:`unrecorded_ranks`: a rank's trace written with CUDA activity off, its GPU records lost, a CPU-only process)
    reads no transfer off the recorded ranks' collectives -- no bus bandwidth, no AllReduce judged against its expected
    time: the rank that entered a call last may be the unrecorded one, so their least time in it holds waiting --;
    gives no such rank a row of the ranks table (its GPU time is unknown, not zero: no slowest GPU, no median of it);
    and says each such rank in a host's job line.  Why (norank61): a DDP job whose slow rank's GPU side went
    unrecorded read "32 MiB per call at 38.0 GB/s ... 8.4% of the link" and "17.8× the expected" of a 150 us
    transfer -- its recorded ranks' wait for it."""
    missing = unrecorded_ranks(report)
    if not missing:
        return []
    out = []
    apart = types_apart_from(report)  # a type whose groups hold none of them: its transfer is read
    for f in report.findings:
        for sentence in re.split(r"(?<=[.;])\s+", _finding_text(f)):
            if _TRANSFER_CLAIM.search(sentence) and not any(t in sentence for t in apart):
                out.append(f"no-gpu-rank: {f.id} reads a transfer with {missing[0]}'s GPU work unrecorded: "
                           f"{sentence[:160]!r}")
    # -- nor prints one in a table: the session's collectives and a finding's evidence (h37-review61b: "transfer ms"
    # 1.324 beside a finding that says the recorded ranks' traces cannot tell that time from the transfer)
    for where, tab in [("collectives table", report.collectives)] + [(f.id, e) for f in report.findings
                                                                      for e in f.evidence]:
        for col in ("transfer ms", "paid ms", "bus GB/s"):
            k = tab.columns.index(col) if tab is not None and col in tab.columns else None
            out += [f"no-gpu-rank: {where} prints {col} {row[k]} of {row[0]} with {missing[0]}'s GPU work unrecorded"
                    for row in (tab.rows if k is not None else ()) if row[k] is not None and row[0] not in apart]
    # -- nor the part of the exposed time the step pays for the transfer: the transfer read (h37-job62: "1.32 ms of
    # communication the step pays for" of a 150 us AllReduce)
    for f in report.findings:
        ran = {t for h in report.hosts if h.error is None for g in h.gpus if g.kernel_count for t in g.collectives}
        if f.rule in ("comm_exposed", "alltoall_imbalance") and not f.id.endswith("#host_calls") \
                and not (ran and ran <= apart):
            if f.metric is not None and (f.metric.detail or {}).get("paid_ms_per_step") is not None:
                out.append(f"no-gpu-rank: {f.id}'s metric reads paid_ms_per_step with {missing[0]}'s GPU work unrecorded")
            if "pays for" in f.summary:
                out.append(f"no-gpu-rank: {f.id} says what the step pays for with {missing[0]}'s GPU work unrecorded")
    t = report.ranks
    for row in (t.rows if t is not None else ()):
        out += [f"no-gpu-rank: ranks table row {row[0]!r} is the unrecorded {m}" for m in missing if m in str(row[0])]
    said = " ".join(str((h.job or {}).get("summary") or "") for h in report.hosts if h.error is None)
    out += [f"no-gpu-rank: {m} is said in no job line" for m in missing
            if m not in said and not any(h.host == m for h in report.hosts)]
    # a rank whose GPU side its calls show unrecorded (none at all, or launches whose kernels none was recorded;
    # ``job.unrecorded_rank_labels``, not a rank that only started up) leaves the session incomplete: never "healthy",
    # and the verdict says which (h37-verdict61)
    lost = [str(x) for h in report.hosts if h.error is None for x in (h.job or {}).get("unrecorded_rank_labels") or ()]
    if lost:
        if report.healthy or report.verdict.lower().startswith("healthy"):
            out.append(f"no-gpu-rank: the session is called healthy with {lost[0]}'s GPU work unrecorded: "
                       f"{report.verdict[:120]!r}")
        if len(lost) == 1 and lost[0] not in report.verdict or len(lost) > 1 and f"{len(lost)} ranks'" not in report.verdict:
            out.append(f"no-gpu-rank: the verdict does not say {lost[0]}'s GPU work was not recorded: {report.verdict[:120]!r}")
    return out


def in_capture_problems(h: HostReport) -> list[str]:
    """``in-capture`` -- a finding's trace window lies in the capture it points into: it ends at or before the
    capture's end (``window_start_ms + length_ms``, printed rounding aside), and so starts by it (an OOM's instant
    at the end is in).  Why (h37-audit31):
    the context around a spot was taken as if the trace ran on -- main's wild/mordred_rtx6000_hashjoin opened "gap
    after step 7 (40.0 ms)" at 6662.8 - 6742.8 ms of a 6703.0 ms capture, and three memory snapshots "a millisecond
    around the peak" past their ends (snapshot_nograd_bf16: to 16.088 ms of 15.781 ms).  Step rows are not held to
    it yet: a multi-rank Kineto host's last row carries the mean step and runs past its capture (random jobs 29, 31)."""
    length = (h.capture or {}).get("length_ms")
    if not length:
        return []
    end = float((h.capture or {}).get("window_start_ms") or 0.0) + float(length)
    return [f"in-capture: {h.host}: {f.id} window '{w.label}' {w.start_ms} - {w.end_ms} ms past the capture's end "
            f"{end:.3f} ms" for f in h.findings for w in f.windows if w.end_ms > end + 1e-3 or w.start_ms > end + 1e-3]


def window_ends_problems(where: str, findings: list[Finding]) -> list[str]:
    """``words`` of a finding's trace window (h37-review14): a window of some length never prints equal ends, as the
    text, markdown and tab print it (``common.fmt.ms_span``: ck_batched_gemm's 20 us step read "[2512.4 – 2512.4
    ms]", the OOM snapshot's "[297.6 – 297.6 ms]")."""
    from tb_gpu_advisor.common.fmt import ms_span

    out = []
    for f in findings:
        for w in f.windows:
            a, b = ms_span(w.start_ms, w.end_ms).removesuffix(" ms").split("–")
            if w.end_ms != w.start_ms and a == b:
                out.append(f"words: {where}: {f.id} window '{a} – {b} ms' of equal ends")
    return out


def untimed_verdict_problems(report: Report) -> list[str]:
    """``untimed-verdict`` (h37-review14): a report whose every host records memory and no GPU work (a memory snapshot:
    its header says "no step timed") never reads "Healthy" -- the time checks had nothing to time."""
    from tb_gpu_advisor.report.verdict import memory_only, verdict

    if report.hosts and all(memory_only(h) is not None for h in report.hosts) and verdict(report).startswith("Healthy"):
        return [f"untimed-verdict: '{verdict(report)}' of a capture that records memory and no GPU work"]
    return []


_GRAD_EVIDENCE = re.compile(r"kernels only a backward pass runs: (.*)")
_GRAD_ITEM = re.compile(r"`([^`]+)`(?: \(`([^`]+)`\))?")


def evidence_says_why_problems(where: str, h: HostReport) -> list[str]:
    """``says-why`` (h37-review14): each kernel the job names as "only a backward pass runs" shows, in its name or
    beside it, the word that makes it so -- never a short name any forward pass runs (the megatron NVTX form:
    "`at::native::vectorized_elementwise_kernel<…>`", whose ``<…>`` hid ``threshold_backward_kernel``)."""
    from tb_gpu_advisor import devices

    m = _GRAD_EVIDENCE.search(str((h.job or {}).get("kind_evidence") or ""))
    if not m:
        return []
    return [f"says-why: {where}: the job names `{a}` as a kernel only a backward pass runs, its name not saying why"
            for a, b in _GRAD_ITEM.findall(m.group(1)) if not devices.gradient_kernel_one(f"{a} {b}")]


_BF16 = re.compile(r"(?<!none for )(?<!no )\b(?:bf16|bfloat16)\b", re.I)


def no_bf16_problems(where: str, h: HostReport) -> list[str]:
    """``no-bf16`` (h37-review14): a host whose every active GPU is known to lack bfloat16 (a V100, a Turing card) is
    told of no bfloat16 in its findings and fixes but to say it has none (resnet50_num_workers_0 on a V100: "bfloat16
    autocast on the GPU needs 1.10 or newer" in its legacy autocast fix)."""
    from tb_gpu_advisor import devices
    from tb_gpu_advisor.rules._kernels import compute_capability

    gpus = [g for g in h.gpus if g.kernel_count]
    if not gpus or not all(devices.has_bf16(g.name, compute_capability(g)) is False for g in gpus):
        return []
    out = []
    for f in h.findings:
        text = " ".join([f.title, f.summary] + [a.text for a in f.actions] + [f.saving.assumption if f.saving else ""])
        out += [f"no-bf16: {where}: {f.id} says '{m.group(0)}' to a GPU without it" for m in _BF16.finditer(text)]
    return out


_PRECISION_RULES = ("mixed_precision_off", "tensor_core_unused")


def bf16_fix_problems(where: str, h: HostReport) -> list[str]:
    """``bf16-fix`` (h37-review15): a precision finding that advises bf16 in its own words ("enable mixed precision
    (bf16)", fp32 GEMMs whose peak "becomes bf16's") on a host whose every active GPU is known to have bf16 Tensor Cores (an
    A100, an H100) gives a fix that names bfloat16 -- never float16 alone (an A100 under PyTorch 1.8-1.10 was told
    float16 autocast alone, once review14 trimmed the legacy fix's bfloat16 aside for a V100).  A finding about
    something else (fp16 kernels off the Tensor Cores for their misaligned shapes, its peaks named in passing) is not
    one."""
    from tb_gpu_advisor import devices
    from tb_gpu_advisor.rules._kernels import compute_capability

    gpus = [g for g in h.gpus if g.kernel_count]
    if not gpus or not all(devices.has_bf16(g.name, compute_capability(g)) for g in gpus):
        return []
    out = []
    for f in h.findings:
        if f.rule not in _PRECISION_RULES or not f.actions:
            continue
        if not re.search(r"\(bf16\)|becomes bf16's", f"{f.summary} {f.saving.assumption if f.saving else ''}"):
            continue
        said = " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions)
        if "bfloat16" not in said and "bf16" not in said:
            out.append(f"bf16-fix: {where}: {f.id} advises a GPU with bf16 Tensor Cores in float16 alone")
    return out


#: The copies table's directions whose events each copy category of the ledger books (written here, not read from
#: the code: the law checks the code's map).
_COPY_CATEGORY_DIRECTIONS = {"memcpy_h2d": ("h2d",), "memcpy_d2h": ("d2h",), "memcpy_d2d": ("d2d", "p2p", "other"), "memset": ("memset",)}
#: What rounding the copies table's ms/step (4 decimals) may hide: a fill of 1.5 us a step is no rounding.
_TABLE_HALF_ULP_MS = 1e-4


def copy_own_problems(h: HostReport) -> list[str]:
    """``copy-own``: a one-GPU host's ledger category of copies or fills is at most the time per step its own events
    run (the copies table's ``ms/step`` of the directions it books; no table: none ran): the ledger paints an instant
    of a copy's category only while one of its events runs.  Why: the ledger booked a memset's time as ``memcpy_d2d``
    while the copies finding called it a fill, so a host with memsets and no device copy
    (``wild/mordred_rtx6000_hashjoin``, 1.83 memsets per step) showed a device-to-device copy that never ran
    (h37-fill30); and the table read a copy's direction from its name while the ledger read the copy call's, so ROCm's
    blit copies (``__amd_rocclr_copyBuffer.kd`` under ``hipMemcpyHtoDAsync``) were booked and no row
    (``wild/jax_mi300x``: 3.1 us of H2D and 1.3 us of D2D a step, an empty table; h37-rocmcopy30).  One GPU only:
    the table's rows are a mean over GPUs, the host's breakdown one GPU's step."""
    t = h.memcpy
    if len(h.gpus) != 1:
        return []
    own: dict[str, float] = {}
    if t is not None and "direction" in t.columns and "ms/step" in t.columns:
        di, mi = t.columns.index("direction"), t.columns.index("ms/step")
        own = {str(r[di]): float(_num(r[mi]) or 0.0) for r in t.rows}
    out = []
    for cat, dirs in _COPY_CATEGORY_DIRECTIONS.items():
        booked = float((h.breakdown_ms or {}).get(cat) or 0.0)
        runs = sum(own.get(d, 0.0) for d in dirs)
        if booked > runs * (1 + _REL) + _TABLE_HALF_ULP_MS:
            out.append(f"copy-own: {h.host}: breakdown {cat} {booked:.4f} ms/step, its own events "
                       f"({', '.join(dirs)}) run {runs:.4f} ms/step")
    return out


#: The copy table's column of the copy time no kernel ran beside, and the copies finding's (one quantity)
_EXPOSED_COLUMNS = {"table": "exposed ms/step", "finding": "blocking ms"}


def _exposed_by_direction(t: Table | None, column: str) -> dict[str, float]:
    """Direction (lower case: the finding writes ``H2D``) -> the ``column`` value of its row in ``t``."""
    if t is None or "direction" not in t.columns or column not in t.columns:
        return {}
    di, ci = t.columns.index("direction"), t.columns.index(column)
    return {str(r[di]).lower(): float(_num(r[ci]) or 0.0) for r in t.rows}


def copy_exposed_problems(h: HostReport) -> list[str]:
    """``copy-exposed``: the copy time no kernel ran beside has one value on every screen.  On a one-GPU host the copy
    table's "exposed ms/step" of a host copy or a fill is its ledger category (at most the direction's own ms/step) and
    a device copy's at most ``memcpy_d2d``; the copies finding's "blocking ms" of a direction is the table's.  Why: the
    table added the kernels' wait for Unified Memory pages migrated under them (kernel time), capped at the copies'
    own time: wild/counted_steps_rtx3090_solver read H2D "exposed" 0.0062 ms a step (managed_flag_rtx3090_solver
    0.0053) where the ledger booked ``memcpy_h2d`` 0 -- the copies ran under kernels (h37-marks68).  The kernels' wait
    has a column of its own.  One GPU only, as :func:`copy_own_problems`; and only where the report keeps a ledger: a
    window without GPU work has none (``metrics.compute._without_gpu_step``: its breakdown all 0, its copies still
    tabled -- wild/input_only_rtx4090_unetr's 197 ms of uploads and no step)."""
    if len(h.gpus) != 1 or not any(v for v in (h.breakdown_ms or {}).values()):
        return []
    table = _exposed_by_direction(h.memcpy, _EXPOSED_COLUMNS["table"])
    own = _exposed_by_direction(h.memcpy, "ms/step")
    bd = h.breakdown_ms or {}
    out = []
    for cat, dirs in _COPY_CATEGORY_DIRECTIONS.items():
        booked = float(bd.get(cat) or 0.0)
        for d in (x for x in dirs if x in table):
            want = min(booked, own.get(d, 0.0))
            off = table[d] - want if cat == "memcpy_d2d" else abs(table[d] - want)  # device copies: measured, at most
            if off > _REL * max(want, table[d]) + _TABLE_HALF_ULP_MS:
                out.append(f"copy-exposed: {h.host}: the copy table's {d} exposed {table[d]:.4f} ms/step, the ledger's "
                           f"{cat} {booked:.4f} ms/step")
    for f in h.findings:
        if f.rule != "excessive_memcpy":
            continue
        for t in f.evidence:
            for d, v in _exposed_by_direction(t, _EXPOSED_COLUMNS["finding"]).items():
                if d in table and abs(v - table[d]) > _REL * max(v, table[d]) + _TABLE_HALF_ULP_MS:
                    out.append(f"copy-exposed: {f.id}: {d} blocking {v:.4f} ms/step, the copy table's exposed "
                               f"{table[d]:.4f}")
    return out


#: The copies finding's words for its uploads' time run while the GPU idled for the host anyway (written here, not read
#: from the code: the law checks the code's words); main's ("X per step of the copies' time ...") and ours ("another X")
_ANYWAY = re.compile(r"(?:another )?" + _TIME + r" [a-z ]*?of the copies' time ran while the GPU would have idled anyway")


#: The copies finding's lead: the time the copies block the GPU and its share of the step
_BLOCK_SHARE = re.compile(r"^Copies block the GPU for .*? \((\d+(?:\.\d+)?)%\)")


def copy_anyway_problems(h: HostReport) -> list[str]:
    """``copy-anyway``: an upload's microsecond is booked once.  The copies finding's printed share of the step is the
    share it grades (its metric): no part of the copy time it says blocks the GPU is also said to cost the step
    nothing; and on a one-GPU host the ledger's ``memcpy_h2d`` and the uploads' time the finding says ran while the
    GPU would have idled for the host anyway are together at most the H2D copies' own time per step (the copies
    table's ``h2d`` row).  Why: the off-path part was said apart by the finding ("graded is the rest") but still
    booked as ``memcpy_h2d`` by the ledger, so one microsecond was both the copy's and "costs the step nothing", and
    the host's findings never claimed it (h37-copystream61's Left 4; wild ``d2d_v100``: "Copies block the GPU for
    16.5 ms ... (13.8%)" graded 13.3%)."""
    t = h.memcpy
    runs = None
    if len(h.gpus) == 1 and t is not None and "direction" in t.columns and "ms/step" in t.columns:
        di, mi = t.columns.index("direction"), t.columns.index("ms/step")
        runs = sum(float(_num(r[mi]) or 0.0) for r in t.rows if str(r[di]) == "h2d")
    booked = float((h.breakdown_ms or {}).get("memcpy_h2d") or 0.0)
    out = []
    for f in h.findings:
        if f.rule != "excessive_memcpy":
            continue
        said = " ".join(f.summary.split())
        b = _BLOCK_SHARE.search(said)
        if b and f.metric is not None and f.metric.value is not None and \
                abs(float(b.group(1)) - 100 * f.metric.value) > 0.05 + 1e-9:
            out.append(f"copy-anyway: {f.id}: copies said to block the GPU for {b.group(1)}% of the step, graded "
                       f"{100 * f.metric.value:.2f}%")
        m = _ANYWAY.search(said)
        if runs is None or m is None:
            continue
        anyway = _ms(m.group(1), m.group(2))
        if booked + anyway > runs * (1 + _REL) + _time_half_ulp(m.group(1)) * _UNIT_MS[m.group(2)] + _TABLE_HALF_ULP_MS:
            out.append(f"copy-anyway: {h.host}: breakdown memcpy_h2d {booked:.4f} ms/step and {anyway:.4f} ms/step "
                       f"said off the critical path, of H2D copies running {runs:.4f} ms/step")
    return out


#: How an inferred GPU name gives its reasons (written here, not read from the code: the law checks the code's words).
_INFERRED_FROM = " (inferred from "


def name_once_problems(h: HostReport) -> list[str]:
    """``name-once``: an inferred GPU name's reasons are said in the GPUs table, never in a finding's words.  Why: a
    finding names its GPU in each sentence it judges it by, and the inferred T4's 60-character reasons came with it
    each time (h37-review30)."""
    if not any(g.name and _INFERRED_FROM in g.name for g in h.gpus):
        return []
    out = []
    for f in h.findings:
        text = " ".join([f.title, f.summary, f.saving.assumption if f.saving else ""] + [a.text for a in f.actions])
        if _INFERRED_FROM.strip() in text:
            out.append(f"name-once: {h.host} {f.id}: an inferred GPU's reasons in the finding's words")
    return out


def surface_facts_problems(report: Report) -> list[str]:
    """``surface-facts``: every surface gives the facts the report knows.  The MCP summary's host carries the job's
    ``host_loop`` and ``no_gpu_step`` (counting no step where it times none), the GPUs' count and the step's ledger
    (every category holding time, ``memset`` too); its findings what they free; its cards why they read as they do
    where the text says it; the tab's display names each GPU as a sentence does, never with an inferred name's
    reasons, and the summary's GPUs are the names the tab's host line prints.  Why: the summary quoted the job's
    line but none of those keys, and gave "n/a" and a null saving where the text said why and what a finding frees;
    the tab's hover carried the reasons (h37-surfaces31); the summary's GPUs kept them, one model named otherwise
    there than on the tab (h37-review31)."""
    import json

    from tb_gpu_advisor.report import render
    from tb_gpu_advisor.report.view import display
    from tb_gpu_advisor.serve.mcp_server import summary_json

    out: list[str] = []
    summary = json.loads(summary_json(report, top=len(report.findings)))
    for h, said in zip(report.hosts, summary["hosts"], strict=True):
        job = h.job or {}
        for key in ("host_loop", "no_gpu_step"):
            if said.get(key) != (job.get(key) or None):
                out.append(f"surface-facts: {h.host}: the summary's {key} {said.get(key)!r} vs the report's {job.get(key)!r}")
        if job.get("no_gpu_step") and said.get("steps"):
            out.append(f"surface-facts: {h.host}: the summary counts {said['steps']} steps of a host that times none")
        if said.get("gpu_count") != len(h.gpus):
            out.append(f"surface-facts: {h.host}: the summary counts {said.get('gpu_count')} GPUs of {len(h.gpus)}")
        held = {k for k, v in (h.breakdown_ms or {}).items() if isinstance(v, (int, float)) and v > 0}
        if h.error is None and set(said.get("breakdown_ms") or {}) != held:
            out.append(f"surface-facts: {h.host}: the summary's ledger {sorted(said.get('breakdown_ms') or {})} vs "
                       f"{sorted(held)}")
    frees = {f.id: f.saving_bytes for f in report.findings if f.rule != "healthy" and f.saving_bytes}
    for f in summary["findings"]:
        if f.get("frees_bytes") != frees.get(f["id"]):
            out.append(f"surface-facts: {f['id']}: the summary frees {f.get('frees_bytes')} of {frees.get(f['id'])} bytes")
    for m, card in zip(report.headline, summary["headline"], strict=True):
        if card.get("note") != render.card_note(m):
            out.append(f"surface-facts: card {m.id}: the summary's note {card.get('note')!r} vs the text's")
    for h, shown, said in zip(report.hosts, display(report)["hosts"], summary["hosts"], strict=True):
        for g in (shown or {}).get("gpus") or []:
            if _INFERRED_FROM.strip() in (g.get("name") or ""):
                out.append(f"surface-facts: {h.host} GPU{g.get('gpu')}: the tab's name carries an inferred name's reasons")
        # the summary's GPU names are the tab's host line's ("2 GPUs: NVIDIA T4"), once each (h37-review31)
        tab = sorted({g.get("name") or gs.name for g, gs in zip((shown or {}).get("gpus") or [{}] * len(h.gpus), h.gpus,
                                                                  strict=True)})
        if said.get("gpus") != tab:
            out.append(f"surface-facts: {h.host}: the summary's GPUs {said.get('gpus')} vs the tab's {tab}")
    return out


def report_violations(report: Report) -> list[str]:
    """Every property a report breaks (module doc), one line each; empty when it holds them all."""
    hosts = {h.host: h for h in report.hosts if h.error is None}
    out: list[str] = []
    for h in hosts.values():
        step = host_step_ms(h)
        for f in h.findings:
            out += _text_parts(f.id, _finding_text(f), step)
            out += _count_text(f.id, f"{_finding_text(f)} {f.saving.assumption if f.saving else ''}", h)
            out += _detail_parts(f, step) + _recovers_within_ledger(f, h.breakdown_ms) + ranges_within_claim(f.id, f)
            out += input_account_problems(f.id, f) + own_floor_problems(h.host, f)
            out += _recovers_within_classes(f, h.kernel_classes) + _detail_within_classes(f, h.kernel_classes)
            out += count_value_problems(h.host, f) + share_of_time_problems(h.host, f)
            out += zero_share_problems(f"{h.host}: {f.id}", _finding_text(f)) + _metric_zero_problems(h.host, f)
        out += every_fix_within_step(h.host, h.achievable, h.breakdown_ms) + title_count_problems(h.host, h.findings)
        out += every_fix_above_floor(h.host, h.achievable, h.breakdown_ms, h.findings)
        for where, t in _tables(h):
            out += table_problems(where, t, h, hosts)
        out += _host_parts(h) + _card_values(h) + ledger_share_problems(h) + memory_offset_problems(h) + copy_own_problems(h) + copy_anyway_problems(h)
        out += copy_exposed_problems(h)
        out += name_once_problems(h)
        out += severity_problems(h.host, h.findings) + ceiling_problems(h.host, h.findings) + in_use_problems(h.host, h)
        out += order_problems(h.host, h.findings) + every_fix_problems(h.host, h.findings, h.achievable)
        out += _words(h, h.findings) + fix_once_problems(h.host, h.findings) + fix_given_problems(h.host, h.findings)
        out += window_once_problems(h.host, h.findings) + claims_once_problems(h.host, h.findings, h.breakdown_ms)
        out += loop_once_problems(h.host, h.findings, (h.job or {}).get("capture_advice") or "")
        out += period_problems(h.host, h) + launcher_part_problems(h.host, h) + window_value_problems(h.host, h) + gpu_count_problems(h.host, h) + per_rank_problems(h)
        out += one_step_problems(h) + others_problems(h.host, sum(1 for g in h.gpus if g.kernel_count), h.findings)
        out += card_quiet_problems(h.host, h) + ruled_out_fix_problems(h.host, h.findings) + limit_name_problems(h.host, h)
        out += fix_twice_problems(h.host, h.findings) + premise_fix_problems(h.host, h.findings)
        out += version_said_problems(h.host, h) + waits_at_problems(h.host, h.findings)
        out += release_fit_problems(h.host, h) + memory_savings_problems(h) + memory_unit_problems(h)
        out += unmarked_problems(h)
        out += snippet_lang_problems(h.host, h.findings) + rest_of_nothing_problems(h.host, h.findings)
        out += left_out_problems(h.host, h.findings) + no_steady_problems(h.host, h)
        out += within_judged_problems(h.host, h.findings) + own_work_problems(h.host, h.findings)
        out += framework_words_problems(h.host, h)
        out += held_within_problems(h.host, h) + graph_launch_problems(h.host, h.findings)
        out += one_cause_problems(h.host, h) + said_done_problems(h.host, h.findings)
        out += mfu_kernels_problems(h.host, h)
        out += peak_rate_problems(h) + recorded_minority_problems(h.host, h.findings)
        out += no_steps_time_problems(h.host, h.findings) + window_ends_problems(h.host, h.findings)
        out += in_capture_problems(h) + unrecorded_gpu_claims(h)
        out += evidence_says_why_problems(h.host, h) + no_bf16_problems(h.host, h) + uncut_problems(h)
        out += bf16_fix_problems(h.host, h)
        out += one_pass_words_problems(h) + no_gpu_step_problems(h.host, h) + unrecorded_reason_problems(h.host, h)
        out += table_whole_problems(h)
    out += no_gpu_session_step_problems(report) + unrecorded_rank_claims(report)
    session = [f for f in report.findings if f.host is None]
    if hosts and all(isinstance(h.steps, dict) and h.steps.get("count") == 1 for h in hosts.values()):
        out += one_step_problems(next(iter(hosts.values())), session, "session: ")
    out += others_problems("session", sum(sum(1 for g in h.gpus if g.kernel_count) for h in hosts.values()), session)
    session_step = max((s for s in (host_step_ms(h) for h in hosts.values()) if s), default=None)
    for f in report.findings:
        if f.host is None:  # merged over hosts or session-wide: the slowest host's step is the whole
            out += _text_parts(f.id, _finding_text(f), session_step) + _count_text(f.id, _finding_text(f))
            out += count_value_problems("session", f)
            for t in f.evidence:
                out += table_problems(f.id, t, None, hosts)
    for name in ("ranks", "collectives"):
        t = getattr(report, name)
        if t is not None:
            out += table_problems(f"session {name}", t, None, hosts)
    out += _collective_values(report) + _rank_values(report) + _words(None, report.findings)
    out += order_problems("session", report.findings) + severity_problems("session", report.findings)
    out += ceiling_problems("session", report.findings)
    if len(hosts) == 1:
        out += every_fix_problems("session", report.findings, report.achievable)
        out += every_fix_above_floor("session", report.achievable, next(iter(hosts.values())).breakdown_ms,
                                     report.findings)
    out += every_fix_within_step("session", report.achievable)
    shown = rendered(report)  # the text and the markdown, rendered once for the three laws that read them
    out += agree_problems(report) + surfaces_loop_problems(report, shown) + surface_steps_problems(report, shown)
    out += start_up_promise_problems(report, shown)
    out += table_scope_problems(report) + untimed_verdict_problems(report)
    out += see_also_problems(report)
    out += capture_advice_problems(report) + surface_facts_problems(report)
    out += snippet_lang_problems("session", report.findings) + rest_of_nothing_problems("session", report.findings)
    out += left_out_problems("session", report.findings)
    return sorted(set(out))


def rendered(report: Report) -> dict[str, str]:
    """The text and the markdown report of ``report`` (every finding: ``top=None``), as the laws that read a surface
    take them (``shown``): :func:`report_violations` renders them once for all three, a test that calls one law alone
    (or edits the report between calls) gets them rendered afresh."""
    from tb_gpu_advisor.report import render

    return {"text": render.to_text(report, top=None), "markdown": render.to_markdown(report, top=None)}


def surfaces_loop_problems(report: Report, shown: dict[str, str] | None = None) -> list[str]:
    """``loop-once`` over every surface that shows the report: the text report, the MCP server's capture advice and
    the tab's payload (the report's JSON, as the plugin serves it); ``shown``: :func:`rendered` of this report."""
    import json

    from tb_gpu_advisor.serve.mcp_server import capture_advice_text

    shown = shown or rendered(report)
    surfaces = {"text": shown["text"], "markdown": shown["markdown"],
                "mcp capture_advice": capture_advice_text(report),
                "tab payload": "\n".join(_strings(json.loads(report.to_json())))}
    return [p for name, text in surfaces.items() for p in surface_loop_problems(name, text, report)]


def _plain(text: str) -> str:
    """Text as read, whatever surface printed it: markdown's escapes and code spans, wrapping and indents dropped."""
    text = re.sub(r"\\(.)", r"\1", text).replace("`", "").replace("&lt;", "<").replace("&amp;", "&")
    return " ".join(text.split())


def start_up_promise_problems(report: Report, shown: dict[str, str] | None = None) -> list[str]:
    """``no-promise`` (h37-startonly): a report whose header says its window holds no steady step ("start-up only:
    one pass of 33.7 ms, no steady step") promises no step time: no surface's "if every fix lands" line prints one
    ("step ~1.55 ms instead of 33.7 ms" on SGLang's graph capture at start-up, 2.00 ms on vLLM's), and the MCP
    summary gives no achievable step.  Read from what the surfaces print, not from the predicate that made them
    (``shown``: :func:`rendered` of this report)."""
    import json

    from tb_gpu_advisor.report import render
    from tb_gpu_advisor.serve.mcp_server import summary_json

    shown = shown or rendered(report)
    text = shown["text"]
    said = "no steady step)" in text.split("\n", 1)[0]
    if not said:
        return _json_promise_problems(report, said)
    surfaces = {"text": _plain(text), "markdown": _plain(shown["markdown"]),
                "tab": _plain(render.achievable_text(report))}
    out = [f"no-promise: {name}: a start-up-only window promises a step time: "
           f"'{t[t.index('If every fix lands'):][:80]}'" for name, t in surfaces.items()
           if re.search(r"If every fix lands: \w+ ~", t)]
    if json.loads(summary_json(report)).get("achievable_step_ms") is not None:
        out.append("no-promise: mcp summary: a start-up-only window gives an achievable step")
    return out + _json_promise_problems(report, said)


def _json_promise_problems(report: Report, said: bool) -> list[str]:
    """``no-promise`` on the JSON itself (h37-startjson): the account the surfaces read is the one that decides, so a
    start-up-only report's ``achievable`` (the session's; a one-host report's host's too) holds no achievable step and
    says why, and an account that withholds its step does so only under a header saying "no steady step" -- the
    number is not made and then hidden by each reader."""
    accounts = [("json", report.achievable or {})]
    if len(report.hosts) == 1:
        accounts.append((f"json host {report.hosts[0].host}", report.hosts[0].achievable or {}))
    out = []
    for name, a in accounts:
        if not a:
            continue
        if said and (a.get("achievable_step_ms") is not None or not a.get("reason")):
            out.append(f"no-promise: {name}: a start-up-only window's account holds an achievable step "
                       f"{a.get('achievable_step_ms')!r} (reason {a.get('reason')!r})")
        if not said and (a.get("achievable_step_ms") is None or a.get("reason")):
            out.append(f"no-promise: {name}: the account withholds its step ({a.get('reason')!r}) under a header "
                       f"that reads a steady step")
    return out


def surface_steps_problems(report: Report, shown: dict[str, str] | None = None) -> list[str]:
    """``every-surface``: each host's steps note (how its steps were found, which were dropped) is on the text and the
    markdown report alike (h37-review8: the markdown never said it -- snapshot_adam_iterations' dropped warm-up
    iteration, 2 allocations of 16.2 MiB, was the text report's alone); ``shown``: :func:`rendered` of this report."""
    from tb_gpu_advisor.report.verdict import no_gpu_step

    notes = [(h, h.steps["note"]) for h in report.hosts  # a host without steps: its title says so
             if isinstance(h.steps, dict) and h.error is None and h.steps.get("note") and not no_gpu_step(h.job or {})]
    if not notes:  # no note to look for: nothing rendered
        return []
    shown = shown or rendered(report)
    surfaces = {"text": _plain(shown["text"]), "markdown": _plain(shown["markdown"])}
    out = []
    for h, note in notes:
        for name, text in surfaces.items():
            if _plain(note) not in text:
                out.append(f"every-surface: {name}: {h.host}'s steps note is not said: '{note[:60]}'")
    return out


def diff_violations(diff: dict, base: Report, new: Report) -> list[str]:
    """A diff's per-step times (breakdown groups in ms/step; kernel classes, kernels and ops in us/step) within the
    step per GPU of their side."""
    out = []
    steps = {"base": (diff.get("base") or {}).get("step_ms"), "new": (diff.get("new") or {}).get("step_ms")}
    for key, scale in (("breakdown", 1.0), ("kernel_classes", 1e-3), ("kernels", 1e-3), ("ops", 1e-3)):
        for ch in diff.get(key) or []:
            for side in ("base", "new"):
                v, step = ch.get(side), steps[side]
                if v is not None and step and _over(v * scale, step):
                    out.append(f"part<=whole: diff {key} {ch.get('label')!r} {side} {v:,.1f} "
                               f"{'ms' if scale == 1.0 else 'us'}/step in a {step:.1f} ms step")
    return out + diff_table_whole_problems(diff) + card_noise_problems(diff)


def _beyond(part: float, whole: float) -> bool:
    """A sum of rounded parts over its whole beyond what the rounding (3 decimals a row) and a thousandth may hide."""
    return part > whole * 1.001 + 0.01


def diff_table_whole_problems(diff: dict) -> list[str]:
    """``table-whole`` on a diff: the kernel changes and the op changes of a side, summed, are at most that side's
    kernel classes summed -- the screen shows them under the classes, in one unit (us/step, each microsecond once).
    Main: a diff of wild/extrap_parallel_kernels_gtx1060 read its kernels from their own durations, 895.6 ms/step
    under 467.9 ms/step of classes (h37-classsum33 *Left* 1, h37-coldshare34)."""
    out = []
    for side in ("base", "new"):
        whole = sum(ch.get(side) or 0.0 for ch in diff.get("kernel_classes") or [])
        if not whole:
            continue
        for key in ("kernels", "ops"):
            part = sum(ch.get(side) or 0.0 for ch in diff.get(key) or [])
            if _beyond(part, whole):
                out.append(f"table-whole: diff {key} {side} sum {part:,.1f} us/step over the kernel classes' "
                           f"{whole:,.1f} us/step they are shown under")
    return out


def table_whole_problems(h: HostReport) -> list[str]:
    """``table-whole``: a table's parts never exceed the whole they are shown under.  The kernels table's ``wall us``
    and the ops table's ``kernel wall us`` (each kernel's part of the GPU's time, each microsecond once), summed per
    step and GPU, are at most the kernel classes' ``us_per_step`` summed; and each class's ``us_per_step`` (each
    microsecond once) is at most its ``kernel_us_per_step`` (its kernels' own durations)."""
    classes = h.kernel_classes or []
    whole = sum(c.get("us_per_step") or 0.0 for c in classes)
    out = []
    for c in classes:
        own, once = c.get("kernel_us_per_step"), c.get("us_per_step")
        if own is not None and once is not None and _beyond(once, own):
            out.append(f"table-whole: {h.host}: kernel class {c.get('class')!r} {once:,.3f} us/step once over its "
                       f"kernels' own {own:,.3f} us/step")
    # per step and per GPU the classes are shared among (``metrics.types.sharing_ranks``: the GPUs that ran kernels
    # anywhere in the window, not only in the kept steps; random form12 seed 70368: GPU0's GEMMs lie outside its
    # steps and it still shares them).  The report lists the GPUs that ran something: at least those, never fewer
    per = float((h.steps or {}).get("count") or 1) * max(1, len(h.gpus))
    for name, col in (("kernels", "wall us"), ("ops", "kernel wall us")):
        t = getattr(h, name)
        if t is None or col not in t.columns or not classes:
            continue
        i = t.columns.index(col)
        part = sum(_num(r[i]) or 0.0 for r in t.rows) / per
        if _beyond(part, whole):
            out.append(f"table-whole: {h.host}: the {name} table's {col!r} sums to {part:,.1f} us/step over the "
                       f"kernel classes' {whole:,.1f} us/step")
    return out


def card_noise_problems(diff: dict) -> list[str]:
    """``card-noise`` (h37-review14): a headline card is better or worse only by more than the step's noise allows.
    A card is a ratio of times over the steps whose spread gives the step's noise, so a change the step calls noise
    ("no change beyond the noise (±3.30 ms)") is no card's betterment: a card moved by at most the step's relative
    noise (``noise_ms`` / base step, at least the floor ``diff.noise_floor_share``) says no direction."""
    st = diff.get("step") or {}
    share = T("diff.noise_floor_share")
    if st.get("noise_ms") is not None and st.get("base_ms"):
        share = max(share, st["noise_ms"] / st["base_ms"])
    out = []
    for m in diff.get("headline") or []:
        b, n = m.get("base"), m.get("new")
        if m.get("better") is not None and b is not None and n is not None and abs(n - b) <= share * abs(b):
            out.append(f"card-noise: diff headline {m.get('label')!r} {m.get('base_display')} -> "
                       f"{m.get('new_display')} said {'better' if m['better'] else 'worse'}, a change of "
                       f"{abs(n - b) / abs(b):.1%} within the step's noise ({share:.1%} of its value)")
    return out
