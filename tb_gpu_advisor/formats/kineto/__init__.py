"""PyTorch profiler (Kineto) traces: the parser and the adapter to the neutral trace model."""

from .adapter import read_trace

__all__ = ["read_trace"]
