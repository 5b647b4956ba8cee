"""PyTorch profiler (Kineto) traces: their layout, their probe, the parser and the adapter to the neutral trace
model (``adapter.read_trace``)."""

from tb_gpu_advisor.formats.base import Format
from tb_gpu_advisor.formats.kineto.layout import LAYOUT
from tb_gpu_advisor.formats.kineto.probe import has_gpu_activity

#: How torch.profiler records the right window, where the format itself is the cause (``job.kind.WINDOWS``).  The
#: build, the tools and the runtime named are the GPU vendor's, asked for by key (``devices.<vendor>.TERMS``:
#: ``{torch_build}``, ``{system_profiler}``, ``{system_trace}``, ``{kernel_profiler}``, ``{runtime}``; filled by
#: ``rules.base.Ctx.window_fixes``): ROCm's PyTorch writes the same format, and a HIP program is told its own
#: build and rocprofv3, not "the installed driver's CUDA" and Nsight Systems (h37-hiprocm36).
WINDOW_FIXES = {
    "counters": (("The profiler was asked for hardware counters (experimental_config's profiler_metrics), which "
                  "replays each kernel to read them instead of timing it: profile the steps without profiler_metrics to "
                  "time them, and read counters per kernel with {kernel_profiler} if you need them.",
                  "prof = torch.profiler.profile(\n    activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
                  "    schedule=torch.profiler.schedule(wait=5, warmup=2, active=5),\n"
                  "    # no experimental_config=_ExperimentalConfig(profiler_metrics=[...]) here\n)"),),
    # launches whose kernels ran without a record: CUPTI's activity buffers dropped or were not collected before the
    # trace was written -- a long active window fills them (``job.kind.lost_launches``)
    "lost_records": (("Record fewer steps at a time so CUPTI's activity buffers hold every kernel: a smaller `active` "
                      "in the profiler's schedule (repeat it for more), and let the GPU finish before each window ends.",
                      "prof = torch.profiler.profile(\n    activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
                      "    schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=2),\n)"),),
    # the same, where Kineto's own log in the trace says it hit its CUPTI buffer limit and stopped tracing the GPU
    # (``adapter._records_loss``): the limit is ``ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB`` of its config file (default 128)
    "lost_records_buffers": (("Kineto stopped tracing the GPU when its CUPTI buffers reached their limit: record "
                              "fewer steps at a time (a smaller `active`, repeated), or raise the limit in a Kineto "
                              "config file.",
                              "prof = torch.profiler.profile(\n    activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],"
                              "\n    schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=2),\n)\n"
                              "# or, before the process starts: a larger buffer limit (MB) in Kineto's config file\n"
                              "# echo ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB=512 > kineto.conf; "
                              "export KINETO_CONFIG=$PWD/kineto.conf"),),
    # launches with no kernel record at all, though the program waited for the GPU after its last launch
    # (``adapter._synced_unrecorded``): the kernels ran inside the window and CUPTI recorded none of them
    "synced_unrecorded": (("The program already waits for the GPU before the profiler stops, so its kernels were not "
                           "cut off: the profiler's GPU tracer dropped them. Profile again with warm-up steps before "
                           "the recorded ones (the GPU tracer starts in the warm-up), with {torch_build}, or record "
                           "the same steps with {system_profiler}.",
                           "prof = torch.profiler.profile(\n    activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],"
                           "\n    schedule=torch.profiler.schedule(wait=1, warmup=2, active=3),\n)"),),
    # host ops and not one CUDA call, kernel or copy, of a job that used a GPU (``adapter._cuda_unrecorded``): the
    # profiler was not asked to record the GPU's side, or CUPTI recorded none of it -- nothing was lost on the way, and
    # waiting for the GPU records nothing
    "cuda_unrecorded": (("Record the GPU's side: put ProfilerActivity.CUDA among the profiler's activities -- with the "
                         "CPU's alone torch.profiler records the host's ops and no {runtime} call, kernel or copy. Where it "
                         "is there already, the GPU tracer recorded nothing: read the profiler's warnings, use "
                         "{torch_build}, or record the same steps with {system_profiler}.",
                         "prof = torch.profiler.profile(\n    activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],"
                         "\n    schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),\n)"),),
    # a trace in the legacy profiler's list form, which records no GPU activity (``adapter._legacy_profiler``): a
    # build without Kineto, where torch.profiler falls back to it whatever activities it is given ...
    "no_kineto": (("This PyTorch build has no Kineto (torch.autograd.kineto_available() returns False), so "
                   "torch.profiler cannot record the GPU: install a build with Kineto (pytorch.org's pip and conda "
                   "builds have it; a source build needs USE_KINETO=1) and profile the same steps again; with this "
                   "build, record the GPU's side with {system_profiler} instead.",
                   "import torch\nassert torch.autograd.kineto_available(), 'this PyTorch build has no Kineto'\n"
                   "prof = torch.profiler.profile(\n    activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
                   "    schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),\n)\n"
                   "# or, with this build: {system_trace}"),),
    # ... and torch.autograd.profiler's own (before 1.8.1, or use_kineto=False), use_cuda or not
    "legacy_profiler": (("torch.autograd.profiler's legacy profiler records no kernel, copy or {runtime} call: profile "
                         "with torch.profiler (PyTorch 1.8.1 and later) and GPU activity (ProfilerActivity.CUDA), "
                         "which records the GPU's timeline through Kineto; on an older PyTorch, record it with "
                         "{system_profiler}.",
                         "from torch.profiler import profile, ProfilerActivity\n"
                         "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:\n"
                         "    run_steps()\nprof.export_chrome_trace('trace.json')"),),
}

#: A rank's window's missing GPU side, in one clause each (``Format.window_fix_clauses``)
WINDOW_FIX_CLAUSES = {
    "cuda_unrecorded": "record the GPU's side: put ProfilerActivity.CUDA among the profiler's activities",
    "lost_records": "record fewer steps at a time so CUPTI's activity buffers hold every kernel: a smaller `active` in "
                    "the profiler's schedule (repeat it for more), and let the GPU finish before each window ends",
}

FORMAT = Format(id="kineto", name="PyTorch trace", layout=LAYOUT, probe=has_gpu_activity,
                reader_module="tb_gpu_advisor.formats.kineto.adapter", perfetto_opens=True, window_fixes=WINDOW_FIXES,
                window_fix_clauses=WINDOW_FIX_CLAUSES,
                window_fix_lang="python")
