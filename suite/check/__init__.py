"""`suite check`: suite.training.check.checker (entry point: check), suite.check.result (CheckResult,
BenchmarkResult), the facts (facts, layout, walker, ...) and checkpointing results (checkpoint)."""
