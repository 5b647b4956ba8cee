"""Utilities every stage may use and that import no stage: file access (local and object stores), number formatting, heap release, and the thresholds table."""
