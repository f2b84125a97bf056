"""Evidence that contradicts itself, in our own results.json: the run's own verdict (the checker is
never more lenient than it), a complete run that read nothing, a cache drop recorded as succeeded
while the same record shows the page cache not dropped or the dataset still resident.

The page-cache counters (/proc/meminfo "Cached" before and after) are system-wide: other processes'
writes during the sync, tmpfs and another host's drop on a shared kernel move them, so a counter that
did not fall contradicts a drop only where no sample of the dataset's own pages (mincore, recorded
beside the drop) shows the dataset evicted; that sample, when present, decides.

Facts: results.self_verdict, results.zero_reads, results.cache_drop_contradiction (one item each).
"""

from __future__ import annotations

from suite.layouts.benchdirs import tree as layout
from suite.numbers import is_number
from suite.rules.engine import Item

RESIDENT_KEYS = ("dataset_resident_bytes_after", "resident_bytes_after")
RESIDENT_FRACTION = 0.5          # more than half the dataset still cached after a "successful" drop


def facts(host: layout.Host) -> dict:
    r = host.results if isinstance(host.results, dict) else None
    if r is None:
        return {}
    path = host.files.get("results")
    return {"results.self_verdict": self_verdict(r, path), "results.zero_reads": zero_reads(host, r, path),
            "results.cache_drop_contradiction": cache_drop(r, path)}


def self_verdict(r: dict, path) -> list[Item]:
    c = r.get("compliance")
    if not isinstance(c, dict):
        return [Item(type(c).__name__, path, "compliance", "the run's own verdict {compliant, reasons}",
                     expected_given=True)]
    reasons = [str(x) for x in c.get("reasons") or []] if isinstance(c.get("reasons"), list) else []
    if c.get("compliant") is not True:
        return [Item(f"not compliant, {_count(reasons)}", path, "compliance.compliant",
                     "compliant (the run's own verdict)", expected_given=True)]
    if reasons:
        return [Item(f"compliant, {_count(reasons)}", path, "compliance.reasons",
                     "no reasons when compliant", expected_given=True)]
    return []


def _count(reasons: list[str]) -> str:
    """The run's own reasons, said shortly: their number (each is its own finding, and the report's
    compliance table lists them), so a finding repeated over runs reads once, not a paragraph per run."""
    if not reasons:
        return "no reason given"
    return f"{len(reasons)} reason(s) in its compliance.reasons"


def zero_reads(host: layout.Host, r: dict, path) -> list[Item]:
    if r.get("status") != "complete":
        return []
    out = []
    m = r.get("metric") if isinstance(r.get("metric"), dict) else {}
    if is_number(m.get("bytes_read")) and m["bytes_read"] <= 0:
        out.append(Item(m["bytes_read"], path, "metric.bytes_read", "> 0 bytes", expected_given=True))
    for i, e in enumerate(r.get("epochs") if isinstance(r.get("epochs"), list) else []):
        for key in ("bytes_read", "samples"):
            if isinstance(e, dict) and is_number(e.get(key)) and e[key] <= 0:
                out.append(Item(e[key], path, f"epochs[{i}].{key}", "> 0", expected_given=True))
    base = host.files.get("rank_steps", host.path / "steps")
    for rank, doc in sorted((host.rank_steps or {}).items()):
        for i, e in enumerate(doc.get("epochs") if isinstance(doc.get("epochs"), list) else []):
            for key in ("bytes_read", "files_read", "samples"):
                if isinstance(e, dict) and is_number(e.get(key)) and e[key] <= 0:
                    out.append(Item(e[key], base / f"rank-{rank}.json", f"epochs[{i}].{key}", "> 0",
                                    expected_given=True))
    return out[:10]


def cache_drop(r: dict, path) -> list[Item]:
    enf = r.get("enforcement") if isinstance(r.get("enforcement"), dict) else {}
    drops = [("enforcement.cache_drop", enf.get("cache_drop"))]
    hosts = enf.get("hosts")
    if isinstance(hosts, dict):
        hosts = list(hosts.items())
    elif isinstance(hosts, list):
        hosts = [(h.get("hostname", i) if isinstance(h, dict) else i, h) for i, h in enumerate(hosts)]
    for name, h in hosts or []:
        if isinstance(h, dict):
            drops.append((f"enforcement.hosts[{name}].cache_drop", h.get("cache_drop")))
    ds = r.get("dataset") if isinstance(r.get("dataset"), dict) else {}
    total = ds.get("total_bytes")
    evicted = _evicted(enf.get("cache_drop"))
    out = []
    for where, d in drops:
        if isinstance(d, dict) and d.get("succeeded") is True:
            why = _contradiction(d, total, evicted or _evicted(d))
            if why:
                out.append(Item(why, path, where, "a succeeded drop the record does not contradict",
                                expected_given=True))
    return out


def _evicted(d) -> bool:
    """A sample of the dataset's pages, taken right after the drop, shows it evicted."""
    if not isinstance(d, dict):
        return False
    frac, n = d.get("dataset_resident_fraction_after"), d.get("dataset_residency_sample_files")
    return is_number(frac) and is_number(n) and n > 0 and 0 <= frac <= RESIDENT_FRACTION


def _contradiction(d: dict, total, evicted: bool) -> str | None:
    if d.get("attempted") is False:
        return "succeeded without being attempted"
    if d.get("error"):
        return f"succeeded with an error: {d['error']}"
    before, after = d.get("cached_bytes_before"), d.get("cached_bytes_after")
    if is_number(before) and is_number(after) and before > 0 and after >= before and not evicted:
        return f"page cache {after} bytes after the drop, {before} before: nothing was dropped"
    for key in RESIDENT_KEYS:
        v = d.get(key)
        if is_number(v) and is_number(total) and total > 0 and v > RESIDENT_FRACTION * total:
            return f"{key} {v} of the dataset's {total} bytes still in the page cache after the drop"
    frac = d.get("dataset_resident_fraction_after")
    if is_number(frac) and frac > RESIDENT_FRACTION:
        return f"dataset_resident_fraction_after {frac}: the dataset still in the page cache after the drop"
    return None
