"""End to end: a real tensorboard process driven by a real Chromium."""
