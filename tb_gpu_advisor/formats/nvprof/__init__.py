"""nvprof's databases (``nvprof -o <file>.nvvp`` / ``--export-profile``: CUDA's legacy profiler, for GPUs up to Volta,
an SQLite database of CUPTI's activity records): their layout, their probe and the reader into the neutral trace
model (``reader.read_trace``)."""

from __future__ import annotations

from tb_gpu_advisor.formats.base import Format, from_start_fixes
from tb_gpu_advisor.formats.nvprof.csv_layout import LAYOUT as CSV_LAYOUT
from tb_gpu_advisor.formats.nvprof.layout import LAYOUT


#: nvprof's way to put the window on the GPU work (``nvprof --help``: ``--profile-from-start off`` waits for the
#: program's ``cudaProfilerStart``), and its successor's, which also profiles GPUs after Volta.
_WINDOW = ("nvprof --profile-from-start off -o run.nvvp ./app   # cudaProfilerStart()/cudaProfilerStop() (PyTorch: "
           "torch.cuda.profiler.start()/stop()) around the steps\n"
           "nsys profile -t cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop -o run ./app   "
           "# the same window with Nsight Systems, nvprof's successor (GPUs after Volta)\n"
           "nsys export --type sqlite run.nsys-rep")
WINDOW_FIXES = from_start_fixes("nvprof", "the CUDA context, module loading, the libraries' set-up", _WINDOW)

#: No native viewer is named: the tab would say its windows' times are the Visual Profiler's own, which the reader's
#: (from the first record) are not known to be.
FORMAT = Format(id="nvprof", name="nvprof", layout=LAYOUT, probe=LAYOUT.has_gpu_activity,
                reader_module="tb_gpu_advisor.formats.nvprof.reader", window_fixes=WINDOW_FIXES)

#: What a printed trace (``--print-gpu-trace``) did not keep, recorded by nvprof itself: the run's database (the CUDA
#: API calls on their threads, NVTX ranges, the GPU's properties), or at least the API's rows beside the GPU's.
_RECORD_WHOLE = ("nvprof --export-profile run.nvvp --print-gpu-trace --csv <program> 2> trace.csv   # the database "
                 "beside the printed rows (or -o run.nvvp alone)\n"
                 "nvprof --csv --print-gpu-trace --print-api-trace <program> 2> trace.csv   # at least the API's calls, "
                 "each GPU record's launch\n"
                 "nsys profile -t cuda,nvtx -o run <program> ; nsys export --type sqlite run.nsys-rep   # nvprof's "
                 "successor, on GPUs after Volta")
CSV_FIXES = {**WINDOW_FIXES,
             "not_kept": (("Record the run whole: nvprof's database (--export-profile, or -o) keeps the CUDA API calls "
                           "on their threads, NVTX ranges and the GPU's properties, which the printed rows leave out; "
                           "the Advisor reads it.", _RECORD_WHOLE),),
             "gpu_unprinted": (("Print the GPU's rows with the calls (--print-gpu-trace beside --print-api-trace), or "
                                "record the run's database, which holds both.", _RECORD_WHOLE),),
             "no_host": (("Record the host's side too: the CUDA API calls each GPU record was launched by, in nvprof's "
                          "database (--export-profile) or at least as printed rows (--print-api-trace); mark the "
                          "program's steps with NVTX ranges (torch.cuda.nvtx.range_push / nvtxRangePush) to see them.",
                          _RECORD_WHOLE),)}

#: nvprof's printed trace (``nvprof --csv --print-gpu-trace``, saved as a ``.csv``): the GPU's rows of the same run,
#: told by their header; a printing, so its report says what it did not keep (``csv_reader.not_kept``).
CSV_FORMAT = Format(id="nvprof-csv", name="nvprof (printed CSV trace)", layout=CSV_LAYOUT, probe=lambda path: None,
                    reader_module="tb_gpu_advisor.formats.nvprof.csv_reader", window_fixes=CSV_FIXES)
