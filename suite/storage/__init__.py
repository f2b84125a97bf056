"""The storage layer every storage kind shares: the backends (backend/: POSIX and object storage,
one DataLocation per command), the catalogue of workload files (workloads), the data/results
file-system separation probe (separation) and object-store request evidence (objectstore). A kind's
own data code sits in its folder (suite/training/data/, suite/checkpointing/)."""
