"""Our own v3.0 series (timestamped leaves, suite.training.leaf) held to what its evidence says, not to
what its flags say (issue 36, class 5). Our leaves carry the reference tool's files, so the series is
judged as the reference tool's leaves are (suite.training.reference.judge: rules/v3.0/training-leaves.yaml,
one rule per Rules.md clause); what only `suite run` writes adds evidence. Each a list of Items; a file
that cannot be read is an Item too, never a skipped rule:

- `run_set.fs_separation`: each leaf's fs_separation.json re-derived from the device ids it records (data and
  results apart), its `separate` / `same_filesystem` flags agreeing, and apart in the closed division;
- `run_set.code_image`: each leaf's .mlps-code-image names the image its provenance.json records, the same
  image for every leaf;
- to 2.1.17-trainingWarmupFirst's `series.order`: the run flagged warm-up is the lexically earliest leaf,
  exactly one is flagged, and the leaves' names sort as their runs started (`warmup`);
- to 2.1.17-trainingRunsOneHost's `series.other_host`: every run on the warm-up's host (results.json
  host.hostname, fs_separation's prober) (`hosts`).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from suite import files
from suite.errors import SuiteError
from suite.rules.ops import Item

POINTER_BYTES = 256
EVIDENCE_BYTES = 1 << 20


def _runs(b) -> list:
    return sorted(b.runs + ([b.warmup] if b.warmup else []), key=lambda r: r.name)


def facts(b) -> dict:
    """The benchmark facts of our evidence rules (rules/v3.0/common.yaml)."""
    runs = _runs(b)
    return {"run_set.fs_separation": _fs(runs, b.division), "run_set.code_image": _code(runs)}


def more(b) -> dict:
    """What our evidence adds to the reference leaves' rules' benchmark facts (judge(..., more=))."""
    runs = _runs(b)
    return {"series.order": _warmup(b, runs), "series.other_host": _hosts(runs)}


def _time(run, key: str) -> datetime | None:
    s = run.summary if isinstance(run.summary, dict) else {}
    try:
        return datetime.fromisoformat(str(s.get(key))) if s.get(key) else None
    except ValueError:
        return None


def _warmup(b, runs: list) -> list:
    flagged = [r for r in runs if r.warmup]
    out = []
    if len(flagged) != 1:
        out.append(Item(", ".join(r.name for r in flagged) or "none", b.path, "results.json warmup",
                        "exactly one warm-up run"))
    if flagged and runs and flagged[0] is not runs[0]:
        out.append(Item(flagged[0].name, flagged[0].path / "results.json", "warmup",
                        f"the lexically earliest leaf ({runs[0].name}) as the warm-up"))
    started = [(r, _time(r, "start")) for r in runs]
    for (a, ta), (c, tc) in zip(started, started[1:]):
        if ta is None or tc is None:
            out.append(Item("no start", (a if ta is None else c).path / "summary.json", "start", "the run's start"))
        elif tc < ta:
            out.append(Item(tc.isoformat(), c.path / "summary.json", "start",
                            f"after {a.name}'s start ({ta.isoformat()}): leaves sort as their runs ran"))
    return out



def _json(path: Path, root: Path):
    try:
        doc = files.load_json(path, limit=EVIDENCE_BYTES, root=root)
    except (SuiteError, OSError) as exc:
        return None, str(exc)[:160]
    return (doc, "") if isinstance(doc, dict) else (None, "not a JSON object")


def _fs(runs: list, division: str | None) -> list:
    out = []
    for r in runs:
        p = r.path / "fs_separation.json"
        doc, why = _json(p, r.path)
        if doc is None:
            out.append(Item(why or "absent", p, "(file)", "the run's fs_separation.json"))
            continue
        data, res = doc.get("data") or {}, doc.get("results") or {}
        ids = (data.get("device_id"), res.get("device_id")) if isinstance(data, dict) and isinstance(res, dict) else (None, None)
        if None in ids:
            out.append(Item("no device ids", p, "data.device_id, results.device_id", "both recorded"))
            continue
        apart = ids[0] != ids[1]
        if doc.get("separate") is not apart or doc.get("same_filesystem") is not (not apart):
            out.append(Item(f"separate {doc.get('separate')!r}, same_filesystem {doc.get('same_filesystem')!r}", p,
                            "separate", f"{apart} (device {ids[0]} vs {ids[1]})"))
        elif not apart and division == "closed":
            out.append(Item(f"one file system (device {ids[0]})", p, "separate", "data and results apart (closed)"))
    return out


def _code(runs: list) -> list:
    out, seen = [], set()
    for r in runs:
        p = r.path / ".mlps-code-image"
        try:
            pointer = files.read_text(p, limit=POINTER_BYTES, root=r.path).strip()
        except (SuiteError, OSError):
            out.append(Item("absent", p, "(file)", "the run's code image pointer"))
            continue
        prov, why = _json(r.path / "provenance.json", r.path)
        want = f"{prov.get('algorithm')}:{prov.get('hash')}" if prov else None
        if pointer != want:
            out.append(Item(pointer[:80], p, "(line 1)", f"{want} (provenance.json)" if want else f"provenance.json ({why})"))
        seen.add(pointer)
    if len(seen) > 1:
        out.append(Item(", ".join(sorted(seen))[:200], runs[0].path.parent, ".mlps-code-image", "one image for every run"))
    return out


def _hosts(runs: list) -> list:
    out, first = [], None
    for r in runs:
        res = r.results if isinstance(r.results, dict) else {}
        host = (res.get("host") or {}).get("hostname") if isinstance(res.get("host"), dict) else None
        fs, _ = _json(r.path / "fs_separation.json", r.path)
        prober = fs.get("probed_by_host") if fs else None
        first = first or host
        if host is None or host != first or (prober is not None and prober != host):
            out.append(Item(f"results.json {host!r}, fs_separation.json {prober!r}", r.path / "results.json",
                            "host.hostname", f"{first!r} (the warm-up's host)"))
    return out
