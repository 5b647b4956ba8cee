"""Tests of the analysis entry point, worker isolation and the cache."""
