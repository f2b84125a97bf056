"""suite: MLPerf Storage-style and TPCx-AI-style benchmarks under enforced rules."""

__version__ = "0.1.0"
