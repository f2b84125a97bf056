"""`suite check` on checkpointing results (suite run --workload llama3-*): the facts the rules of
rules/<ruleset>/checkpointing*.yaml name, and the verdicts. The rulesets with checkpointing rules are
those whose ruleset.yaml `covers` it (v2.0, v3.0); a result is held to the one its results.json
names, else to the newest. Phases in timestamped leaves of a round with the reference leaves' rules
(v3.0's checkpointing-leaves.yaml) are judged as the reference tool's leaves are, too
(suite.checkpointing.reference.ours: one rule per Rules.md clause); the round's own files keep the rules on
what only our runs record.

PATH is one phase's results directory (checkpoint_run_set.json), one of its run-<k> (the phase is
checked), or a directory holding the write and the read phase's (at any depth the walker reaches). Scopes: tree = PATH (both phases), benchmark =
one phase directory, run = its run-<k>/results.json (with ranks/, summary.json). Every input is
read through suite.files with its schema; an unreadable one is bad input (exit 2).
"""

from __future__ import annotations

import math
from pathlib import Path

from suite import files
from suite.check import hostcpu, hostrun
from suite.layouts.benchdirs import tree as layout
from suite.checkpointing import cacheclear
from suite.checkpointing import figures as ckpt_figures
from suite.checkpointing.reference import ours as reference
from suite.check.result import BenchmarkResult, CheckResult, evaluate
from suite.errors import ResultError
from suite.rules import findings, rulesets
from suite.rules import engine as rules
from suite.rules.engine import Scope
from suite.rules.verdict import Voice

RUN_SET = "checkpoint_run_set.json"
MAX_DEPTH = 24                          # as deep as suite.layouts.walker goes
RULE_FILES = {"closed": ("checkpointing-closed.yaml",), "open": ("checkpointing.yaml",)}


def phase_dirs(path) -> list[Path]:
    """Directories at or below `path` (at most MAX_DEPTH down, links not followed) with a run set."""
    root = Path(path)
    if root.is_dir() and (root / "results.json").is_file() and (root.parent / RUN_SET).is_file():
        return [root.parent]            # one run-<k>: the phase it belongs to
    out, level = [], [root] if root.is_dir() and not root.is_symlink() else []
    for _ in range(MAX_DEPTH + 1):
        nxt = []
        for d in level:
            if (d / RUN_SET).is_file():
                out.append(d)
                continue
            try:
                nxt += sorted(p for p in d.iterdir() if p.is_dir() and not p.is_symlink())
            except OSError:
                continue
        level = nxt[:10000]
    return sorted(out)


def is_result(path) -> bool:
    return bool(phase_dirs(path))


class Phase:
    """One phase directory, loaded and schema-checked."""

    def __init__(self, path: Path):
        self.path = path
        self.ruleset = ""                   # the round it is held to (check: --ruleset, else its own)
        self.run_set = _load(path / RUN_SET, "checkpoint-run-set")
        self.runs: list[tuple[Path, dict]] = []
        for k in range(1, self.run_set["runs_requested"] + 1):
            p = path / f"run-{k}" / "results.json"
            if p.is_file():
                self.runs.append((p, _load(p, "checkpoint-results")))


def _load(p: Path, schema: str) -> dict:
    """A result file, read where it is (never through a link), schema-checked, every number finite."""
    from suite.numbers import nonfinite

    doc = files.load_json(_inside(p), schema=schema, error=ResultError)
    bad = nonfinite(doc, limit=1)
    if bad:
        raise ResultError(f"{p}: {bad[0][0]}: expected a finite number, got {bad[0][1]}")
    return doc


def _inside(p: Path) -> Path:
    """A result file read where it is, never through a link (results come from other parties)."""
    if p.is_symlink() or p.parent.is_symlink():
        raise ResultError(f"{p}: expected a regular file, got a symbolic link")
    return p


