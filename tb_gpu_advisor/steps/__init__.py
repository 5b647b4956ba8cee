"""Step detection: where each training step starts and ends on the host and on each GPU, read off the trace model."""
