"""The vector_database kind's figures for `suite compare` and `suite history` (suite.benchmark.Measured):
one result per benchmark (<engine>/<INDEX>), per query run (a run leaf) its QPS, recall and P99
latency (lower is better).

From the lowest-level evidence a leaf holds, never summary.json's claims where there is more: our
leaves keep the worker's per-query latencies (vectordb/engine/latencies_ms.npy) and wall time
(result.json): QPS = queries / wall seconds, P99 = their 99th percentile; recall@k again from the
returned ids (ids.npy, query_index.npy) against the dataset's ground truth where that file is still
where the run names it with its recorded sha256. A published leaf holds summary.json only (and the
benchmark's own multi-node summary): QPS = query_count / total_time_seconds, the P99 and recall
as published. A leaf whose evidence cannot be read gives its summary's figures, said in the notes.
"""

from __future__ import annotations

from pathlib import Path

from suite import files
from suite.benchmark import Measured, Samples
from suite.numbers import CLAIMED, RECOMPUTED, source_label
from suite.errors import ResultError, SuiteError
from suite.harness import hostfacts
from suite.vector_database import check as vdbcheck
from suite.vector_database import dataset
from suite.vector_database import leaf as vdbleaf

MAX_ARRAY_BYTES = 1 << 30          # an evidence array read (a hostile leaf could hold a huge one)
FIGURES = (("qps", "QPS", True), ("recall", "recall", True), ("p99_latency_ms", "P99 latency ms", False))


def measured(path: Path) -> list[Measured]:
    recs = vdbleaf.load_tree(path)
    ruleset = _ruleset(recs)
    out = []
    for bdir, group in vdbcheck.benchmarks(recs).items():
        runs = [r for r in group if r.phase == "run" and r.status in (None, "complete")]
        per: dict[str, list[float]] = {name: [] for name, _, _ in FIGURES}
        claimed: set[str] = set()          # figures some run gives as summary.json states them (suite.numbers)
        notes = [f"{Path(r.path).name}: left out ({r.status})" for r in group if r.phase == "run" and r not in runs]
        for r in runs:
            figs, note = run_figures(r)
            notes += [f"{Path(r.path).name}: {note}"] if note else []
            claimed |= figs.pop("claimed", set())
            for name, _, _ in FIGURES:
                if figs.get(name) is not None:
                    per[name].append(figs[name])
        first = (runs or group)[0]
        out.append(Measured(
            path=Path(bdir), kind="vector_database", label=f"{first.engine} {first.index_type} ({Path(bdir).parents[2].name})",
            identity={"workload": _workload(first), "engine": first.database or first.engine,
                      "index": first.index_type.upper(), "dataset": _dataset(group), "ruleset": ruleset,
                      "division": _division(Path(bdir))},
            system={"client_hosts": _text(first.client_hosts), "engine_version": _text(first.engine_version),
                    **hostfacts.system(_summary(first))},
            figures=tuple(Samples(name=n, label=source_label(label, src), higher_is_better=hib, per_run=tuple(per[n]),
                                  source=src)
                          for n, label, hib in FIGURES if per[n] for src in [CLAIMED if n in claimed else RECOMPUTED]),
            notes=tuple(notes), when=_when(runs)))
    return out


def run_figures(r) -> tuple[dict, str | None]:
    """One run leaf's QPS, recall and P99 from its evidence; the note where it falls back."""
    out = {"recall": r.recall, "p99_latency_ms": r.p99_latency_ms,
           "qps": (r.query_count / r.total_time_seconds if r.query_count and r.total_time_seconds
                   else r.throughput_qps)}
    if r.source != "suite":
        return out, None
    try:
        return _ours(Path(r.path), out)
    except (SuiteError, OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        return ({**out, "claimed": {"recall", "p99_latency_ms", "qps"}},
                f"summary.json's figures (claimed): the query evidence is unreadable ({str(exc)[:160]})")


def _ours(leaf: Path, out: dict) -> tuple[dict, str | None]:
    import numpy as np

    work = leaf / "vectordb" / "engine"
    res = files.load_json(work / "result.json", error=ResultError, root=leaf)
    lat = _array(work / "latencies_ms.npy").astype(float)
    wall = float(res["query"]["wall_s"])
    out = dict(out, qps=len(lat) / wall if wall > 0 and len(lat) else None,
               p99_latency_ms=float(np.percentile(lat, 99)) if len(lat) else None)
    summary = files.load_json(leaf / "summary.json", error=ResultError, root=leaf)
    gt = summary.get("ground_truth") if isinstance(summary.get("ground_truth"), dict) else {}
    truth = Path(str(gt.get("file") or ""))
    k = summary.get("k")
    if not (gt.get("file") and truth.is_file() and not truth.is_symlink() and isinstance(k, int) and 0 < k
            and truth.stat().st_size <= MAX_ARRAY_BYTES and dataset.sha256(truth) == gt.get("sha256")):
        return ({**out, "claimed": {"recall"}},
                "recall as summary.json states it (claimed: the dataset's ground truth is not where the run names it)")
    from suite.vector_database import figures as results

    truth_ids, _ = dataset.read_truth(truth)
    out["recall"], _ = results.recall_at_k(_array(work / "ids.npy"), _array(work / "query_index.npy"), truth_ids, k)
    return out, None


def _array(p: Path):
    import numpy as np

    if p.is_symlink() or not p.is_file() or p.stat().st_size > MAX_ARRAY_BYTES:
        raise ResultError(f"{p}: expected the worker's array (a regular file of at most {MAX_ARRAY_BYTES} bytes)")
    return np.load(p, allow_pickle=False)


def _ruleset(recs) -> str | None:
    try:
        return vdbcheck.round_of(recs)
    except SuiteError:
        return None


def _summary(r) -> dict:
    """A leaf's summary.json ({} where it cannot be read: the checker says why)."""
    try:
        doc = files.load_json(Path(r.path) / "summary.json", error=ResultError, root=Path(r.path))
    except SuiteError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _workload(r) -> str | None:
    doc = _summary(r)
    return doc.get("workload") if isinstance(doc.get("workload"), str) else None


def _dataset(group) -> str | None:
    shapes = sorted({(r.num_vectors, r.dimension) for r in group if r.num_vectors and r.dimension})
    return ", ".join(f"{n} x {d}" for n, d in shapes) or None


def _division(bdir: Path) -> str | None:
    parts = [p.lower() for p in bdir.parts]
    return "closed" if "closed" in parts else "open" if "open" in parts else None


def _when(runs) -> str | None:
    from suite.harness import leafstamp

    for r in runs:
        when = leafstamp.parse(Path(r.path).name)
        if when is not None:
            return when.isoformat()
    return None


def _text(v) -> str | None:
    return None if v is None else str(v)[:120]
