"""Checkpointing figures re-derived from the lowest-level evidence present (issue 24, class 1).

The chain: ranks/rank-<r>.json (each rank's bytes, start, end, duration per checkpoint) ->
run-<k>/results.json (per checkpoint: bytes summed, duration max and throughput over the ranks;
the run's metric: the mean over its checkpoints; checkpoint_bytes), summary.json (DLIO's metric)
-> checkpoint_run_set.json (each run's entry, and `overall`: the mean over the complete runs, the
figures `suite metrics` and the report headline show).

Every claim is compared with the figure derived from below it; a disagreement is an Item (claimed
value, derived value, file, field) for the `empty` rules of rules/v2.0/checkpointing.yaml. Each
run's and the run set's figures are derived from the ranks when their records are usable, else
from the run's own checkpoint list (and said so in the `rederived` statement).
"""

from __future__ import annotations

import math
from pathlib import Path

from suite import files
from suite.errors import ResultError, SuiteError
from suite.rules.ops import Item
from suite.checkpointing import results

REL, ABS = 1e-9, 1e-9
TIME_ABS = 1e-6                 # seconds: a rank's duration against its own start and end
RUN_KEYS = ("duration_mean_s", "throughput_mean_gib_s")


def close(a, b, abs_: float = ABS) -> bool:
    return (isinstance(a, (int, float)) and not isinstance(a, bool) and isinstance(b, (int, float))
            and math.isclose(a, b, rel_tol=REL, abs_tol=abs_))


class Derived:
    """What one run's evidence gives: its checkpoints and metric, the problems met, the statement."""

    def __init__(self):
        self.rank_items: list[Item] = []      # rank records inconsistent in themselves or with the layout
        self.items: list[Item] = []           # results.json / summary.json claims against the ranks
        self.metric: dict | None = None       # {phase: phase_metric} re-derived
        self.checkpoints: list[dict] = []     # per checkpoint (results.per_checkpoint), re-derived
        self.source = "ranks"
        self.statement: list[dict] = []


def _say(d: Derived, figure: str, src: str, claimed, derived, ok: bool | None) -> None:
    status = "not-rederivable" if ok is None else ("rederived" if ok else "mismatch")
    d.statement.append({"figure": figure, "from": src, "status": status, "claimed": claimed, "derived": derived})


def _compare(d: Derived, path: Path, field: str, claimed, derived, src: str, abs_: float = ABS) -> None:
    number = isinstance(derived, (int, float)) and not isinstance(derived, bool)
    ok = close(claimed, derived, abs_) if number else (claimed == derived and type(claimed) is type(derived))
    _say(d, f"{path.parent.name}/{path.name}:{field}", src, claimed, derived, ok)
    if not ok:
        d.items.append(Item(claimed, path, field, expected=derived, expected_given=True,
                            note=f"re-derived from {src}"))


def rank_bytes(doc: dict) -> tuple[int, ...] | None:
    """Each rank's bytes per checkpoint in the layout results.json names (None: unknown workload)."""
    from suite.checkpointing import workloads
    from suite.checkpointing import model

    try:
        if doc["workload"] not in workloads.names():
            return None
        ck = model.from_workload(workloads.load(doc["workload"]), doc["processes"], doc["mode"], doc["miniature"])
        return ck.rank_bytes
    except (SuiteError, KeyError, ValueError, ZeroDivisionError):
        return None


