"""Tests of framework detection, vocabulary and fixes."""