def check(path, ruleset: str = "auto"):
    rulesets.refuse_unknown(ruleset)
    covering = rulesets.covering("checkpointing")
    if ruleset not in ("auto", *covering):
        raise ResultError(f"--ruleset {ruleset}: expected {' or '.join(covering)} (the rulesets with checkpointing "
                          f"rules), got {ruleset}")
    root = Path(path)
    phases = [Phase(d) for d in phase_dirs(root)]
    if not phases:
        raise ResultError(f"{root}: expected checkpointing results ({RUN_SET}) below, got none")
    for ph in phases:
        ph.ruleset = _ruleset_of(ph, ruleset, covering)
    judged = reference.judged(phases, root)         # our leaves, as the reference tool's are (one rule a clause)
    out = []
    for ph in phases:
        division = ph.run_set["division"]
        name = ph.ruleset
        rs = rules.load_layers(name, RULE_FILES[division], division)
        judge = reference.rules(name) if _stamped(ph, name) else None      # the judge's rules held it too
        derived = {doc["run"]: ckpt_figures.run(p.parent, doc) for p, doc in ph.runs if doc["status"] == "complete"}
        set_items, statement = ckpt_figures.run_set(ph.path / RUN_SET, ph.run_set, ph.runs, derived)
        found = evaluate(rs, "benchmark", benchmark_scope(ph, set_items), root)
        for p, doc in ph.runs:
            found += evaluate(rs, "run", run_scope(p, doc, derived.get(doc["run"])), root)
        found += judged.get(ph.path, [])
        found += hostcpu.findings([_sampled(p, doc, root) for p, doc in ph.runs], root)   # run-<k>/host_metrics.json
        statement += [s for d in derived.values() for s in d.statement]
        verdict = findings.verdict(found, division)
        voice = Voice(verdict, ph.run_set.get("miniature") is True, division)   # a miniature: never compliant
        b = layout.Benchmark(path=ph.path, org=None, system=None, division=division, ruleset=name,
                             workload=ph.run_set["workload"], accelerator=None,
                             runs=[layout.Run(p.parent, p.parent.name, []) for p, _ in ph.runs],
                             detected_from={"workload": RUN_SET, "ruleset": f"checkpointing ({name})",
                                            "phase": ph.run_set["phase"]})
        judged_by = judge.rules if judge else []
        out.append(BenchmarkResult(b, verdict, found, None, voice.compliant, rs.files + (judge.files if judge else []),
                                   len(rs.rules) + len(judged_by),
                                   {**{r.id: r.message for r in rs.rules + judged_by}, **hostcpu.RULES},
                                   rederived=statement, miniature=voice.miniature))
    tree_rules = rules.load_layers(_ruleset_of(phases[0], ruleset, covering), ("checkpointing.yaml",))
    tree_found = evaluate(tree_rules, "tree", tree_scope(root, phases), root)
    verdict = findings.worst([r.verdict for r in out] + [findings.verdict(tree_found)])
    result = CheckResult(root, out, tree_found, verdict, False, {r.id: r.message for r in tree_rules.rules})
    result.compliant = result.voice().compliant          # every phase compliant as asked, the tree's rules closed
    return result


def _stamped(ph: Phase, name: str) -> bool:
    """A phase in a timestamped leaf of a round whose checkpointing judge holds it (suite.checkpointing.reference.ours)."""
    from suite.harness import leafstamp

    return leafstamp.is_stamp(ph.path.name) and reference.judges(name)


def _ruleset_of(ph: Phase, ruleset: str, covering: tuple[str, ...]) -> str:
    """--ruleset when given, else the one the phase's results.json names, else the newest with checkpointing
    (a leaf in the timestamped layout, checkpointing/<model>/<YYYYMMDD_HHMMSS>/) or the oldest. A leaf in
    the timestamped layout is held to a round with the leaf's rules (`leaf.*` facts): a results.json
    relabelled to an older round does not drop them."""
    if ruleset != "auto":
        return ruleset
    from suite.harness import leafstamp

    leaf = leafstamp.is_stamp(ph.path.name)
    named = next((d.get("ruleset") for _, d in ph.runs if d.get("ruleset") in covering), None)
    if named and (not leaf or _has_leaf_rules(named)):
        return named
    return covering[-1] if leaf else covering[0]


def _has_leaf_rules(name: str) -> bool:
    return any(str(r.field).startswith("leaf.") for r in rules.load_layers(name, RULE_FILES["closed"]).rules)


