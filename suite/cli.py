"""The `suite` command line: argparse subcommands, one cmd_<name>(args) -> int each.

Heavy libraries are imported inside the commands so `suite --help` is instant.
"""

import argparse
import os
import shutil
import sys
from pathlib import Path

from suite import __version__
from suite.cliargs import (Parser, _args_datagen, _args_datasize, _args_sizing, _args_sweep, _engine_arg,
                           _workload_args, non_negative_float, positive_int, size, workload_names)
from suite.errors import ExitCode, SuiteError
from suite.rules import rulesets
from suite.runscope import DATASIZE_OPTIONS, record_defaults, refuse_unused

# --------------------------------------------------------------------------- commands


def cmd_list(args) -> int:
    from suite.storage import workloads
    from suite.report import text

    resolved = [workloads.resolve(n, a) for n in workloads.names() for a in workloads.accelerators(n)]
    print(text.workloads_table(resolved))
    names = workloads.checkpoint_names()   # llama3-*: MLPerf Storage v2.0 checkpointing
    if names:
        print("\nCheckpointing (suite run --workload NAME --accelerators N --checkpoints-read 0, then "
              "--checkpoints-write 0): " + ", ".join(names))
    from suite.tpcxai import usecase
    from suite.tpcxai.registry import Registry

    print("\nTPCx-AI (suite run --workload tpcx-ai --scale-factor SF):")
    print(text.table(usecase.list_rows(Registry()), ["use case", "name", "task", "algorithm", "metric", "threshold"]))
    return ExitCode.OK


def cmd_datasize(args) -> int:
    import json

    from suite.report import text
    from suite.storage import datasize, workloads

    refuse_unused(args, DATASIZE_OPTIONS)

    if args.workload.startswith("llama3-"):   # checkpointing: bytes and files of the checkpoints
        from suite.report import checkpoint_text
        from suite.storage.checkpoint import command as checkpoint

        checkpoint.refuse_for_checkpointing(args)
        d = checkpoint.sizing(args.workload, args.accelerators, args.mode, args.client_hosts, args.host_memory)
        print(json.dumps(d, indent=2, sort_keys=True) if args.format == "json" else checkpoint_text.datasize(d))
        return ExitCode.OK
    workload = workloads.resolve(args.workload, args.accelerator_type)
    result = datasize.compute(workload, args.accelerators, args.client_hosts, args.host_memory, args.ruleset)
    next_command = (f"suite datagen --workload {workload.name} --accelerator-type {workload.accelerator} "
                    f"--files {result.num_files} --data-dir DATA_DIR")
    if args.format == "json":
        print(json.dumps({**result.to_dict(), "next_command": next_command}, indent=2, sort_keys=True))
    else:
        print(text.datasize(result, next_command))
    return ExitCode.OK


def cmd_datagen(args) -> int:
    from suite.storage import datagen, datasize, workloads
    from suite.report.progress import Progress, summary

    params = workloads.parse_params(args.param)
    workload = workloads.resolve(args.workload, args.accelerator_type, params)
    extra = {"params": params}
    if args.files and (args.accelerators or args.host_memory):
        raise SuiteError("--files: expected either --files or --accelerators with --host-memory, got both")
    if args.accelerators or args.host_memory:
        if not (args.accelerators and args.host_memory):
            raise SuiteError("--accelerators/--host-memory: expected both (the dataset is sized from them), got one")
        sized = datasize.compute(workload, args.accelerators, args.client_hosts, args.host_memory, args.ruleset)
        num_files, extra["datasize"] = sized.num_files, sized.to_dict()
    elif args.files or workload.num_files_train:
        if args.ruleset or args.client_hosts != 1:
            raise SuiteError("--client-hosts/--ruleset: expected only with --accelerators and --host-memory (they "
                             f"size the dataset), got {args.client_hosts}/{args.ruleset} with a file count")
        num_files = args.files or workload.num_files_train
    else:
        raise SuiteError("dataset size: expected --files N or --accelerators N --host-memory SIZE, got neither")
    if args.engine == "dlio":       # the reference code's own generator (storage/run/dlio.py)
        from suite.storage.run import dlio
        if args.seed is not None:
            raise SuiteError(f"--seed: expected only with --engine suite (DLIO generates with its own seed), "
                             f"got {args.seed}")
        return dlio.datagen(args, workload, num_files)
    seed = workload.seed if args.seed is None else args.seed
    extra["command"] = ["suite", "datagen", "--workload", workload.name, "--accelerator-type", workload.accelerator,
                        "--files", str(num_files), "--seed", str(seed), "--data-dir", str(args.data_dir),
                        *[f"--param={p}" for p in args.param or []]]
    world = datagen.mpi_world()
    rank0 = world is None or world[1] == 0
    with Progress(num_files, enabled=rank0) as progress:
        log = datagen.generate(workload, args.data_dir, num_files, args.processes, seed, progress, extra)
    if rank0:
        print(summary(log, args.data_dir / datagen.LOG_NAME))
    return ExitCode.OK

