"""Findings that contradict their own numbers, the run or the hardware (issue #21 item 3): one checker, many walks.

Each pattern below was seen in a real report and fixed at its cause; the checker keeps it from coming back.  It reads
only the report (what a user reads), so it can walk every demo and real report:

* a fix the trace shows in use is recommended (``capture.applied``: torch.compile on a compiled run, ``fused=True``
  beside fused optimizer kernels, CUDA graphs beside graph launches);
* a comparison whose numbers do not say it ("~1.2 us each -- about the 20-40 us launch latency itself");
* "1 <noun>s";
* float16 advice on a GPU whose fix is bfloat16 (Ampere and newer);
* a title of "many small kernels" over a summary that says the kernels are not small;
* channels_last advice to a run without convolutions;
* the same quantity printed with two values in one finding's summary and its metric;
* (issues #27, #37) a warning or critical finding that saves under ``severity.warning_min_saving`` of the step, a
  critical one under ``severity.critical_min_saving``;
* a straggler saving more than its own lead before the collectives;
* a card past its own printed threshold shown green;
* "If every fix lands" speaking of another step than the report's header, or leaving out a job finding's saving;
* a verdict that is not "Healthy" when nothing is a warning or critical;
* an op table calling no op eager beside a finding that counts eager ops.

:func:`context_problems` (issue #36) holds the words to what the report knows: the job's kind, the GPU's vendor,
whether the GPU is named, which copy a finding is about, a GPU side the capture lost.
"""

from __future__ import annotations

import itertools
import re

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.model.schema import Finding, HostReport, Report

_AGAINST = re.compile(r"~([\d.]+) us each -- about the ([\d.]+)-([\d.]+) us launch latency itself")
_PLURAL_ONE = re.compile(r"(?<![\d.,])1 (kernels|steps|calls|ops|findings|chains|recurring chains|GEMMs|ranks|GPUs)\b")
_FP16_ADVICE = re.compile(r"mixed precision \(fp16\)|mixed_float16|dtype=torch\.float16|float16 with loss scaling")


#: a dtype a finding tells the user about ("bf16 dims must be ...", "fp16 and fp8 dims ...", "(int8: 16)")
_DTYPE_CLAIM = re.compile(r"\b(fp16|bf16|fp8|int8|tf32)\b(?=(?: and (?:fp16|bf16|fp8|int8|tf32))* dims\b|: \d+\))")


def _dtype_problems(f: Finding) -> list[str]:
    """A finding that names a dtype names one the kernels it cites ran (their evidence's ``precision`` column)."""
    ran = {str(r[t.columns.index("precision")]) for t in f.evidence or [] if "precision" in t.columns for r in t.rows}
    if not ran:
        return []
    named = set(_DTYPE_CLAIM.findall(_text(f)))
    return [f"{f.id}: names {d} dims, the kernels it cites ran {sorted(ran)}" for d in sorted(named - ran)]


def _text(f: Finding) -> str:
    return " ".join([f.title, f.summary] + [a.text + " " + (a.snippet or "") for a in f.actions])


def finding_problems(f: Finding, host: HostReport | None) -> list[str]:
    """Every way one finding contradicts itself, its run or its GPU."""
    out = []
    cap = host.capture if host is not None and isinstance(host.capture, dict) else {}
    fw = frameworks.get(cap.get("framework") or "unknown")
    applied = cap.get("applied") or {}
    for a in f.actions:
        why = fw.applied(a, applied)
        if why:
            out.append(f"{f.id}: recommends '{a.text[:60]}...' although the trace shows {why}")
    for m in _AGAINST.finditer(f.summary):
        us, lo, hi = (float(x) for x in m.groups())
        if not lo / 2 <= us <= hi * 1.5:
            out.append(f"{f.id}: {us} us called 'about' the {lo:g}-{hi:g} us launch latency")
    for m in _PLURAL_ONE.finditer(_text(f)):
        out.append(f"{f.id}: '{m.group(0)}'")
    ampere = any(_cc(g.compute_capability) >= 8.0 for g in (host.gpus if host else []) if _cc(g.compute_capability))
    if ampere and _FP16_ADVICE.search(_text(f)) and "bf16" not in _text(f) and "bfloat16" not in _text(f):
        out.append(f"{f.id}: float16 advice on an Ampere-or-newer GPU, where bfloat16 needs no loss scaling")
    if host is not None and any("channels_last" in (a.snippet or "") + a.text for a in f.actions) and not _convs(host):
        out.append(f"{f.id}: channels_last advice on a run without convolutions")
    out += _dtype_problems(f)
    if "many small kernels" in f.title and "not small kernels" in f.summary:
        out.append(f"{f.id}: title says many small kernels, summary says not small kernels")
    if f.metric is not None and f.metric.unit == "share" and f.metric.value is not None:
        label = re.escape(f.metric.label.split(":")[0].lower())
        for m in re.finditer(rf"([\d.]+)% of {label}", f.summary.lower()):
            if abs(float(m.group(1)) / 100 - f.metric.value) > 0.011:
                out.append(f"{f.id}: summary says {m.group(0)}, metric {f.metric.display}")
    return out


def _convs(host: HostReport) -> bool:
    """The host's kernel table holds a convolution (by op type or cuDNN/MIOpen kernel name)."""
    t = host.kernels
    return t is not None and any(re.search(r"conv|fprop|dgrad|wgrad", " ".join(str(c) for c in row[:3]), re.I)
                                 for row in t.rows)


def _cc(s: object) -> float:
    try:
        return float(s) if s else 0.0
    except (TypeError, ValueError):
        return 0.0  # an AMD GFX name: no NVIDIA generation


def report_problems(report: Report) -> list[str]:
    """Every contradiction of every finding of a report (session findings against their first host), and of the
    report's own lines against each other (issue #27 items 1-8)."""
    hosts = {h.host: h for h in report.hosts}
    out = []
    for h in report.hosts:
        for f in h.findings:
            out += finding_problems(f, h)
        out += _cards_past_threshold(h.headline, h.host)
        out += _eager_table(h)
    for f in report.findings:
        out += finding_problems(f, hosts.get(f.host or (f.hosts[0] if f.hosts else ""), report.hosts[0] if report.hosts else None))
    out += _session_problems(report)
    return sorted(set(out))


def _severity_vs_saving(f: Finding) -> list[str]:
    if f.saving is None or f.severity not in ("critical", "warning"):
        return []
    pct = f.saving.percent_of_step
    if pct < 100 * T("severity.warning_min_saving"):
        return [f"{f.id}: {f.severity} but saves {pct:.2f}% of the step"]
    if f.severity == "critical" and pct < 100 * T("severity.critical_min_saving"):
        return [f"{f.id}: critical but saves {pct:.1f}% of the step"]
    return []


def _straggler_lead(f: Finding) -> list[str]:
    d = f.metric.detail if f.rule == "rank_straggler" and f.metric is not None else {}
    lead = d.get("straggler_busy_extra_ms")
    if lead is not None and f.saving is not None and f.saving.ms_per_step > lead + 1e-3:
        return [f"{f.id}: saves {f.saving.ms_per_step:.3f} ms, more than the straggler's {lead:.3f} ms lead"]
    return []


def _cards_past_threshold(cards: list, where: str) -> list[str]:
    """A card shown green although its value is past the threshold printed beside it."""
    out = []
    for c in cards or []:
        if c.status != "good" or c.value is None or c.threshold is None:
            continue
        below = c.good_direction == "higher"
        if (below and c.value < c.threshold) or (not below and c.value > c.threshold):
            out.append(f"{where}: card {c.id} is good at {c.display} past its threshold {c.threshold:g}")
    return out


def _eager_table(h: HostReport) -> list[str]:
    """An op table whose eager column says no op is eager beside a finding that counts eager ops."""
    t = h.ops
    eager = [f for f in h.findings if f.rule == "eager_execution" and f.severity in ("critical", "warning")]
    if t is None or not eager or "eager" not in t.columns:
        return []
    i = t.columns.index("eager")
    return [] if any(row[i] for row in t.rows) else [f"{h.host}: eager_execution fires but no op is eager in the table"]


def _session_problems(report: Report) -> list[str]:
    out = []
    a = report.achievable or {}
    bad = [f for f in report.findings if f.severity in ("critical", "warning")]
    if a and report.ranks is not None and len(report.ranks.rows) > 1:
        job_ids = {f.id for f in bad if f.saving is not None and f.host is None and not f.hosts} | \
                  {f.id for f in bad if f.rule in ("rank_straggler", "node_straggler", "comm_exposed")}
        missing = job_ids - set(a.get("findings") or [])
        if missing:
            out.append(f"achievable leaves out the job findings {sorted(missing)}")
    if not bad and report.verdict and not report.verdict.startswith(("Healthy", "not analysed", "no check", "partial")):
        out.append(f"verdict '{report.verdict[:60]}' with no warning or critical finding")
    for f in report.findings:
        out += _severity_vs_saving(f) + _straggler_lead(f)
    return out


# --------------------------------------------------------------------------- words fit the context (issue #36)

#: Words only a training job's advice may hold (an unhedged "; check convergence", the training step's names, what
#: training alone keeps in memory).
_TRAINING_ONLY = re.compile(r"training loop|\btrain_step\b|jit the whole training step|[;.] check convergence|"
                            r"optimizer state|keeps them for the backward pass|saved for a backward pass|"
                            r"bfloat16 needs no loss scaling")
