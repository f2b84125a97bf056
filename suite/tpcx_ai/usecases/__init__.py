"""TPCx-AI use cases, one module each."""
