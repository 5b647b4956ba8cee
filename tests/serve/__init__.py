"""Tests of the TensorBoard plugin's routes."""
