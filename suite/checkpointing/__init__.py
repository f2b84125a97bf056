"""MLPerf Storage v2.0 checkpointing: llama3 models as data (workloads/llama3-*.yaml), the
checkpoint layout (model), the MPI rank that writes and reads it (rank), the CLI side of
`suite run --workload llama3-*` (run) and its results (results)."""