def cmd_run(args) -> int:
    from suite.storage.run import launch

    refuse_unused(args)
    if args.workload == "tpcx-ai":   # TPCx-AI's options and run live in suite/tpcxai/command.py
        from suite.tpcxai import command as tpcxai

        if args.engine != "suite":
            raise SuiteError(f"--engine {args.engine}: expected suite for tpcx-ai (DLIO runs the storage workloads)")
        return tpcxai.run(args)
    if args.accelerators is None:
        raise SuiteError(f"--accelerators: expected a number of simulated accelerators for {args.workload}, got none")
    from suite.storage.checkpoint import command as checkpoint

    if args.workload.startswith("llama3-"):   # checkpointing (MLPerf Storage v2.0): suite/storage/checkpoint/
        return checkpoint.run(args)
    return launch.run(launch.Options(
        workload=args.workload, accelerators=args.accelerators, accelerator_type=args.accelerator_type,
        data_dir=args.data_dir, results_dir=args.results_dir, runs=args.runs, memory_limit=args.memory_limit,
        division=args.division, ruleset=args.ruleset, params=args.param or [],
        hosts=args.hosts.split(",") if args.hosts else None, hostfile=args.hostfile,
        allow_no_cache_drop=args.allow_no_cache_drop, no_cache_drop=args.no_cache_drop,
        read_delay_s=args.debug_read_delay, launcher=args.launcher, engine=args.engine))


STORAGE_FILES = ("summary.json", "results.json", "per_epoch_stats.json")


def _source(path):
    """("tpcx-ai", file or run dir) or ("storage", directory) for `suite metrics` and `suite report`."""
    from suite.tpcxai import fdr
    from suite.errors import ResultError, expected_got

    if not path.exists():
        raise ResultError(expected_got(path, "path", "an existing file or directory", "nothing there"))
    if path.is_dir():
        return ("tpcx-ai" if (path / fdr.RUN_FILE).is_file() else "storage"), path
    if path.name in STORAGE_FILES:       # one run's file names its run directory
        return "storage", path.parent
    return "tpcx-ai", path               # fdr.load refuses what is not a data file


def cmd_metrics(args) -> int:
    from suite import files
    from suite.report.escape import terminal_lines

    from suite.tpcxai import fdr
    from suite.errors import ResultError
    from suite.report import metrics_text

    kind, path = _source(args.path)
    if kind == "tpcx-ai":
        data = fdr.load(path)
        result = data.compute()
        if args.format == "json":
            doc = {"kind": data.doc["kind"], "source": str(data.path), "kit_version": data.doc["kit_version"],
                   "published": data.published, **result.to_dict()}
            print(files.dump_json(doc, indent=2), end="")
        else:
            print(terminal_lines(metrics_text.tpcxai(data, result)))
        if not result.complete:
            raise ResultError(result.why_incomplete(str(data.path)))
        return ExitCode.OK
    from suite.check import checkpoint

    if checkpoint.is_result(path):       # llama3-* checkpointing: write/read bandwidth per run and per rank
        from suite.report import checkpoint_text

        summary = checkpoint_text.summarise(path)
        print(files.dump_json(summary, indent=2), end="") if args.format == "json" else \
            print(checkpoint_text.metrics(summary))
        return ExitCode.OK
    from suite.report import aggregate

    summary = aggregate.summarise(path)
    if args.format == "json":
        print(files.dump_json(summary, indent=2), end="")
    else:
        print(terminal_lines(metrics_text.storage(summary)))
    return ExitCode.OK


