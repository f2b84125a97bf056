"""The rulesets: what rules/*/ holds. Each folder with a `ruleset.yaml` is one benchmark round;
a new round is a new folder whose ruleset.yaml `extends:` the previous one and overrides what changed.

    schema_version: 1
    name: v2.0                    # the folder's name
    benchmark: mlperf-storage     # mlperf-storage | tpcx-ai
    extends: v1.0                 # mappings merged key by key, the child's value wins
    covers: [training, checkpointing]
    workloads: [unet3d, resnet50, cosmoflow]
    runs: {count: 5, warmup: 1}   # v3.0: warmup_in_series: true (suite run makes the warm-up first)
    fs_separation: true           # v3.0: data and results on different file systems
    leaves: timestamped           # v3.0: R/training/<model>/{datasize,datagen,run}/<YYYYMMDD_HHMMSS>/
    checkpoint_invocation: write_read   # v3.0: a checkpointing run writes then reads in one invocation
    tree_rules: tree              # v3.0: published trees of this round, held to rules/<round>/tree/*.yaml
    datasize: {min_steps: 500, memory_multiple: 5, formula: files}
    submission: {create: true, layout: pooled, division_dirs: {...}, org_dirs: [...], system_format: yaml, ...}
    detection: {warmup_run: true}  # how `suite check` tells this round's results apart

Schema: suite/schemas/ruleset.schema.json. name, extends, description, default and detection are
never inherited. An unknown parent, a cycle in `extends`, a name that is not its folder's, or an
MLPerf Storage round missing a constant -> RuleError naming the file, at load time.

    rulesets.names()            -> ("v0.5", "v1.0", "v2.0"): the MLPerf Storage rounds, in order
    rulesets.get("v2.0")        -> Ruleset (typed: .datasize.min_steps, .runs.warmup, .submission, ...)
    rulesets.default()          -> the round a new run takes when none is named (v3.0)
    rulesets.base()             -> the round its `extends` chain starts from (v1.0): what a result
                                   without any round's hints is read as
    rulesets.covering("checkpointing") -> the rounds with rules for that benchmark, in order
    rulesets.for_kind("kv_cache", named) -> the round a kind's result is held to (named, refused when
                                   it does not cover the kind; else the default or the newest covering)
    rulesets.submission_names() -> the rounds `suite submission init` offers
    rulesets.argtype("auto")    -> an argparse type= for --ruleset (reads rules/ when parsing, not at --help)

Where rounds are found: every directory of $SUITE_RULES_PATH (os.pathsep-separated, read when a
command asks, never at import), then the package's rules/ (suite/data/rules); a round in an earlier
directory wins. A private round (tests: rules/v9.9/ with `extends: v3.0`) needs no edit of the
shipped rules. Every function also takes `rules_root` (one directory, searched alone) for tests
that discover a private tree.

A round's rule files (engine.rule_path): rules/<round>/<file>, else the file of the round it
extends (and so on up the chain): a round that changes only constants has no rule file of its own.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from suite import files, memo
from suite.rules.yamlload import load_yaml_fast
from suite.errors import RuleError, SuiteError

FILE = "ruleset.yaml"
PATH_ENV = "SUITE_RULES_PATH"      # extra rules directories, searched before the package's
MLPERF = "mlperf-storage"
NOT_INHERITED = ("name", "extends", "description", "default", "detection")
REQUIRED = {MLPERF: ("covers", "workloads", "runs.count", "runs.warmup", "datasize.min_steps",
                     "datasize.memory_multiple", "datasize.formula", "submission.division_dirs",
                     "submission.org_dirs", "submission.system_format", "submission.system_schema",
                     "submission.benchmark_dir")}


@dataclass(frozen=True)
class Runs:
    count: int                   # measured runs per benchmark
    warmup: int                  # warm-up runs before them
    warmup_in_series: bool = False   # suite run makes them, first in its series (v3.0): warmup + count runs
    gap_shorter_than_run: bool = False   # v3.0: each gap between runs is shorter than the run before it

    @property
    def series(self) -> int:
        """The runs one `suite run` makes by default: the warm-ups too when it makes them."""
        return self.count + (self.warmup if self.warmup_in_series else 0)


@dataclass(frozen=True)
class Datasize:
    min_steps: int
    memory_multiple: int         # the dataset is at least this many times the hosts' memory
    formula: str                 # "samples" (v0.5, v1.0) or "files" (v2.0): see storage/datasize.py


@dataclass(frozen=True)
class Submission:
    create: bool                 # `suite submission init` offers this round
    division_dirs: dict          # division -> directory name
    org_dirs: tuple[str, ...]    # made under <Division>/<org>/
    system_format: str           # json | yaml: the system description's format
    system_schema: str           # suite/schemas/<name>.schema.json
    benchmark_dir: str           # results/<system>/<benchmark_dir> (format fields: workload, accelerator)
    layout: str = "benchmark_dirs"   # benchmark_dirs (suite.submission.create) | pooled (v3.0: timestamped
                                     # leaves and the code pool, suite.published.submission)


@dataclass(frozen=True)
class Detection:
    warmup_run: bool = False
    workload_without_accelerator: bool = False
    summary_keys_absent: tuple[str, ...] = ()
    implied_accelerator: dict = field(default_factory=dict)

    @property
    def any(self) -> bool:
        return self.warmup_run or self.workload_without_accelerator or bool(self.summary_keys_absent)


@dataclass(frozen=True)
class Ruleset:
    name: str
    benchmark: str
    path: Path                   # its ruleset.yaml
    extends: str | None
    description: str
    default: bool
    covers: tuple[str, ...]
    workloads: tuple[str, ...]
    runs: Runs | None
    datasize: Datasize | None
    submission: Submission | None
    detection: Detection
    fs_separation: bool = False  # data and results on different file systems (v3.0: fs_separation.json)
    reference_tool: str = "dlio"   # the files a run leaves, as dlio (1.x: configs/) or mlpstorage (v2.0 on) writes them
    leaves: str = "numbered"     # R/run-<k>/, or timestamped (v3.0): R/training/<model>/run/<YYYYMMDD_HHMMSS>/
    checkpoint_invocation: str = "one_phase"   # one_phase: a write or a read per invocation; write_read
                                               # (v3.0): the write then the read in one (suite.checkpointing.writeread)
    tree_rules: str | None = None  # published trees of this round: their rules in rules/<round>/<tree_rules>/
    chain: tuple[str, ...] = ()  # this round, then the rounds it extends, nearest first
    workloads_of: str = ""       # the round workload files list for this one: itself when it declares
                                 # `workloads:`, else the round it takes them from
    open_workloads: tuple[str, ...] = ()   # taken in the open division only (v3.0: flux, dlrm)

    @property
    def folder(self) -> Path:
        return self.path.parent

    def params(self) -> dict:
        """The rule params this round's constants give its rule files (the one source of them)."""
        out: dict = {"known_workloads": [*self.workloads, *self.open_workloads],
                     "closed_workloads": list(self.workloads)}
        if self.runs:
            out.update(runs_required=self.runs.count, warmup_runs=self.runs.warmup, runs_series=self.runs.series)
        if self.submission:
            out["system_schema"] = self.submission.system_schema
        return out if self.benchmark == MLPERF else {}


