"""Tests of the XPlane and Kineto readers, layouts and probes, on real files and constructed ones."""
