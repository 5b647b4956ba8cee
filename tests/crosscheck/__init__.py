"""Cross-checks against independent references: the stock tool, HTA, and real captures with their truth."""
