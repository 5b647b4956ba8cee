"""The tb-gpu-advisor command: report, diff and precompute."""
