"""XPlane (``<host>.xplane.pb``, TensorFlow and JAX): the wire decoder, the schema, the columnar timeline,
its reader, and the adapter to the neutral trace model (:func:`read_trace`)."""

from tb_gpu_advisor.formats.xplane.adapter import read_trace

__all__ = ["read_trace"]
