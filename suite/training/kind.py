"""The training kind: MLPerf Storage's training workloads (`benchmark: training`: unet3d, resnet50,
cosmoflow, bert), run by suite.training.run (or DLIO), checked by suite.check, summarised by
suite.training.aggregate. Its results are the catch-all: a directory no other kind recognises."""

from __future__ import annotations

import argparse
from pathlib import Path

from suite.errors import ExitCode, SuiteError
from suite.benchmark import Checked, Claim, Kind, Options, Sweeps, Workloads
from suite.training.workloads import SCHEMA
from suite.harness.storagerun import STORAGE_FILES, STORAGE_RUN_OPTIONS, refuse_storage_nodes, storage_dir


def add_run_arguments(p) -> None:
    """The storage run options (checkpointing uses them too) and the training-only ones."""
    from suite.cliargs import non_negative_float, positive_int, size
    from suite.rules import rulesets
    p.add_argument("--accelerators", type=positive_int, help="simulated accelerators (MPI ranks; storage workloads)")
    p.add_argument("--runs", type=positive_int, default=None, help="measured runs into run-1..run-N (default: the ruleset's "
                   "runs.count; where its runs.warmup_in_series, warm-up runs come first, from run-1, left out of the "
                   "figures)")
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
    p.add_argument("--debug-decode-delay", type=non_negative_float, default=0.0, help=argparse.SUPPRESS)


def run(args) -> int:
    from suite.training.run import launch

    if args.accelerators is None:
        raise SuiteError(f"--accelerators: expected a number of simulated accelerators for {args.workload}, got none")
    if args.engine not in ("suite", "dlio"):
        raise SuiteError(f"--engine {args.engine}: expected suite or dlio for {args.workload}, got {args.engine}")
    return launch.run(launch.Options(
        workload=args.workload, accelerators=args.accelerators, accelerator_type=args.accelerator_type,
        data_dir=args.data_dir, results_dir=args.results_dir, runs=args.runs, memory_limit=args.memory_limit,
        division=args.division, ruleset=args.ruleset, params=args.param or [],
        hosts=args.hosts.split(",") if args.hosts else None, hostfile=args.hostfile,
        allow_no_cache_drop=args.allow_no_cache_drop, no_cache_drop=args.no_cache_drop,
        read_delay_s=args.debug_read_delay, decode_delay_s=args.debug_decode_delay, launcher=args.launcher,
        engine=args.engine), judge=judge)


def judge(results_dir) -> tuple:
    """`suite check` on a finished run set: (compliant, its summary with the first findings, its voice
    (suite.rules.verdict; None where the check could not run)). The run's last line is the checker's
    verdict line: `run` and `check` agree (issue 24, class 8; issue 38)."""
    from suite.training.check.checker import check
    from suite.errors import SuiteError
    from suite.report import findings as report

    try:
        result = check(results_dir, ruleset="auto")
    except SuiteError as exc:
        return False, f"suite check: {exc}", None
    every = result.all_findings()
    why = "; ".join(dict.fromkeys(f"{f.field}: {f.rule_id}" for f in every if f.effect != "closed"))
    return (result.compliant, "suite check " + report.summary_line(result) + (f" ({why})" if why and not result.compliant else ""),
            result.voice())


def datasize(args) -> int:
    import json

    from suite.report import text
    from suite.training import datasize as sizing
    from suite.training import workloads

    workload = workloads.resolve(args.workload, args.accelerator_type)
    result = sizing.compute(workload, args.accelerators, args.client_hosts, args.host_memory, args.ruleset)
    next_command = (f"suite datagen --workload {workload.name} --accelerator-type {workload.accelerator} "
                    f"--files {result.num_files} --data-dir DATA_DIR")
    if args.format == "json":
        print(json.dumps({**result.to_dict(), "next_command": next_command}, indent=2, sort_keys=True))
    else:
        print(text.datasize(result, next_command))
    return ExitCode.OK


def check_storage(path, args) -> Checked:
    """suite.training.check over the benchmark nodes under a run, a results dir or a tree, or over
    `args.nodes`: the tree a layout discovered, whose benchmark nodes it hands over (suite.kinds.tree:
    suite.layouts.benchdirs.check; args.format "result": the structured result for the layout to combine,
    no report). `args.exclude_dirs`: other kinds' folders in a mixed tree, never walked."""
    from suite.training.check.checker import check
    from suite.report import findings as report

    result = check(path, args.ruleset, getattr(args, "exclude_dirs", ()), getattr(args, "nodes", None))
    return report.checked(result, args.format)