def _rank_records(d: Derived, run_dir: Path, doc: dict, ranks: list[dict]) -> None:
    """Each rank's records against themselves, the run's window, its phase and the layout's bytes."""
    want = rank_bytes(doc)
    count = doc["num_checkpoints_write"] if doc["phase"] == "write" else doc["num_checkpoints_read"]
    for r, rank in enumerate(ranks):
        p = run_dir / "ranks" / f"rank-{r}.json"
        if rank["rank"] != r:
            d.rank_items.append(Item(rank["rank"], p, "rank", expected=r, expected_given=True))
        idx = [(c["phase"], c["index"]) for c in rank["checkpoints"]]
        expect = [(doc["phase"], k) for k in range(1, count + 1)]
        if idx != expect:
            d.rank_items.append(Item(_short(idx), p, "checkpoints[].phase/index", expected=_short(expect),
                                     expected_given=True, note="one record per checkpoint of the run's phase"))
        for i, c in enumerate(rank["checkpoints"]):
            f = f"checkpoints[{i}]"
            if not close(c["duration_s"], c["end_unix_s"] - c["start_unix_s"], TIME_ABS) or c["duration_s"] <= 0:
                d.rank_items.append(Item(c["duration_s"], p, f"{f}.duration_s",
                                         expected=max(c["end_unix_s"] - c["start_unix_s"], 0.0), expected_given=True,
                                         note="end_unix_s - start_unix_s, positive"))
            if c["start_unix_s"] < doc["start_unix_s"] - TIME_ABS or c["end_unix_s"] > doc["end_unix_s"] + TIME_ABS:
                d.rank_items.append(Item([c["start_unix_s"], c["end_unix_s"]], p, f"{f}.start_unix_s/end_unix_s",
                                         expected=[doc["start_unix_s"], doc["end_unix_s"]], expected_given=True,
                                         note="within the run's start and end (results.json)"))
            if i and c["start_unix_s"] < rank["checkpoints"][i - 1]["end_unix_s"] - TIME_ABS:
                d.rank_items.append(Item(c["start_unix_s"], p, f"{f}.start_unix_s",
                                         expected=rank["checkpoints"][i - 1]["end_unix_s"], expected_given=True,
                                         note="a rank writes (reads) its checkpoints one after another"))
            if want is not None and r < len(want) and c["bytes"] != want[r]:
                d.rank_items.append(Item(c["bytes"], p, f"{f}.bytes", expected=want[r], expected_given=True,
                                         note=f"rank {r}'s shards of the {doc['workload']} layout"))


def _short(pairs: list) -> str:
    s = ", ".join(f"{a}#{b}" for a, b in pairs[:6])
    return f"[{s}{', ...' if len(pairs) > 6 else ''}] ({len(pairs)})"


def run(run_dir: Path, doc: dict) -> Derived:
    """One run's figures re-derived (status complete); the claims compared."""
    d = Derived()
    path = run_dir / results.RESULTS
    ranks: list[dict] = []
    try:
        ranks = results.load_ranks(run_dir, doc["processes"])
        _rank_records(d, run_dir, doc, ranks)
        again = results.per_checkpoint(ranks)
    except ResultError as exc:
        d.rank_items.append(Item(str(exc), run_dir / "ranks", "rank-<r>.json", expected="a usable record per rank",
                                 expected_given=True))
        d.source, again = "results.json checkpoints (ranks unusable)", None
        _say(d, f"{run_dir.name}/{results.RESULTS}:checkpoints", "ranks/rank-<r>.json", len(doc["checkpoints"]),
             None, None)
    src = "ranks/rank-<r>.json"
    if again is None:                                            # the run's own list, the lowest level left
        again, src = [c for c in doc["checkpoints"] if c.get("phase") == doc["phase"]], "results.json checkpoints"
    else:
        _checkpoints(d, path, doc, again, ranks, src)
    d.checkpoints = again
    d.metric = {p: m for p in results.PHASES if (m := results.phase_metric(again, p))}
    for phase in sorted(set(d.metric) | set(doc["metric"])):
        for key in (*RUN_KEYS, "duration_stdev_s", "throughput_stdev_gib_s", "checkpoints"):
            _compare(d, path, f"metric.{phase}.{key}", (doc["metric"].get(phase) or {}).get(key),
                     (d.metric.get(phase) or {}).get(key), src)
    _summary(d, run_dir, doc, again, src)
    if ranks:
        per_host: dict = {}
        for r in ranks:
            per_host[r["hostname"]] = per_host.get(r["hostname"], 0) + 1
        _compare(d, path, "processes_per_host", doc.get("processes_per_host"), per_host, src)  # (hosts: names given)
        placed = {h["hostname"]: len(h["ranks"]) for h in doc["enforcement"].get("hosts") or []}
        if placed:      # across hosts: the placement the evidence records is where the ranks say they ran
            _compare(d, path, "enforcement.hosts[].ranks", placed, per_host, src)
        if again:
            _epochs(d, run_dir, results.epoch_stats(ranks, again), src)
    return d


