"""Walk a result tree and find its benchmarks, runs and hosts, whatever the layout.

Real published MLPerf Storage submissions use many layouts; none is demanded here:
- DDN   results/<system>/unet3d-h100/runs/run1/c008/{summary.json, configs/...}
- Micron results/<system>/unet3d/h100/run_1/...  (or .../unet3d/h100/runs/run1/...)
- WEKA  results/<system>/unet3d-h100/run1/...   (plus DLIO <rank>_output.json files)
- simplyblock results/resnet-h100/runs/run1/... (no system directory)
- v0.5  results/<system>/unet3d/run-1/host-1/... (one directory per host)
- HPE   .../unet3d_h100/run-1/...,  IEI .../unet3d-h100/10hosts@13GPUs/run1/...
- ours (`suite run`): R/run-<k>/{summary.json, per_epoch_stats.json, configs/, steps/, results.json}

`code/` and `*_code/` are never walked for results (suite.layouts.walker). A multi-host v1.0 run has
summary.json on its rank-0 host only (run1/host1/summary.json, host2..N/configs/): one run. A
benchmark with no summary, no results.json and no report anywhere is `incomplete` (an aborted run
left in the tree), not a result. Generation logs: suite.layouts.benchdirs.genlogs; system files: suite.layouts.benchdirs.systems.

A "host directory" is any directory holding run output (summary.json, configs/overrides.yaml,
per_epoch_stats.json, results.json, DLIO <rank>_output.json, steps/). Its parent is the run when
the parent's name looks like a run (run1, run-1, run_1, iter0, warmup); otherwise it is the run
itself. A benchmark is the parent of its runs (skipping an intermediate `runs/`). Data-generation
directories (under generation_logs/, named datagen, or with generate_data=True and train=False)
are recorded as generation logs, not runs. Workload, accelerator and ruleset come from the files
(overrides.yaml `workload=unet3d_h100`, config.yaml, summary keys, results.json) and only then
from directory names.

Safety: nothing outside PATH is ever read. Symlinks are not followed when they leave PATH or loop
(each becomes a Problem); symlinked directories are never descended. Every file is read through
suite.files (size limit, UTF-8); a file that cannot be used becomes a Problem, never a traceback.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from suite import memo
from suite.errors import ResultError
from suite.layouts.walker import Problem, _Loader, _Walker, walked
from suite.layouts.benchdirs import genlogs, identify, systems as system_files
from suite.layouts.benchdirs.genlogs import GenerationLog
from suite.layouts.benchdirs.identify import overrides_dict
from suite.layouts.benchdirs.systems import SystemFile

RUN_NAME = re.compile(r"^(?:run|iter|iteration)[-_]?\d+$|^warm[-_]?up(?:[-_]?\d+)?$|^run[-_]?warm[-_]?up$", re.I)
WARMUP_NAME = re.compile(r"warm[-_]?up", re.I)
RANK_OUTPUT = re.compile(r"^(\d+)_output\.json$")
RANK_STEPS = re.compile(r"^rank-(\d+)\.json$")
HOST_MARKERS = ("summary.json", "per_epoch_stats.json", "results.json")
CONFIG_DIRS = ("configs", ".hydra", "dlio_config")     # .hydra: DLIO run directly (Hydra's default output_subdir),
#                                                       e.g. its datagen; dlio_config: v3.0's leaves (mlpstorage's output_subdir)
RANK0_PER_EPOCH = "0_per_epoch_stats.json"    # v3.0's leaves: rank 0's per_epoch_stats


@dataclass
class Host:
    """One host's (or the only) output directory of a run."""

    path: Path
    name: str
    summary: dict | None = None
    per_epoch: dict | None = None
    overrides: list[str] | None = None
    config: dict | None = None          # the `workload:` block of configs/config.yaml (or the whole doc)
    results: dict | None = None         # our results.json
    rank_steps: dict[int, dict] | None = None    # our steps/rank-<r>.json, by rank
    rank_outputs: dict[int, dict] | None = None  # DLIO <rank>_output.json, by rank
    files: dict[str, Path] = field(default_factory=dict)   # what was found: summary, per_epoch, ...
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Run:
    """One benchmark run: one or more host directories (v0.5 multi-host has one per host).

    The single-file attributes (summary, per_epoch, ...) are those of the first host; all hosts
    are in `hosts`.
    """

    path: Path
    name: str
    hosts: list[Host]
    warmup: bool = False

    def _first(self, attr):
        return getattr(self.hosts[0], attr) if self.hosts else None

    summary = property(lambda self: self._first("summary"))
    per_epoch = property(lambda self: self._first("per_epoch"))
    overrides = property(lambda self: self._first("overrides"))
    config = property(lambda self: self._first("config"))
    results = property(lambda self: self._first("results"))
    rank_steps = property(lambda self: self._first("rank_steps"))
    rank_outputs = property(lambda self: self._first("rank_outputs"))

    @property
    def summaries(self) -> list[dict]:
        return [h.summary for h in self.hosts if isinstance(h.summary, dict)]

    @property
    def problems(self) -> list[Problem]:
        return [p for h in self.hosts for p in h.problems]