#: A claim about this GPU's generation: only where the capture names the GPU.
_GPU_CLAIM = re.compile(r"this GPU has fp16 Tensor Cores|this GPU's Tensor Cores have no bfloat16|"
                        r"(?:Tensor|Matrix) Cores of (?:the )?GPU\b")
#: NVIDIA's names for what another vendor's user calls otherwise (``devices/amd.py``, ``devices/intel.py`` ``WORDS``).
_NVIDIA_UNITS = r"(?-i:\bCUPTI\b)|tensor core|\bTC eligible|CUDA graph|cudaMalloc|cudaFree|(?-i:\bSMs\b|\bNCCL\b|cuDNN|cuBLAS\b)|nvidia-smi|thread blocks?\b"
#: ROCm's names (``devices/amd.py``): never on another vendor's GPU.
_ROCM_UNITS = r"Matrix Cores?\b|\bMFMA\b|MIOpen|rocBLAS|hipBLASLt|\bRCCL\b|rocm-smi|HIP graph|hipMalloc|hipFree|\bROCm\b"
#: Intel's names (``devices/intel.py``): never on another vendor's GPU.
_INTEL_UNITS = r"\bXMX\b|oneDNN|oneMKL|oneCCL|xpu-smi|SYCL graph|Xe (?:cores?|Link)\b|sycl::"
#: CUDA itself and NVIDIA's tools (a CUDA device, the CUDA runtime, NVTX ranges): never the words for a GPU PyTorch
#: drives as ``xpu`` -- ROCm's PyTorch keeps ``torch.cuda``, so an AMD GPU's report may say them.  A citation of
#: NVIDIA's tools names them as written (Nsight Systems' 'CUDA Async Memcpy with Pageable Memory' rule): quotes are
#: left out (:func:`_unquoted`).
_CUDA_ITSELF = r"\bCUDA\b|\bNVIDIA\b|\bNVTX\b|device='cuda'|torch\.cuda\b"
#: CUDA's own tools, calls and GPU generations, which a program on an AMD GPU cannot use: Nsight's and NVTX's C API
#: (``nsys``, ``nvtxRangePushA``), the CUDA runtime's and libraries' calls (``cudaMemPrefetchAsync``,
#: ``cublasSetMathMode``), NVIDIA's generations ("Ampere and newer").  Checked in code too, where ``_FOREIGN`` is not:
#: ROCm's PyTorch keeps ``torch.cuda`` (``torch.cuda.nvtx`` writes roctx there), but a HIP program's snippet has no
#: ``nsys profile`` to run (h37-rocsteps); NVIDIA's profilers by name (Nsight Systems, Nsight Compute) and a CUDA
#: build or driver to install, which a ROCm install has none of (h37-hiprocm36: a HIP window that lost its kernel
#: records was told "a PyTorch build made for the installed driver's CUDA, or ... Nsight Systems").
_CUDA_TOOLS = re.compile(r"\bnsys\b|\bncu\b|\bnvtx[A-Z]\w*|(?<![\w.])cuda[A-Z]\w*|\bcu(?:blas|dnn|fft)[A-Z]\w*|"
                         r"\bCUBLAS_\w+|--trace=cuda|\s-t cuda|\bnvidia-smi\b|\bCUPTI\b|\bNsight\b|"
                         r"\bdriver's CUDA\b|\bCUDA (?:build|toolkit|driver)\b|"
                         r"\b(?:Volta|Turing|Ampere|Hopper|Blackwell)\b")
#: ROCm's own calls and tools, which a program on an NVIDIA or Intel GPU cannot use: the HIP runtime's calls
#: (``hipMemcpy``, ``hipLaunchKernelGGL``, ``hipDeviceGetAttribute``), hipCUB, rocBLAS's C API, roctx ranges and the
#: rocprof tools.  Checked in what such a host is told to do, words and code (h37-words32: the AMD twin of
#: :data:`_CUDA_TOOLS`; ``small_grid``'s vendor fixes name each vendor's launch and library calls).
_ROCM_TOOLS = re.compile(r"(?<![\w.])hip[A-Z]\w*|\bhipcub::|\brocblas_\w+|\broctx[A-Z]\w*|\brocprof\w*")
#: Intel's own calls and APIs, which a program on another vendor's GPU cannot use: SYCL's (``sycl::malloc_device``),
#: PyTorch's ``xpu`` device and profiler activity, Intel's tools.  Checked in what a host of another vendor's GPU is
#: told to do, words and code (h37-words63: the twin of :data:`_CUDA_TOOLS` and :data:`_ROCM_TOOLS`).
_INTEL_TOOLS = re.compile(r"\bsycl::\w+|\btorch\.xpu\b|ProfilerActivity\.XPU\b|device='xpu'|\.to\('xpu'\)|"
                          r"\bxpu-smi\b|\bVTune\b|\bPYTORCH_XPU_ALLOC_CONF\b")
#: CUDA's device as PyTorch's code names it, which ROCm's PyTorch keeps (``torch.cuda``, ``device='cuda'``,
#: ``ProfilerActivity.CUDA``) but a program on an Intel GPU spells ``xpu`` (h37-words63: a steady window's fix told
#: an Intel GPU ``activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]``).
_CUDA_DEVICE_CODE = re.compile(r"ProfilerActivity\.CUDA\b|\btorch\.cuda\.|device='cuda'|\.cuda\(\)|\bPYTORCH_CUDA_ALLOC_CONF\b")
#: Each vendor's GPU -> the tools and APIs of another vendor, in what its host is told to do (fixes' words and code,
#: the job's capture advice).
_TOOLS = {"AMD": (_CUDA_TOOLS, _INTEL_TOOLS), "Intel": (_CUDA_TOOLS, _CUDA_DEVICE_CODE, _ROCM_TOOLS),
          "NVIDIA": (_ROCM_TOOLS, _INTEL_TOOLS),
          # a GPU of no known vendor (``devices.unknown``): no vendor's tools, and PyTorch's device as a placeholder
          "unknown": (_CUDA_TOOLS, _CUDA_DEVICE_CODE, _ROCM_TOOLS, _INTEL_TOOLS),
          # NVIDIA's or AMD's (``devices.nccl_gpu``): PyTorch's ``cuda`` device, no vendor's own tools (h37-late67)
          "nvidia_or_amd": (_CUDA_TOOLS, _ROCM_TOOLS, _INTEL_TOOLS)}
#: CUDA named as a word of the prose (not PyTorch's ``torch.cuda`` / ``ProfilerActivity.CUDA``, which ROCm's PyTorch
#: keeps, nor a quoted name): ROCm's runtime is HIP, its tracer roctracer -- "no CUDA activity", "the CUDA sync debug
#: mode" on an AMD GPU (h37-window62, h37-words63; none in the kept captures' reports).
_CUDA_WORD = r"(?-i:(?<![\w.'])CUDA(?![\w.']))"
#: Each vendor's GPU -> the words that are another vendor's (checked in what a user reads, not in code).
_FOREIGN = {"AMD": re.compile(f"{_NVIDIA_UNITS}|{_INTEL_UNITS}|{_CUDA_WORD}", re.I),
            "Intel": re.compile(f"{_NVIDIA_UNITS}|{_ROCM_UNITS}|{_CUDA_ITSELF}", re.I),
            "NVIDIA": re.compile(f"{_ROCM_UNITS}|{_INTEL_UNITS}", re.I),
            # a GPU of no known vendor: no vendor's units, libraries or runtime by name (h37-vendor64)
            "unknown": re.compile(f"{_NVIDIA_UNITS}|{_ROCM_UNITS}|{_INTEL_UNITS}|{_CUDA_ITSELF}|Tensor-Core", re.I),
            # NVIDIA's or AMD's: no vendor's units or libraries, CUDA only as PyTorch's device names it
            "nvidia_or_amd": re.compile(f"{_NVIDIA_UNITS}|{_ROCM_UNITS}|{_INTEL_UNITS}|{_CUDA_WORD}|\\bNVTX\\b|Tensor-Core",
                                        re.I)}
#: A quoted name of several words (a tool's rule): cited as written (``device='cuda'`` is code, not a citation; the
#: apostrophe of "Nsight Systems'" opens no quote).
_QUOTED = re.compile(r"(?<!\w)'[^'\s][^'\n]* [^'\n]*'|(?<!\w)\"[^\"\s][^\"\n]* [^\"\n]*\"")


def _unquoted(text: str) -> str:
    """``text`` without its quoted names (a citation keeps the words it cites)."""
    return _QUOTED.sub(" ", text)


def _vendor(h: HostReport) -> str:
    """The vendor whose words a host's texts must be in: the one its report shows by its own facts
    (``json_fields.shown_vendor``: its GPUs' names, the GPUs its file lists, the runtime of a window that lost its GPU
    records), else the one it claims (``capture.vendor``: read from evidence no field shows -- a ROCm trace's
    ``hipLaunchKernel`` calls), else NVIDIA, the profilers' default."""
    from tests.support.json_fields import shown_vendor

    shown = shown_vendor({"gpus": [{"name": g.name} for g in h.gpus], "job": h.job or {}})
    claimed = (h.capture or {}).get("vendor") if isinstance(h.capture, dict) else None
    return shown or (claimed if claimed in _FOREIGN else None) or "NVIDIA"


