"""What a result is: workload, accelerator, ruleset, division, org and system, from the files a
benchmark's hosts carry first (overrides.yaml `workload=unet3d_h100`, config.yaml, summary keys,
results.json) and only then from directory names (`unet3d-h100`, `v1.0`, `closed/<org>/results/<system>`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from suite.rules import rulesets
from suite.storage import workloads

SHORT_NAMES = {"unet": "unet3d", "resnet": "resnet50"}     # short model names seen in published trees


def _models() -> dict[str, list[str]]:
    """The models a benchmark dir may hold: every registered kind's workload file that runs on
    accelerators (a top-level `accelerators:` block), with its accelerator types. The layout names no
    kind: the files say what their workloads run on (suite.storage.workloads.paths: workloads/ and each
    registered kind's own folder of them)."""
    found = workloads.paths()
    return {name: types for name in sorted(found) if (types := workloads.accelerator_types(found[name]))}


@lru_cache(maxsize=1)
def accelerators() -> frozenset[str]:
    """Every accelerator a workload file defines (a new round's b200, mi355 come with its files)."""
    return frozenset(a for types in _models().values() for a in types)


@lru_cache(maxsize=1)
def model_aliases() -> dict[str, str]:
    """A model name as a tree spells it -> the workload's name (from the workload files)."""
    return {**{name: name for name in _models()}, **SHORT_NAMES}


def ruleset_in_name() -> re.Pattern:
    """A ruleset's name inside a directory name (`v1.0`, `results-v2.0`), for every known ruleset."""
    return _name_pattern(rulesets.names())


@lru_cache(maxsize=8)
def _name_pattern(names: tuple[str, ...]) -> re.Pattern:
    alts = "|".join(re.escape(n[1:]) for n in sorted(names, key=len, reverse=True) if n.startswith("v"))
    return re.compile(rf"(?:^|[^0-9.])v({alts})(?:$|[^0-9])")


@dataclass
class Identity:
    """What a benchmark is, and what said so (`detected`: workload/accelerator/ruleset -> source)."""

    division: str | None
    org: str | None
    system: str | None
    workload: str | None
    accelerator: str | None
    ruleset: str
    detected: dict[str, str] = field(default_factory=dict)


def identify(bench_dir: Path, runs: list, root: Path, ruleset: str) -> Identity:
    """Division, org, system, workload, accelerator and ruleset of a benchmark: from its files
    first (overrides.yaml, config.yaml, summary keys, results.json), then from directory names."""
    division, org, system = org_system(bench_dir, root)
    detected: dict[str, str] = {}
    model, accel = _workload_of(bench_dir, runs, root, detected)
    rs = _ruleset_of(bench_dir, runs, ruleset, detected)
    implied = rulesets.get(rs).detection.implied_accelerator if rs in rulesets.names() else {}
    if accel is None and model in implied:
        accel, detected["accelerator"] = implied[model], f"{rs} ({implied[model]} only)"
    if division is None:
        division = next((d for d in ((run.results or {}).get("division") for run in runs)
                         if d in ("closed", "open")), None)
    return Identity(division, org, system, model, accel, rs, detected)


def _workload_of(bench_dir: Path, runs: list, root: Path, detected: dict) -> tuple[str | None, str | None]:
    model = accel = None
    for run in runs:
        for host in run.hosts:
            m, a, src = host_workload(host)
            if m and model is None:
                model, detected["workload"] = m, f"{src} ({host.path.name})"
            if a and accel is None:
                accel, detected["accelerator"] = a, f"{src} ({host.path.name})"
    if model is None or accel is None:
        nm, na = from_names(bench_dir.parts[-3:] if bench_dir != root else bench_dir.parts[-2:])
        if model is None and nm:
            model, detected["workload"] = nm, "directory names"
        if accel is None and na:
            accel, detected["accelerator"] = na, "directory names"
    return model, accel


def _ruleset_of(bench_dir: Path, runs: list, ruleset: str, detected: dict) -> str:
    if ruleset and ruleset != "auto":
        detected["ruleset"] = "--ruleset"
        return ruleset
    for run in runs:
        r = (run.results or {}).get("ruleset")
        if r in rulesets.names():
            detected["ruleset"] = "results.json"
            return r
    hint = _ruleset_hint(bench_dir.parts)
    if hint:
        detected["ruleset"] = "directory names"
        return hint
    rs, why = _detected(runs)
    detected["ruleset"] = why
    return rs


def _detected(runs: list) -> tuple[str, str]:
    """(ruleset, why) from the runs themselves: each ruleset's detection hints (ruleset.yaml),
    newest round first; the default ruleset when none matches."""
    summaries = [s for r in runs for s in r.summaries]
    ov = next((overrides_dict(r.overrides).get("workload") for r in runs if r.overrides), None)
    for name in reversed(rulesets.names()):
        hints = rulesets.get(name).detection
        if hints.warmup_run and any(r.warmup for r in runs):
            return name, "a warm-up run"
        no_accel = hints.workload_without_accelerator and bool(
            ov and parse_workload_name(ov)[0] and parse_workload_name(ov)[1] is None)
        keys = hints.summary_keys_absent
        old_keys = bool(keys and summaries and all(not any(k in s for k in keys) for s in summaries))
        if no_accel or old_keys:
            return name, f"workload name without accelerator / {name} summary keys"
    default = rulesets.base().name
    return default, f"default ({default} summary keys or none)"


def parse_workload_name(text: str) -> tuple[str | None, str | None]:
    """'unet3d_h100' -> ('unet3d', 'h100'); 'resnet-a100' -> ('resnet50', 'a100'); 'unet3d' -> ('unet3d', None)."""
    model = accel = None
    text = str(text).lower()
    for name in sorted((n for n in model_aliases() if "-" in n), key=len, reverse=True):
        if re.match(rf"{re.escape(name)}(?:$|[_/\s.@])", text):     # flux-mini_b200: flux-mini, not flux
            model, text = model_aliases()[name], text[len(name):]
            break
    for token in re.split(r"[-_/\s.@]+", text):
        if token in model_aliases() and model is None:
            model = model_aliases()[token]
        elif token in accelerators() and accel is None:
            accel = token
    return model, accel


def overrides_dict(overrides: list[str] | None) -> dict[str, str]:
    """['- workload=unet3d_h100', '++workload.reader.read_threads=8'] -> {'workload': 'unet3d_h100', 'reader.read_threads': '8'}."""
    out: dict[str, str] = {}
    for item in overrides or []:
        key, sep, value = str(item).partition("=")
        if not sep:
            continue
        key = key.strip().lstrip("+").strip()
        key = key.removeprefix("workload.") if key != "workload" else key
        out[key] = value.strip()
    return out


def host_workload(host) -> tuple[str | None, str | None, str]:
    """(workload, accelerator, which file said so) from one host dir's files; Nones when silent."""
    ov = overrides_dict(host.overrides)
    if ov.get("workload"):
        model, accel = parse_workload_name(ov["workload"])
        if model:
            return model, accel, "overrides.yaml"
    res = host.results or {}
    name = res.get("dlio_workload") if isinstance(res.get("dlio_workload"), str) else res.get("workload")
    if isinstance(name, str):
        model, accel = parse_workload_name(name)
        if isinstance(res.get("accelerator"), str) and res["accelerator"] in accelerators():
            accel = res["accelerator"]
        if model:
            return model, accel, "results.json"
    conf = host.config or {}
    model = conf.get("model") if isinstance(conf.get("model"), str) else None
    if model is None and isinstance((host.summary or {}).get("model"), str):
        model = host.summary["model"]
    if model:
        model = model_aliases().get(model.lower(), model.lower())
        return model, _accel_from_compute(model, conf), "config.yaml" if conf.get("model") else "summary.json"
    return None, None, ""


def _accel_from_compute(model: str, conf: dict) -> str | None:
    """The accelerator whose computation_time the run's config.yaml carries."""
    train = conf.get("train") if isinstance(conf, dict) else None
    ct = train.get("computation_time") if isinstance(train, dict) else None
    if not isinstance(ct, (int, float)):
        return None
    for accel, compute_s in _compute_times(model):
        if abs(compute_s - ct) < 1e-9:
            return accel
    return None


@lru_cache(maxsize=None)
def _compute_times(model: str) -> tuple[tuple[str, float], ...]:
    from suite.storage import workloads
    try:
        found = [(a, workloads.setting(model, a, "train", "computation_time"))
                 for a in workloads.accelerator_types(workloads.paths()[model])]
    except Exception:  # unknown model: no accelerator from compute time
        return ()
    return tuple((a, float(s)) for a, s in found if isinstance(s, (int, float)))


def from_names(parts: tuple[str, ...]) -> tuple[str | None, str | None]:
    model = accel = None
    for part in reversed(parts):
        m, a = parse_workload_name(part)
        model = model or m
        accel = accel or a
    return model, accel


def _ruleset_hint(parts: tuple[str, ...]) -> str | None:
    for part in reversed(parts):
        m = ruleset_in_name().search(part.lower())
        if m:
            return "v" + m.group(1)
    return None


def org_system(bench_dir: Path, root: Path) -> tuple[str | None, str | None, str | None]:
    """(division, org, system) from `<division>/<org>/results/<system>/<benchmark>` when present."""
    parts = bench_dir.parts
    division = org = system = None
    lower = [p.lower() for p in parts]
    for i in range(len(parts) - 1, -1, -1):
        if lower[i] in ("closed", "open") and division is None:
            division = lower[i]
    if "results" in lower:
        i = len(lower) - 1 - lower[::-1].index("results")
        org = parts[i - 1] if i >= 1 else None
        below = parts[i + 1:]
        if len(below) >= 2:
            system = below[0]
        elif len(below) == 1:
            m, _ = parse_workload_name(below[0])
            system = None if m else below[0]
    return division, org, system


def system_of(d: Path, root: Path) -> str | None:
    parts = [p for p in d.parts]
    lower = [p.lower() for p in parts]
    if "generation_logs" in lower:
        i = lower.index("generation_logs")
        return parts[i + 1] if i + 1 < len(parts) else None
    return org_system(d, root)[2]