def tree_scope(root: Path, phases: list[Phase]) -> Scope:
    writes = [p for p in phases if p.run_set["phase"] == "write"]
    reads = [p for p in phases if p.run_set["phase"] == "read"]
    after = None
    if writes and reads:
        after = all(_read_follows(r, writes) for r in reads)
    facts = {"phases.complete": bool(writes and reads), "phases.write": len(writes), "phases.read": len(reads),
             "read_after_write": after}
    return Scope("tree", root, facts, {"phases.complete": (root, "phases (write, read)"),
                                       "read_after_write": (reads[0].path / RUN_SET if reads else root,
                                                            "run-<k>/results.json written_by")})


def _read_follows(read: Phase, writes: list[Phase]) -> bool:
    """Every read run names a write phase of this tree and started after that write ended. The write is
    found by content, never by where it sits: written_by.write_id (the write's checkpoint_run_set.json
    phase_id), else (results written before ids were recorded) the write phase of the same layout whose
    last run ended last before written_by.end_unix_s. written_by.results_dir is not used: a reviewer's
    copy (moved, parent renamed, copied elsewhere) checks the same as the original."""
    for _, doc in read.runs:
        write = written_by(doc, writes)
        if write is None or not doc["start_unix_s"] >= _end(write):
            return False
    return bool(read.runs)


def _end(p: Phase) -> float:
    return max((d["end_unix_s"] for _, d in p.runs), default=math.inf)


def written_by(doc: dict, writes: list[Phase]) -> "Phase | None":
    """The write phase (of `writes`) a read run's written_by names, resolved by content."""
    by = doc.get("written_by")
    if not isinstance(by, dict):
        return None
    if by.get("write_id") is not None:
        return next((w for w in writes if w.run_set.get("phase_id") == by["write_id"]), None)
    layout_keys = ("workload", "mode", "processes", "miniature", "checkpoint_bytes")
    end = by.get("end_unix_s")
    if not isinstance(end, (int, float)) or isinstance(end, bool):
        return None
    same = [w for w in writes if w.runs and _end(w) <= end
            and all(by[k] == w.runs[0][1].get(k) for k in layout_keys if k in by)]
    return max(same, key=_end, default=None)


def benchmark_scope(ph: Phase, set_items: list | None = None) -> Scope:
    from suite.checkpointing import workloads
    from suite.checkpointing.run import closed_processes

    rs = ph.run_set
    docs = [d for _, d in ph.runs]
    name = rs["workload"]
    wdoc = workloads.load(name) if name in workloads.names() else None
    par = docs[0]["parallelism"] if docs else None
    per_host = [n for d in docs for n in (d.get("processes_per_host") or {}).values()]
    counts = {d["num_checkpoints_write"] or d["num_checkpoints_read"] for d in docs}
    facts = {
        "workload": name, "phase": rs["phase"], "mode": rs["mode"], "division": rs["division"],
        "miniature": rs["miniature"], "processes": rs["processes"],
        "closed_processes": closed_processes(wdoc) if wdoc else None,
        "subset_defined": bool(wdoc and wdoc["subset_mode"]),
        "processes_multiple_of_mp": (rs["processes"] % (par["tensor"] * par["pipeline"]) == 0) if par else None,
        "min_processes_per_host": min(per_host) if per_host else None,
        "runs.complete": sum(d["status"] == "complete" for d in docs),
        "checkpoints": counts.pop() if len(counts) == 1 else (None if not counts else sorted(counts)),
        "fsync": all(d["fsync"] for d in docs) if docs else None,
        "run_set.mismatches": list(set_items or []),
        "leaf.missing": leaf_missing(ph.path),
    }
    src = ph.path / RUN_SET
    sources = {k: (src, k) for k in facts}
    if docs:
        first = ph.runs[0][0]
        sources.update({"fsync": (first, "fsync"), "checkpoints": (first, "num_checkpoints_write/read"),
                        "min_processes_per_host": (first, "processes_per_host")})
    return Scope("benchmark", ph.path, facts, sources)