def _foreign(vendor: str, text: str) -> list[str]:
    """Another vendor's words in ``text`` read on ``vendor``'s GPU."""
    pattern = _FOREIGN.get(vendor)
    return [m.group(0) for m in pattern.finditer(_unquoted(text))] if pattern else []


#: A data-parallel job's words (h37-review2: "Raise the per-rank batch size" to one GPU's training loop).
_DATA_PARALLEL = re.compile(r"\bper-rank\b")
#: Python advice: not for a compiled program (job tag ``native_host``: no Python process made the host events).
_PYTHON_ADVICE = re.compile(r"\.item\(\)|DataLoader|print\(loss\)")
#: The sync fix (values pulled to the host mid-step): not the lead fix of a host-to-device copy finding.
_SYNC_FIX = re.compile(r"\.item\(\)|device-to-host|np\.asarray\(x\) waits", re.I)


def _prose_of(f: Finding) -> str:
    """A finding's words, without its code (code keeps the framework's own API names on every GPU); the saving's
    assumption and the metric's label and meaning are words the user reads too."""
    return " ".join([f.title, f.summary] + [a.text for a in f.actions] + ([f.saving.assumption] if f.saving else [])
                    + ([f.metric.label, f.metric.meaning] if f.metric else []))


#: Code in a markdown rendering: fenced blocks and inline spans (code keeps the framework's API names on every GPU).
_MD_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def _labels_of(h: HostReport) -> list[tuple[str, str]]:
    """(where, words) of every label a host's renderings print beside its findings: the headline cards' labels and
    meanings, and the legend the tab draws its charts with (``/runs``' legend in the words of ``capture.vendor``,
    as ``serve/static/format.legendFor`` picks it)."""
    from tb_gpu_advisor.report.legend import legend

    served = legend()
    vendor = (h.capture or {}).get("vendor") if isinstance(h.capture, dict) else None
    drawn = {**served, **served.get("vendors", {}).get(vendor, {})}
    out = [(f"card {c.id}", f"{c.label} {c.meaning}") for c in h.headline or []]
    for section in ("categories", "idle", "kinds", "groups", "memory"):
        out += [(f"legend {section}/{c['id']}", c["label"]) for c in drawn.get(section, [])]
    return out


def _rendered_prose(report: Report) -> str:
    """The markdown rendering (the text one prints the same prose) without its code: what a reader reads."""
    from tb_gpu_advisor.report import render

    return markdown_prose(render.to_markdown(report))


def markdown_prose(markdown: str) -> str:
    """``markdown`` (``render.to_markdown`` of a report) without its code: the ``prose`` that
    :func:`vendor_words_problems` reads, for a caller that rendered the markdown already."""
    return _MD_CODE.sub(" ", markdown)


def _gpu_known(h: HostReport) -> bool:
    """The capture names the GPU it ran on: a product name or an architecture, not a bare ``GPU:0``."""
    return any(g.compute_capability not in (None, "", "-") for g in h.gpus)


def _internal_ids() -> "re.Pattern[str]":
    """Rule ids (``misaligned_dims``) and step source ids (``trace_train``, ``whole_capture``) as they would leak into
    prose: a user reads the finding's title or the source in words, never the JSON's id."""
    import tb_gpu_advisor.rules  # noqa: F401 - importing the rules fills their registry
    from tb_gpu_advisor.rules.registry import REGISTRY

    from tb_gpu_advisor.steps.types import SOURCE_LABEL

    ids = sorted(k for k in REGISTRY if "_" in k) + sorted(k for k in SOURCE_LABEL if "_" in k)
    return re.compile(r"(?<![\w`'-])(%s)(?![\w`'])" % "|".join(map(re.escape, ids)))


def _card_words(h: HostReport, findings: list[Finding]) -> list[str]:
    """A headline card's grading note beside the findings (h37-review2): "did not fire" where its check's finding is in
    the report (amd_mi250: the launch and 16-bit cards said so beside "Launch-bound" and "Mixed precision is off"
    notes), or a rule id in its words (cloverleaf: "it is theirs (host_sync, excessive_memcpy)")."""
    from tb_gpu_advisor.rules.registry import card_rule

    out = []
    for c in h.headline or []:
        words = str((c.detail or {}).get("not_flagged") or "")
        if "did not fire" in words and any(f.rule == card_rule(c.id) for f in findings):
            out.append(f"{h.host}: card {c.id} says its check did not fire beside its finding")
        for m in _internal_ids().finditer(words):
            out.append(f"{h.host}: card {c.id}: an internal id in the words: '{m.group(0)}'")
    return out


#: "rank" as a sentence says it; a row's label naming the trace's own rank ("rank 11 (node1/GPU3)") is a name
_RANK_WORD = re.compile(r"\b[Rr]anks?\b(?! \d)")


def _one_process_ranks(h: HostReport, findings: list[Finding]) -> list[str]:
    """One process driving several GPUs (``capture.processes`` 1: TF MirroredStrategy, a JAX process's devices) has
    no ranks: its findings' words, tables included, count GPUs (h37-left20 made ``JobView.unit`` say so; h37-left26
    made the job rules' sentences ask it)."""
    cap = h.capture if isinstance(h.capture, dict) else {}
    if cap.get("processes") != 1 or len({g.gpu for g in h.gpus}) < 2:
        return []
    out = []
    for f in findings:
        words = " ".join([_prose_of(f)] + [t.title + " " + " ".join(map(str, t.columns)) for t in f.evidence])
        if (m := _RANK_WORD.search(words)) is not None:
            out.append(f"{h.host}/{f.id}: 'rank' said of one process's GPUs: '{words[max(0, m.start() - 40):m.end() + 20]}'")
    return out


def _one_process_job(report: Report) -> bool:
    """The whole job is one process: one host file whose one process drives every GPU of the job -- several GPUs
    (DataParallel, TF MirroredStrategy: its collectives are among its own GPUs), or one GPU that talks to no other
    process.  A DDP rank's file is one process too, but its collectives talk to the job's other processes, and an
    MPI rank's calls of its communication library show in the gaps' evidence; a file that names a world of several
    ranks (``job.job_ranks``) is a rank's."""
    if len(report.hosts) != 1:
        return False
    h = report.hosts[0]
    if ((h.job or {}).get("job_ranks") or 0) > 1:  # the file names its job's world of ranks (distributedInfo):
        return False  # a rank's file, its window without collective (h37-damage70: the two-writer file, rank 2 of 4)
    cap = h.capture if isinstance(h.capture, dict) else {}
    collectives = h.communication is not None and bool(h.communication.rows)
    library = any(t.title.startswith("Communication libraries'") for f in _all_findings(report) for t in f.evidence)
    return cap.get("processes") == 1 and (len({g.gpu for g in h.gpus}) > 1 or not (collectives or library))


def _all_findings(report: Report) -> list[Finding]:
    return list(report.findings) + [f for h in report.hosts for f in h.findings]


def _code_of(f: Finding) -> str:
    return " ".join(a.snippet or "" for a in f.actions)


#: A training step's words in code: the loop's step, autograd's backward, an optimizer's update (by name, or a
#: multi-tensor update over the parameters: h37-auditleft31, ``small_grid``'s ``torch._foreach_mul_(params, 0.9)`` to
#: hf_qwen_h100's forward passes), loss scaling.
_TRAINING_CODE = re.compile(r"\btrain_step\b|\.backward\(|\boptimizer\b|\bopt\.step\b|GradScaler"
                            r"|_foreach_\w+\(params\b")
#: The checks whose fixes run the job's own step in their code (PyTorch's ``looped_fixes``: a loop, a sync read, an
#: input check, autocast around the step; TensorFlow's: the step defined under tf.function or XLA, run by
#: ``strategy.run``, several per call), and the job rules, whose fixes ask the job's context too (h37-left34).
_STEP_CODE_RULES = ("input_bound", "host_op_placement", "host_sync", "excessive_memcpy", "step_gaps", "capture_quality",
                    "mixed_precision_off", "tensor_core_unused", "launch_bound", "eager_execution", "xla_not_used",
                    "sequential_gpus", "comm_exposed", "alltoall_imbalance", "rank_straggler", "node_straggler",
                    "comm_bandwidth_low", "small_grid")
#: A fix's hedge for work whose kind is not known: "(in training, check convergence ...)" (JAX's
#: ``batch_size_headroom``, h37-auditleft31), "(the forward pass; in training also the backward pass ...)" (JAX's jit
#: of the step, h37-words32).
_TRAINING_HEDGE = re.compile(r"\(in training, |\bin training also\b", re.IGNORECASE)
#: A training step's words in a fix's prose: a hedge's "in training", the optimizer's update, a "training step" (not
#: "backward pass": "no loss scaling is needed without a backward pass" is a forward pass's own fix).  h37-words32:
#: JAX's jit fix told forward passes "in training also the backward pass and the optimizer update".
_TRAINING_PROSE = re.compile(r"\bin training\b|\boptimizer update\b|\btraining step\b", re.IGNORECASE)
#: Capture advice written for a training loop: Keras' TensorBoard callback (it profiles ``fit``'s batches only), a
#: window "of steady-state training", a step marked as training's (h37-left43: TensorFlow's one text for every job;
#: h37-audit68: JAX's ``StepTraceAnnotation('train', ...)``, one text for every JAX job, told to the forward passes of
#: wild/jax_eager_mi300x_attention, jax_eager_mi300x_elementwise and jax_mi300x on base 225b624d).
_TRAINING_CAPTURE = re.compile(r"profile_batch|steady-state training\b|(?:Trace|StepTraceAnnotation)\('train'")
#: PyTorch's capture advice, as its snippet opens (the schedule's steps after warm-up).
_CAPTURE_ADVICE = "capture a few steady-state steps after warm-up"


