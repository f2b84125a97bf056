"""The MLPerf Storage v3.0 vector_database benchmark: vectors and ground truth, the engines, results and figures."""