def cmd_report(args) -> int:
    from datetime import datetime, timezone

    from suite.report.outdir import report_dir
    from suite.tpcxai import fdr

    out = args.out
    kind, path = _source(args.path)
    with report_dir(out, force=args.force) as tmp:
        # matplotlib keeps a font cache: keep it in the report's temp dir, removed with it
        mpl_dir = None
        if "matplotlib" not in sys.modules and "MPLCONFIGDIR" not in os.environ:
            mpl_dir = tmp / ".matplotlib"
            os.environ["MPLCONFIGDIR"] = str(mpl_dir)
        try:
            from suite.report import content, export

            from suite.sweep import result as sweep_result

            if sweep_result.is_sweep(path):      # a `suite sweep` dir (or its sweep.json): the sweep page
                from suite.report import sweep_page

                page = sweep_page.build(sweep_result.load(path), path, args.storage_nodes)
            elif args.storage_nodes != 1:
                raise SuiteError(f"--storage-nodes: expected only with a sweep dir (its sizing table), got "
                                 f"{args.storage_nodes} for {path}")
            elif kind == "tpcx-ai":
                data = fdr.load(path)
                page = content.build_tpcxai(data, data.compute())
            else:
                from suite.check import checkpoint
                from suite.check.checker import check
                from suite.report import aggregate

                if checkpoint.is_result(path):          # llama3-* checkpointing results
                    from suite.report import checkpoint_text

                    page = checkpoint_text.build_page(checkpoint_text.summarise(path), check(path, ruleset="auto"))
                else:
                    summary = aggregate.summarise(path)
                    page = content.build_storage(summary, check(path, ruleset="auto"))
            stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            written = export.write_report(page, tmp, f"suite {__version__} report, {stamp}")
        finally:
            if mpl_dir:
                os.environ.pop("MPLCONFIGDIR", None)
                shutil.rmtree(mpl_dir, ignore_errors=True)
    from suite.report.escape import terminal

    print(terminal(f"suite report: wrote {len(written)} files to {out}: {out / 'index.html'} (open it in a browser), "
                   f"{out / 'report.md'}, " + ", ".join(p.name for p in written if p.suffix in (".csv", ".parquet"))))
    return ExitCode.OK


def cmd_check(args) -> int:
    from pathlib import Path

    from suite import files
    from suite.check.checker import check
    from suite.report import findings as report

    output = Path(args.output) if args.output else None
    if output is not None:  # refuse before doing the work: never a surprise location
        if output.is_dir():
            raise SuiteError(f"--output {output}: expected a file path, got a directory")
        if not output.parent.is_dir():
            raise SuiteError(f"--output {output}: expected an existing directory {output.parent}, got none")
    from suite.tpcxai import check as tpcxai_check

    if tpcxai_check.is_result(args.path):
        if args.ruleset not in (None, "auto"):
            raise SuiteError(f"--ruleset: expected none for a TPCx-AI result (rules/tpcx-ai/), got {args.ruleset}")
        return _check_tpcxai(args, output)
    result = check(args.path, args.ruleset)
    if args.format == "json":
        out = report.json_text(result)
    else:
        out = report.text(result, result.rule_messages())
    if output is None:
        sys.stdout.write(out)
    else:
        try:
            files.write_atomic(output, out)
        except OSError as exc:
            raise SuiteError(f"--output {output}: cannot write: {exc.strerror or exc}") from None
        print(f"{report.summary_line(result)}; wrote {output}")
    return ExitCode.OK if result.compliant else ExitCode.FAILED


def _check_tpcxai(args, output) -> int:
    """`suite check` on a TPCx-AI run: the rules of rules/tpcx-ai/ over tpcxai-result.json."""
    from suite import files
    from suite.report.escape import terminal
    from suite.tpcxai import check as tpcxai_check

    verdict, findings, doc = tpcxai_check.verdict(args.path)
    if args.format == "json":
        out = files.dump_json({"kind": "tpcx-ai", "path": str(args.path), "verdict": verdict,
                               "compliant": not findings, "aiucpm": (doc.get("metric") or {}).get("aiucpm"),
                               "findings": [f.to_dict() for f in findings]}, indent=2)
    else:
        lines = [f"suite check {args.path}", "", f"{verdict.upper():<8} TPCx-AI SF {doc.get('scale_factor')}, "
                 f"{doc.get('streams')} streams, AIUCpm {(doc.get('metric') or {}).get('aiucpm')}"]
        lines += [f"  {f.effect:<7} {f.severity:<7} {f.message}" for f in findings]
        lines += ["", f"verdict: {verdict.upper()} ({'compliant' if not findings else 'not compliant'}); "
                      f"{len(findings)} findings"]
        out = "\n".join(terminal(line) for line in lines) + "\n"
    if output is None:
        sys.stdout.write(out)
    else:
        files.write_atomic(output, out)
        print(f"verdict: {verdict.upper()}; wrote {output}")
    return ExitCode.OK if not findings else ExitCode.FAILED


