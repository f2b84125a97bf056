"""The kv_cache kind: MLPerf Storage v3.0's KV-cache offload benchmark (`benchmark: kv_cache`,
workloads/kv-cache.yaml), run by suite.kv_cache.run, checked by kv_cache.yaml of its round (rules/<round>/)
(suite.kv_cache.check), measured by suite.kv_cache.figures (ours and published leaves alike), shown by
suite.kv_cache.page. Its results: a leaf `kv_cache/<model>/run/<ts>/` (option_<O>/ inside)."""

from __future__ import annotations

from pathlib import Path

from suite.errors import ExitCode
from suite.benchmark import Checked, Kind, Options, Workloads

RUN_OPTIONS = ("cache_dir", "option", "trials", "duration", "inter_option_delay", "kv_model", "kv_users",
               "kv_gpu_mem_gb", "kv_cpu_mem_gb", "kv_storage_capacity_gb", "io_trace", "replay")


def add_run_arguments(p) -> None:
    from suite.cliargs import non_negative_float, positive_int

    g = p.add_argument_group("kv-cache (suite run --workload kv-cache)")
    g.add_argument("--cache-dir", help="kv-cache: the storage tier under test (one file per KV entry); on another "
                                       "file system than --results-dir. Omitted: the MINIATURE")
    g.add_argument("--option", choices=["1", "2", "3", "all"], default="all",
                   help="kv-cache: option 1 (8B, 200 users), 2 (8B, 100 users, CPU 4 GB), 3 (70B, 70 users) or all (closed)")
    g.add_argument("--trials", type=positive_int, default=None, help="kv-cache: trials per option (closed: 3)")
    g.add_argument("--duration", type=non_negative_float, default=None, help="kv-cache: seconds per trial (closed: 300)")
    g.add_argument("--inter-option-delay", type=non_negative_float, default=None,
                   help="kv-cache: seconds between options (closed: 90)")
    g.add_argument("--kv-model", default=None, help="kv-cache, open division: the model (workloads/kv-cache.yaml models)")
    g.add_argument("--kv-users", type=positive_int, default=None, help="kv-cache, open division: users per rank")
    g.add_argument("--kv-gpu-mem-gb", type=non_negative_float, default=None, help="kv-cache, open: GPU tier GiB per rank")
    g.add_argument("--kv-cpu-mem-gb", type=non_negative_float, default=None, help="kv-cache, open: CPU tier GiB per rank")
    g.add_argument("--kv-storage-capacity-gb", type=non_negative_float, default=None,
                   help="kv-cache, open: storage tier GiB per rank (default 95%% of the cache dir's free space)")
    g.add_argument("--io-trace", metavar="FILE", default=None,
                   help="kv-cache: write every cache operation (option, trial, rank, time_s, op, key, bytes, tier) to "
                        "FILE as CSV (atomic; with --replay: the operations the replay made)")
    g.add_argument("--replay", metavar="FILE", default=None,
                   help="kv-cache: replay an --io-trace FILE against --cache-dir (each rank's operations in order, "
                        "ranks in parallel, the same operations, keys and bytes) instead of a run")


def run(args) -> int:
    from suite.kv_cache import run as kvrun

    defaults = getattr(args, "scope_defaults", {})
    seed = getattr(args, "seed", None)
    if args.replay:
        from suite.kv_cache import trace

        return trace.command(args.replay, args.cache_dir, args.io_trace)
    return kvrun.run(kvrun.Options(
        cache_dir=args.cache_dir, results_dir=args.results_dir, option=args.option, trials=args.trials,
        duration_s=args.duration, inter_option_delay_s=args.inter_option_delay, division=args.division,
        ranks=args.accelerators or 1, hosts=args.hosts.split(",") if args.hosts else None,
        seed=None if seed == defaults.get("seed") else seed, memory_limit=args.memory_limit,
        allow_no_cache_drop=args.allow_no_cache_drop, no_cache_drop=args.no_cache_drop,
        open_params={"model": args.kv_model, "users": args.kv_users, "gpu_mem_gb": args.kv_gpu_mem_gb,
                     "cpu_mem_gb": args.kv_cpu_mem_gb, "storage_capacity_gb": args.kv_storage_capacity_gb},
        launcher=getattr(args, "launcher", None), io_trace=args.io_trace))


def leaf_dir(path: Path) -> Path:
    """A leaf's summary.json or metadata file stands for the leaf."""
    path = Path(path)
    return path.parent if path.is_file() else path


