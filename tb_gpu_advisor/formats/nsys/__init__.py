"""Nsight Systems captures (``nsys export --type sqlite`` files; ``.nsys-rep`` reports exported first): their
layout, their probe, the tables, the ``.nsys-rep`` export and the reader into the neutral trace model
(``reader.read_trace``)."""

from tb_gpu_advisor.formats.base import Format
from tb_gpu_advisor.formats.nsys.layout import LAYOUT
from tb_gpu_advisor.formats.nsys.probe import has_gpu_activity

FORMAT = Format(id="nsys", name="Nsight Systems", layout=LAYOUT, probe=has_gpu_activity,
                reader_module="tb_gpu_advisor.formats.nsys.reader", native_viewer="Nsight Systems")
