"""`suite check` / `suite metrics` of a kv_cache leaf, ours or published: the facts of
kv_cache.yaml of the round it is held to (rules/<round>/, the round --ruleset or the leaf names, else
the default round covering kv_cache: suite.rules.rulesets.for_kind) from the leaf (the trial commands its metadata records, its rank files,
summary.json, fs_separation.json), the findings, the verdict, and the per-option figures
(suite.kv_cache.figures) with what re-derived. One path for both kinds of leaf."""

from __future__ import annotations

import re
from pathlib import Path

from suite.check import hostcpu, hostrun
from suite.kv_cache import evidence, figures, recorded

from suite.kv_cache import leaf as kvleaf

from suite.kv_cache import model
from suite.layouts import leaves
from suite.rules import engine as rules
from suite.rules import rulesets
from suite.rules.evaluate import evaluate
from suite.rules.findings import verdict as grade
from suite.rules.ops import Item

RULE_FILES = ("kv_cache.yaml",)
MAX_LISTED = 10000         # summary.json's missing_files read per option (a hostile list is cut there)
TABLE = {"--model": "model", "--num-users": "users", "--gpu-mem-gb": "gpu_mem_gb", "--cpu-mem-gb": "cpu_mem_gb",
         "--max-concurrent-allocs": "max_concurrent_allocs"}
OPEN_MAY_CHANGE = ("--model", "--num-users", "--duration", "--gpu-mem-gb", "--cpu-mem-gb", "--storage-capacity-gb")


def _p(field: str, expected, actual, where=None, note: str = "") -> Item:
    return Item(actual, where, field, expected, note=note, expected_given=True)


def division(lf: kvleaf.Leaf) -> str:
    suite = (lf.metadata or {}).get("suite")
    if isinstance(suite, dict) and suite.get("division") in ("closed", "open"):
        return suite["division"]
    recorded = leaves.recorded_division(lf.metadata)    # where the run itself wrote: its content, not its place
    if recorded is not None:
        return recorded
    parts = [p.lower() for p in Path(lf.path).resolve().parts]
    return "open" if "open" in parts else "closed"


def command_facts(lf: kvleaf.Leaf, doc: dict, div: str) -> dict:
    """The facts read from the trial commands (what ran), not from `args`. ~50 lines: one pass."""
    where = str(lf.metadata_path or lf.path)
    cmds = [c for c in kvleaf.commands(lf) if "--rank-output-base" in c]   # trials (not e.g. an fs probe)
    closed = doc["closed"]
    workload, open_bad, locks, reduced, options, seen = [], [], [], [], [], {}
    autoscaling = False
    for i, c in enumerate(cmds):
        flags = kvleaf.parse_command(c)
        o = kvleaf.option_of(c)
        field = f"command_output_files[{i}].command"
        autoscaling |= bool(flags.get("--enable-autoscaling"))
        if o is None or str(o) not in doc["options"]:
            workload.append(_p(field, "an option_<1|2|3> rank output base", c[:120], where))
            continue
        options.append(o)
        seen[o] = seen.get(o, 0) + 1
        want = model.closed_params(doc, o).to_dict()
        for flag, key in TABLE.items():
            got = flags.get(flag)
            if got is None or (got != want[key] and not (isinstance(got, float) and got == float(want[key]))):
                workload.append(_p(f"{field} {flag}", want[key], got, where, f"option {o}"))
                if flag not in OPEN_MAY_CHANGE:
                    open_bad.append(_p(f"{field} {flag}", want[key], got, where, f"option {o}"))
        seed = flags.get("--seed-base", flags.get("--seed"))
        if seed != closed["seed"]:
            locks.append(_p(f"{field} --seed-base", closed["seed"], seed, where))
        if "--config" in flags:
            locks.append(_p(f"{field} --config", "none (forbidden in closed)", flags["--config"], where))
        if flags.get("--duration") != closed["duration_s"]:
            reduced.append(_p(f"{field} --duration", closed["duration_s"], flags.get("--duration"), where))
        if flags.get("--generation-mode", "none") != closed["generation_mode"]:
            workload.append(_p(f"{field} --generation-mode", closed["generation_mode"], flags.get("--generation-mode"), where))
    if cmds and sorted(seen) != [1, 2, 3]:
        locks.append(_p("options run", [1, 2, 3], sorted(seen), where))
    for o, n in sorted(seen.items()):
        if n != closed["trials"]:
            locks.append(_p(f"option {o} trials", closed["trials"], n, where))
    gap = ((lf.metadata or {}).get("args") or {}).get("inter_option_delay")
    if isinstance(gap, (int, float)) and gap != closed["inter_option_delay_s"] and len(seen) > 1:
        locks.append(_p("args.inter_option_delay", closed["inter_option_delay_s"], gap, where))
    preloads = [_p(f"command_output_files[{i}].command LD_PRELOAD", "none (the storage tier's own I/O calls)",
                   m.group(1)[:120], where) for i, c in enumerate(cmds) for m in [re.search(r"LD_PRELOAD=(\S+)", c)] if m]
    return {"kvcache.commands": len(cmds), "kvcache.io_model_changes": preloads, "kvcache.workload_mismatches": workload,
            "kvcache.open_disallowed": open_bad if div == "open" else [], "kvcache.lock_mismatches": locks,
            "kvcache.reduced_duration": reduced, "kvcache.autoscaling": autoscaling}