def cmd_engine(args) -> int:
    from suite.engines import cli as engine_cli   # standard library only: CI runs it before our dependencies

    return engine_cli.run(args)


def cmd_sweep(args) -> int:
    from suite.sweep import search

    if bool(args.accelerators) == bool(args.find_max):
        raise SuiteError("--accelerators/--find-max: expected one of them (a list of N, or a search for the "
                         f"largest N at the AU threshold), got {'both' if args.find_max else 'neither'}")
    if not args.find_max and (args.start, args.max_accelerators) != (1, 64):
        raise SuiteError(f"--start/--max-accelerators: expected only with --find-max, got {args.start}/"
                         f"{args.max_accelerators} with --accelerators")
    if args.start > args.max_accelerators:
        raise SuiteError(f"--start: expected at most --max-accelerators {args.max_accelerators}, got {args.start}")
    return search.run(search.SweepOptions(
        workload=args.workload, accelerator_type=args.accelerator_type, accelerators=args.accelerators,
        find_max=args.find_max, ceiling=args.ceiling, data_dir=args.data_dir, results_dir=args.results_dir,
        runs=args.runs, start=args.start, max_accelerators=args.max_accelerators, memory_limit=args.memory_limit,
        division=args.division, ruleset=args.ruleset, params=args.param or [],
        allow_no_cache_drop=args.allow_no_cache_drop))


def cmd_sizing(args) -> int:
    from suite.report import sweep_text
    from suite.storage import workloads
    from suite.storage.dlio_output import mem_total_bytes
    from suite.sweep import result, sizing

    doc = result.load(args.source) if args.source else None
    # a sweep run with --param (a smaller record, another compute time): size with the same workload
    params = workloads.parse_params(doc["params"]) if doc else {}
    workload = workloads.resolve(args.workload, args.accelerator_type, params)
    memory = args.host_memory or mem_total_bytes()
    out = sizing.sizing(workload, args.accelerators, args.client_hosts, memory, args.ruleset, doc)
    print(sweep_text.sizing(out, args.host_memory is None))
    return ExitCode.OK


def cmd_submission(args) -> int:
    from suite.submission import cli as submission_cli

    return submission_cli.run(args)


COMMANDS = {
    "list": cmd_list,
    "datasize": cmd_datasize,
    "datagen": cmd_datagen,
    "run": cmd_run,
    "check": cmd_check,
    "metrics": cmd_metrics,
    "report": cmd_report,
    "submission": cmd_submission,
    "engine": cmd_engine,
    "sweep": cmd_sweep,
    "sizing": cmd_sizing,
}

# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="suite",
        description="MLPerf Storage-style and TPCx-AI-style benchmarks under enforced rules.")
    parser.add_argument("--version", action="version", version=f"suite {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    names = workload_names()

    _args_list(sub)
    _args_datasize(sub, names)
    _args_datagen(sub, names)
    _args_run(sub, names)
    _args_metrics(sub)
    _args_report(sub)
    _args_check(sub)
    training = [n for n in names if not n.startswith("llama3-")]   # sweep/sizing: training workloads only
    _args_sweep(sub, training)
    _args_sizing(sub, training)
    from suite.submission import cli as submission_cli  # its own options, in its own package

    submission_cli.add_parser(sub)
    from suite.engines import cli as engine_cli

    engine_cli.add_parser(sub)
    return parser


def _args_list(sub) -> None:
    p = sub.add_parser("list", help="list the workloads and their accelerators")
    p.add_argument("what", nargs="?", choices=["workloads"], default="workloads")


def _args_run(sub, names) -> None:
    from suite.storage.run.prepare import DEFAULT_RUNS

    p = sub.add_parser("run", help="run a workload: one MPI rank per simulated accelerator, rules enforced",
                       description="Run a storage workload under the rules: cache drop before each run, memory "
                                   "cgroup, closed-division refusals; writes DLIO-compatible results and "
                                   "results.json with the evidence. Without --data-dir: the miniature default.")
    _workload_args(p, [*names, "tpcx-ai"])
    p.add_argument("--accelerators", type=positive_int, help="simulated accelerators (MPI ranks; storage workloads)")
    p.add_argument("--data-dir", help="the dataset (suite datagen); omitted: the embedded miniature, "
                                      "generated on first use under ./results/data")
    p.add_argument("--results-dir", help="default ./results/<workload>_<accel>-<N>acc-<UTC time>")
    p.add_argument("--runs", type=positive_int, default=None, help=f"runs into run-1..run-N (default {DEFAULT_RUNS})")
    p.add_argument("--memory-limit", type=size, default=None,
                   help='run the ranks in a memory cgroup of this size ("4GiB"); the dataset-size rule uses it')
    p.add_argument("--division", choices=["closed", "open"], default="closed")
    p.add_argument("--ruleset", type=rulesets.argtype(), default=None, metavar="RULESET")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="workload override, e.g. reader.read_threads=8 (repeatable)")
    p.add_argument("--hosts", help="comma-separated client hosts (MPI across hosts)")
    p.add_argument("--hostfile", help="an MPI host file, one host per line")
    p.add_argument("--launcher", metavar="PATH",
                   help="how to reach the hosts, called as ssh is (default ssh); mpiexec gets it as "
                        "-launcher-exec. tools/netns-launcher: the namespace hosts of tools/netns-hosts.sh")
    p.add_argument("--allow-no-cache-drop", action="store_true",
                   help="proceed where the page cache cannot be dropped (the run is non-compliant)")
    p.add_argument("--no-cache-drop", action="store_true",
                   help="open division only: do not drop the page cache (measures from memory; non-compliant)")
    p.add_argument("--debug-read-delay", type=non_negative_float, default=0.0, help=argparse.SUPPRESS)
    _engine_arg(p)
    from suite.tpcxai.command import add_run_arguments

    add_run_arguments(p)
    from suite.storage.checkpoint.command import add_run_arguments as add_checkpoint_arguments

    add_checkpoint_arguments(p)
    record_defaults(p)


def _args_metrics(sub) -> None:
    p = sub.add_parser("metrics", help="the published numbers of storage results or a TPCx-AI result/FDR file",
                       description="Storage results: AU, samples/s and MiB/s per run and over runs. "
                                   "TPCx-AI: AIUCpm@SF and $/AIUCpm@SF from a run or an FDR data file "
                                   "(.yaml, .json or .csv).")
    p.add_argument("path", type=Path, metavar="PATH", help="results directory, or TPCx-AI FDR data file")
    p.add_argument("--format", choices=["text", "json"], default="text")


def _args_report(sub) -> None:
    p = sub.add_parser("report", help="an HTML page (+ Markdown, CSV, parquet) of storage or TPCx-AI results",
                       description="Writes index.html (self-contained), report.md, plots/*.png, runs.csv and "
                                   "runs.parquet (and use_cases.* for TPCx-AI) into --out, and nowhere else.")
    p.add_argument("path", type=Path, metavar="PATH", help="results directory, a `suite sweep` dir, or TPCx-AI FDR data file")
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="directory to write the report into: new, empty, or an earlier report (replaced whole)")
    p.add_argument("--force", action="store_true", help="replace a non-empty --out that is not an earlier report")
    p.add_argument("--storage-nodes", type=positive_int, default=1, metavar="K",
                   help="a sweep's sizing table: accelerators per storage node for K storage nodes (default 1)")


def _args_check(sub) -> None:
    p = sub.add_parser("check", help="check runs, results dirs or submission trees against the rules",
                       description="Check a run, a benchmark with its runs, a `suite run` results dir or a "
                                   "submission tree against rules/<ruleset>/. Exit 0 compliant, 1 not, 2 unusable.")
    p.add_argument("path", metavar="PATH", help="a run, a benchmark dir, a results dir or a submission tree")
    p.add_argument("--ruleset", type=rulesets.argtype("auto"), default="auto", metavar="RULESET",
                   help="default: detected from the files")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--output", metavar="FILE", default=None,
                   help="write the report to FILE (atomically) instead of stdout")


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(COMMANDS[args.command](args))
    except SuiteError as exc:       # one line whatever the input held: control characters made visible
        from suite.report.escape import terminal
        print(f"suite {args.command}: error: {terminal(exc)}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print(f"suite {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `suite list workloads | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
