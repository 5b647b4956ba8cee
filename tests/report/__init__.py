"""Tests of host merging and report diffs."""