def run_scope(path: Path, doc: dict, derived: "ckpt_figures.Derived | None" = None) -> Scope:
    """One run's facts."""
    enf = doc["enforcement"]
    drop = enf.get("cache_drop") or {}
    resident = enf.get("resident_bytes_before_read")
    every_host = all((h.get("cache_drop") or {}).get("succeeded") is True for h in enf.get("hosts") or [])
    total = doc["checkpoint_bytes"] * max(doc["num_checkpoints_read"], 1)
    facts = {"phase": doc["phase"], "status": doc["status"], "cache_drop.succeeded": bool(drop.get("succeeded")) and every_host,
             "resident_fraction": (resident / total if total else 0.0) if resident is not None else None,
             "figures.rank_records": derived.rank_items if derived else [],
             "figures.mismatches": derived.items if derived else [], **handoff_facts(doc),
             "cache_clear.contradictions": cacheclear.contradictions(doc, path)}
    return Scope("run", path, facts, {"cache_drop.succeeded": (path, "enforcement.cache_drop.succeeded (and "
                                                                      "every enforcement.hosts[].cache_drop's)"),
                                      "resident_fraction": (path, "enforcement.resident_bytes_before_read"),
                                      "figures.rank_records": (path.parent / "ranks", "rank-<r>.json"),
                                      "figures.mismatches": (path, "checkpoints, metric"),
                                      "handoff.recorded": (path, "handoff"),
                                      "handoff.cleared": (path, "handoff.cache_clear.succeeded")})


def handoff_facts(doc: dict) -> dict:
    """A v3.0 read's handoff (suite.checkpointing.handoff): recorded, and the cache clear 4.3.1 asks for (the
    gap 4.7.1 bounds is the checkpointing judge's, from the leaves' own times: suite.checkpointing.reference)."""
    h = doc.get("handoff")
    if not isinstance(h, dict):
        return {"handoff.recorded": False, "handoff.clear_required": None, "handoff.cleared": None}
    clear = h.get("cache_clear") or {}
    return {"handoff.recorded": True, "handoff.clear_required": clear_required(h),
            "handoff.cleared": bool(clear.get("performed") and clear.get("succeeded"))}


def clear_required(h: dict) -> bool:
    """4.3.1's test re-derived from the record's own measurements (the checkpoint bytes per client
    against the client's memory), never its `clear_required` flag; where they are not numbers the clear
    is required (the rule is never skipped for want of a fact)."""
    from suite.checkpointing.handoff import RATIO_MIN

    data, memory = h.get("checkpoint_bytes_per_client"), h.get("client_memory_bytes")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in (data, memory)):
        return True
    return data / memory < RATIO_MIN


LEAF_FILES = ("summary.json", "checkpointing_{ts}_metadata.json", "checkpointing_{ts}_timeseries.json",
              "collector-staging/cluster_info.json", "fs_separation.json", "dlio_config/config.yaml",
              "dlio_config/hydra.yaml", "dlio_config/overrides.yaml", "0_per_epoch_stats.json")








def leaf_missing(path: Path) -> list[str]:
    """What of a v3.0 leaf's published files a phase directory named YYYYMMDD_HHMMSS lacks (others: [])."""
    from suite.checkpointing import leaf
    from suite.harness import leafstamp

    if not leafstamp.is_stamp(path.name):
        return []
    out = [n.format(ts=path.name) for n in LEAF_FILES if not (path / n.format(ts=path.name)).is_file()]
    ts = path / f"checkpointing_{path.name}_timeseries.json"
    if ts.is_file():
        try:
            if not files.load_json(ts, schema="checkpoint-timeseries", error=ResultError, root=path,
                                   limit=leaf.MAX_LEAF_FILE_BYTES)["num_samples"]:
                out.append(f"{ts.name}: samples")
        except ResultError as exc:
            out.append(str(exc))
    return out


def _sampled(p: Path, doc: dict, root: Path) -> hostrun.Run:
    """What run-<k>/host_metrics.json is checked against: its results.json's window and hosts."""
    try:
        shown = str(p.relative_to(root))
    except ValueError:
        shown = str(p)
    return hostrun.run(p.parent, doc.get("start_unix_s"), doc.get("end_unix_s"), doc.get("hosts", ()),
                       f"{shown}: start_unix_s, end_unix_s, hosts")