def _epochs(d: Derived, run_dir: Path, want: dict, src: str) -> None:
    """per_epoch_stats.json (DLIO's per checkpoint duration and throughput) against the ranks."""
    p = run_dir / results.EPOCH_STATS
    try:
        got = files.load_json(p, schema="per-epoch-stats", error=ResultError).get("1") or {}
    except ResultError as exc:
        d.items.append(Item(str(exc), p, "1", expected="per_epoch_stats.json (DLIO's per checkpoint figures)",
                            expected_given=True))
        return
    for key, w in want["1"].items():
        if isinstance(w, dict):
            g = got.get(key) if isinstance(got.get(key), dict) else {}
            for k in ("duration", "throughput"):
                _compare(d, p, f"1.{key}.{k}", g.get(k), w[k], src)


def _checkpoints(d: Derived, path: Path, doc: dict, again: list[dict], ranks: list[dict], src: str) -> None:
    claimed = doc["checkpoints"]
    if len(claimed) != len(again):
        _compare(d, path, "checkpoints (count)", len(claimed), len(again), src)
    for i, (c, a) in enumerate(zip(claimed, again)):
        for key in ("bytes", "duration_s", "throughput_gib_s", "rank_min_gib_s", "rank_max_gib_s"):
            _compare(d, path, f"checkpoints[{i}].{key}", c.get(key), a[key], src)
    if again:
        _compare(d, path, "checkpoint_bytes", doc["checkpoint_bytes"], again[0]["bytes"], src)
    mine = results.per_rank(ranks) if again else []
    for i, (c, a) in enumerate(zip(doc.get("ranks") or [], mine)):
        for key in (f"{doc['phase']}_gib_s", "bytes_per_checkpoint"):
            _compare(d, path, f"ranks[{i}].{key}", c.get(key), a.get(key), src)


def _summary(d: Derived, run_dir: Path, doc: dict, again: list[dict], src: str) -> None:
    p = run_dir / results.SUMMARY
    if not again:
        return
    try:
        summary = files.load_json(p, schema="checkpoint-summary", error=ResultError)
    except ResultError as exc:
        d.items.append(Item(str(exc), p, "metric", expected="summary.json (DLIO's figures)", expected_given=True))
        return
    want = results.dlio_summary(doc, again)["metric"]
    got = summary.get("metric") or {}
    for k in sorted(set(want) | {k for k in got if k.endswith(("_GB_per_second", "_seconds"))}):
        _compare(d, p, f"metric.{k}", got.get(k), want.get(k), src)


def run_set(path: Path, rs: dict, runs: list[tuple[Path, dict]], derived: dict[int, Derived]) -> tuple[list[Item], list[dict]]:
    """checkpoint_run_set.json's runs[] and overall against the runs' re-derived metrics."""
    d = Derived()
    by_run = {doc["run"]: (p, doc) for p, doc in runs}
    entries: dict[int, dict] = {}
    for i, e in enumerate(rs["runs"]):
        if e["run"] in entries or e["run"] not in by_run:
            d.items.append(Item(e["run"], path, f"runs[{i}].run", expected=sorted(set(by_run) - set(entries)),
                                expected_given=True, note="one entry per run-<k>/results.json of this phase"))
            continue
        entries[e["run"]] = e
        _, doc = by_run[e["run"]]
        _compare(d, path, f"runs[{i}].status", e["status"], doc["status"], f"run-{e['run']}/results.json")
        m = derived[e["run"]].metric if e["run"] in derived else doc["metric"]
        for phase in results.PHASES:
            for key in RUN_KEYS:
                k = f"{phase}_{key}"
                if k in e or (m or {}).get(phase):
                    _compare(d, path, f"runs[{i}].{k}", e.get(k), ((m or {}).get(phase) or {}).get(key),
                             f"run-{e['run']}: {derived[e['run']].source if e['run'] in derived else 'results.json'}")
    for key in ("workload", "phase", "mode", "division", "miniature", "processes"):
        for p, doc in runs:
            _compare(d, path, key, rs[key], doc.get(key), f"{p.parent.name}/results.json")
    for k in sorted(set(by_run) - set(entries)):
        d.items.append(Item(None, path, "runs", expected=f"an entry for run {k}", expected_given=True,
                            note=f"run-{k}/results.json is there"))
    again = results.overall([{**doc, "metric": derived[doc["run"]].metric if doc["run"] in derived else doc["metric"]}
                             for _, doc in runs])
    claimed = rs["overall"]
    for k in sorted(set(again) | set(claimed)):
        _compare(d, path, f"overall.{k}", claimed.get(k), again.get(k), "the runs' re-derived metrics")
    return d.items, d.statement
