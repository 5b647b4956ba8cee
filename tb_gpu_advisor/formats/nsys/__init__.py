"""Nsight Systems captures (``nsys export --type sqlite`` files; ``.nsys-rep`` reports exported first): their
layout, their probe, the tables, the ``.nsys-rep`` export and the reader into the neutral trace model
(``reader.read_trace``)."""

from tb_gpu_advisor.devices.nvidia import WSL_PROFILING_DRIVER
from tb_gpu_advisor.formats.base import Format
from tb_gpu_advisor.formats.nsys.layout import LAYOUT
from tb_gpu_advisor.formats.nsys.probe import has_gpu_activity

#: Nsight Systems' ways to put the window on the GPU work (``nsys profile --help``): a range the program marks
#: (``cudaProfilerStart``/``Stop``, which ``torch.cuda.profiler.start()``/``stop()`` call; or an NVTX range), or a
#: delay and duration in seconds; ``-t cuda,nvtx`` records the CUDA API and the GPU's work beside NVTX.  The NVTX
#: range's name and what it marks are the job's (``{step_range}``, ``{steps}``: ``frameworks.nvtx.step_range``, filled
#: by the rules), never a training step's whatever the job.  An NVTX capture range starts, by default, only on a range
#: whose name is a registered string (Nsight Systems User Guide, ``--nvtx-capture``: "only messages provided by NVTX
#: registered strings are considered ... use --env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0"); the ranges a program
#: pushes by name -- ``torch.cuda.nvtx.range_push``, ``nvtxRangePushA`` -- are plain strings, so the variable goes
#: with the option (h37-window70: the window advice named the range without it, a capture that never opens).
_WINDOW = ("# put the window on the GPU work, by a range the program marks or by time:\n"
           "nsys profile -t cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop -o run ./app   "
           "# cudaProfilerStart()/cudaProfilerStop() (PyTorch: torch.cuda.profiler.start()/stop()) around the steps\n"
           "nsys profile -t cuda,nvtx --capture-range=nvtx --nvtx-capture={step_range} "
           "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0 -o run ./app   # an NVTX range named {step_range} around the "
           "{steps} (the variable lets a range pushed by name, torch.cuda.nvtx.range_push's, start the capture)\n"
           "nsys profile -t cuda,nvtx --delay=60 --duration=20 -o run ./app   # or by time: 60 s in, 20 s long\n"
           "nsys export --type sqlite run.nsys-rep")
_STEADY = ("# start the window after warm-up and keep it on a few steps:\n"
           "nsys profile -t cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop -o run ./app   "
           "# cudaProfilerStart() after the warm-up steps, cudaProfilerStop() a few steps later (a framework's "
           "CUDA profiler start/stop calls them)\n"
           "nsys profile -t cuda,nvtx --delay=60 --duration=20 -o run ./app   # or by time: past the start-up, 20 s long\n"
           "nsys export --type sqlite run.nsys-rep")
_TRACE_CUDA = ("nsys profile -t cuda,nvtx -o run ./app   # -t cuda records the CUDA API calls and the GPU's kernels "
               "and copies\nnsys export --type sqlite run.nsys-rep")
#: The user's recorded command with CUDA traced (``{program}``, ``{retrace}``: ``job.kind._retrace``'s words).
_RETRACE = ("nsys profile -t {retrace} -o run {program}   # the recorded command, CUDA traced beside -t {traced}\n"
            "nsys export --type sqlite run.nsys-rep")
#: The same with ONE window over ``{steps}`` steady iterations (``job.kind._retrace``): by time, where the capture
#: began at the launch (``--delay`` counts from it; whole seconds; the CUDA trace's buffers written every 100 ms so
#: the --duration's stop loses none of them, ``lost_records_duration``), or by cudaProfilerStart/Stop around them.
_RETRACE_TIME = ("nsys profile -t {retrace} --delay={delay_s} --duration={duration_s} --cuda-flush-interval=100 -o run "
                 "{program}   # from {delay_s} s after the launch (the first steady `{iteration}` began {steady_at_s} s "
                 "in: {warmup_words}), {duration_s} s long: {whole} whole `{iteration}` ranges at the recorded pace\n"
                 "nsys export --type sqlite run.nsys-rep")
_RETRACE_API = ("nsys profile -t {retrace} --capture-range=cudaProfilerApi --capture-range-end=stop -o run {program}"
                "   # cudaProfilerStart() before `{iteration}` {first_steady}, cudaProfilerStop() after `{iteration}` "
                "{last_steady} (PyTorch: torch.cuda.profiler.start()/stop())\n"
                "nsys export --type sqlite run.nsys-rep")
