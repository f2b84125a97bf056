"""The MLPerf Storage v3.0 kv_cache benchmark: simulated users, the GPU/CPU/storage tiers, results and figures."""
