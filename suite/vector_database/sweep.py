"""`suite run --workload vdb-… --index … --sweep` and `--dram-ratios 10,25,100`: a ladder of points, each a
full query series (the workload's runs, each after the harness's cache clear, suite.vector_database.run)
into R/<point>/, then R/vdb_sweep.json: each point's mean figures, the recall–QPS Pareto front, and the
headline, QPS at recall@10 >= the floor, read off the front (the highest QPS of a point at or above it).

--sweep: DiskANN's search list (Milvus HNSW's ef) over the workload's `sweep` ladder (workloads/<name>.yaml),
else k, 2k, 4k, 8k, 16k. --dram-ratios: the workload's search list at each DRAM:index ratio (suite.vector_database.dram).
A point whose recall is under the floor is recorded, not a failed run (its leaves check INVALID all the same).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from pathlib import Path

from suite import files
from suite.errors import SuiteError

MIN_POINTS = 5


def ladder(w, index: str) -> tuple[str, list[int]]:
    """(the swept parameter, its values, ascending): the workload's `sweep` data, else k x (1, 2, 4, 8, 16)."""
    param = "ef" if index == "HNSW" else "search_list"
    vals = list((w.sweep or {}).get(param) or [w.k * m for m in (1, 2, 4, 8, 16)])
    if len(vals) < MIN_POINTS or any(v < w.k for v in vals):
        raise SuiteError(f"{w.path}: sweep.{param}: expected at least {MIN_POINTS} values, each >= k ({w.k}), got {vals}")
    return param, sorted(set(vals))


def floor_of(w) -> float:
    """The floor a point is held to: the higher of the round's (rules/<round>/vector_database.yaml) and the workload's."""
    from suite.rules import engine as rules
    from suite.rules import rulesets
    from suite.vector_database import check

    params = rules.load_layers(rulesets.for_kind("vector_database").name, check.RULE_FILES).params
    return max(check.round_floor(params), float(w.recall_floor))


def pareto(points: list[dict]) -> list[str]:
    """The labels of the points no other point beats on both recall and QPS (ties kept), by recall."""
    ok = [p for p in points if p.get("recall") is not None and p.get("throughput_qps") is not None]
    front = [p for p in ok if not any(q is not p and q["recall"] >= p["recall"] and q["throughput_qps"] >= p["throughput_qps"]
                                      and (q["recall"] > p["recall"] or q["throughput_qps"] > p["throughput_qps"]) for q in ok)]
    return [p["label"] for p in sorted(front, key=lambda p: p["recall"])]


def headline(points: list[dict], floor: float) -> dict | None:
    """QPS at recall >= floor, read off the front: the point of highest QPS among those at or above the floor."""
    above = [p for p in points if p.get("recall") is not None and p["recall"] >= floor and p.get("throughput_qps")]
    if not above:
        return None
    best = max(above, key=lambda p: (p["throughput_qps"], p["recall"]))     # a tie on QPS: the higher recall (on the front)
    return {"throughput_qps": best["throughput_qps"], "recall": best["recall"], "point": best["label"], "floor": floor}


def _mean(docs: list[dict], get) -> float | None:
    vals = [v for d in docs if isinstance(v := get(d), (int, float)) and not isinstance(v, bool)]
    return statistics.fmean(vals) if vals else None


def point_figures(label: str, value, docs: list[dict]) -> dict:
    """A point's means over its complete runs: QPS, recall, p99, bytes and I/Os per query cold and warm."""
    done = [d for d in docs if d.get("status") == "complete"]
    io = lambda d: d.get("io") or {}     # noqa: E731
    return {"label": label, "value": value, "runs": len(done),
            "throughput_qps": _mean(done, lambda d: d.get("throughput_qps")), "recall": _mean(done, lambda d: d.get("recall")),
            "p99_latency_ms": _mean(done, lambda d: d.get("p99_latency_ms")),
            "bytes_read_per_query": _mean(done, lambda d: io(d).get("bytes_read_per_query")),
            "read_ops_per_query": _mean(done, lambda d: io(d).get("read_ops_per_query")),
            "mean_io_bytes": _mean(done, lambda d: io(d).get("mean_io_bytes")),
            "warm_bytes_read_per_query": _mean(done, lambda d: io(d).get("warm_bytes_read_per_query")),
            "warm_read_ops_per_query": _mean(done, lambda d: io(d).get("warm_read_ops_per_query")),
            "dram": next((d.get("dram") for d in done if d.get("dram")), None)}


