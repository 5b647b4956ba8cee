"""XPlane (``<host>.xplane.pb``, TensorFlow and JAX): its layout, its probe, the wire decoder, the schema, the
columnar timeline, its reader, and the adapter to the neutral trace model (``adapter.read_trace``)."""

from tb_gpu_advisor.formats.base import Format
from tb_gpu_advisor.formats.xplane.layout import LAYOUT
from tb_gpu_advisor.formats.xplane.probe import has_gpu_activity

FORMAT = Format(id="xplane", name="XPlane (TensorFlow/JAX)", layout=LAYOUT, probe=has_gpu_activity,
                reader_module="tb_gpu_advisor.formats.xplane.adapter", stock_tool_opens=True)
