"""ROCm's profilers' outputs: rocprof's trace (``rocprof --hip-trace``, rocprof v1/v2 through roctracer:
``results.json``; ``layout.py``, ``reader.py``) and rocprofv3's rocpd database (ROCm 7: ``<pid>_results.db``;
``rocpd_layout.py``, ``rocpd_reader.py``) and rocprofv3's CSV files (``--output-format csv``, the default before ROCm 7:
``<pid>_kernel_trace.csv`` ...; ``csv_layout.py``, ``csv_reader.py``) and JSON document (``--output-format json``:
``<pid>_results.json``; ``json_layout.py``, ``json_reader.py``), each a format of its own into the neutral trace model.
rocprofv3's Perfetto output (``--output-format pftrace``, a protobuf trace for the viewer) is not read: the same
records are in its CSV, JSON and rocpd outputs."""

from __future__ import annotations

from tb_gpu_advisor.formats.base import Format, from_start_fixes
from tb_gpu_advisor.formats.rocprof.csv_layout import LAYOUT as CSV_LAYOUT
from tb_gpu_advisor.formats.rocprof.json_layout import LAYOUT as JSON_LAYOUT
from tb_gpu_advisor.formats.rocprof.layout import LAYOUT
from tb_gpu_advisor.formats.rocprof.rocpd_layout import LAYOUT as ROCPD_LAYOUT


def has_gpu_activity(path: str) -> bool | None:
    """None: not told cheaply (tblextr labels every GPU up to the highest id it saw, so a label is no kernel, and the
    events of a section may lie anywhere in the file): the read says."""
    return None


#: rocprof's own ways to put the window on the GPU work (rocprof v1 ``--help``): tracing switched off at the start
#: (``--trace-start off``) and on from the program (``roctracer_start()`` / ``roctracer_stop()``, roctracer's
#: ``roctracer_ext.h``), or a delay and a length (``--trace-period <delay:length:rate>``); its records written as it
#: runs (``--flush-rate <rate>``).  Each time takes its unit ("Supported time formats: <number(m|s|ms|us)>": the
#: script's ``convert_time_val`` refuses a bare number, "invalid time value format"), and the rate -- the period at
#: which the length-long window repeats -- is no shorter than the length (roctracer's tool aborts on "control length
#: value > rate value"): h37-window70, the advice's ``--trace-period 5000:2000:0`` failed both checks.
_WINDOW = ("# record only the {steps} after the warm-up: start with tracing off and switch it on from the program\n"
           "rocprof --hip-trace --trace-start off -o results.csv ./app   # app: roctracer_start(); run; roctracer_stop();\n"
           "# or by time: 5 s after the start, 2 s long, repeated each 60 min (each value with its unit m|s|ms|us)\n"
           "rocprof --hip-trace --trace-period 5s:2s:60m -o results.csv ./app")
WINDOW_FIXES = {
    **from_start_fixes("rocprof", "code objects, the first calls, the libraries' set-up", _WINDOW),
    "no_gpu_records": (("Record the GPU's side with the calls: rocprof --hip-trace records each kernel and copy beside "
                      "the HIP call that launched it; let the GPU finish (hipDeviceSynchronize) before the program "
                      "exits, and have rocprof write its records as it goes on a long run (--flush-rate).",
                      "rocprof --hip-trace --flush-rate 1s -o results.csv ./app   # app: hipDeviceSynchronize() before exit"),),
    "unrecorded": (("Record what the host does between its GPU work: mark the CPU code with roctx ranges "
                    "(roctxRangePushA / roctxRangePop, roctracer's roctx.h) and record them with the HIP calls; then "
                    "read the ranges that fill the gap -- or move that CPU work out of the profiled window.",
                    "rocprof --hip-trace --roctx-trace -o results.csv ./app"),),
    # a kernel trace alone (``--stats`` without ``--hip-trace``): the host's side is recorded first
    "no_host": (("Record the host's side: this capture holds the GPU's kernels alone; rocprof --hip-trace records "
                 "each HIP call and the launch of each kernel beside it, --roctx-trace the program's roctx ranges "
                 "(roctxRangePushA / roctxRangePop, roctracer's roctx.h) that name its CPU work -- then the GPU's idle "
                 "reads as launches, waits or the host's own code.",
                 "rocprof --hip-trace --roctx-trace -o results.csv ./app"),),
    "long": (("Record a shorter window: a few seconds of the program's steady work, not all of it -- rocprof "
              "records every call and operation for as long as it runs.", _WINDOW),),
}

