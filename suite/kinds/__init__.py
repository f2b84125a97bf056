"""Benchmark kinds (training, checkpointing, tpcx-ai, ...): one module each, listed by registry.py."""