# --------------------------------------------------------------------------- queries


def root() -> Path:
    """The package's rules/ (suite/data/rules)."""
    return files.data_dir("rules")


def roots() -> tuple[Path, ...]:
    """The rules directories searched, first wins: $SUITE_RULES_PATH's, then the package's."""
    extra = tuple(Path(p) for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p)
    return (*extra, root())


def discover(rules_root: Path | None = None) -> dict[str, Ruleset]:
    """Every ruleset under `rules_root` (default: roots()), by name, in round order (v0.5 < v1.0 <
    v2.0 < v10.0)."""
    bases = (Path(rules_root),) if rules_root is not None else roots()
    return memo.kept(("rulesets.discover", bases), lambda: _discover(tuple(str(b) for b in bases), _stamps(bases)))


def _stamps(bases: tuple[Path, ...]) -> tuple:
    """Each base's rounds and their files' times: a changed rules file is read again (outside a
    command that holds suite.memo: within one, the rules are read once)."""
    return tuple(tuple(sorted((p.parent.name, p.stat().st_mtime_ns) for p in b.glob(f"*/{FILE}"))) for b in bases)


def for_kind(kind: str, named: str | None = None, where: str = "--ruleset", error=SuiteError) -> Ruleset:
    """The round a `kind` result is held to: `named` (--ruleset, or the round the result names) when
    that round covers the kind, else a one-line `error` naming the rounds that do; without a name,
    the default round when it covers the kind, else the newest that does."""
    have = covering(kind)
    if named not in (None, "auto"):
        if named not in have:
            raise error(f"{where}: expected {' or '.join(have) or 'a round covering ' + kind} (the rounds with "
                        f"{kind} rules: covers in rules/*/{FILE}), got {named}")
        return get(named)
    if not have:
        raise error(f"{where}: expected a round covering {kind} (covers in rules/*/{FILE}), got none")
    rs = default()
    return rs if kind in rs.covers else get(have[-1])