def job_words_problems(report: Report) -> list[str]:
    """Words and code a finding gives that the job the report knows does not fit (issue #37, h37-left29): "rank" to a
    job of one process (prose and code; a row's label naming its own rank is a name), a training step's code to
    forward passes, a serving engine, GPU work of no known kind or a window without GPU work, and the per-rank capture advice lost by a job of
    several processes that each trace themselves."""
    out: list[str] = []
    if _one_process_job(report):
        for f in _all_findings(report):
            words = _prose_of(f) + " " + _code_of(f) + " " + " ".join(
                t.title + " " + " ".join(map(str, t.columns)) for t in f.evidence)
            if (m := _RANK_WORD.search(words)) is not None:
                out.append(f"{f.id}: 'rank' said to a one-process job: '{words[max(0, m.start() - 40):m.end() + 20]}'")
        view = report.ranks
        if view is not None and _RANK_WORD.search(" ".join([view.title, *map(str, view.columns)])):
            out.append(f"ranks view: one process's GPUs in a table of ranks: {view.title!r} {view.columns}")
    for h in report.hosts:
        kind = (h.job or {}).get("host_kind") or (h.job or {}).get("kind")  # no GPU record: what the host names
        cap = h.capture if isinstance(h.capture, dict) else {}
        mine = list(h.findings) + [f for f in report.findings if f.host in (None, h.host)]
        # a window without GPU work (``no_gpu``) says nothing of a training step either: its capture advice (an
        # Nsight window's NVTX range) names a step of its own (h37-left37: nsys_windows' five exports, a native CUDA
        # U-Net among them, were told to mark ``train_step``)
        if kind in ("inference", "serving", "unknown", "no_gpu"):
            for f in (f for f in mine if f.rule in _STEP_CODE_RULES):
                for a in f.actions:
                    if (m := _TRAINING_CODE.search(a.snippet or "")) is not None:
                        out.append(f"{h.host}/{f.id}: a training step's code to {kind} work: '{m.group(0)}'")
                    if f.rule == "capture_quality" and (m := _TRAINING_CAPTURE.search(a.snippet or "")) is not None:
                        out.append(f"{h.host}/{f.id}: a training loop's capture advice to {kind} work: '{m.group(0)}'")
                    if kind in ("inference", "serving") and (m := _TRAINING_PROSE.search(a.text)) is not None \
                            and "inference" in ((h.job or {}).get("tags") or ()):
                        out.append(f"{h.host}/{f.id}: a training step's words to {kind} work: '{m.group(0)}'")
            advice = (h.job or {}).get("capture_advice") or ""
            if (m := _TRAINING_CODE.search(advice) or _TRAINING_CAPTURE.search(advice)) is not None:
                out.append(f"{h.host}/job: a training loop's capture advice to {kind} work: '{m.group(0)}'")
        if kind == "training":  # a hedge for work of no known kind, told to a job known to train (h37-auditleft31)
            for f in mine:
                for a in f.actions:
                    if (m := _TRAINING_HEDGE.search(a.text)) is not None:
                        out.append(f"{h.host}/{f.id}: a hedge for an unknown kind to training work: '{m.group(0)}'")
        ranks = (h.communication is not None and bool(h.communication.rows) and cap.get("processes") is not None
                 and cap["processes"] >= len({g.gpu for g in h.gpus}) >= 1)
        if ranks and cap.get("framework") == "pytorch":
            for f in mine:
                for a in f.actions:
                    if a.snippet and _CAPTURE_ADVICE in a.snippet and "one trace per rank" not in a.snippet:
                        out.append(f"{h.host}/{f.id}: the capture advice to a rank of a job of several processes "
                                   f"does not say to trace every rank")
    return sorted(set(out))


def _host_findings(report: Report, h: HostReport) -> list[Finding]:
    """A host's findings and the session's findings about it."""
    return list(h.findings) + [f for f in report.findings if (f.host or (f.hosts[0] if f.hosts else None)) == h.host]


def vendor_words_problems(report: Report, prose: str | None = None, truth: str | None = None) -> list[str]:
    """Another vendor's words where a user reads them (:data:`_FOREIGN`): each finding's prose, the tables' titles and
    columns, the cards' and the legend's labels, the fixes the trace shows in use, and the markdown (``prose``: its
    rendering without code, made here when not given) of a report whose GPUs are one vendor's.  ``truth``: the
    vendor the file shows by construction (``unknown`` for a generated file that names none), held to whatever the
    report claims -- a window that names no vendor, read as NVIDIA's, said NVIDIA's words consistently with its
    own claim (h37-vendor66)."""
    out: list[str] = []
    for h in report.hosts:
        vendor = truth or _vendor(h)
        findings = _host_findings(report, h)
        for f in findings:
            out += [f"{h.host}/{f.id}: another vendor's words on an {vendor} GPU: '{w}'"
                    for w in _foreign(vendor, _prose_of(f))]
        for where, words in _labels_of(h):
            out += [f"{h.host}: {where} says '{w}' on an {vendor} GPU" for w in _foreign(vendor, words)]
        for t in [h.kernels, h.ops] + [t for f in findings for t in f.evidence]:
            bad = [w for part in ([t.title] + list(t.columns) if t is not None else []) for w in _foreign(vendor, part)]
            if bad:
                out.append(f"{h.host}: table '{t.title}' has another vendor's words {bad} on an {vendor} GPU")
        for k, v in (h.capture or {}).get("applied", {}).items() if isinstance(h.capture, dict) else []:
            out += [f"{h.host}: capture.applied[{k}] says '{w}' on an {vendor} GPU" for w in _foreign(vendor, v)]
        out += _tools_problems(h, findings, vendor)
    vendors = {truth or _vendor(h) for h in report.hosts}
    if len(vendors) == 1:
        prose = _rendered_prose(report) if prose is None else prose
        out += [f"markdown: another vendor's words on an {v} GPU: '{w}'" for v in vendors for w in _foreign(v, prose)]
    return sorted(set(out))


def _tools_problems(h: HostReport, findings: list[Finding], vendor: str) -> list[str]:
    """Another vendor's own tools and APIs (:data:`_TOOLS`) in what a host of ``vendor``'s GPU is told to do: each
    fix's words and code, and the job's capture advice -- CUDA's on an AMD or Intel GPU (h37-rocsteps), ROCm's and
    Intel's off theirs (h37-words32, h37-words63)."""
    said = [(f"{f.id} fix", a.text or "") for f in findings for a in f.actions]
    said += [(f"{f.id} code", a.snippet or "") for f in findings for a in f.actions]
    said.append(("capture advice", (h.job or {}).get("capture_advice") or ""))
    return [f"{h.host}: {where} says '{m.group(0)}' on an {vendor} GPU" for where, text in said
            for pattern in _TOOLS.get(vendor, ()) for m in pattern.finditer(_unquoted(text))]


