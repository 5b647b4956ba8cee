"""Tests of step detection."""