@dataclass
class Benchmark:
    path: Path
    org: str | None
    system: str | None
    division: str | None            # closed | open | None (not said by the tree)
    ruleset: str
    workload: str | None            # unet3d, resnet50, cosmoflow, bert
    accelerator: str | None         # h100, a100, v100
    runs: list[Run]
    report: dict | None = None      # mlperf_storage_report.json
    warmup: Run | None = None
    report_path: Path | None = None
    single_run: bool = False        # PATH was one run, not a benchmark with its runs
    problems: list[Problem] = field(default_factory=list)
    detected_from: dict[str, str] = field(default_factory=dict)   # what said workload/accelerator/ruleset
    generation_logs: list[GenerationLog] = field(default_factory=list)   # candidates (genlogs.candidates)
    org_dir: Path | None = None     # the organisation directory (the one holding results/)

    @property
    def name(self) -> str:
        return self.path.name


@dataclass
class Tree:
    root: Path
    benchmarks: list[Benchmark]
    systems: list[SystemFile]
    generation_logs: list[GenerationLog]
    submission: bool                # a submission tree (results/ under an org) rather than loose results
    problems: list[Problem] = field(default_factory=list)
    incomplete: list[Benchmark] = field(default_factory=list)   # no summary, no report: not a result
    code_dirs: list[Path] = field(default_factory=list)          # code/, *_code/ (never walked for results)
    dir_files: dict[Path, list[str]] = field(default_factory=dict)   # dir -> its files (the walk)


def _is_datagen(host: Host, rel_parts: tuple[str, ...]) -> bool:
    if genlogs.in_gen_dir(rel_parts):
        return True
    ov = overrides_dict(host.overrides)
    return (ov.get("workflow.generate_data", "").lower() == "true"
            and ov.get("workflow.train", "").lower() == "false")


# --------------------------------------------------------------------------- discovery


def _has_run_output(walker: _Walker, d: Path) -> bool:
    names = walker.dirs.get(d, [])
    if any(n in HOST_MARKERS for n in names) or any(RANK_OUTPUT.match(n) for n in names):
        return True
    subs = walker.subdirs.get(d, [])
    for conf in CONFIG_DIRS:
        if conf in subs and "overrides.yaml" in walker.dirs.get(d / conf, []):
            return True
    if "steps" in subs and any(RANK_STEPS.match(n) for n in walker.dirs.get(d / "steps", [])):
        return True
    return False


def _load_host(d: Path, walker: _Walker, loader: _Loader) -> Host:
    """Every output file of one host dir, each a parsed document or a Problem (never an exception)."""
    host = Host(path=d, name=d.name)
    names, subs = set(walker.dirs.get(d, [])), set(walker.subdirs.get(d, []))
    conf_dir = next((c for c in CONFIG_DIRS if c in subs and walker.dirs.get(d / c)), "configs")
    conf_names = set(walker.dirs.get(d / conf_dir, []))
    sink = host.problems

    def doc(path: Path, want: type, what: str, kind: str = "json"):
        return loader.typed(loader.load(path, sink, kind), want, path, sink, what)

    per_epoch = RANK0_PER_EPOCH if RANK0_PER_EPOCH in names and "per_epoch_stats.json" not in names else "per_epoch_stats.json"
    for key, name in (("summary", "summary.json"), ("per_epoch", per_epoch), ("results", "results.json")):
        if name in names:
            host.files[key] = d / name
            setattr(host, key, doc(d / name, dict, name))
        elif name in subs:
            sink.append(Problem("not-a-file", d / name, "file", "a file", "a directory"))
    for name in ("configs", "steps"):
        if name in names:
            sink.append(Problem("not-a-dir", d / name, name, "a directory", "a file"))
    if "overrides.yaml" in conf_names:
        path = host.files["overrides"] = d / conf_dir / "overrides.yaml"
        items = doc(path, list, "overrides.yaml", "yaml")
        if items is not None:
            bad = [x for x in items if not isinstance(x, str)]
            if bad:
                sink.append(Problem("unreadable", path, "(items)", "strings key=value",
                                    f"{type(bad[0]).__name__} {bad[0]!r}"[:120]))
            host.overrides = [x for x in items if isinstance(x, str)]
    if "config.yaml" in conf_names:
        path = host.files["config"] = d / conf_dir / "config.yaml"
        conf = doc(path, dict, "config.yaml", "yaml")
        if conf is not None:
            host.config = conf["workload"] if isinstance(conf.get("workload"), dict) else conf
    ranks = {int(m.group(1)): doc(d / n, dict, "DLIO rank output")
             for n in sorted(names) if (m := RANK_OUTPUT.match(n))}
    if ranks:
        host.rank_outputs = {r: v for r, v in ranks.items() if v is not None}
        host.files["rank_outputs"] = d
    if "steps" in subs:
        steps = {int(m.group(1)): doc(d / "steps" / n, dict, "rank steps")
                 for n in sorted(walker.dirs.get(d / "steps", [])) if (m := RANK_STEPS.match(n))}
        host.rank_steps = {r: v for r, v in steps.items() if v is not None}
        host.files["rank_steps"] = d / "steps"
    return host