FORMAT = Format(id="rocprof", name="ROCm rocprof", layout=LAYOUT, probe=has_gpu_activity,
                reader_module="tb_gpu_advisor.formats.rocprof.reader", window_fixes=WINDOW_FIXES,
                perfetto_opens=True)

#: rocprofv3's rocpd database (ROCm 7's default output): its own layout and reader, the same window fixes' spirit in
#: rocprofv3's options (``--collection-period start_delay:collection_time:repeat``; its marker API's
#: ``roctxProfilerPause`` / ``roctxProfilerResume``).
_V3_WINDOW = ("# record only the {steps} after the warm-up: a delay and a length, or pause/resume from the program\n"
              "rocprofv3 --runtime-trace --collection-period 5:2:1 --collection-period-unit sec -- ./app\n"
              "# app: roctxProfilerPause(0) before the warm-up, roctxProfilerResume(0) when the steps begin")
V3_WINDOW_FIXES = {
    **from_start_fixes("rocprofv3", "code objects, the first calls, the libraries' set-up", _V3_WINDOW),
    "long": (("Record a shorter window: a few seconds of the program's steady work, not all of it.", _V3_WINDOW),),
    "unrecorded": (("Record what the host does between its GPU work: mark the CPU code with roctx ranges "
                    "(roctxRangePush / roctxRangePop, rocprofiler-sdk's roctx.h) and record them beside the HIP calls; "
                    "then read the ranges that fill the gap -- or move that CPU work out of the profiled window.",
                    "rocprofv3 --runtime-trace --marker-trace -- ./app"),),
    # ``--kernel-trace`` alone records the GPU's kernels only: the host's side is recorded first
    "no_host": (("Record the host's side: this capture holds the GPU's kernels alone (--kernel-trace); rocprofv3 "
                 "--runtime-trace records the HIP calls and each kernel's launch beside the kernels, --marker-trace "
                 "the program's roctx ranges (roctxRangePush / roctxRangePop, rocprofiler-sdk's roctx.h) that name its "
                 "CPU work -- then the GPU's idle reads as launches, waits or the host's own code.",
                 "rocprofv3 --runtime-trace --marker-trace -- ./app"),),
    "no_gpu_records": (("Record the GPU's side with the calls: rocprofv3 --runtime-trace (or --kernel-trace "
                        "--memory-copy-trace beside --hip-trace) records each kernel and copy with its call.",
                        "rocprofv3 --runtime-trace -- ./app"),),
}

ROCPD_FORMAT = Format(id="rocpd", name="ROCm rocprofv3 (rocpd)", layout=ROCPD_LAYOUT, probe=lambda path: None,
                      reader_module="tb_gpu_advisor.formats.rocprof.rocpd_reader", window_fixes=V3_WINDOW_FIXES)

#: rocprofv3's CSV files (``--output-format csv``): one run's files in one folder, read as one capture; the same
#: profiler, so the same window fixes as its database.
CSV_FORMAT = Format(id="rocprofv3-csv", name="ROCm rocprofv3 (CSV)", layout=CSV_LAYOUT, probe=lambda path: None,
                    reader_module="tb_gpu_advisor.formats.rocprof.csv_reader", window_fixes=V3_WINDOW_FIXES)

#: rocprofv3's JSON document (``--output-format json``): its records read by the CSV reader's one build.
JSON_FORMAT = Format(id="rocprofv3-json", name="ROCm rocprofv3 (JSON)", layout=JSON_LAYOUT, probe=lambda path: None,
                     reader_module="tb_gpu_advisor.formats.rocprof.json_reader", window_fixes=V3_WINDOW_FIXES)
