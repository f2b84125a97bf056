"""TPCx-AI table groups."""
