"""Tests of the metrics on constructed captures."""
