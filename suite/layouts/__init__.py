"""Layouts: where results sit (our results dirs, published benchmark dirs, the pooled v3.0 tree)."""
