"""`suite sweep` and `suite sizing`: how many accelerators a storage keeps busy, and the inverse.

Where it sits: above storage/run (it calls `suite.training.run.launch.run` once per accelerator
count, in-process) and below report/. report/ reads a sweep only through `suite.training.sweep.result.load`
(schema-checked sweep.json), so the arrow is report -> sweep -> storage.run -> storage; nothing
here imports report/ (the CLI formats what sizing returns with suite.report.text).

Modules: `search` (the sweep driver: a list of N, or find-max: the bracket and galloping from it, or
doubling, then bisection; each probe recorded, the answer confirmed with the round's runs.count
runs), `ceiling` (the page-cache run: the dataset pre-read, no drop, open division), `result`
(per-N numbers from the runs' results.json, the first-epoch vs later-epoch split, the knee,
sweep.json), `sizing` (bandwidth and dataset size for N), `command` (the Kind.sweeps entries).
"""