def discover_tree(path, ruleset: str = "auto", exclude=()) -> Tree:
    """Everything under `path`: benchmarks (with runs and hosts), system files, generation logs.
    `exclude`: directories (real paths) holding another kind's results (suite.kinds.registry.results_under):
    never walked."""
    root_in = Path(path)
    try:
        root = Path(os.path.realpath(root_in, strict=True))
        mode = os.stat(root).st_mode
    except OSError as exc:
        raise ResultError(f"{root_in}: expected an existing file or directory, got {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        raise ResultError(f"{root_in}: expected a directory (a run, a benchmark, a results dir or a "
                          f"submission tree), got a file")
    # one walk per command that holds suite.memo (suite report: its page's figures and its check's)
    return memo.kept(("benchdirs.discover_tree", root, ruleset, tuple(exclude)),
                     lambda: _discovered(root, ruleset, exclude))


def _discovered(root: Path, ruleset: str, exclude) -> Tree:
    walker = walked(root, exclude)
    loader = _Loader()
    hosts = {d: _load_host(d, walker, loader) for d in sorted(d for d in walker.dirs if _has_run_output(walker, d))}
    runs, gen_hosts = _runs(hosts, root)
    gen_logs = _generation_logs(gen_hosts, hosts, root, walker)
    groups = _group(runs, gen_logs, root, walker)
    found = [_benchmark(bench_dir, bruns, root, walker, loader, ruleset) for bench_dir, bruns in sorted(groups.items())]
    # walk problems go to the benchmark that contains them, else to the tree
    tree_problems: list[Problem] = []
    for p in walker.problems:
        owner = next((b for b in sorted(found, key=lambda b: -len(b.path.parts)) if _within(p.path, b.path)), None)
        (owner.problems if owner else tree_problems).append(p)
    benchmarks = [b for b in found if not _incomplete(b)]
    systems = system_files.discover(root, walker, loader)
    submission = any("results" in [p.lower() for p in b.path.relative_to(root).parts] for b in benchmarks)
    org_systems: dict[Path | None, set[str]] = {}
    for b in benchmarks:
        org_systems.setdefault(b.org_dir, set()).add(b.system)
    for b in benchmarks:
        b.generation_logs = genlogs.candidates(b, gen_logs, org_systems.get(b.org_dir, set()))
    tree = Tree(root=root, benchmarks=benchmarks, systems=systems, generation_logs=gen_logs,
                submission=submission, problems=tree_problems, incomplete=[b for b in found if _incomplete(b)],
                code_dirs=list(walker.code_dirs), dir_files=walker.dirs)
    return tree


def _runs(hosts: dict[Path, Host], root: Path) -> tuple[dict[Path, Run], list[Host]]:
    """Host dirs into runs (a run-named parent holds its hosts) and data-generation host dirs."""
    gen_hosts: list[Host] = []
    runs: dict[Path, Run] = {}
    for d, host in hosts.items():
        rel = d.relative_to(root).parts
        if _is_datagen(host, rel):
            gen_hosts.append(host)
            continue
        parent = d.parent
        if d != root and RUN_NAME.match(parent.name) and not RUN_NAME.match(d.name) and _within(parent, root):
            run_dir = parent
        else:
            run_dir = d
        run = runs.setdefault(run_dir, Run(path=run_dir, name=run_dir.name, hosts=[],
                                           warmup=bool(WARMUP_NAME.search(run_dir.name))))
        run.hosts.append(host)
        if isinstance(host.results, dict) and host.results.get("warmup") is True:
            run.warmup = True
    return runs, gen_hosts


def _text(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(genlogs.TEXT_LOG_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def _generation_logs(gen_hosts: list[Host], hosts: dict[Path, Host], root: Path, walker: _Walker) -> list[GenerationLog]:
    """DLIO datagen output dirs, and plain .log files in generation-log directories outside any host dir."""
    def logs_in(d: Path):
        return [_text(d / n) for n in walker.dirs.get(d, []) if n.lower().endswith(".log")]

    out = [genlogs.from_host(h, root, walker.subdirs, logs_in) for h in gen_hosts]
    host_dirs = set(hosts)
    for d, names in sorted(walker.dirs.items()):
        if d == root or not genlogs.in_gen_dir(d.relative_to(root).parts):
            continue
        if any(a in host_dirs for a in (d, *d.parents)):
            continue
        for n in names:
            if n.lower().endswith(".log"):
                out.append(genlogs.from_text(d / n, _text(d / n), root, walker.subdirs))
    return out


def _incomplete(b: "Benchmark") -> bool:
    """No summary in any run, no report, no results.json: an aborted run left in the tree."""
    return (b.report is None and b.report_path is None and not b.problems
            and not any(h.summary is not None or h.results is not None or h.problems or h.rank_outputs
                        for r in b.runs + ([b.warmup] if b.warmup else []) for h in r.hosts))


def _group(runs: dict[Path, Run], gen_logs: list[GenerationLog], root: Path, walker: _Walker) -> dict[Path, list[Run]]:
    """Runs by benchmark dir (the runs' parent, skipping a `runs/`), with the run-named dirs beside
    them that hold no output (runs that produced nothing)."""
    groups: dict[Path, list[Run]] = {}
    for run_dir, run in sorted(runs.items()):
        if run_dir == root:
            bench_dir = root
        else:
            bench_dir = run_dir.parent
            if bench_dir.name.lower() == "runs" and bench_dir != root:
                bench_dir = bench_dir.parent
        groups.setdefault(bench_dir, []).append(run)
    known = set(runs) | {h.path for r in runs.values() for h in r.hosts} | {g.path for g in gen_logs}
    for bench_dir, bruns in groups.items():
        for parent in (bench_dir, bench_dir / "runs"):
            for name in walker.subdirs.get(parent, []):
                d = parent / name
                if RUN_NAME.match(name) and d not in known and d != root:
                    bruns.append(Run(path=d, name=name, hosts=[Host(path=d, name=name)],
                                     warmup=bool(WARMUP_NAME.search(name))))
    return groups


def discover(path, ruleset: str = "auto") -> list[Benchmark]:
    """The benchmarks under `path` (see discover_tree for the whole tree)."""
    return discover_tree(path, ruleset).benchmarks


def _within(p: Path, root: Path) -> bool:
    try:
        p.relative_to(root)
        return True
    except ValueError:
        return False


def _benchmark(bench_dir: Path, runs: list[Run], root: Path, walker: _Walker, loader: _Loader,
               ruleset: str) -> Benchmark:
    who = identify.identify(bench_dir, runs, root, ruleset)
    warm = [r for r in runs if r.warmup]
    main = sorted([r for r in runs if not r.warmup], key=lambda r: _natural(r.name))
    report = report_path = None
    problems: list[Problem] = []
    for cand in (bench_dir / "mlperf_storage_report.json", bench_dir / "runs" / "mlperf_storage_report.json"):
        if cand.name in walker.dirs.get(cand.parent, []):
            report_path = cand
            report = loader.typed(loader.load(cand, problems), dict, cand, problems, "mlperf_storage_report.json")
            break
    return Benchmark(path=bench_dir, org=who.org, system=who.system, division=who.division, ruleset=who.ruleset,
                     workload=who.workload, accelerator=who.accelerator, runs=main, report=report,
                     warmup=warm[0] if warm else None, report_path=report_path,
                     single_run=(len(runs) == 1 and runs[0].path == root), problems=problems,
                     detected_from=who.detected, org_dir=genlogs.org_dir_of(bench_dir, root, walker.subdirs))


def _natural(name: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]
