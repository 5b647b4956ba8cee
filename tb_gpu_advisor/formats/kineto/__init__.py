"""PyTorch profiler (Kineto) traces: the parser and the adapter to the neutral trace model."""

from tb_gpu_advisor.formats.kineto.adapter import read_trace

__all__ = ["read_trace"]
