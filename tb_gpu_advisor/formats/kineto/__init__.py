"""PyTorch profiler (Kineto) traces: their layout, their probe, the parser and the adapter to the neutral trace
model (``adapter.read_trace``)."""

from tb_gpu_advisor.formats.base import Format
from tb_gpu_advisor.formats.kineto.layout import LAYOUT
from tb_gpu_advisor.formats.kineto.probe import has_gpu_activity

FORMAT = Format(id="kineto", name="PyTorch trace", layout=LAYOUT, probe=has_gpu_activity,
                reader_module="tb_gpu_advisor.formats.kineto.adapter", perfetto_opens=True)
