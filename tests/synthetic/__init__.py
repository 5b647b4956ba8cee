"""Tests that the synthetic generators follow the real files and the truth they construct."""
