"""Tests of the trace model's column helpers."""
