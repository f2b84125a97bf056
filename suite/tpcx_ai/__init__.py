"""TPCx-AI-style benchmark: the run (driver and its phases), the ten use cases, the metric (metric.py).

Written from the published definitions (docs/tpcx-ai.md, docs/metrics.md); no kit code is used.
"""
