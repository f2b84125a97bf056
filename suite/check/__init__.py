"""`suite check`'s shared toolkit: suite.check.result (CheckResult, BenchmarkResult) and the host
metrics rules (hostcpu, hostrun). The trees' walk and readers are the layouts' (suite.layouts: walker,
manifest, todo; benchdirs: tree, identify, systems, code, genlogs); the training checker is
suite.training.check.checker."""
