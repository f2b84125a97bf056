"""The vector_database kind: MLPerf Storage v3.0's vector-database benchmark (`benchmark:
vector_database`, workloads/vdb-*.yaml), run by suite.vector_database (DiskANN embedded, or Milvus), checked
by the vector_database.yaml of its round (rules/<round>/), measured and reported by suite.vector_database.page. Its results: the
leaves vector_database/<engine>/<INDEX>/{datagen,run}/<ts>/ (published ones too). docs/vector-database.md.
"""

from __future__ import annotations

import json
from pathlib import Path

from suite.errors import ExitCode, SuiteError
from suite.benchmark import Checked, Kind, Options, Workloads

RUN_OPTIONS = ("runs", "division", "allow_no_cache_drop", "no_cache_drop", "index", "uri", "clients",
               "query_duration", "query_count", "sweep", "dram_ratios", "beam_width")


def add_run_arguments(p) -> None:
    from suite.cliargs import non_negative_float, positive_int

    p.add_argument("--index", choices=["diskann", "hnsw"], default=None,
                   help="vector_database: the index type (diskann: the embedded DiskANN engine; hnsw: Milvus)")
    p.add_argument("--uri", default=None, help="vector_database --engine milvus: a running Milvus server's URI "
                                               "(default: the embedded Milvus 2.3.5 started by the run)")
    p.add_argument("--clients", type=positive_int, default=None,
                   help="vector_database: concurrent query clients (default: the workload's run.clients)")
    p.add_argument("--beam-width", type=positive_int, default=None,
                   help="vector_database --index diskann: DiskANN's beam width, the reads a query has in flight per "
                        "hop (default: the workload's search.beam_width)")
    p.add_argument("--query-duration", type=non_negative_float, default=None, metavar="SECONDS",
                   help="vector_database: a timed query phase of this many seconds (default: the workload's)")
    p.add_argument("--query-count", type=positive_int, default=None,
                   help="vector_database: a query phase of this many queries (default: the workload's)")
    p.add_argument("--sweep", action="store_true", default=False,
                   help="vector_database: the search_list (DiskANN) / ef (Milvus HNSW) ladder of the workload, each point "
                        "--runs runs after a cache clear, into R/<point>/; the recall-QPS Pareto front and the headline, "
                        "QPS at recall@10 >= the floor, in R/vdb_sweep.json")
    p.add_argument("--dram-ratios", default=None, metavar="PCTS",
                   help="vector_database: the query series at each DRAM:index ratio, e.g. 10,25,100 (percent of the "
                        "disk index), each held by a memory cgroup, into R/dram-<pct>pct/")


def run(args) -> int:
    from suite.report.escape import terminal_lines
    from suite.vector_database import run as vrun
    from suite.vector_database import page as show

    if args.index is None:
        raise SuiteError(f"--index: expected diskann or hnsw for {args.workload}, got none")
    engine = {"suite": None}.get(args.engine, args.engine)
    if engine == "dlio":
        raise SuiteError(f"--engine dlio: expected diskann or milvus for {args.workload}, got dlio")
    if getattr(args, "beam_width", None) and args.index != "diskann":
        raise SuiteError(f"--beam-width: expected only with --index diskann, got --index {args.index}")
    overrides = {k: getattr(args, k) for k in ("clients", "query_duration", "query_count", "uri", "beam_width")
                 if getattr(args, k, None)}
    opts = vrun.Options(
        workload=args.workload, index=args.index.upper(), engine=engine, data_dir=args.data_dir,
        results_dir=args.results_dir, runs=args.runs, clients=args.clients, duration_s=args.query_duration,
        query_count=args.query_count, uri=args.uri, beam_width=getattr(args, "beam_width", None), division=args.division,
        allow_no_cache_drop=args.allow_no_cache_drop, no_cache_drop=args.no_cache_drop, overrides=overrides)
    if getattr(args, "sweep", False) or getattr(args, "dram_ratios", None):
        return _ladder(args, opts)
    results_dir, runs = vrun.run(opts)
    summary = show.summarise(results_dir)
    print(terminal_lines(show.text(summary)), end="")
    return ExitCode.OK if summary["compliant"] else ExitCode.FAILED    # suite.rules.verdict: as its last line says


