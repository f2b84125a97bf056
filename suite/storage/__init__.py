"""The storage benchmark: workloads as data, sizing, data generation, the metrics."""
