"""The `suite` command line: argparse subcommands, one cmd_<name>(args) -> int each.

Heavy libraries are imported inside the commands so `suite --help` is instant.
"""

import argparse
import os
import sys
from pathlib import Path

from suite import __version__
from suite.errors import ExitCode, SuiteError

# --------------------------------------------------------------------------- validators


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2), not the whole usage block."""

    def error(self, message):
        self.exit(ExitCode.BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def size(text: str) -> int:
    from suite.sizes import parse_size

    try:
        return parse_size(text)
    except SuiteError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def workload_names() -> list[str]:
    from suite.files import data_dir

    return sorted(p.name[:-5] for p in os.scandir(data_dir("workloads")) if p.name.endswith(".yaml"))


# --------------------------------------------------------------------------- commands


def cmd_list(args) -> int:
    from suite import workloads
    from suite.report import text

    resolved = [workloads.resolve(n, a) for n in workloads.names() for a in workloads.accelerators(n)]
    print(text.workloads_table(resolved))
    return ExitCode.OK


def cmd_datasize(args) -> int:
    import json

    from suite import datasize, workloads
    from suite.report import text

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
    from suite import datagen, datasize, workloads
    from suite.report.datagen import Progress, summary

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
        num_files = args.files or workload.num_files_train
    else:
        raise SuiteError("dataset size: expected --files N or --accelerators N --host-memory SIZE, got neither")
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
    from suite import runner

    return runner.run(runner.Options(
        workload=args.workload, accelerators=args.accelerators, accelerator_type=args.accelerator_type,
        data_dir=args.data_dir, results_dir=args.results_dir, runs=args.runs, memory_limit=args.memory_limit,
        division=args.division, ruleset=args.ruleset, params=args.param or [],
        hosts=args.hosts.split(",") if args.hosts else None, hostfile=args.hostfile,
        allow_no_cache_drop=args.allow_no_cache_drop, no_cache_drop=args.no_cache_drop,
        read_delay_s=args.debug_read_delay))


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text}")
    return value


COMMANDS = {
    "list": cmd_list,
    "datasize": cmd_datasize,
    "datagen": cmd_datagen,
    "run": cmd_run,
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

    p = sub.add_parser("list", help="list the workloads and their accelerators")
    p.add_argument("what", nargs="?", choices=["workloads"], default="workloads")

    p = sub.add_parser("datasize", help="how many files a compliant dataset needs",
                       description="Size the dataset: max(5x host memory, the minimum-steps rule).")
    p.add_argument("--workload", required=True, choices=names)
    p.add_argument("--accelerator-type", default="h100", help="h100, a100 (v1.0/v2.0) or v100 (v0.5)")
    p.add_argument("--accelerators", type=positive_int, required=True, help="simulated accelerators in all")
    p.add_argument("--client-hosts", type=positive_int, default=1)
    p.add_argument("--host-memory", type=size, required=True, help='per host, with a unit: "128GiB" or "137.4GB"')
    p.add_argument("--ruleset", choices=["v0.5", "v1.0", "v2.0"], default=None,
                   help="default v1.0 (v0.5 for v100-only workloads)")
    p.add_argument("--format", choices=["text", "json"], default="text")

    p = sub.add_parser("datagen", help="write the training dataset in the workload's format",
                       description="Write D/train/img_<i>_of_<N>.<ext> (npz, TFRecord or hdf5) with seeded record "
                                   "sizes, in parallel (local processes or MPI ranks under mpiexec), resumably; "
                                   "D/generation_log.json records what was written.")
    p.add_argument("--workload", required=True, choices=names)
    p.add_argument("--accelerator-type", default="h100", help="h100, a100 (v1.0/v2.0) or v100 (v0.5)")
    p.add_argument("--data-dir", required=True, type=Path, help="the dataset goes to DATA_DIR/train")
    p.add_argument("--files", type=positive_int, help="number of training files (or size it with --accelerators)")
    p.add_argument("--accelerators", type=positive_int, help="size the dataset for this many accelerators")
    p.add_argument("--client-hosts", type=positive_int, default=1)
    p.add_argument("--host-memory", type=size, help='per host, with a unit: "128GiB" or "137.4GB"')
    p.add_argument("--ruleset", choices=["v0.5", "v1.0", "v2.0"], default=None)
    p.add_argument("--processes", type=positive_int, default=None,
                   help="local writer processes (default: the CPU count; 1 per rank under MPI)")
    p.add_argument("--seed", type=int, default=None, help="content and record-size seed (default: the workload's)")
    p.add_argument("--param", action="append", metavar="SECTION.KEY=VALUE",
                   help="workload override, e.g. dataset.format=hdf5 (open division); repeatable")
    p = sub.add_parser("run", help="run a workload: one MPI rank per simulated accelerator, rules enforced",
                       description="Run a storage workload under the rules: cache drop before each run, memory "
                                   "cgroup, closed-division refusals; writes DLIO-compatible results and "
                                   "results.json with the evidence. Without --data-dir: the miniature default.")
    p.add_argument("--workload", required=True, choices=names)
    p.add_argument("--accelerators", type=positive_int, required=True, help="simulated accelerators (MPI ranks)")
    p.add_argument("--accelerator-type", default="h100", help="h100, a100 (v1.0/v2.0) or v100 (v0.5)")
    p.add_argument("--data-dir", help="the dataset (suite datagen); omitted: the embedded miniature, "
                                      "generated on first use under ./results/data")
    p.add_argument("--results-dir", help="default ./results/<workload>_<accel>-<N>acc-<UTC time>")
    p.add_argument("--runs", type=positive_int, default=None, help="runs into run-1..run-N (default 5)")
    p.add_argument("--memory-limit", type=size, default=None,
                   help='run the ranks in a memory cgroup of this size ("4GiB"); the dataset-size rule uses it')
    p.add_argument("--division", choices=["closed", "open"], default="closed")
    p.add_argument("--ruleset", choices=["v0.5", "v1.0", "v2.0"], default=None)
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="workload override, e.g. reader.read_threads=8 (repeatable)")
    p.add_argument("--hosts", help="comma-separated client hosts (MPI across hosts)")
    p.add_argument("--hostfile", help="an MPI host file, one host per line")
    p.add_argument("--allow-no-cache-drop", action="store_true",
                   help="proceed where the page cache cannot be dropped (the run is non-compliant)")
    p.add_argument("--no-cache-drop", action="store_true",
                   help="open division only: do not drop the page cache (measures from memory; non-compliant)")
    p.add_argument("--debug-read-delay", type=non_negative_float, default=0.0, help=argparse.SUPPRESS)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(COMMANDS[args.command](args))
    except SuiteError as exc:
        print(f"suite {args.command}: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print(f"suite {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