_RETRACE_WORDS = ("Turn CUDA tracing on beside what this capture traced, in one window over {steps} steady iterations: "
                  "it was recorded with -t {traced}, so no CUDA call, copy or kernel could be recorded; record the "
                  "same program with -t {retrace}, past the warm-up ({warmup_words}), for {steps} `{iteration}` "
                  "ranges or more in one report, of which the report times {kept} or more past the first and last")
_RETRACE_ALL = "nsys profile -t {retrace} -o run {program}   # or the whole run again, as recorded, CUDA traced"
WINDOW_FIXES = {
    "startup": (("The window ended during start-up, before the program launched its first kernel: start the window "
                 "where the steps run, and make it long enough to hold several of them.", _WINDOW),),
    "failed": (("The program stopped with the error quoted above before it reached its GPU work: fix it, run the "
                "program once without the profiler to see it finish, then profile it again with the window on its "
                "steps.", _WINDOW),),
    "died": (("The program stopped with the error quoted above after its GPU work began: fix it (a kernel's illegal "
              "address or failed assert is found by compute-sanitizer), run the program once without the profiler "
              "to see it finish, then profile it again with the window on its steps.",
              "compute-sanitizer ./app   # names the kernel, thread and address of an illegal access\n" + _STEADY),),
    # the window opened after the loop and held the program's exit (``job.kind._teardown``): end it on the steps
    "teardown": (("The window opened after the program's loop, on its exit: put it on the steps -- a capture range "
                  "that ends before the program exits (cudaProfilerStart/Stop or an NVTX range around the steps), or a "
                  "--delay that starts inside the loop with a --duration that ends before the loop does.", _WINDOW),),
    "no_cuda_call": (("The window ended before the program made its first CUDA call: start the window where the GPU "
                      "work runs.", _WINDOW),),
    "nvtx_only": (("Record the CUDA API and the GPU's work beside the NVTX ranges (-t cuda,nvtx), with the window on "
                   "the ranges that launch the GPU work.", _WINDOW),),
    # the same where the capture's options say CUDA was traced (``job.kind._nvtx_window``): the ranges' code made no
    # CUDA call, so tracing is not what to change -- the window is (h37-window69: a window of `load batch` ranges
    # under -t cuda,nvtx was told to record "the CUDA API ... beside the NVTX ranges (-t cuda,nvtx)", as it had)
    "nvtx_only:traced": (("CUDA was traced (the capture's options say so), yet the code inside these NVTX ranges made "
                          "no CUDA call: they ran on the CPU. Keep the trace options and move the window onto the "
                          "ranges that launch the GPU work.", _WINDOW),),
    # the OS runtime's calls alone, no option saying whether CUDA was traced (``job.kind._os_calls_window``): trace CUDA,
    # in the processes that use the GPU -- a launcher's children are followed, a process started apart is not
    "os_calls_only": (("Record the CUDA API and the GPU's work beside the OS runtime calls (-t cuda,nvtx,osrt), in the "
                       "processes that use the GPU -- nsys follows the processes the profiled command starts (mpirun's "
                       "or torchrun's ranks), not one started apart -- with the window on their GPU work; then check "
                       "that the export holds a CUDA runtime table.",
                       _WINDOW.replace("-t cuda,nvtx ", "-t cuda,nvtx,osrt ")
                       + "\nsqlite3 run.sqlite \"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME\"   # CUDA calls "
                         "recorded?"),),
    # a process of the job whose NVTX ranges are a rank's, beside ranks whose GPU work was recorded, with no CUDA call
    # of its own recorded (``job.kind.idle_rank_list``): that process's CUDA side went untraced
    "cuda_unrecorded": (("Record every rank's CUDA side: trace each process of the job with -t cuda,nvtx -- one nsys "
                         "profile around the launcher follows the processes it starts, and a rank profiled on its own "
                         "needs -t cuda as well.",
                         "nsys profile -t cuda,nvtx -o run torchrun --nproc_per_node=2 train.py   # every process the "
                         "launcher starts, CUDA traced\nnsys export --type sqlite run.nsys-rep"),),
    # a window that holds GPU work, but not the steady state: start-up, too few steps, unsteady steps
    "steady": (("Put the Nsight window on the steady state: start it after the warm-up (first calls, module loading, "
                "compilation) and keep it on several steps.", _STEADY),),
    # launches whose kernels ran without a record: Nsight writes the CUDA trace's buffers when they fill, at
    # cudaProfilerStop and at the session's end; a --duration that ends the session first, or a program killed,
    # leaves the last ones unwritten (``job.kind.lost_launches``)
    "lost_records": (("Let Nsight Systems write every GPU record: end the window at cudaProfilerStop with the records "
                      "flushed there, or by a range the program marks, instead of a --duration that ends the session "
                      "while the program still runs; keep the window short (a few steps), and let the program reach "
                      "its own end or the range's stop.",
                      "nsys profile -t cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop "
                      "--flush-on-cudaprofilerstop=true -o run ./app   # cudaProfilerStart()/cudaProfilerStop() around "
                      "a few steps\n"
                      "nsys profile -t cuda,nvtx --cuda-flush-interval=100 -o run ./app   # or flush the CUDA trace's "
                      "buffers every 100 ms\n"
                      "nsys export --type sqlite run.nsys-rep"),),
    # the same, where the capture's settings show the cause (``reader._records_loss``): a session stopped on its
    # --duration with CUDA's buffers written only when full -- a flush period keeps the duration and writes them
    "lost_records_duration": (("Keep the --duration but have Nsight Systems write the CUDA trace's buffers every "
                               "100 ms, so the stop finds only the last 100 ms unwritten; or end the window where the "
                               "program marks it, with the records flushed there.",
                               "nsys profile -t cuda,nvtx --duration=20 --cuda-flush-interval=100 -o run ./app   "
                               "# write the CUDA trace's buffers every 100 ms\n"
                               "nsys profile -t cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop "
                               "--flush-on-cudaprofilerstop=true -o run ./app   # or cudaProfilerStart()/Stop() around "
                               "a few steps\n"
                               "nsys export --type sqlite run.nsys-rep"),),
    # a window ended at cudaProfilerStop with no flush there
    "lost_records_stop": (("Flush the CUDA trace's buffers where the window ends: cudaProfilerStop writes them with "
                           "--flush-on-cudaprofilerstop=true (Nsight's default), which this capture had off.",
                           "nsys profile -t cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop "
                           "--flush-on-cudaprofilerstop=true -o run ./app\n"
                           "nsys export --type sqlite run.nsys-rep"),),
    # a window the program opened and closed itself (cudaProfilerStart/Stop) whose GPU work was still unwritten at the
    # stop: the work is finished before the stop, in the process that launches it, or the buffers written on a period
    "lost_records_program_stop": (("Let the GPU work the window holds finish before the window closes: synchronize "
                                   "the process that launches it (cudaDeviceSynchronize, or its framework's own "
                                   "synchronize) right before cudaProfilerStop, and call the stop in that process; or "
                                   "have Nsight Systems write the CUDA trace's buffers every 100 ms inside the window.",
                                   "nsys profile -t cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop "
                                   "--cuda-flush-interval=100 -o run ./app   # the program's own window, its CUDA "
                                   "trace written every 100 ms\n"
                                   "nsys export --type sqlite run.nsys-rep"),),
    "tracing_off": (("Turn CUDA tracing on: the capture's options had it off, so no CUDA call, copy or kernel could be "
                     "recorded.", _TRACE_CUDA),),
    # the same where the export does not record its options (Nsight before 2023 writes no ``META_DATA_CAPTURE``) and
    # the program's side shows CUDA (the driver's thread or library in it): what it traced is unknown, not "off"
    "tracing_off:unsaid": (("Trace CUDA: the program used CUDA, yet the capture holds no CUDA call, copy or kernel, and "
                            "this export does not record which APIs were traced (its Nsight Systems release writes no "
                            "capture options). Record it again with -t cuda beside what you traced, and check that the "
                            "export holds a CUDA runtime table.",
                            _TRACE_CUDA + "\nsqlite3 run.sqlite \"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME\"   "
                                          "# CUDA calls recorded?"),),
    # the same, built from what the capture recorded (``job.kind._retrace``): the user's own command with CUDA added to
    # what it traced; and where NVTX ranges mark the program's iterations, ONE window over enough steady ones.  Not an
    # NVTX capture range on the iteration: without a range around several iterations it records one per report
    # (``repeat-shutdown:N`` writes a report per range), which the capture check calls too few steps (h37-tracingoff3)
    "tracing_off:program": (("Turn CUDA tracing on beside what this capture traced: it was recorded with -t "
                             "{traced}, so no CUDA call, copy or kernel could be recorded. Record the same program "
                             "again with -t {retrace}.", _RETRACE),),
    "tracing_off:time": ((_RETRACE_WORDS + ".", _RETRACE_TIME + "\n" + _RETRACE_API + "\n" + _RETRACE_ALL),),
    "tracing_off:api": ((_RETRACE_WORDS + ": {why_no_time}, so by cudaProfilerStart/Stop around them.",
                         _RETRACE_API + "\n" + _RETRACE_ALL),),
    # NVIDIA's profilers trace the GPU under WSL2 only from a recent Windows display driver (Nsight Compute's system
    # requirements: 545 or newer on Windows 10 WSL); a native Linux machine records the kernels with any
    "wsl2": (("Profile on native Linux, where Nsight Systems records every kernel and copy; under WSL2, update the "
              "Windows NVIDIA driver and Nsight Systems first, then check that the export holds a kernel table.",
              "nsys profile -t cuda,nvtx -o run ./app   # on native Linux (or WSL2 with a current Windows driver)\n"
              "nsys export --type sqlite run.nsys-rep\n"
              "sqlite3 run.sqlite \"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL\"   # kernels recorded?"),),
    # the same, with a Windows driver recent enough for GPU tracing (devices.nvidia.WSL_PROFILING_DRIVER): updating
    # it is not the fix; the profiler's release (one that knows the driver) or the Windows build is
    "wsl2_driver_ok": (("Profile on native Linux, where Nsight Systems records every kernel and copy. Under WSL2 this "
                        f"Windows driver is recent enough for GPU tracing (NVIDIA's profilers need {WSL_PROFILING_DRIVER} or "
                        "newer there): "
                        "install the current Nsight Systems release inside WSL2, check that Windows is recent enough "
                        "(Windows 11, or Windows 10 build 19044 or newer), then check that the export holds a kernel "
                        "table.",
                        "nsys --version   # inside WSL2: a release newer than the Windows driver\n"
                        "nsys profile -t cuda,nvtx -o run ./app\n"
                        "nsys export --type sqlite run.nsys-rep\n"
                        "sqlite3 run.sqlite \"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL\"   # kernels recorded?"),),
    # the session stopped before the program's CUDA trace was finalized (the program still ran: interrupted, killed,
    # hung): buffers written on a period are kept whatever ends the session, and a program that exits writes the rest
    "unclosed": (("Have Nsight Systems write the CUDA trace every 100 ms, so a session stopped while the program runs "
                  "keeps what it launched, and let the program end (or close the window with cudaProfilerStop after "
                  "a device sync) before the session stops; a program that never ends on its own hangs: find where "
                  "first.",
                  "nsys profile -t cuda,nvtx --cuda-flush-interval=100 -o run ./app   # the CUDA trace written "
                  "every 100 ms\n"
                  "nsys export --type sqlite run.nsys-rep\n"
                  "sqlite3 run.sqlite \"SELECT text FROM DIAGNOSTIC_EVENT WHERE text LIKE 'Number of CUPTI events%'\""
                  "   # written once the trace closed"),),
    # the profiler's CUDA trace failed under WSL2 (CUPTI errors, a driver newer than the profiler's build supports)
    "wsl2_untraced": ((("Profile on native Linux; under WSL2, install the Nsight Systems release that supports the "
                        "installed Windows driver (the profiler's diagnostics say when it does not), then check that "
                        "the export holds CUDA calls and kernels."),
                       "nsys --version   # a release newer than the CUDA driver (nvidia-smi: CUDA Version)\n"
                       "nsys profile -t cuda,nvtx -o run ./app\n"
                       "nsys export --type sqlite run.nsys-rep\n"
                       "sqlite3 run.sqlite \"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME\"   # CUDA calls recorded?"),),
}

FORMAT = Format(id="nsys", name="Nsight Systems", layout=LAYOUT, probe=has_gpu_activity,
                reader_module="tb_gpu_advisor.formats.nsys.reader", native_viewer="Nsight Systems",
                window_fixes=WINDOW_FIXES, window_fix_clauses={
                    "cuda_unrecorded": "record every rank's CUDA side: trace each process of the job with -t cuda,nvtx",
                    "lost_records": "let Nsight Systems write every GPU record: end the window at cudaProfilerStop "
                                    "with the records flushed there, or by a range the program marks, instead of a "
                                    "--duration that ends the session while the program still runs; keep the window "
                                    "short (a few steps), and let the program reach its own end or the range's stop"})
