"""From metrics and findings to the versioned report: headline cards, tables, merged hosts, text/Markdown rendering and the diff of two reports."""
