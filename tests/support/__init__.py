"""Test helpers shared by the test folders: report builders, file writers, the plugin client, stock-tool and HTA runners, paths."""
