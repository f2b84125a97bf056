"""Walk a result tree and find its benchmarks, runs and hosts, whatever the layout.

Real published MLPerf Storage submissions use many layouts; none is demanded here:
- DDN   results/<system>/unet3d-h100/runs/run1/c008/{summary.json, configs/...}
- Micron results/<system>/unet3d/h100/run_1/...  (or .../unet3d/h100/runs/run1/...)
- WEKA  results/<system>/unet3d-h100/run1/...   (plus DLIO <rank>_output.json files)
- simplyblock results/resnet-h100/runs/run1/... (no system directory)
- v0.5  results/<system>/unet3d/run-1/host-1/... (one directory per host)
- HPE   .../unet3d_h100/run-1/...,  IEI .../unet3d-h100/10hosts@13GPUs/run1/...
- ours (`suite run`): R/run-<k>/{summary.json, per_epoch_stats.json, configs/, steps/, results.json}

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
from functools import lru_cache
from pathlib import Path

from suite.errors import ResultError
from suite.check.walker import Problem, _Loader, _Walker
from suite.rules import RULESETS

ACCELERATORS = ("h100", "a100", "v100")
MODEL_ALIASES = {"unet3d": "unet3d", "unet": "unet3d", "resnet50": "resnet50", "resnet": "resnet50",
                 "cosmoflow": "cosmoflow", "bert": "bert"}
RUN_NAME = re.compile(r"^(?:run|iter|iteration)[-_]?\d+$|^warm[-_]?up(?:[-_]?\d+)?$|^run[-_]?warm[-_]?up$", re.I)
WARMUP_NAME = re.compile(r"warm[-_]?up", re.I)
RANK_OUTPUT = re.compile(r"^(\d+)_output\.json$")
RANK_STEPS = re.compile(r"^rank-(\d+)\.json$")
RULESET_IN_NAME = re.compile(r"(?:^|[^0-9.])v(0\.5|1\.0|2\.0)(?:$|[^0-9])")
HOST_MARKERS = ("summary.json", "per_epoch_stats.json", "results.json")


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
class GenerationLog:
    path: Path
    model: str | None
    accelerator: str | None
    system: str | None


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
    generation_logs: list[GenerationLog] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.name


@dataclass
class SystemFile:
    path: Path
    org: str | None
    name: str
    doc: object | None              # parsed JSON/YAML, None when unreadable
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Tree:
    root: Path
    benchmarks: list[Benchmark]
    systems: list[SystemFile]
    generation_logs: list[GenerationLog]
    submission: bool                # a submission tree (results/ under an org) rather than loose results
    problems: list[Problem] = field(default_factory=list)


# --------------------------------------------------------------------------- names


def parse_workload_name(text: str) -> tuple[str | None, str | None]:
    """'unet3d_h100' -> ('unet3d', 'h100'); 'resnet-a100' -> ('resnet50', 'a100'); 'unet3d' -> ('unet3d', None)."""
    model = accel = None
    for token in re.split(r"[-_/\s.@]+", str(text).lower()):
        if token in MODEL_ALIASES and model is None:
            model = MODEL_ALIASES[token]
        elif token in ACCELERATORS and accel is None:
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


def _is_datagen(host: Host, rel_parts: tuple[str, ...]) -> bool:
    if any(p.lower() in ("generation_logs", "datagen") for p in rel_parts):
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
    if "configs" in subs and "overrides.yaml" in walker.dirs.get(d / "configs", []):
        return True
    if "steps" in subs and any(RANK_STEPS.match(n) for n in walker.dirs.get(d / "steps", [])):
        return True
    return False


def _load_host(d: Path, walker: _Walker, loader: _Loader) -> Host:
    """Every output file of one host dir, each a parsed document or a Problem (never an exception)."""
    host = Host(path=d, name=d.name)
    names, subs = set(walker.dirs.get(d, [])), set(walker.subdirs.get(d, []))
    conf_names = set(walker.dirs.get(d / "configs", []))
    sink = host.problems

    def doc(path: Path, want: type, what: str, kind: str = "json"):
        return loader.typed(loader.load(path, sink, kind), want, path, sink, what)

    for key, name in (("summary", "summary.json"), ("per_epoch", "per_epoch_stats.json"), ("results", "results.json")):
        if name in names:
            host.files[key] = d / name
            setattr(host, key, doc(d / name, dict, name))
        elif name in subs:
            sink.append(Problem("not-a-file", d / name, "file", "a file", "a directory"))
    for name in ("configs", "steps"):
        if name in names:
            sink.append(Problem("not-a-dir", d / name, name, "a directory", "a file"))
    if "overrides.yaml" in conf_names:
        path = host.files["overrides"] = d / "configs" / "overrides.yaml"
        items = doc(path, list, "overrides.yaml", "yaml")
        if items is not None:
            bad = [x for x in items if not isinstance(x, str)]
            if bad:
                sink.append(Problem("unreadable", path, "(items)", "strings key=value",
                                    f"{type(bad[0]).__name__} {bad[0]!r}"[:120]))
            host.overrides = [x for x in items if isinstance(x, str)]
    if "config.yaml" in conf_names:
        path = host.files["config"] = d / "configs" / "config.yaml"
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


def host_workload(host: Host) -> tuple[str | None, str | None, str]:
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
        if isinstance(res.get("accelerator"), str) and res["accelerator"] in ACCELERATORS:
            accel = res["accelerator"]
        if model:
            return model, accel, "results.json"
    conf = host.config or {}
    model = conf.get("model") if isinstance(conf.get("model"), str) else None
    if model is None and isinstance((host.summary or {}).get("model"), str):
        model = host.summary["model"]
    if model:
        model = MODEL_ALIASES.get(model.lower(), model.lower())
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
        return tuple((a, workloads.resolve(model, a).computation_time_s) for a in workloads.accelerators(model))
    except Exception:  # unknown model: no accelerator from compute time
        return ()


@lru_cache(maxsize=None)
def resolve_workload(model: str | None, accel: str | None):
    """workloads.resolve, cached; None for an unknown workload/accelerator."""
    from suite.storage import workloads
    try:
        return workloads.resolve(model, accel)
    except Exception:
        return None


def _from_names(parts: tuple[str, ...]) -> tuple[str | None, str | None]:
    model = accel = None
    for part in reversed(parts):
        m, a = parse_workload_name(part)
        model = model or m
        accel = accel or a
    return model, accel


def _ruleset_hint(parts: tuple[str, ...]) -> str | None:
    for part in reversed(parts):
        m = RULESET_IN_NAME.search(part.lower())
        if m:
            return "v" + m.group(1)
    return None


def discover_tree(path, ruleset: str = "auto") -> Tree:
    """Everything under `path`: benchmarks (with runs and hosts), system files, generation logs."""
    root_in = Path(path)
    try:
        root = Path(os.path.realpath(root_in, strict=True))
        mode = os.stat(root).st_mode
    except OSError as exc:
        raise ResultError(f"{root_in}: expected an existing file or directory, got {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        raise ResultError(f"{root_in}: expected a directory (a run, a benchmark, a results dir or a "
                          f"submission tree), got a file")
    walker = _Walker(root)
    walker.walk(root)
    loader = _Loader()

    host_dirs = [d for d in walker.dirs if _has_run_output(walker, d)]
    hosts = {d: _load_host(d, walker, loader) for d in sorted(host_dirs)}

    gen_logs: list[GenerationLog] = []
    runs: dict[Path, Run] = {}
    for d, host in hosts.items():
        rel = d.relative_to(root).parts
        if _is_datagen(host, rel):
            model, accel, _ = host_workload(host)
            if model is None:
                model, accel = _from_names(rel)
            gen_logs.append(GenerationLog(d, model, accel, _system_of(d, root)))
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

    groups: dict[Path, list[Run]] = {}
    for run_dir, run in sorted(runs.items()):
        if run_dir == root:
            bench_dir = root
        else:
            bench_dir = run_dir.parent
            if bench_dir.name.lower() == "runs" and bench_dir != root:
                bench_dir = bench_dir.parent
        groups.setdefault(bench_dir, []).append(run)
    # a run-named directory beside the runs but without any output is a run that produced nothing
    known = set(runs) | {h.path for r in runs.values() for h in r.hosts} | {g.path for g in gen_logs}
    for bench_dir, bruns in groups.items():
        for parent in (bench_dir, bench_dir / "runs"):
            for name in walker.subdirs.get(parent, []):
                d = parent / name
                if RUN_NAME.match(name) and d not in known and d != root:
                    bruns.append(Run(path=d, name=name, hosts=[Host(path=d, name=name)],
                                     warmup=bool(WARMUP_NAME.search(name))))

    benchmarks = []
    for bench_dir, bruns in sorted(groups.items()):
        benchmarks.append(_benchmark(bench_dir, bruns, root, walker, loader, ruleset))

    systems = _systems(root, walker, loader)
    submission = any("results" in [p.lower() for p in b.path.relative_to(root).parts] for b in benchmarks)
    for g in gen_logs:
        for b in benchmarks:
            if g.model == b.workload and (g.system == b.system or g.path.is_relative_to(b.path)):
                b.generation_logs.append(g)
    tree = Tree(root=root, benchmarks=benchmarks, systems=systems, generation_logs=gen_logs,
                submission=submission, problems=[])
    # walk problems go to the benchmark that contains them, else to the tree
    for p in walker.problems:
        owner = next((b for b in sorted(benchmarks, key=lambda b: -len(b.path.parts))
                      if _within(p.path, b.path)), None)
        (owner.problems if owner else tree.problems).append(p)
    return tree


def discover(path, ruleset: str = "auto") -> list[Benchmark]:
    """The benchmarks under `path` (see discover_tree for the whole tree)."""
    return discover_tree(path, ruleset).benchmarks


def _within(p: Path, root: Path) -> bool:
    try:
        p.relative_to(root)
        return True
    except ValueError:
        return False


def _org_system(bench_dir: Path, root: Path) -> tuple[str | None, str | None, str | None]:
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


def _system_of(d: Path, root: Path) -> str | None:
    parts = [p for p in d.parts]
    lower = [p.lower() for p in parts]
    if "generation_logs" in lower:
        i = lower.index("generation_logs")
        return parts[i + 1] if i + 1 < len(parts) else None
    return _org_system(d, root)[2]


def _benchmark(bench_dir: Path, runs: list[Run], root: Path, walker: _Walker, loader: _Loader,
               ruleset: str) -> Benchmark:
    division, org, system = _org_system(bench_dir, root)
    detected: dict[str, str] = {}
    model = accel = None
    for run in runs:
        for host in run.hosts:
            m, a, src = host_workload(host)
            if m and model is None:
                model, detected["workload"] = m, f"{src} ({host.path.name})"
            if a and accel is None:
                accel, detected["accelerator"] = a, f"{src} ({host.path.name})"
    if model is None or accel is None:
        nm, na = _from_names(bench_dir.parts[-3:] if bench_dir != root else bench_dir.parts[-2:])
        if model is None and nm:
            model, detected["workload"] = nm, "directory names"
        if accel is None and na:
            accel, detected["accelerator"] = na, "directory names"
    # ruleset
    rs = None
    if ruleset and ruleset != "auto":
        rs, detected["ruleset"] = ruleset, "--ruleset"
    if rs is None:
        for run in runs:
            r = (run.results or {}).get("ruleset")
            if r in RULESETS:
                rs, detected["ruleset"] = r, "results.json"
                break
    if rs is None:
        hint = _ruleset_hint(bench_dir.parts)
        if hint:
            rs, detected["ruleset"] = hint, "directory names"
    if rs is None:
        summaries = [s for r in runs for s in r.summaries]
        ov = next((overrides_dict(r.overrides).get("workload") for r in runs if r.overrides), None)
        if any(r.warmup for r in runs):
            rs, why = "v2.0", "a warm-up run"
        elif (ov and parse_workload_name(ov)[1] is None) or (
                summaries and all("num_hosts" not in s and "host_memory_GB" not in s for s in summaries)):
            rs, why = "v0.5", "workload name without accelerator / v0.5 summary keys"
        else:
            rs, why = "v1.0", "default (v1.0 summary keys or none)"
        detected["ruleset"] = why
    if accel is None and rs == "v0.5" and model in ("unet3d", "bert"):
        accel, detected["accelerator"] = "v100", "v0.5 (v100 only)"
    if division is None:
        for run in runs:
            d = (run.results or {}).get("division")
            if d in ("closed", "open"):
                division = d
                break
    warm = [r for r in runs if r.warmup]
    main = sorted([r for r in runs if not r.warmup], key=lambda r: _natural(r.name))
    report = report_path = None
    problems: list[Problem] = []
    for cand in (bench_dir / "mlperf_storage_report.json", bench_dir / "runs" / "mlperf_storage_report.json"):
        if cand.name in walker.dirs.get(cand.parent, []):
            report_path = cand
            report = loader.typed(loader.load(cand, problems), dict, cand, problems, "mlperf_storage_report.json")
            break
    return Benchmark(path=bench_dir, org=org, system=system, division=division, ruleset=rs, workload=model,
                     accelerator=accel, runs=main, report=report, warmup=warm[0] if warm else None,
                     report_path=report_path, single_run=(len(runs) == 1 and runs[0].path == root),
                     problems=problems, detected_from=detected)


def _natural(name: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _systems(root: Path, walker: _Walker, loader: _Loader) -> list[SystemFile]:
    out = []
    for d, names in walker.dirs.items():
        if d.name.lower() != "systems":
            continue
        org = d.parent.name if d != root else None
        for n in names:
            if n.endswith((".json", ".yaml", ".yml")) and not n.startswith("."):
                sink: list[Problem] = []
                doc = loader.load(d / n, sink, "json" if n.endswith(".json") else "yaml")
                out.append(SystemFile(path=d / n, org=org, name=n.rsplit(".", 1)[0], doc=doc, problems=sink))
    return sorted(out, key=lambda s: s.path)