def _ladder(args, opts) -> int:
    """--sweep or --dram-ratios: every point's series, the table, the headline; exit 0 when a point reaches the floor."""
    from suite.report.escape import terminal_lines
    from suite.vector_database import dram, sweep

    if args.sweep and args.dram_ratios:
        raise SuiteError(f"--sweep: expected it or --dram-ratios, got both (--dram-ratios {args.dram_ratios})")
    pcts = dram.parse_percents(args.dram_ratios) if args.dram_ratios else None
    root, doc = sweep.run(opts, pcts)
    print(terminal_lines(sweep.text(doc) + f"{root / 'vdb_sweep.json'}\n"), end="")
    return ExitCode.OK if doc["headline"] else ExitCode.FAILED


def datagen(args) -> int:
    from suite.vector_database import dataset
    from suite.vector_database import workload

    for dest in ("files", "accelerators", "host_memory"):
        if getattr(args, dest, None):
            raise SuiteError(f"--{dest.replace('_', '-')}: expected only with a training workload, got "
                             f"{getattr(args, dest)} with {args.workload}")
    if getattr(args, "engine", "suite") != "suite" or getattr(args, "param", None):
        raise SuiteError(f"--engine/--param: expected neither with {args.workload} (its data is ours), got one")
    if not isinstance(args.data_dir, Path):
        raise SuiteError(f"--data-dir: expected a local directory for {args.workload} (its index files are what the "
                         f"storage serves), got {args.data_dir}")
    dataset.generate(workload.load(args.workload), args.data_dir, args.processes, args.seed)
    return ExitCode.OK


def recognises(path: Path) -> bool:
    """A leaf, a directory inside a vector_database/ tree, or a results dir holding one (and no
    training or checkpointing results beside it)."""
    from suite.vector_database import leaf as leaves

    path = Path(path)
    if path.is_file():
        path = path.parent
    if leaves.is_leaf(path) or "vector_database" in path.parts:
        return True
    if not path.is_dir():
        return False
    return _only_vdb_below(path)


def _only_vdb_below(path: Path, depth: int = 12) -> bool:
    """One walk (links not followed, bounded depth): a vector_database/ directory below `path` and no
    other registered kind's folder (a mixed tree is the tree check's: suite/kinds/tree.py). The names come
    from the registry (suite.layouts.pooled.KIND_FOLDERS): this kind names no other."""
    import os

    from suite.layouts.pooled import KIND_FOLDERS

    others = KIND_FOLDERS - {KIND.name}
    base, seen = len(path.parts), False
    for root, dirs, _ in os.walk(path, followlinks=False):
        if len(Path(root).parts) - base >= depth:
            dirs[:] = []
        for d in dirs:
            if d in others:
                return False
            seen = seen or d == "vector_database"
    return seen


def check(path: Path, args) -> Checked:
    from suite import files
    from suite.report.escape import terminal_lines
    from suite.vector_database import page as show

    s = show.summarise(path, args.ruleset)     # a round not covering vector_database: refused (exit 2)
    out = files.dump_json(s, indent=2) if args.format == "json" else terminal_lines(show.text(s))
    from suite.rules.verdict import Voice

    said = Voice(s["verdict"], s["miniature"], s["division"])
    return Checked(out, s["verdict_line"], said.code, s["verdict"], said)


def metrics(path: Path, form: str) -> int:
    from suite.report.escape import terminal_lines
    from suite.vector_database import page as show

    s = show.summarise(path)
    print(json.dumps(s, indent=2, sort_keys=True) if form == "json" else terminal_lines(show.text(s)), end="")
    return ExitCode.OK


def report_page(path: Path, args):
    from suite.harness.storagerun import refuse_storage_nodes
    from suite.vector_database import page as show

    refuse_storage_nodes(path, args)
    built = show.page(show.summarise(path))
    host = show.host_section(path)
    built.sections += [host] if host else []
    return built


def table_rows(path: Path) -> list[tuple[str, dict]]:
    from suite.vector_database import page as show

    return show.table_rows(path)


def measured(path: Path) -> list:
    from suite.vector_database import compared

    return compared.measured(path)


def listing() -> str:
    from suite.vector_database import workload

    return ("Vector database (suite datagen --workload NAME --data-dir D; suite run --workload NAME --index "
            "diskann|hnsw --data-dir D): " + ", ".join(workload.names()))


KIND = Kind(
    name="vector_database",
    run=run,
    recognises=recognises,
    check=check,
    metrics=metrics,
    report_page=report_page,
    datagen=datagen,
    table_rows=table_rows,
    measured=measured,
    result_files=("vector_database_*_metadata.json",),
    takes="tree",
    options=Options(add_run=add_run_arguments, run=RUN_OPTIONS),
    workloads=Workloads(listing=listing, schema="vdb-workload"))