def expected_ranks(lf: kvleaf.Leaf) -> int | None:
    """The most ranks any record says ran: the trial commands' -n, the metadata's num_processes,
    summary.json's total_ranks (a rank dropped with its count edited in one place is still missed)."""
    said = [evidence.ranks_launched(lf), (lf.metadata or {}).get("num_processes"), (lf.summary or {}).get("total_ranks")]
    said = [n for n in said if isinstance(n, int) and not isinstance(n, bool) and 0 < n <= 100000]
    return max(said) if said else None


def rank_facts(lf: kvleaf.Leaf, derived: dict, n: int | None, failures: list) -> dict:
    problems, mismatches, missing, failed = [], [], [], []
    ran = evidence.durations(lf)
    for (o, t), ranks in sorted(lf.rank_dirs.items()):
        if n is not None and sorted(ranks) != list(range(n)):
            problems.append(_p(f"option_{o}/trial_{t}", f"rank_0..rank_{n - 1}", [f"rank_{r}" for r in sorted(ranks)][:8]))
    for o in derived.values():
        missing += [_p(m, "a kvcache_results_*.json", "none") for m in o["missing_files"]]
    missing += listed_missing(lf, {m.field for m in missing})
    for (o, t, r), (path, doc) in sorted(lf.ranks.items()):
        for s in figures.rederive_rank(doc, path, ran.get(o, 0.0)):
            if s["status"] == "mismatch":
                mismatches.append(_p(f"option_{o}/trial_{t}/rank_{r} summary.{s['figure']}", s["derived"], s["claimed"], path))
    mismatches += evidence.elapsed_problems(lf, ran)
    failed += [item for _o, _t, item in failures]
    by_option: dict[int, list[float]] = {}
    for (o, _t, _r), (path, doc) in lf.ranks.items():
        by_option.setdefault(o, []).append(kvleaf.number(doc, ("summary", "cache_stats", "storage_entries"), path))
    cpu_only = [_p(f"option_{o} storage_entries", "above 0 on some rank", "0 on every rank (served from memory)")
                for o, entries in sorted(by_option.items()) if not any(entries)]
    return {"kvcache.rank_dir_problems": problems, "kvcache.rank_mismatches": mismatches,
            "kvcache.missing_rank_files": missing, "kvcache.failed_trials": failed, "kvcache.cpu_tier_options": cpu_only}


def listed_missing(lf: kvleaf.Leaf, known: set) -> list:
    """The rank files summary.json itself lists as missing (its options' `missing_files`: the publisher's
    own record, also where the leaf as copied holds no rank directory of that option), not yet known."""
    out = []
    for c in ((lf.summary or {}).get("options") or {}).values():
        listed = c.get("missing_files") if isinstance(c, dict) else None
        for m in (listed if isinstance(listed, list) else [])[:MAX_LISTED]:
            if not isinstance(m, str):
                continue
            tail = re.search(r"option_\d+/trial_\d+/rank_\d+$", m.rstrip("/"))
            name = tail.group(0) if tail else m[-200:]
            if name not in known:
                known.add(name)
                out.append(_p(name, "a kvcache_results_*.json", "none (summary.json lists it missing)"))
    return out


