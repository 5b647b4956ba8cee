"""Tests of every rule, the card grading, docs and golden reports."""
