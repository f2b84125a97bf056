"""suite/vector_database/worker.py's query loop (the engines' side): a fixed count is exactly that many
queries; a fixed duration stops issuing at its end; C clients, issue order kept, ids per query.
The search here is a real exact search over a small matrix (numpy), not an engine."""

import time

import numpy as np

from suite.vector_database import worker


def _exact(x):
    def search(q):
        return np.argsort(((x - q) ** 2).sum(1))[:10]
    return search


def test_query_count_mode_issues_exactly_n():
    x = np.random.default_rng(0).random((500, 8), dtype=np.float32)
    loop = worker.query_loop(_exact(x), x[:7], {"mode": "query_count", "query_count": 50, "clients": 3, "k": 10})
    assert len(loop["latencies_ms"]) == 50 and not loop["errors"]
    assert list(loop["query_index"]) == [i % 7 for i in range(50)]
    assert (loop["ids"][:, 0] == loop["query_index"]).all()         # each query finds itself first


def test_timed_mode_stops_at_the_duration():
    x = np.random.default_rng(1).random((2000, 8), dtype=np.float32)
    t0 = time.perf_counter()
    loop = worker.query_loop(_exact(x), x[:20], {"mode": "timed", "duration_s": 0.4, "clients": 2, "k": 10})
    assert 0.4 <= loop["wall_s"] < 2.0 and time.perf_counter() - t0 < 3.0
    assert len(loop["latencies_ms"]) > 0 and (loop["latencies_ms"] > 0).all()


def test_a_failing_search_is_reported_not_hidden():
    def search(q):
        raise RuntimeError("index file gone")
    loop = worker.query_loop(search, np.zeros((3, 4), dtype=np.float32),
                             {"mode": "query_count", "query_count": 5, "clients": 2, "k": 10})
    assert loop["errors"] and "index file gone" in loop["errors"][0]