def summary_problems(lf: kvleaf.Leaf, derived: dict, complete: set) -> tuple[list, list]:
    """(problems, statements): summary.json against the rank files, option by option where every rank
    file of the option is there (`complete`: those options); the others' figures are not re-derivable."""
    if lf.summary is None:
        return [_p("summary.json", "present (per-option aggregates)", "absent", lf.path)], []
    statements = figures.against_summary(lf, derived)
    for s in statements:
        if s["figure"].split(".")[1] not in complete:
            s["status"] = "not-rederivable"
    return [_p(s["figure"], s["derived"], s["claimed"], lf.path / lf.summary_name) for s in statements
            if s["status"] == "mismatch"], statements


def failed_options(derived: dict, failures: list) -> None:
    """An option with a failed trial shows no figure (its aggregates are not a result: issue 36, class
    11): each reference figure None, `failed_trials` the reasons (a failure of no known option: all)."""
    for o, d in derived.items():
        why = [f"{i.field}: expected {i.expected}, got {i.value}" + (f" ({i.note})" if i.note else "")
               for x, _t, i in failures if x in (None, int(o))]
        if why:
            d.update({k: None for k in figures.REFERENCE_KEYS}, valid=False, failed_trials=why[:20])
            d.pop("suite_figures", None)


def facts(lf: kvleaf.Leaf) -> tuple[dict, dict, list]:
    doc = model.load()
    div = division(lf)
    n = expected_ranks(lf)
    derived = figures.options(lf, n, evidence.durations(lf))
    failures = evidence.trial_failures(lf)
    out = {"kvcache.division": div, **command_facts(lf, doc, div), **rank_facts(lf, derived, n, failures)}
    complete = {o for o, d in derived.items() if not d["missing_files"] and any(k[0] == int(o) for k in lf.ranks)}
    out["kvcache.summary_problems"], statements = summary_problems(lf, derived, complete)
    out.update(recorded.facts(lf))           # the P95 split against the per-request records
    failed_options(derived, failures)
    if lf.summary_name is not None:
        out["kvcache.summary_name"] = lf.summary_name
    out["kvcache.miniature"] = bool(evidence.miniature(lf))
    separate = evidence.separate(lf)         # None: no probe recorded (kvcache-posix-cache-dir requires it)
    if separate is not None:
        out["kvcache.cache_results_separate"] = separate
    return out, derived, statements


def round_of(lf: kvleaf.Leaf, ruleset: str | None = None) -> str:
    """The round the leaf is held to: --ruleset, else the one its metadata names (ours: suite.ruleset),
    else the default round covering kv_cache; a round that does not cover kv_cache is refused."""
    from suite.errors import ResultError

    if ruleset not in (None, "auto"):
        return rulesets.for_kind("kv_cache", ruleset).name
    suite = (lf.metadata or {}).get("suite")
    named = suite.get("ruleset") if isinstance(suite, dict) else None
    where = f"{lf.metadata_path or lf.path}: suite.ruleset"
    return rulesets.for_kind("kv_cache", named if isinstance(named, str) else None, where, ResultError).name


def sampled(lf: kvleaf.Leaf, root: Path) -> list[hostrun.Run]:
    """Each trial's host_metrics.json and what it is checked against: the trial's start_unix_s and
    end_unix_s in the metadata's suite.trials[] and the metadata's hosts (nothing where not recorded)."""
    meta = lf.metadata if isinstance(lf.metadata, dict) else {}
    suite = meta.get("suite") if isinstance(meta.get("suite"), dict) else {}
    trials = suite.get("trials") if isinstance(suite.get("trials"), list) else []
    mp = lf.metadata_path
    where = "kv_cache_<ts>_metadata.json" if mp is None else str(mp.relative_to(root) if mp.is_relative_to(root) else mp)
    out = []
    for o, t in sorted(lf.rank_dirs):
        rec = next((x for x in trials if isinstance(x, dict) and (x.get("option"), x.get("trial")) == (o, t)), {})
        out.append(hostrun.run(lf.path / f"option_{o}" / f"trial_{t}", rec.get("start_unix_s"), rec.get("end_unix_s"),
                               meta.get("hosts", ()), f"{where}: suite.trials[option {o}, trial {t}] "
                               f"start_unix_s, end_unix_s; hosts"))
    return out