def _root(opts, w) -> Path:
    from suite.harness import resultsdir

    given = Path(opts.results_dir) if opts.results_dir else resultsdir.default(f"{w.name}-{opts.index.lower()}-sweep")
    resultsdir.check(given, "--results-dir")
    given.mkdir(parents=True, exist_ok=True)
    if any(given.iterdir()):
        raise SuiteError(f"--results-dir {given}: expected a new or empty directory, got one holding files")
    return given


def run(opts, percents: tuple | None = None) -> tuple[Path, dict]:
    """Every point's series, then R/vdb_sweep.json; (R, that document)."""
    from suite.harness import enforced
    from suite.vector_database import run as vrun
    from suite.vector_database import workload as workloads

    w = workloads.load(opts.workload)
    if percents:
        mode, param, values = "dram", "dram_percent", list(percents)
        if opts.index == "HNSW" and min(values) < 100:
            raise SuiteError(f"--dram-ratios {min(values):g}: expected 100 with --index hnsw (Milvus holds the whole "
                             "HNSW graph in memory; under 100 % it cannot load), got it")
    else:
        mode, (param, values) = "sweep", ladder(w, opts.index)
    root = _root(opts, w)
    points = []
    for v in values:
        label = f"dram-{v:g}pct" if mode == "dram" else f"{param}-{v:05d}"
        enforced.say(f"[{mode}] point {label}: {opts.runs or w.runs} run(s) into {root / label}")
        o = dataclasses.replace(opts, results_dir=str(root / label), sweep_point=True,
                                **({"dram_percent": v} if mode == "dram" else {param: v}))
        _, docs = vrun.run(o)
        points.append(point_figures(label, v, docs))
    floor = floor_of(w)
    doc = {"schema_version": 1, "kind": "vector_database-sweep", "mode": mode, "param": param, "workload": w.name,
           "engine": opts.engine or vrun.ENGINE_FOR[opts.index], "index_type": opts.index, "recall_floor": floor,
           "runs_per_point": opts.runs or w.runs, "points": points, "pareto": pareto(points),
           "headline": headline(points, floor), "written_unix_s": time.time()}
    files.write_atomic(root / "vdb_sweep.json", files.dump_json(doc, indent=2))
    return root, doc


def text(doc: dict) -> str:
    """The sweep's table, one line per point, and its headline."""
    lines = [f"{doc['mode']} of {doc['workload']} {doc['engine']} {doc['index_type']} ({doc['param']}; "
             f"{doc['runs_per_point']} run(s) per point, each after a cache clear)",
             f"  {'point':<16} {'QPS':>10} {'recall':>8} {'p99 ms':>8} {'KiB/q':>8} {'I/Os/q':>8} {'B/IO':>7} "
             f"{'warm I/Os/q':>11}  front"]
    f = lambda v, p=1: "-" if v is None else f"{v:,.{p}f}"      # noqa: E731
    for p in doc["points"]:
        lines.append(f"  {p['label']:<16} {f(p['throughput_qps']):>10} {f(p['recall'], 4):>8} {f(p['p99_latency_ms'], 2):>8} "
                     f"{f(p['bytes_read_per_query'] / 1024 if p['bytes_read_per_query'] is not None else None):>8} "
                     f"{f(p['read_ops_per_query']):>8} {f(p['mean_io_bytes'], 0):>7} {f(p['warm_read_ops_per_query']):>11}  "
                     f"{'*' if p['label'] in doc['pareto'] else ''}")
    h = doc["headline"]
    lines.append(f"headline: {h['throughput_qps']:,.1f} QPS at recall@10 {h['recall']:.4f} >= {h['floor']:g} ({h['point']})"
                 if h else f"headline: none: no point reaches recall@10 {doc['recall_floor']:g}")
    return "\n".join(lines) + "\n"