def names(benchmark: str = MLPERF, rules_root: Path | None = None) -> tuple[str, ...]:
    return tuple(n for n, r in discover(rules_root).items() if r.benchmark == benchmark)


def get(name: str, rules_root: Path | None = None) -> Ruleset:
    found = discover(rules_root)
    if name not in found:
        raise SuiteError(f"ruleset: expected one of {', '.join(found)}, got {name!r}")
    return found[name]


def default(benchmark: str = MLPERF, rules_root: Path | None = None) -> Ruleset:
    marked = [r for r in discover(rules_root).values() if r.benchmark == benchmark and r.default]
    if len(marked) != 1:
        raise RuleError(f"{base_of(rules_root)}: */{FILE} default: expected exactly one {benchmark} ruleset "
                        f"with default: true, got {len(marked)}")
    return marked[0]


def base(benchmark: str = MLPERF, rules_root: Path | None = None) -> Ruleset:
    """The first round of the default's `extends` chain (v1.0): results carrying no newer round's
    detection hints are read as it (a default for new runs says nothing of old results)."""
    rs = default(benchmark, rules_root)
    while rs.extends:
        rs = get(rs.extends, rules_root)
    return rs


def covering(benchmark: str, rules_root: Path | None = None) -> tuple[str, ...]:
    return tuple(n for n, r in discover(rules_root).items() if benchmark in r.covers)


def refuse_unknown(ruleset: str) -> None:
    """--ruleset for `suite check`: auto or a round under rules/ (SuiteError naming them otherwise)."""
    known = names()
    if ruleset not in ("auto", *known):
        raise SuiteError(f"--ruleset: expected one of auto, {', '.join(known)}, got {ruleset!r}")


def submission_names(rules_root: Path | None = None) -> tuple[str, ...]:
    """The rounds `suite submission init` can make a tree for."""
    return tuple(n for n, r in discover(rules_root).items() if r.submission and r.submission.create)


class Metavar:
    """--ruleset's metavar, the rounds it takes as `--help` shows them ("auto|v0.5|v1.0|v2.0|v3.0"): the
    same list argtype() allows, from the same rules/*/ruleset.yaml, read when help is formatted (never
    when the parser is built: `suite --help` reads no file). Docs list what this says (tests/test_cli.py)."""

    def __init__(self, *extra: str, submission: bool = False):
        self.extra, self.submission = extra, submission

    def choices(self) -> tuple[str, ...]:
        return (*self.extra, *(submission_names() if self.submission else names()))

    def __str__(self) -> str:
        return "|".join(self.choices())

    def __len__(self) -> int:
        return len(str(self))


def argtype(*extra: str, submission: bool = False):
    """An argparse `type=` for --ruleset: a ruleset of MLPerf Storage (`submission`: one `suite
    submission init` offers) or one of `extra` ("auto"). The rulesets are read when a value is
    parsed, not when the parser is built, so `suite --help` reads no file."""
    def parse(text: str) -> str:
        allowed = (*extra, *(submission_names() if submission else names()))
        if text not in allowed:
            raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(map(repr, allowed))})")
        return text
    parse.__name__ = "ruleset"
    parse.metavar = Metavar(*extra, submission=submission)       # --help shows what it allows (suite.cli)
    return parse


def base_of(rules_root: Path | None) -> Path:
    return Path(rules_root) if rules_root is not None else root()


# --------------------------------------------------------------------------- loading


def round_key(name: str) -> tuple:
    """v0.5 < v1.0 < v2.0 < v10.0; names without numbers after all rounds, alphabetically."""
    nums = tuple(int(x) for x in re.findall(r"\d+", name))
    return (0, nums, name) if nums else (1, (), name)