def context_problems(report: Report) -> list[str]:
    """Words that do not fit what the report itself knows (issue #36 deliverable 2): the job's kind, the GPU's vendor,
    whether the GPU is known, the copy a finding is about, and a GPU side the capture lost."""
    out: list[str] = []
    for h in report.hosts:
        job = h.job or {}
        findings = _host_findings(report, h)
        for f in findings:
            words = _prose_of(f)
            if job.get("kind") in ("inference", "serving") and _TRAINING_ONLY.search(words):
                out.append(f"{h.host}/{f.id}: training words to a {job['kind']} job: "
                           f"'{_TRAINING_ONLY.search(words).group(0)}'")
            if "profile the whole step" in f.summary and f.actions and "instead of the whole run" in f.actions[0].text:
                out.append(f"{h.host}/{f.id}: the summary says to profile the whole step, the fix a short window "
                           f"instead of the whole run (torchrec_a100_stalls, h37-review2)")
            if f.rule == "comm_exposed" and f.metric is not None and (f.metric.detail or {}).get("ranks") == 1 \
                    and "(the GPU)" in f.summary:
                out.append(f"{h.host}/{f.id}: one rank's collectives said of 'the GPU', a one-GPU job's words "
                           f"(h37-review2)")
            if "will run out of memory" in f.title and "by design" in f.summary:
                out.append(f"{h.host}/{f.id}: a title that warns of running out of memory over a summary that calls "
                           f"the peak the design (vllm_mi300x_capture, h37-review2)")
            if "native_host" in job.get("tags", ()) and _PYTHON_ADVICE.search(_text(f)):
                out.append(f"{h.host}/{f.id}: Python advice to a compiled program: '{_PYTHON_ADVICE.search(_text(f)).group(0)}'")
            if h.gpus and not _gpu_known(h) and _GPU_CLAIM.search(words):
                out.append(f"{h.host}/{f.id}: a claim about an unknown GPU: '{_GPU_CLAIM.search(words).group(0)}'")
            if f.rule == "excessive_memcpy" and "mostly H2D" in f.summary and f.actions \
                    and _SYNC_FIX.search(f.actions[0].text):
                out.append(f"{h.host}/{f.id}: a host-to-device copy finding leads with the sync fix")
        framework = (h.capture or {}).get("framework") if isinstance(h.capture, dict) else None
        one_gpu = (len(report.hosts) == 1 and len(h.gpus) == 1 and (report.ranks is None or len(report.ranks.rows) <= 1)
                   and not (h.communication is not None and h.communication.rows))  # a rank's file has collectives
        for f in findings:
            words = _prose_of(f)
            for m in _internal_ids().finditer(words):
                out.append(f"{h.host}/{f.id}: an internal id in the words: '{m.group(0)}'")
            if one_gpu and _DATA_PARALLEL.search(words):
                out.append(f"{h.host}/{f.id}: data-parallel words to a one-GPU job: "
                           f"'{_DATA_PARALLEL.search(words).group(0)}'")
            if framework and framework != "tensorflow" and "Keras" in words:
                out.append(f"{h.host}/{f.id}: Keras named to a {framework} capture")
        out += _card_words(h, findings)
        out += _one_process_ranks(h, findings)
        if "(trace_train)" in job.get("summary", "") or "steps from trace_" in job.get("summary", ""):
            out.append(f"{h.host}: the job line names a step source by its id")
        if job.get("kind") == "no_gpu" and re.search(r"launched [\d,]+ kernels|allocator recorded", job.get("kind_evidence", "")):
            out.append(f"{h.host}: 'no GPU work' beside GPU use ({job['kind_evidence'][:60]})")
    prose = _rendered_prose(report) if report.hosts else ""
    out += vendor_words_problems(report, prose)
    frameworks_ = {(h.capture or {}).get("framework") for h in report.hosts if isinstance(h.capture, dict)}
    if frameworks_ and "tensorflow" not in frameworks_ and "Keras" in prose:
        out.append(f"markdown: Keras named to a {'/'.join(sorted(map(str, frameworks_)))} capture")
    return sorted(set(out))


# --------------------------------------------------------------------------- one value per quantity, in the text

#: The header's step: ``(1 host, 3 steps, step 1.00 ms)``, ``(1 host, start-up only: one pass of 9.33 ms, ...``,
#: ``(1 host, one pass of 432.6 ms, no step marked)`` or ``(2 ranks on 1 host, one pass of 1.01 s each (median ...``.
_HEADER_STEP = re.compile(r"^GPU Advisor — .*?(?:, step|one pass of) ([\d.,]+ (?:us|ms|s))\b", re.M)
_EVERY_FIX = re.compile(r"^If every fix lands: (?:step|pass) ~[\d.,]+ (?:us|ms|s) instead of ([\d.,]+ (?:us|ms|s))",
                        re.M)
#: The headroom's arithmetic: ``the step's own A (the [allocated ]peak [B ]less C held across steps)``.
_OWN = re.compile(r"peaks at ([\d.]+ [KMG]iB) (reserved|allocated).*?the step's own ([\d.]+ [KMG]iB) \((the allocated "
                  r"peak ([\d.]+ [KMG]iB)|the peak) less ([\d.]+ [KMG]iB) held", re.S)
#: The headroom's growth: ``of its 79.2 GiB`` / ``of the 59.4 GiB limit of its allocator ...`` (before h37-words2 "its
#: allocator took"), then ``the step's own A (... less C held across steps) could grow about Nx before the GPU is P%
#: full`` / ``before its allocator's X limit is``.
_GROWTH = re.compile(r"peaks at [\d.]+ [KMG]iB \w+ of (?:its ([\d.]+ [KMG]iB)|the ([\d.]+ [KMG]iB) (?:its allocator took|limit of its allocator), "
                     r"\d+% of the GPU's ([\d.]+ [KMG]iB)).*?"
                     r"the step's own ([\d.]+ [KMG]iB) \(.*? less ([\d.]+ [KMG]iB) held across steps\) could grow "
                     r"about ([\d,.]+)x before (the GPU|its allocator's ([\d.]+ [KMG]iB)(?: limit)?) is (\d+)% full", re.S)
#: A part of the held idle: ``idles A of each ... (P%): B of it holding kernels ...; the other C ...`` (``, all of it
#: holding`` where the whole is held; main before h37-review5: ``with work it was given: B of it``, no rest said).
_D = r"[\d.]+\s+(?:us|ms|s)"
_HELD = re.compile(rf"idles ({_D}) of each {_D} step \([\d.]+%\)(?: with work it\s+was\s+given)?[:,]\s+"
                   rf"(?:all of it|({_D}) of it)\s+holding\s+kernels\s+whose\s+launch\s+calls\s+had\s+returned,"
                   rf"\s+which\s+start\s+only\s+later(?:;\s+the\s+other\s+({_D}))?")
#: A duration of a second or more printed as ms in prose (``33784.7 ms``): timeline positions (``[30462.5 – ...]``)
#: are the viewer's and stay in ms.
_LONG_MS = re.compile(r"(?<![\d.,\[])(\d{4,}(?:\.\d+)?) ms\b(?! –|\])")
_UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}


def _val(text: str) -> float:
    num, unit = text.replace("\n", " ").split()
    return float(num.replace(",", "")) * _UNIT[unit]


def _held_parts(whole: str, held: str | None, rest: str | None) -> list[str]:
    """The held idle and the rest of the unseen-work idle add up to the idle they split, as printed: no part over its
    whole (v100 BERT's "2.20 ms ... 2.23 ms of it"), none printed as its whole ("1.35 ms ... 1.35 ms of it"), no rest
    left unsaid (torchrec_a100_stalls' "143.9 ms ... 127.6 ms of it" and nothing of the other 16.3 ms)."""
    if held is None:
        return []
    a, b = _val(whole), _val(held)
    if b > a:
        return [f"held idle {held} of an idle of {whole}"]
    if " ".join(held.split()) == " ".join(whole.split()):
        return [f"held idle {held} of an idle of {whole}: a part printed as its whole"]
    if rest is None:
        return [f"held idle {held} of an idle of {whole}: the rest unsaid"]
    if abs(a - b - _val(rest)) > 0.011 * a + 0.06:
        return [f"held idle {held} and the other {rest} do not add up to {whole}"]
    return []


#: "918 us of its 918 us": a part printed equal to the whole it is a part of (cloverleaf_a100_cuda's copies, h37-review2)
_SAME_PART = re.compile(r"(?<![\d.,])(\d[\d,.]* (?:ns|us|ms|s|B|KiB|MiB|GiB|TiB)) of (?:its|the) \1(?![\d.,]*\d)")


#: comm_exposed's "X of it runs with no compute to overlap it[, of which W is waiting ...]: Y (..% of the step) of
#: communication the step pays for": Y is X less the wait, so X and Y differ only by a wait the text says (h37-review3)
_EXPOSED_PAID = re.compile(r"(\d[\d,.]* (?:us|ms|s)) of it runs with no compute to overlap it"
                           r"(?:, of which (\d[\d,.]* (?:us|ms|s)) is waiting[^:]*)?: (\d[\d,.]* (?:us|ms|s)) \(")


def _exposed_paid(flat: str) -> list[str]:
    """The exposed collectives and the part the step pays for: equal unless the text names the wait between them, and
    then the exposed time less the wait is the paid time (to the printed digits)."""
    out = []
    for m in _EXPOSED_PAID.finditer(flat):
        exposed, wait, paid = m.groups()
        if wait is None and exposed != paid:
            out.append(f"'{m.group(0)}': {exposed} exposed said as {paid} paid with no wait between them")
        elif wait is not None and abs(_val(exposed) - _val(wait) - _val(paid)) > 0.01 * _val(exposed) + 0.001:
            out.append(f"'{m.group(0)}': {exposed} exposed less {wait} waiting is not {paid}")
    return out


#: the header's step count ("1 host, 0 steps"; "1 host, one pass of ..." is one) and the steps line's "the whole
#: capture is analysed as one step"
_HEADER_STEPS = re.compile(r"^GPU Advisor — .*?\((?:\d+ hosts?), (?:(\d+) steps?\b|one pass of\b)")


def _step_count(text: str, flat: str) -> list[str]:
    """The header counts the steps the report speaks of: never "0 steps" (a count of nothing said as a count), and one
    where the steps line says the whole capture is one step (every memory snapshot's report on main, h37-review3); a
    capture said to hold one pass of the program has a job line of one step, not of "training steps" (h37-review6)."""
    m = _HEADER_STEPS.search(text.split("\n", 1)[0])
    if m is None:
        return []
    n = int(m.group(1) or 1)
    if n == 0:
        return [f"'{m.group(0)}': a header counting 0 steps"]
    if n != 1 and re.search(r"the whole capture is analysed as one (?:step|pass)\b", flat):
        return [f"'{m.group(0)}': {n} steps in the header, one in the steps line"]
    many = _PLURAL_JOB.search(flat)
    if n == 1 and many and "holds one pass of the program" in flat:  # h37-review6: mi210_gpu_only
        return [f"'{many.group(0)}' (many) in the job line of a capture said to hold one pass of the program"]
    return []


