"""Synthetic TensorFlow GPU profiles with known truth (the test corpus).

``builder``/``encode``: a fast XSpace writer; ``tfcapture``: TensorFlow-shaped
events on top of it; ``scenarios``: one function per situation of the GPU
performance guide, each with a :class:`~.truth.Truth`.
"""