@lru_cache(maxsize=16)
def _discover(bases: tuple[str, ...], stamps: tuple) -> dict[str, Ruleset]:
    raw, where = {}, {}
    for base, found in zip(bases, stamps):
        for name, _ in found:
            if name in raw:
                continue                      # an earlier directory's round wins
            path = Path(base) / name / FILE
            doc = load_yaml_fast(path, error=RuleError)            # libyaml: every command reads them all
            files.validate(doc, "ruleset", path, RuleError)
            if doc["name"] != name:
                raise RuleError(f"{path}: name: expected the folder's name {name!r}, got {doc['name']!r}")
            raw[name], where[name] = doc, path
    out = {}
    for name in sorted(raw, key=round_key):
        chain = _chain(name, raw, where)
        workloads_of = next((n for n in chain if "workloads" in raw[n]), name)
        out[name] = _record(name, _resolved(name, raw, where, ()), where[name], chain, workloads_of)
    return out


def _chain(name: str, raw: dict, where: dict) -> tuple[str, ...]:
    out = [name]
    while raw[out[-1]].get("extends") in raw and raw[out[-1]]["extends"] not in out:
        out.append(raw[out[-1]]["extends"])
    return tuple(out)


def _resolved(name: str, raw: dict, where: dict, chain: tuple[str, ...]) -> dict:
    """`name`'s document with what it extends merged in (the child wins, mappings key by key)."""
    if name in chain:
        raise RuleError(f"{where[chain[0]]}: extends: expected no cycle, got {' -> '.join(chain + (name,))}")
    doc = raw[name]
    parent = doc.get("extends")
    if parent is None:
        return dict(doc)
    if parent not in raw:
        raise RuleError(f"{where[name]}: extends: expected one of {', '.join(sorted(raw, key=round_key))}, "
                        f"got {parent!r}")
    inherited = {k: v for k, v in _resolved(parent, raw, where, chain + (name,)).items() if k not in NOT_INHERITED}
    return _merge(inherited, doc)


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _record(name: str, doc: dict, path: Path, chain: tuple[str, ...] = (), workloads_of: str = "") -> Ruleset:
    for key in REQUIRED.get(doc["benchmark"], ()):
        node = doc
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            raise RuleError(f"{path}: {key}: expected a value (here or in what it extends), got none")
    runs, size, sub = doc.get("runs"), doc.get("datasize"), doc.get("submission")
    det = doc.get("detection") or {}
    return Ruleset(
        name=name, benchmark=doc["benchmark"], path=path, extends=doc.get("extends"),
        description=doc.get("description", ""), default=bool(doc.get("default")),
        covers=tuple(doc.get("covers") or ()), workloads=tuple(doc.get("workloads") or ()),
        runs=Runs(runs["count"], runs["warmup"], bool(runs.get("warmup_in_series")),
                  bool(runs.get("gap_shorter_than_run"))) if runs else None,
        datasize=Datasize(size["min_steps"], size["memory_multiple"], size["formula"]) if size else None,
        submission=Submission(bool(sub.get("create", True)), dict(sub["division_dirs"]), tuple(sub["org_dirs"]),
                              sub["system_format"], sub["system_schema"], sub["benchmark_dir"],
                              sub.get("layout", "benchmark_dirs")) if sub else None,
        detection=Detection(bool(det.get("warmup_run")), bool(det.get("workload_without_accelerator")),
                            tuple(det.get("summary_keys_absent") or ()), dict(det.get("implied_accelerator") or {})),
        fs_separation=bool(doc.get("fs_separation")),
        leaves=doc.get("leaves") or "numbered", reference_tool=doc.get("reference_tool") or "dlio",
        checkpoint_invocation=doc.get("checkpoint_invocation") or "one_phase", tree_rules=doc.get("tree_rules"),
        chain=chain or (name,), workloads_of=workloads_of or name,
        open_workloads=tuple(doc.get("open_workloads") or ()),
    )


def run_count(name: str | None = None) -> int:
    """The measured runs a benchmark of round `name` (None: the default round) has: its ruleset.yaml's
    runs.count, the one place the rounds' run count is written."""
    rs = get(name) if name not in (None, "auto") else default()
    if rs.runs is None:
        raise RuleError(f"rules/{rs.name}/{FILE}: runs.count: expected the round's measured runs, got none")
    return rs.runs.count