_EACH = re.compile(r"([\d.,]+ (?:us|ms|s)) of each [\d.,]+ (?:us|ms|s) step")
_STEP_WINDOW = re.compile(r"Trace: [^\n]*?, (?:step \d+|the pass|the step) \(([\d.,]+ (?:us|ms|s))\)")


def _window_label_once(text: str) -> list[str]:
    """In a report of one step, a finding's trace window of that step labels a time its sentence states: not the
    sentence's "7.78 ms of each 19.1 ms step" above "(7.80 ms)" -- the step's whole booked idle, of which the note's
    time is a part (vllm_mi300x_decode's before-capture note, h37-review6).  Read only in findings saying a time "of
    each step" (a window labelled with another quantity, such as its kernels' time, says another thing)."""
    if not re.search(r"\(1 host, 1 step,", text.split("\n", 1)[0]):
        return []
    out: list[str] = []
    for block in re.split(r"\n (?=\s?\d+\. \[)", text):
        flat = re.sub(r"\n\s+", " ", block)
        body = flat.split("Trace:", 1)[0]
        each = _EACH.search(body)
        if each is None or "still runs earlier work" not in body:
            continue
        out += [f"'{each.group(0)}' beside the window's '{w.group(0)}'" for w in _STEP_WINDOW.finditer(flat)
                if w.group(1) not in body]
    return out


#: the step a finding's share is of (``rules.base.Ctx.of_step``): "of each 273 us step", "of the 116 ms forward pass"
_OF_STEP = re.compile(r"\bof (?:each|the) ([\d.,]+ (?:us|ms|s)) (?:step|pass|forward pass|engine step)\b")
#: a GPU's row in a host's GPUs table (``render``'s "GPUs on <host>")
_GPU_ROW = re.compile(r"^  GPU\d+  ", re.M)


def _printed_span(text: str) -> tuple[float, float, tuple[str, int]]:
    """What a printed time may stand for (ms): its value less and plus half its last digit, and its form (unit,
    decimals) -- two printings of one form are one string or two values."""
    num, unit = text.split()
    dec = len(num.split(".", 1)[1]) if "." in num else 0
    v, half = float(num.replace(",", "")) * _UNIT[unit], 0.5 * 10.0 ** -dec * _UNIT[unit]
    return v - half, v + half, (unit, dec)


def one_step_digits(text: str) -> list[str]:
    """``one-value``, in digits (h37-randjobs4): the step of a report of one host and one GPU printed anywhere in its
    text -- the header, "if every fix lands ... instead of", a finding's "of each X step" -- is one number: printed to
    the same digits it reads the same, printed to more digits it rounds to the shorter one (h37-walk3's seed 34341:
    "step 273 us" in the header, "instead of 272 us" below it: the header summed the ledger's rounded parts, the line
    printed the step rounded once, at a printing tie)."""
    flat = re.sub(r"\n\s+", " ", text)
    head = _HEADER_STEP.search(text)
    if head is None:
        return []
    said = [("the header", head.group(1))]
    every = _EVERY_FIX.search(flat)
    if every:
        said.append(("'if every fix lands'", every.group(1)))
    first = text.split("\n", 1)[0]
    if "(1 host," in first and len(_GPU_ROW.findall(text)) == 1:
        said += [(f"'{m.group(0)}'", m.group(1)) for m in _OF_STEP.finditer(flat)]
    out = []
    for (w1, t1), (w2, t2) in itertools.combinations(said, 2):
        lo1, hi1, f1 = _printed_span(t1)
        lo2, hi2, f2 = _printed_span(t2)
        if (f1 == f2 and t1 != t2) or (f1 != f2 and not (lo1 < hi2 - 1e-12 and lo2 < hi1 - 1e-12)):
            out.append(f"one-value: the step is {t1} in {w1}, {t2} in {w2}")
    return sorted(set(out))


#: the verdict's top finding and what it saves: "top: <title> (saves ~184 us/step, 67%)" / "(saves ~1 ms, 5% of the step)"
#: / "(saves ~1 ms, 5% of the pass)", after where it was found where that is part of the session ("(on 5 of 8 hosts; ")
_TOP_SAVES = re.compile(r" — top: (?:a note, )?(.+?) \((?:on [^;()]+; )?saves ~([\d.,]+ (?:us|ms|s))(?:/step)?, ([^,)]*?%)(?: of the (?:step|pass))?\)")
#: a listed finding's first lines: "1. [WARNING] <title>" then "saves ~X/step (P% of step)" / "saves ~X (P% of the step)"
#: / "saves ~X (P% of the pass)"
_LISTED_SAVES = re.compile(r"^ *1\. \[[A-Z]+\] (.+?)\n\s+saves ~([\d.,]+ (?:us|ms|s))(?:/step)? \(([^ ]+%) of (?:the )?(?:step|pass)\)",
                           re.M)


def top_saving_digits(text: str) -> list[str]:
    """``one-value``, in digits (h37-randjobs4): the verdict's top finding is the list's first (``agree``), and what it
    saves reads there as it reads under the finding -- one time and one share, in the same digits."""
    top, first = _TOP_SAVES.search(text.split("\n\n", 1)[0]), _LISTED_SAVES.search(text)
    if top is None or first is None or top.group(1) != first.group(1):
        return []
    if top.group(2, 3) != first.group(2, 3):
        return [f"one-value: the top finding saves ~{top.group(2)} ({top.group(3)}) in the verdict, ~{first.group(2)} "
                f"({first.group(3)}) under it"]
    return []


#: the job line's kind said in its plural, of several steps (``report.build._KIND_WORDS``)
_PLURAL_JOB = re.compile(r"^Job: (?:training steps|inference \(forward passes\))", re.M)


def text_number_problems(text: str) -> list[str]:
    """The same quantity with two values, or a part above its whole, in the text report as a user reads it (h37-review2):
    the step "if every fix lands" starts from against the header's step, the headroom's "the peak less what is held",
    the held idle against the idle it is part of, a part printed equal to its whole ("918 us of its 918 us"), and seconds
    printed as thousands of ms, exposed collectives said as two values with no wait between them, and a header of 0 steps (h37-review3)."""
    out: list[str] = []
    flat = re.sub(r"\n\s+", " ", text)
    out += one_step_digits(text) + top_saving_digits(text)
    for m in _OWN.finditer(flat):
        peak = _val(m.group(5) or m.group(1))
        own, held = _val(m.group(3)), _val(m.group(6))
        if abs(peak - held - own) > 0.01 * peak + 0.06 * _UNIT[m.group(3).split()[1]]:
            out.append(f"headroom: the step's own {m.group(3)} is not {m.group(5) or m.group(1)} less {m.group(6)}")
    for m in _GROWTH.finditer(flat):
        own_gpu, pool, gpu, own, held, n, whole, named, full = m.groups()
        cap = _val(named or own_gpu or gpu)  # "the GPU": the device's capacity, else the pool the words name
        expect = (int(full) / 100 * cap - _val(held)) / _val(own)
        if not 0.85 <= float(n.replace(",", "")) / expect <= 1.15:
            out.append(f"headroom: grows {n}x before {whole} is {full}% full, the numbers say {expect:.3g}x")
    for m in _HELD.finditer(flat):
        out += _held_parts(*m.groups())
    out += [f"'{m.group(0)}': a part equal to its whole said as a part" for m in _SAME_PART.finditer(flat)]
    out += _exposed_paid(flat)
    out += _step_count(text, flat)
    out += _window_label_once(text)
    for line in text.splitlines():
        if not line.lstrip().startswith("Trace:"):
            out += [f"'{m.group(0)}': a duration of seconds in ms" for m in _LONG_MS.finditer(line)]
    return out


#: the words a report may say of a window it does not hold (:func:`window_words_problems`): a trace window naming a
#: step by its number ("launch wait, step 0 (11.2 ms)"), a title's step ("inside the step", "every step"), a count of
#: kernels per step ("3 matmul/conv kernels ran per step and GPU"), host time or work claimed ("unrecorded host
#: time"), a share of the pass and of the capture window
_WINDOW_WORDS = {"numbered": r", step \d+\b", "the_step": r"\b(?:the|every|each) step\b",
                 "per_step": r"\bran (?:on average )?per step\b",
                 "host": r"\bhost (?:time|work)\b|\bthe host's own work\b",
                 "of_pass": r"of the ([\d.,]+ (?:us|ms|s)) pass\b", "of_window": r"of the ([\d.,]+ (?:us|ms|s)) capture window\b"}
