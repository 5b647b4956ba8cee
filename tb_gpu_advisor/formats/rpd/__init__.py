"""rocmProfileData traces (AMD's ROCm tracer, rpd_tracer: ``runTracer.sh -o <file>.rpd``, an SQLite database of its
own schema): their layout, their probe and the reader into the neutral trace model (``reader.read_trace``)."""

from __future__ import annotations

from tb_gpu_advisor.formats.base import Format, from_start_fixes
from tb_gpu_advisor.formats.rpd.layout import LAYOUT


#: rpd_tracer's way to put the window on the GPU work (ROCm/rocmProfileData FEATURES.md, "Rpd_tracer Start/stop"): the
#: program switches recording on and off itself (``rpdTracerControl``: it loads the tracer and creates the file), so the
#: warm-up is never recorded.
_WINDOW = ("# record only the {steps} after the warm-up, from the program itself:\n"
           "from rpdTracerControl import rpdTracerControl\n"
           "rpdTracerControl.setFilename(name=\"run.rpd\", append=False)\n"
           "tracer = rpdTracerControl()   # loads rpd_tracer; recording starts at start()\n"
           "tracer.start(); run_steps(10); tracer.stop()   # or: with rpdTracerControl(): run_steps(10)\n"
           "# or profile with torch.profiler: Kineto records HIP kernels, copies and calls on ROCm")
WINDOW_FIXES = from_start_fixes("rpd_tracer", "module loading, the first calls, the libraries' set-up", _WINDOW)

FORMAT = Format(id="rpd", name="rocmProfileData", layout=LAYOUT, probe=LAYOUT.has_gpu_activity,
                reader_module="tb_gpu_advisor.formats.rpd.reader", window_fixes=WINDOW_FIXES,
                window_fix_lang="python")
