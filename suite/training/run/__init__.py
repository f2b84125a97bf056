"""`suite run` for the storage workloads: launch, prepare, ranks, loader, results."""