_NUMBERED_STEP, _THE_STEP, _PER_STEP, _HOST_CLAIM, _OF_PASS, _OF_WINDOW = map(re.compile, _WINDOW_WORDS.values())
#: a share of a step, or a step's length, in a one-pass finding's summary (h37-words21): "off the step", "(95% of the
#: step)", "the rest of the step holds MFU down", "worth a look only if the step is short" ("the step's own 6 GiB" of a
#: memory, "is not the step" and "no part of the step" of the step reading are not shares of it)
_STEP_SHARE = re.compile(r"(?:\boff|%\)? of|\brest of|\bif) the step\b(?!')")
#: a card's account of how the framework places ops ("PyTorch places each op on the device of its tensors", "JAX places
#: every op ...")
_PLACES_OPS = re.compile(r"\bplaces (?:each|every) op\b")
#: the renderers' step words a one-pass report's text and markdown may not say (h37-words21): the header's step
#: count and time ("1 host, 1 step, step 432.6 ms"), "If every fix lands: step ~", a saving "/step", "(54% of the
#: step)" / "(54% of step)", the markdown's "Estimated saving: 42.8 ms of the step" / "per step"
_RENDERED_STEP = {"header": re.compile(r"\bhosts?, \d+ steps?\b|, step [\d.,]+ (?:us|ms|s)\b"),
                  "every fix": re.compile(r"^If every fix lands: step ~", re.M),
                  "saving": re.compile(r"saves ~[\d.,]+ (?:us|ms|s)(?:/step\b| \([^ ()]+% of (?:the )?step\)|, [^ ()]+% "
                                       r"of the step\))"),
                  "estimated": re.compile(r"^- \*\*Estimated saving:\*\* [\d.,]+ (?:us|ms|s) (?:of the step|per step)\b",
                                          re.M)}


#: a one-pass host's step named by its number or as a step anywhere else a user reads it (h37-words22): a memory
#: finding's "5.12 ms into step 0" (summary, evidence cells), the peak table's "step 0 +5.12 ms" (text, markdown, the
#: tab's table), the step reading's "the first step starts at ... no part of the step" / "is not the step" / "is the
#: step's", a card's "the step's other time holds MFU down", a memory finding's "the step's own 33.1 MiB"; the tab's
#: names (a finding's ``window_names``, a step row's ``name``) saying "step 0"; h37-words23: the step reading's
#: "analysed as one step" / "so it is one step" (the steps and capture notes, the job line), the one-time costs' note
#: "outside the 1 step analysed ... The step spans ... No step counts them"
_PASS_NUMBERED = re.compile(r"(?<![\w.(])step \d+\b")
_PASS_STEP_WORDS = re.compile(r"\bthe first step\b|\bno part of (?:the|a) step\b|\bis not the step\b|\bthe step's\b"
                              r"|\b(?:analysed as|it is) one step\b|\bthe 1 step analysed\b|\b[Nn]o step counts\b"
                              r"|\bThe step spans\b")
#: a card's meaning said of a step on a one-pass host (h37-words23): "share of the step the GPU spends executing
#: kernels", the input card's framework words "share of the step the GPU was idle while ...", the MFU card's "FLOPs per
#: step / (step time x ...)", a finding's device share "share of the step the device executes"; h37-words24: a
#: threshold's "share of step time the GPUs are idle ...", a metric's label "Input wait share of step"; h37-onepass: a
#: label opening with the step ("Step time in dtype casts", "Device step-time share", "Step share of ..."), a meaning's
#: number "per step" (the straggler's and the imbalance's "..., per step", the MFU card's "give the model's FLOPs per
#: step"), "step time" and "the step's first op" in a meaning
_CARD_STEP = re.compile(r"\bshare of (?:the )?step\b|\bper step / \(step time\b|\b[Ss]tep[- ]time\b|\b[Ss]tep share\b"
                        r"|\bper step\b|\bthe step's\b")


def _one_pass_step_words(h: HostReport, findings: list[Finding]) -> list[str]:
    """What a one-pass host's findings, cards and step reading say of a step it does not hold (:data:`_PASS_NUMBERED`,
    :data:`_PASS_STEP_WORDS`, :data:`_STEP_SHARE` in a card's words, :data:`_CARD_STEP` in a card's or a finding's
    metric's meaning)."""
    said = [("steps note", str(h.steps.get("note") or "")), ("capture note", str(h.capture.get("note") or "")),
            ("job summary", str(h.job.get("summary") or ""))]
    for f in findings:
        said.append((f"{f.id} summary", f.summary))
        said += [(f"{f.id} evidence", str(c)) for t in f.evidence for r in t.rows for c in r if isinstance(c, str)]
    cards = [(f"{m.id} card", str(v)) for m in h.headline if isinstance(m.detail, dict) for v in m.detail.values()
             if isinstance(v, str)]
    out = [f"{h.host}/{what}: '{m.group(0)}' of a one-pass host" for what, text in said + cards
           for rx in (_PASS_NUMBERED, _PASS_STEP_WORDS) for m in rx.finditer(text)]
    out += [f"{h.host}/{what} meaning: '{x.group(0)}' of a one-pass host" for what, text in _meanings(h, findings)
            for x in _CARD_STEP.finditer(text or "")]
    return out + [f"{h.host}/{what}: a share of a step in a one-pass card: '{m.group(0)}'" for what, text in cards
                  for m in _STEP_SHARE.finditer(text)]


def _tab_step_names(report: Report) -> list[str]:
    """The names the tab prints of a one-pass host's step (``Report.display``: each finding's ``window_names``, each
    step row's ``name``, each GPU memory's ``peak_step_name``, the peak table's "peak at" cell): none numbers a step."""
    d = report.display or {}
    one = {h.host for h in report.hosts if h.error is None and _one_unmarked_pass(h)}
    names = [n for f, shown in zip(report.findings, d.get("findings") or [])
             for w, n in zip(f.windows, shown.get("window_names") or []) if w.host in one]
    for h, shown in zip(report.hosts, d.get("hosts") or []):
        if h.host in one:
            names += [st.get("name", "") for st in shown.get("steps") or []]
            names += [(g.get("memory") or {}).get("peak_step_name", "") for g in shown.get("gpus") or []]
    cols = (d.get("memory") or {}).get("columns") or []
    at = cols.index("peak at") if "peak at" in cols else None
    names += [r[at] for r in (d.get("memory") or {}).get("rows") or [] if at is not None and r[0] in one]
    return [f"tab: '{m.group(0)}' names a one-pass host's step" for n in names for m in _PASS_NUMBERED.finditer(n)]


#: the peak table's "peak at" cell naming a step by its number (h37-words22): "step 0 +5.12 ms"
_PEAK_AT_STEP = re.compile(r"\bstep \d+ \+[\d.,]+ (?:us|ms|s)\b")


def _one_unmarked_pass(h: HostReport) -> bool:
    """The host kept one step, the pass an unmarked capture was read as (``steps.types.UNMARKED_SOURCES``)."""
    from tb_gpu_advisor.steps.types import UNMARKED_SOURCES

    return h.steps.get("count") == 1 and h.steps.get("source") in UNMARKED_SOURCES


def _hostless(h: HostReport) -> bool:
    """The capture recorded the GPU's work and nothing of the host (the launch card says so: its one home)."""
    from tb_gpu_advisor.report.build import LAUNCH_NOT_MEASURED

    return any(m.id == "launch_wait_share" and m.meaning == LAUNCH_NOT_MEASURED for m in h.headline)


def window_words_problems(report: Report) -> list[str]:
    """Words a report says of a window it does not hold (h37-words20): a step number, a title's "the step" or a count
    "per step" where the capture marks no step and was read as one pass; host time or host work claimed where it recorded nothing of the
    host; a share said of the pass and again of the capture window that pass is; "dispatch" for the host time of a
    step the same finding says may be nothing but first calls (compilation, loading, one-time work).  h37-words21: a
    summary's "of/off the step" on one pass, the renderers' step words of a one-pass report
    (:func:`rendered_step_problems`), and a framework's op placement told on a capture with no host."""
    out: list[str] = []
    for h in report.hosts:
        mine = list({f.id: f for f in [*h.findings, *(f for f in report.findings if f.host == h.host)]}.values())
        one_pass, hostless = _one_unmarked_pass(h), _hostless(h)
        for f in mine:
            labels = [w.label for w in f.windows]
            if one_pass:
                out += [f"{h.host}/{f.id}: a numbered step in a one-pass window: '{x}'"
                        for x in labels if _NUMBERED_STEP.search(x)]
                if _THE_STEP.search(f.title):
                    out.append(f"{h.host}/{f.id}: a step in a one-pass finding's title: '{f.title}'")
            if hostless:
                out += [f"{h.host}/{f.id}: host time claimed with no host recorded: '{x}'"
                        for x in [f.title, *labels] if _HOST_CLAIM.search(x)]
            passes = set(_OF_PASS.findall(f.summary))
            out += [f"{h.host}/{f.id}: the pass's share said again of the capture window ({t})"
                    for t in _OF_WINDOW.findall(f.summary) if t in passes]
            if "the first call's one-time cost" in f.summary and "dispatch" in f.summary:
                out.append(f"{h.host}/{f.id}: 'dispatch' for the host time of what may be a first call")
            if one_pass:
                out += [f"{h.host}/{f.id}: a share of a step in a one-pass finding: '{m.group(0)}'"
                        for m in _STEP_SHARE.finditer(f.summary)]
        if one_pass:
            out += [f"{h.host}/{m.id}: 'per step' in a one-pass card: '{m.meaning}'"
                    for m in h.headline if m.meaning and _PER_STEP.search(m.meaning)]
        if hostless:  # a kernel trace alone holds no op: how its framework places them is no reading of it
            out += [f"{h.host}/{m.id}: op placement claimed with no host recorded: '{m.meaning}'"
                    for m in h.headline if m.meaning and _PLACES_OPS.search(m.meaning)]
        if one_pass:
            out += _one_pass_step_words(h, mine)
        out += _unfilled_window(h, mine)
    return out + rendered_step_problems(report) + _tab_step_names(report)


