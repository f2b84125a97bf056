"""TPCx-AI-style benchmark: the metric (metric.py); the pipeline comes later.

Written from the published definitions (see README "TPCx-AI metric"); no kit code is used.
"""