def assess(path: Path, ruleset: str | None = None) -> dict:
    lf = kvleaf.load(path)
    f, derived, statements = facts(lf)
    scope = rules.Scope("run", str(path), f)
    name = round_of(lf, ruleset)
    found = evaluate(rules.load_layers(name, RULE_FILES), "run", scope, Path(path))
    found += hostcpu.findings(sampled(lf, Path(path)), Path(path))     # each trial's host_metrics.json
    ran = evidence.durations(lf)
    rank_statements = [dict(s, rank=f"option_{o}/trial_{t}/rank_{r}") for (o, t, r), (p, d) in sorted(lf.ranks.items())
                       for s in figures.rederive_rank(d, p, ran.get(o, 0.0))]
    return {"leaf": lf, "facts": f, "derived": derived, "statements": statements, "rank_statements": rank_statements,
            "findings": found, "verdict": grade(found, f["kvcache.division"]), "ruleset": name}


def metrics(path: Path, ruleset: str | None = None) -> dict:
    """suite metrics' document: the per-option figures (derived, and summary.json's), the verdict."""
    a = assess(path, ruleset)
    lf = a["leaf"]
    claimed = (lf.summary or {}).get("options") or {}
    suite = (lf.metadata or {}).get("suite") or {}
    trials = {o: len({t for (o2, t, _r) in lf.ranks if o2 == o}) for (o, _t, _r) in lf.ranks}
    # named as the run says them ("[option 1 trial 1/1]"), never by the leaf's directories
    timelines = {f"option {o} trial {t + 1}/{trials[o]} rank {r}": d.get("suite_figures", {}).get("tier_occupancy", [])
                 for (o, t, r), (_p2, d) in sorted(lf.ranks.items()) if isinstance(d.get("suite_figures"), dict)}
    latencies = {}
    for (o, _t, _r), (_p2, d) in sorted(lf.ranks.items()):
        lat = d.get("storage_latencies")
        if isinstance(lat, list):
            latencies.setdefault(str(o), []).extend(x for x in lat[:200000] if isinstance(x, (int, float)))
    return {"schema_version": 1, "kind": "kv_cache", "path": str(path), "ruleset": a["ruleset"],
            "division": a["facts"]["kvcache.division"],
            "miniature": a["facts"]["kvcache.miniature"], "reduced": [str(x)[:200] for x in suite.get("reduced") or [] if isinstance(x, str)] if isinstance(suite, dict)
            and isinstance(suite.get("reduced"), list) else [],
            "verdict": a["verdict"], "findings": [x.to_dict() for x in a["findings"]],
            "verdict_line": voice(a).line(), "labels": list(voice(a).labels()),
            "options": a["derived"], "claimed": claimed, "rederived": a["statements"] + a["rank_statements"],
            "rank_files": len(lf.ranks), "expected_ranks": expected_ranks(lf),
            "latencies_s": latencies, "occupancy": timelines, "p95_split": recorded.option_splits(lf),
            "queued_at_end": recorded.queued_at_end(lf),
            "break_even": break_even(lf)}


def break_even(lf: kvleaf.Leaf) -> dict:
    """{option: suite.kv_cache.breakeven.option} from each option's per-request records (ours; a
    published leaf has none: {}), the option's model and token-bytes divisor from its rank files."""
    from suite.kv_cache import breakeven

    doc, pooled, own = model.load(), {}, {}
    for (o, _t, _r), rs in sorted(recorded.rows(lf).items()):
        pooled.setdefault(str(o), []).extend(rs)
    for (o, _t, _r), (_p, d) in sorted(lf.ranks.items()):
        params = (d.get("suite_figures") or {}).get("params") if isinstance(d.get("suite_figures"), dict) else None
        if isinstance(params, dict) and str(o) not in own:
            div = params.get("token_bytes_divisor")
            own[str(o)] = (params.get("model") if params.get("model") in doc["models"] else None,
                           div if isinstance(div, int) and not isinstance(div, bool) and 1 <= div <= 1 << 20 else 1)
    return {o: breakeven.option(rows, doc, *own.get(o, (None, 1))) for o, rows in pooled.items()}


def voice(a: dict):
    """An assessment said in the one voice (suite.rules.verdict): its verdict, the miniature, the
    division it recorded (OPEN is compliant only where the open division was asked)."""
    from suite.rules.verdict import Voice

    f = a["facts"]
    return Voice(a["verdict"], f.get("kvcache.miniature") is True, "open" if f.get("kvcache.division") == "open" else "closed")