def recognises(path: Path) -> bool:
    from suite.kv_cache.leaf import is_leaf

    return is_leaf(leaf_dir(path))


def check(path: Path, args) -> Checked:
    return _checked(leaf_dir(path), getattr(args, "format", "text"), getattr(args, "ruleset", None))


def _checked(path: Path, form: str, ruleset: str | None = None) -> Checked:
    """suite check's text or JSON of a kv_cache leaf (suite.kv_cache.check assesses it)."""
    from suite import files
    from suite import terminal as width
    from suite.report import findings as report
    from suite.report.escape import terminal

    from suite.kv_cache.check import assess

    from suite.kv_cache.check import voice

    a = assess(path, ruleset)         # a round not covering kv_cache: refused (exit 2)
    v, said = a["verdict"], voice(a)
    compliant = said.compliant
    if form == "json":
        out = files.dump_json({"kind": "kv_cache", "path": str(path), "ruleset": a["ruleset"], "verdict": v, "compliant": compliant,
                               "miniature": said.miniature, "verdict_line": said.line(),
                               "findings": [f.to_dict() for f in a["findings"]], "options": a["derived"],
                               "rederived": a["statements"]}, indent=2)
    else:
        lines = [f"suite check {path}", "", f"kv_cache leaf: {len(a['leaf'].ranks)} rank files, "
                 f"{len(a['leaf'].rank_dirs)} trials, division {a['facts']['kvcache.division']}, ruleset {a['ruleset']}"]
        lines = [terminal(x) for x in lines] + report.finding_lines(a["findings"], grouped=False)
        lines += ["", f"{len(a['findings'])} findings", said.line()]
        out = "\n".join(y for x in lines for y in width.wrap(terminal(x))) + "\n"      # 100 columns
    return Checked(out, said.line(), said.code, v, said)



def metrics(path: Path, form: str) -> int:
    from suite import files
    from suite.kv_cache import check as kvcheck
    from suite.kv_cache import page as kvcache_page
    from suite.report.escape import terminal_lines

    doc = kvcheck.metrics(leaf_dir(path))
    print(files.dump_json(doc, indent=2), end="") if form == "json" else print(terminal_lines(kvcache_page.text(doc)))
    return ExitCode.OK


def report_page(path: Path, args):
    from suite.harness.storagerun import refuse_storage_nodes
    from suite.kv_cache import check as kvcheck
    from suite.kv_cache import page as kvcache_page

    refuse_storage_nodes(path, args)
    built = kvcache_page.build(kvcheck.metrics(leaf_dir(path)))
    host = kvcache_page.host_section(leaf_dir(path))
    built.sections += [host] if host else []
    return built


def table_rows(path: Path) -> list[tuple[str, dict]]:
    """The published kv_cache results table's row of the leaf at `path`, with our verdict."""
    from suite.kv_cache import check as kvcheck
    from suite.kv_cache import figures

    leaf = leaf_dir(path)
    a = kvcheck.assess(leaf)
    model = (a["leaf"].metadata or {}).get("model")
    return [("kv_cache", {**figures.table_row(a["leaf"]), "verdict": a["verdict"], "findings": len(a["findings"]),
                          "path": str(leaf), "model": model if isinstance(model, str) else ""})]


def measured(path: Path) -> list:
    from suite.kv_cache import compared

    return compared.measured(leaf_dir(path))


def listing() -> str:
    return ("KV-cache offload (suite run --workload kv-cache --cache-dir D [--option 1|2|3|all] [--trials 3] "
            "[--duration 300] --accelerators RANKS): options 1 llama3.1-8b 200 users, 2 llama3.1-8b 100 users "
            "CPU 4 GB, 3 llama3.1-70b-instruct 70 users")


KIND = Kind(
    name="kv_cache",
    run=run,
    recognises=recognises,
    check=check,
    metrics=metrics,
    report_page=report_page,
    table_rows=table_rows,
    result_files=("option_1", "option_2", "option_3"),
    takes="result",
    measured=measured,
    options=Options(add_run=add_run_arguments, run=(*RUN_OPTIONS, "accelerators", "division", "hosts", "launcher", "memory_limit", "allow_no_cache_drop",
                 "no_cache_drop", "seed")),
    workloads=Workloads(listing=listing, schema="kvcache-workload", shown="kv-cache"))
