"""A sweep's summary claims re-derived from its own points (issue 24, class 1).

sweep.json states, beside its points, what they mean: each point's (and confirmation's) mean AU and
whether it met the AU threshold, the ratio to the ceiling, the knee, and the maximum N at the
threshold (find-max: the largest N the probes met, and the confirmed answer). Each is derived again
here from the per-run AU lists and the points; `contradictions` lists every claim that disagrees
({field, claimed, derived, why}). `suite sizing --from` refuses such a sweep (one line, exit 2) and
the report shows them as findings. `derived_maximum` is the maximum N the points support.
"""

from __future__ import annotations

import math

REL = 1e-9


def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def meets(pt: dict | None, threshold: float) -> bool | None:
    """Whether a point's runs all met the threshold, from the lowest level present: its per-run AU list,
    else its mean AU (None: nothing to derive it from)."""
    if not pt:
        return None
    runs = pt.get("runs")
    if "runs" in pt:
        if not _num(runs) or runs <= 0 or not _num(pt.get("runs_complete")) or pt["runs_complete"] < runs:
            return False                               # nothing measured, or a run that did not complete
        aus = pt.get("au_per_run") or []
        if len(aus) == runs and all(_num(a) for a in aus):
            return all(a >= threshold for a in aus)
    au = pt.get("au_percentage")
    return au >= threshold if _num(au) else None


def _met(pt: dict | None, threshold: float) -> bool:
    """meets(), with the claim standing only where nothing below it says otherwise."""
    ok = meets(pt, threshold)
    return bool(pt and pt.get("meets_threshold")) if ok is None else ok


def _mean_au(pt: dict) -> float | None:
    aus = pt.get("au_per_run") or []
    if not aus or len(aus) != pt.get("runs") or pt.get("runs_complete") != pt.get("runs") \
            or not all(_num(a) for a in aus):
        return None
    return math.fsum(aus) / len(aus)


def _point(out: list, where: str, pt: dict | None, threshold: float) -> None:
    if not pt:
        return
    m = _mean_au(pt)
    if m is not None and not (_num(pt.get("au_percentage")) and math.isclose(pt["au_percentage"], m, rel_tol=REL)):
        out.append({"field": f"{where}.au_percentage", "claimed": pt.get("au_percentage"), "derived": m,
                    "why": "the mean of its au_per_run"})
    ok = meets(pt, threshold)
    if ok is not None and pt.get("meets_threshold") is not ok:
        out.append({"field": f"{where}.meets_threshold", "claimed": pt.get("meets_threshold"), "derived": ok,
                    "why": f"every run's AU >= {threshold:g}% (au_per_run {pt.get('au_per_run')})"})


def _storage_met(doc: dict) -> list[int]:
    thr = doc["au_threshold_percentage"]
    return [p["accelerators"] for p in doc["points"] if _met(p.get("storage"), thr)]


def derived_maximum(doc: dict) -> int | None:
    """The maximum N at the threshold the sweep's own evidence supports: a confirmation that met it
    (the largest), else the largest N whose storage point met it."""
    thr = doc["au_threshold_percentage"]
    confirmed = [c["accelerators"] for c in doc.get("confirmations") or [] if _met(c, thr)]
    if confirmed:
        return max(confirmed)
    met = _storage_met(doc)
    return max(met) if met else None


def contradictions(doc: dict) -> list[dict]:
    from suite.training.sweep import result

    thr = doc["au_threshold_percentage"]
    out: list[dict] = []
    ns = [p["accelerators"] for p in doc["points"]]
    if len(set(ns)) != len(ns):
        out.append({"field": "points[].accelerators", "claimed": ns, "derived": sorted(set(ns)),
                    "why": "one point per N"})
    for i, p in enumerate(doc["points"]):
        for k in ("storage", "ceiling"):
            _point(out, f"points[{i}].{k}", p.get(k), thr)
        ratio = result.storage_to_ceiling(p.get("storage"), p.get("ceiling"))
        if not _same(p.get("storage_to_ceiling"), ratio):
            out.append({"field": f"points[{i}].storage_to_ceiling", "claimed": p.get("storage_to_ceiling"),
                        "derived": ratio, "why": "storage samples/s / ceiling samples/s"})
    for i, c in enumerate(doc.get("confirmations") or []):
        _point(out, f"confirmations[{i}]", c, thr)
    fixed = [{**p, "storage": p["storage"] and {**p["storage"], "meets_threshold": _met(p["storage"], thr)}}
             for p in doc["points"]]
    knee = result.knee(fixed)
    if (knee or {}).get("accelerators") != (doc.get("knee") or {}).get("accelerators"):
        out.append({"field": "knee.accelerators", "claimed": (doc.get("knee") or {}).get("accelerators"),
                    "derived": (knee or {}).get("accelerators"), "why": "the smallest N below the threshold or "
                    "the ceiling (its points)"})
    out += _maximum(doc, thr)
    return out


def _maximum(doc: dict, thr: float) -> list[dict]:
    ans = doc.get("max_accelerators")
    if not ans:
        return []
    out = []
    met = _storage_met(doc)
    if doc.get("probes") and ans.get("found_by_probes") != (max(met) if met else ans.get("found_by_probes")):
        out.append({"field": "max_accelerators.found_by_probes", "claimed": ans.get("found_by_probes"),
                    "derived": max(met), "why": "the largest N whose storage point met the threshold"})
    conf = [c for c in doc.get("confirmations") or [] if c.get("accelerators") == ans.get("accelerators")]
    if ans.get("confirmed"):
        if not any(_met(c, thr) for c in conf):
            out.append({"field": "max_accelerators.accelerators", "claimed": ans.get("accelerators"),
                        "derived": derived_maximum(doc), "why": f"a confirmation at N={ans.get('accelerators')} "
                        f"whose runs all met {thr:g}% (confirmations)"})
        elif ans.get("au_per_run") != next(c.get("au_per_run") for c in conf if _met(c, thr)):
            out.append({"field": "max_accelerators.au_per_run", "claimed": ans.get("au_per_run"),
                        "derived": next(c.get("au_per_run") for c in conf if _met(c, thr)),
                        "why": "the confirmation's au_per_run"})
    return out


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return _num(a) and _num(b) and math.isclose(a, b, rel_tol=REL)


def describe(c: dict) -> str:
    """One contradiction as the message shape: `field: expected X, got Y (why)`."""
    return f"{c['field']}: expected {c['derived']!r} (re-derived: {c['why']}), got {c['claimed']!r}"


def refuse(doc: dict, path) -> None:
    """ResultError (one line, exit 2) naming the sweep.json and the first claim its points contradict."""
    from pathlib import Path

    from suite.errors import ResultError
    from suite.training.sweep.result import SWEEP_FILE

    found = contradictions(doc)
    if found:
        where = Path(path) / SWEEP_FILE if Path(path).is_dir() else Path(path)
        more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
        raise ResultError(f"{where}: {describe(found[0])}: the sweep contradicts its own points{more}")