def _unfilled_window(h: HostReport, findings: list[Finding]) -> list[str]:
    """A meaning whose window placeholder reached the report unfilled (h37-words23): the thresholds', the rules' and the
    frameworks' meanings write "share of the {step} ..." and the one home (``rules.base.Ctx.window_words``, the cards'
    ``Ctx.step_noun``) fills it; a path that skipped it would print the brace on any host."""
    return [f"{h.host}/{what} meaning: an unfilled '{x}'" for what, text in _meanings(h, findings)
            for x in ("{step}", "{Step}", "{step-}", "{per_step}") if x in (text or "")]


def _meanings(h: HostReport, findings: list[Finding]) -> list[tuple[str, str]]:
    """(where, meaning) of each card of ``h`` and each metric of its ``findings``, and (where, label) of each: a label
    names the window too ("Input wait share of step", h37-words24)."""
    metrics = [(f"{m.id} card", m) for m in h.headline] + [(f"{f.id} metric", f.metric) for f in findings
                                                            if f.metric is not None]
    return [(what, m.meaning) for what, m in metrics] + [(f"{what} label", m.label) for what, m in metrics]


def rendered_step_problems(report: Report) -> list[str]:
    """The renderers' words of a report whose every analysed host is one unmarked pass (h37-words21): the text's
    header, "If every fix lands", each finding's saving (text, verdict, markdown) say the pass, never a step the
    capture does not mark -- "1 host, 1 step, step 432.6 ms" and "(54% of the step)" beside findings saying "the pass".
    The text is read before its HEADLINE tables (their "ms/step" columns are the tables' unit)."""
    from tb_gpu_advisor.report import render

    hosts = [h for h in report.hosts if h.error is None]
    if not hosts or not all(_one_unmarked_pass(h) for h in hosts):
        return []
    text, md = render.to_text(report, top=None), render.to_markdown(report, top=None)
    said = text.split("\nHEADLINE")[0] + "\n" + md
    return sorted({f"rendered: '{m.group(0)}' ({what}) in a one-pass report"
                   for what, rx in _RENDERED_STEP.items() for m in rx.finditer(said)} |
                  # the peak table's "peak at" (h37-words22: "step 0 +5.12 ms"), read in the whole text and markdown
                  {f"rendered: '{m.group(0)}' (peak at) in a one-pass report"
                   for m in _PEAK_AT_STEP.finditer(text + "\n" + md)})


#: A name of training's memory (``rules._memory.CATEGORY_LABELS["held"]``) that a job of forward passes only is never
#: told: what it holds from before a pass is its weights and caches, no optimizer's state.
_OPTIMIZER_STATE = re.compile(r"\boptimizer state\b", re.IGNORECASE)


def _forward_memory(h: HostReport) -> bool:
    """The host's memory is not a training job's, by the report's own record: its job is inference or serving, or of
    no known kind with no gradients and no optimizer step among what holds any GPU's peak."""
    kind = (h.job or {}).get("kind")
    if kind in ("inference", "serving"):
        return True
    held = [(g.memory or {}).get("breakdown") or {} for g in h.gpus]
    return kind != "training" and not any(b.get("gradients") or b.get("optimizer") for b in held)


def _strings_in(v: object) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return [s for x in v.values() for s in _strings_in(x)]
    if isinstance(v, (list, tuple)):
        return [s for x in v for s in _strings_in(x)]
    return []


def memory_words_problems(report: Report) -> list[str]:
    """Memory named for a job it is not (h37-memkind37 *Left* 1): a host whose memory is not a training job's
    (:func:`_forward_memory`) is never told its memory holds "optimizer state" -- in its findings' evidence tables,
    the tab's memory panel (``display``: the holders' and OOM's cells, the chart's category names) or the MCP server's
    memory tables (``serve.mcp_server.memory_text``).  On main 86c361e0 an inference job's holders table said "Held
    across steps (parameters, optimizer state)" on the tab and in MCP while its findings said "parameters, caches"."""
    from tb_gpu_advisor.serve.mcp_server import memory_text

    out: list[str] = []
    shown = (report.display or {}).get("hosts") or []
    for i, h in enumerate(report.hosts):
        if not _forward_memory(h):
            continue
        kind = (h.job or {}).get("kind") or "unknown"
        mine = list(h.findings) + [f for f in report.findings if f.host in (None, h.host)]
        cells = [f"{f.id}: {c}" for f in mine for t in f.evidence for row in t.rows for c in row if isinstance(c, str)]
        tab = shown[i] if i < len(shown) else {}
        cells += [f"tab GPU memory: {s}" for g in (tab.get("gpus") or []) for s in _strings_in((g or {}).get("memory"))]
        out += [f"{h.host}: memory named for training to {kind} work: '{c}'" for c in cells if _OPTIMIZER_STATE.search(c)]
    forward = {h.host for h in report.hosts if _forward_memory(h)}
    if not forward:
        return out
    host = None  # the host whose tables follow: each of the MCP server's memory tables is under a heading naming it
    for line in memory_text(report, "markdown").splitlines():
        if (m := _MCP_MEMORY_HEADING.match(line)) is not None:
            host = m.group(1)
        elif host in forward and line.startswith("|") and _OPTIMIZER_STATE.search(line):
            out.append(f"{host}: mcp memory table named for training to forward work: '{line}'")
    return out


#: The MCP server's heading over one GPU's memory table: its host in backticks.
_MCP_MEMORY_HEADING = re.compile(r"^### (?:What holds|Out of memory on) `([^`]*)` GPU")


#: A template's slot left as written (``{traced}``, ``{step}``): a name in braces.
_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*)\}")
#: The JSON keys whose strings are code to copy, where braces may be the code's own (a dict, an f-string).
_CODE_KEYS = frozenset(("snippet", "code", "capture_snippet"))


def window_slots() -> frozenset[str]:
    """Every slot a window fix's template names and the words that fill them (``rules.base.Ctx.window_fixes``: each
    format's ``window_fixes``, every vendor's ``TERMS``, ``frameworks.nvtx.step_range``): the names a code snippet
    may show only unfilled."""
    import string

    from tb_gpu_advisor import devices, formats
    from tb_gpu_advisor.frameworks import nvtx

    keys = {k for f in formats.REGISTRY.values() for fixes in f.window_fixes.values() for pair in fixes
            for s in pair if s for _, k, _, _ in string.Formatter().parse(s) if k}
    keys |= {k for v in devices.VENDORS for k in v.TERMS} | set(nvtx.step_range("training"))
    return frozenset(keys)


def unfilled_slot_problems(report: Report, rendered: dict[str, str] | None = None) -> list[str]:
    """A template's slot that reached the user unfilled (h37-words37 *Left* 1): ``rules.base._Said`` leaves a key no
    word fills as written, so a window fix asked for without the capture's own words would print ``{traced}``.  Any
    name in braces in the report's prose (titles, summaries, fixes' texts, cells, legends, the tab's display) is one;
    in code to copy (a fix's snippet, and the ``rendered`` text, markdown ... a user reads, which hold snippets) only a
    window fix's own slot is (:func:`window_slots`), braces being code's own there."""
    slots = window_slots()
    out: list[str] = []

    def walk(v: object, where: str, code: bool) -> None:
        if isinstance(v, str):
            out.extend(f"{where}: an unfilled '{m.group(0)}'" for m in _SLOT.finditer(v)
                       if not code or m.group(1) in slots)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{where}.{k}", code or k in _CODE_KEYS)
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(x, f"{where}[{i}]", code)

    walk(report.to_dict(), "report", False)
    for name, text in (rendered or {}).items():
        walk(text, name, True)
    return out


# --------------------------------------------------------------------------- a damaged file's words (h37-damage69)

#: What a window without GPU work is called where the report claims it held none: the no-step reason of the title, the
#: job block and the tab (``report.verdict.NO_STEP_WHY["no_gpu"]``), and the job line's kind.
_NO_GPU_CLAIM = re.compile(r"the window holds no GPU work|^Job: no GPU work\b", re.M)


def damaged_words_problems(report: Report, text: str | None = None) -> list[str]:
    """A host whose file was read only in part (a cut: ``HostReport.cuts``) never says its window held no GPU work --
    in its job block's no-step reason (which the tab reads), its job line, or the report's title and job lines
    (``text``, the rendered report, where given): the GPU's records may lie past the damage, as its damage finding
    says beside.  wild/two_writers_v100_gloo said both (h37-damage69): "no step: the window holds no GPU work" over
    "the GPU's records may well be there", 540 kernels among the unread bytes."""
    out = []
    cut = [h for h in report.hosts if h.cuts() and not h.error]
    for h in cut:
        job = h.job or {}
        for key in ("no_gpu_step", "summary"):
            if isinstance(job.get(key), str) and (m := _NO_GPU_CLAIM.search(job[key])) is not None:
                out.append(f"{h.host}: its file is damaged, yet its job {key} says '{m.group(0)}'")
    if cut and text is not None:
        head = "\n".join(text.splitlines()[:12])  # the title and the job lines above the findings
        if (m := _NO_GPU_CLAIM.search(head)) is not None:
            out.append(f"report: a host's file is damaged, yet the title or job lines say '{m.group(0)}'")
    return out
