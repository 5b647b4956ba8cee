"""Tests of logdir discovery: local, symlinks, object stores."""
