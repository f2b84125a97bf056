"""What a leaf's per-request records say (suite.kv_cache.requests): each rank's and each option's P95
split re-derived from the rows of its kvcache_requests_<ts>.csv files, and held against what the leaf
claims (the rank file's suite_figures.request_split, summary.json's options.<O>.suite_figures.request_split).

- `kvcache-p95-split-rederived`: a claimed P95 total, device or queue (or share, or count) that the
  rows do not give; a claimed split whose records file is absent.
- `kvcache-request-records-add-up`: a row whose total_s is not its queue_s + device_s.

A published leaf has no records and claims no split: nothing to hold, nothing found (its figures are
the reference's, checked by suite.kv_cache.figures)."""

from __future__ import annotations

from suite.kv_cache import requests
from suite.rules.ops import Item

REL = 1e-6
MAX_LISTED = 50


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL * max(1.0, abs(a), abs(b))


def _item(field: str, expected, actual, where=None, note: str = "") -> Item:
    return Item(actual, where, field, expected, note=note, expected_given=True)


def claimed_split(doc) -> dict | None:
    s = doc.get("suite_figures") if isinstance(doc, dict) else None
    got = s.get("request_split") if isinstance(s, dict) else None
    return got if isinstance(got, dict) else None


def rows(lf) -> dict:
    """{(option, trial, rank): rows} of every rank file with a records file beside it (bounded loads:
    a malformed file is bad input, one line, exit 2); read once per loaded leaf."""
    cached = getattr(lf, "request_rows", None)
    if cached is not None:
        return cached
    out = {}
    for key, (path, _doc) in sorted(lf.ranks.items()):
        f = requests.file_of(path)
        if f.is_file():
            out[key] = requests.load(f, root=lf.path)
    lf.request_rows = out
    return out


def option_splits(lf, recs: dict | None = None) -> dict:
    """{option: {"overall": split of every row of the option's ranks and trials, "ranks": {option_<O>/
    trial_<T>/rank_<R>: split}}} for the options with records."""
    recs = rows(lf) if recs is None else recs
    out: dict = {}
    for (o, t, r), rs in sorted(recs.items()):
        d = out.setdefault(str(o), {"pooled": [], "ranks": {}})
        d["pooled"] += rs
        d["ranks"][f"option_{o}/trial_{t}/rank_{r}"] = requests.split(rs)
    return {o: {"overall": requests.split(d.pop("pooled")), "ranks": d["ranks"]} for o, d in out.items()}


def _compare(claimed: dict, derived: dict, field: str, where) -> list[Item]:
    out = []
    for k in ("requests", *requests.SPLIT_KEYS):
        got = claimed.get(k)
        if isinstance(got, bool) or not isinstance(got, (int, float)) or not _close(float(got), float(derived[k])):
            out.append(_item(f"{field}.{k}", round(float(derived[k]), 6), got, where,
                             "re-derived from the per-request records"))
    return out


def facts(lf, recs: dict | None = None) -> dict:
    """kvcache.request_split_mismatches and kvcache.request_records_problems (see the module's doc)."""
    recs = rows(lf) if recs is None else recs
    mismatches, problems = [], []
    for (o, t, r), (path, doc) in sorted(lf.ranks.items()):
        claimed, name = claimed_split(doc), f"option_{o}/trial_{t}/rank_{r}"
        if (o, t, r) not in recs:
            if claimed is not None:
                mismatches.append(_item(f"{name} {requests.file_of(path).name}", "the records the split is made of",
                                        "absent", path))
            continue
        rs = recs[(o, t, r)]
        for line, total, parts in requests.not_adding_up(rs)[:MAX_LISTED]:
            problems.append(_item(f"{name} {requests.file_of(path).name} line {line} total_s",
                                  f"queue_s + device_s = {parts:.6f}", f"{total:.6f}", path))
        if claimed is not None:
            mismatches += _compare(claimed, requests.split(rs), f"{name} suite_figures.request_split", path)
    splits = option_splits(lf, recs)
    summary = (lf.summary or {}).get("options") if isinstance(lf.summary, dict) else None
    for o, c in (summary or {}).items() if isinstance(summary, dict) else ():
        got = c.get("suite_figures", {}).get("request_split") if isinstance(c, dict) and \
            isinstance(c.get("suite_figures"), dict) else None
        if not isinstance(got, dict):
            continue
        field = f"summary.json options.{o}.suite_figures.request_split"
        if o not in splits:
            mismatches.append(_item(field, "records behind it (kvcache_requests_*.csv)", "none", lf.path))
        else:
            mismatches += _compare(got, splits[o]["overall"], field, lf.path / (lf.summary_name or "summary.json"))
    return {"kvcache.request_split_mismatches": mismatches[:MAX_LISTED * 4],
            "kvcache.request_records_problems": problems[:MAX_LISTED * 4]}


def queued_at_end(lf) -> dict:
    """{option_<O>/trial_<T>/rank_<R>: {count, max_wait_s}}: the prefill writes each rank says were still
    waiting for an allocation slot when its trial ended (never issued: in no record; a rank's own count)."""
    from suite.kv_cache.leaf import number

    out = {}
    for (o, t, r), (path, doc) in sorted(lf.ranks.items()):
        s = doc.get("suite_figures")
        q = s.get("requests_queued_at_end") if isinstance(s, dict) else None
        if isinstance(q, dict):
            out[f"option_{o}/trial_{t}/rank_{r}"] = {"count": int(number(q, ("count",), path)),
                                                     "max_wait_s": number(q, ("max_wait_s",), path)}
    return out