def metrics(path: Path, form: str) -> int:
    from suite import files
    from suite.training import aggregate
    from suite.training import page
    from suite.report.escape import terminal_lines

    summary = aggregate.summarise(storage_dir(path))
    verdicts = check_verdicts(storage_dir(path))
    for b in summary["benchmarks"]:             # the headline carries suite check's verdict and its labels
        b["verdict"], b["labels"] = verdicts.get(_real(b["path"]), ("unknown (suite check found no verdict)", []))
    if form == "json":
        print(files.dump_json(summary, indent=2), end="")
    else:
        print(terminal_lines(page.text(summary)))
    return ExitCode.OK


def _real(path) -> str:
    import os
    return os.path.realpath(str(path))


def check_verdicts(path: Path) -> dict[str, tuple[str, list]]:
    """{benchmark dir: ('CLOSED (compliant; 0 finding(s))' / 'INVALID NOT PUBLISHABLE (not compliant; 3 finding(s))',
    its headline labels: MINIATURE, OPEN, INVALID, NOT PUBLISHABLE)} from suite check itself."""
    from suite.training.check.checker import check
    from suite.errors import SuiteError

    try:
        result = check(path, ruleset="auto")
    except SuiteError as exc:
        return {_real(path): (f"unknown (suite check: {exc})", [])}
    out = {}
    for br in result.benchmarks:
        voice = br.voice()
        out[_real(br.benchmark.path)] = (f"{voice.tags()} ({'compliant' if br.compliant else 'not compliant'}; "
                                         f"{len(br.findings)} finding(s))", list(voice.labels()))
    return out


def report_page(path: Path, args):
    """A results dir's page, or a `suite sweep` dir's (or its sweep.json's) sweep page."""
    from suite.training.sweep import result as sweep_result

    if sweep_result.is_sweep(path):
        from suite.training.sweep import page as sweep_page

        return sweep_page.build(sweep_result.load(path), path, args.storage_nodes)
    refuse_storage_nodes(path, args)
    from suite.training.check.checker import check
    from suite.training import aggregate
    from suite.training import page

    path = storage_dir(path)
    summary = aggregate.summarise(path)
    whole = getattr(args, "for_check", None)       # suite check's own result (its tree findings the layout's)
    result = whole(path) if whole is not None else None
    built = page.build(summary, result if result is not None else check(path, ruleset="auto"))
    built.sections += page.host_sections(summary)
    return built


def listing() -> str:
    from suite.report import text
    from suite.training import workloads

    return text.workloads_table([workloads.resolve(n, a) for n in workloads.names() for a in workloads.accelerators(n)])


def datagen(args) -> int:
    from suite.training.data import command

    return command.datagen(args)


def sweep(args) -> int:
    from suite.training.sweep import command

    return command.sweep(args)


def sizing(args) -> int:
    from suite.training.sweep import command

    return command.sizing(args)


def recognises(path: Path) -> int:
    """The catch-all: any directory no other kind claims more specifically, and a storage run's own
    files (TPCx-AI takes any other file)."""
    from suite.harness.storagerun import SWEEP_FILE

    path = Path(path)
    return Claim.ANY if path.is_dir() or path.name in (*STORAGE_FILES, SWEEP_FILE) else Claim.NONE


def measured(path: Path):
    from suite.training import compared as training_figures

    return training_figures.measured(path)


def reference_judge(node, org, system, round_name: str, root, rules_too: bool = True):
    """A benchmark node of the reference tool's leaves a layout found: suite.training.reference.judge."""
    from suite.training.reference import judge

    return judge.judge(node, org, system, round_name, root, rules_too)


KIND = Kind(
    name="training",
    reference_judge=reference_judge,
    measured=measured,
    runs_on="accelerators",
    run=run,
    recognises=recognises,
    result_files=STORAGE_FILES,
    check=check_storage,
    metrics=metrics,
    report_page=report_page,
    datasize=datasize,
    datagen=datagen,
    sweeps=Sweeps(run=sweep, sizing=sizing),
    options=Options(add_run=add_run_arguments, run=(*STORAGE_RUN_OPTIONS, "param", "launcher", "accelerator_type", "debug_read_delay", "debug_decode_delay"), datasize=("accelerator_type",)),
    workloads=Workloads(listing=listing, schema=SCHEMA))
