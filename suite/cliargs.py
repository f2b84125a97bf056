"""What the `suite` command line's parsers share: the one-line-error parser, the argument
validators (counts, seeds, sizes, seconds, accelerator lists) and the option groups several
subcommands take (workload, dataset sizing, engine), plus the sweep and sizing subcommands' options.
Kept apart from suite/cli.py (the commands) so neither passes 500 lines.
"""

import argparse
import os
from pathlib import Path

from suite.errors import ExitCode, SuiteError
from suite.rules import rulesets
from suite.runscope import record_defaults


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2), not the whole usage block."""

    def error(self, message):
        from suite.report.escape import terminal   # a bad value's control characters, made visible
        self.exit(ExitCode.BAD_INPUT, f"{self.prog}: error: {terminal(message)} (see {self.prog} --help)\n")


MAX_COUNT = 10**9  # counts (accelerators, hosts, files, runs, processes) beyond any real system


def positive_int(text: str) -> int:
    if len(text) > 12:  # int() of a 400-digit string is fine; the arithmetic after it is not
        raise argparse.ArgumentTypeError(f"expected a positive integer up to {MAX_COUNT:,}, got {text[:16]!r}...")
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if not 0 < value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"expected a positive integer up to {MAX_COUNT:,}, got {value}")
    return value


def seed_int(text: str) -> int:
    if len(text) > 12 or not text.strip().isdigit() or int(text) > 2**32 - 1:
        raise argparse.ArgumentTypeError(f"expected an integer 0..{2**32 - 1}, got {text[:16]!r}")
    return int(text)


def size(text: str) -> int:
    from suite.sizes import parse_size

    try:
        return parse_size(text)
    except SuiteError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def workload_names() -> list[str]:
    from suite.files import data_dir

    return sorted(p.name[:-5] for p in os.scandir(data_dir("workloads")) if p.name.endswith(".yaml"))


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text}")
    return value


def _engine_arg(p) -> None:
    p.add_argument("--engine", choices=["suite", "dlio"], default="suite",
                   help="suite (default: our runner) or dlio (the reference code, installed by "
                        "`suite engine install dlio`), under the same enforcement")


def _workload_args(p, names) -> None:
    p.add_argument("--workload", required=True, choices=names)
    p.add_argument("--accelerator-type", default="h100", help="h100, a100 (v1.0/v2.0) or v100 (v0.5)")


def _sizing_args(p, required: bool, accelerators_help: str, memory_help: str | None = None) -> None:
    """What the dataset-size rule needs: accelerators, client hosts, host memory, ruleset (memory_help:
    host memory optional, with that help -- `suite sizing` defaults it to MemTotal)."""
    p.add_argument("--accelerators", type=positive_int, required=required, help=accelerators_help)
    p.add_argument("--client-hosts", type=positive_int, default=1)
    p.add_argument("--host-memory", type=size, required=required and memory_help is None,
                   help=memory_help or 'per host, with a unit: "128GiB" or "137.4GB"')
    p.add_argument("--ruleset", type=rulesets.argtype(), default=None, metavar="RULESET",
                   help="default v1.0 (v0.5 for v100-only workloads)")


def accelerator_list(text: str) -> list[int]:
    """"1,2,4,8": positive counts, each once, in the order given."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > 64:
        raise argparse.ArgumentTypeError(f"expected at most 64 accelerator counts, got {len(parts)}")
    values = [positive_int(p) for p in parts]
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"expected each accelerator count once, got {text!r}")
    return values


def _args_sweep(sub, names) -> None:
    p = sub.add_parser("sweep", help="suite run over accelerator counts: throughput and AU vs N, find the maximum N",
                       description="Run the workload for each N (cache drop before each run, memory cgroup as "
                                   "configured) into one sweep dir with sweep.json; --find-max searches for the "
                                   "largest N at the AU threshold (doubling, then bisection) and confirms it with "
                                   "5 runs; --ceiling adds a page-cache run per N (open division). "
                                   "`suite report SWEEP_DIR` draws it.")
    _workload_args(p, names)
    p.add_argument("--accelerators", type=accelerator_list, metavar="N,N,...", help="the counts to run, e.g. 1,2,4,8")
    p.add_argument("--find-max", action="store_true", help="search for the largest N with AU >= the threshold")
    p.add_argument("--start", type=positive_int, default=1, help="--find-max: the first N probed (default 1)")
    p.add_argument("--max-accelerators", type=positive_int, default=64, help="--find-max: never probe past this")
    p.add_argument("--ceiling", action="store_true",
                   help="also run each N from the page cache (dataset pre-read, no drop; open division)")
    p.add_argument("--data-dir", help="the dataset (suite datagen); omitted: the embedded miniature")
    p.add_argument("--results-dir", help="the sweep dir (new or empty); default ./results/<workload>-sweep-<UTC time>")
    p.add_argument("--runs", type=positive_int, choices=[1, 5], default=1, help="runs per N (default 1)")
    p.add_argument("--memory-limit", type=size, default=None, help="as for suite run")
    p.add_argument("--division", choices=["closed", "open"], default="closed")
    p.add_argument("--ruleset", type=rulesets.argtype(), metavar="RULESET", default=None)
    p.add_argument("--param", action="append", metavar="KEY=VALUE", help="workload override (repeatable)")
    p.add_argument("--allow-no-cache-drop", action="store_true", help="as for suite run (non-compliant)")


def _args_sizing(sub, names) -> None:
    p = sub.add_parser("sizing", help="storage bandwidth and dataset size for N accelerators",
                       description="The MiB/s N accelerators demand (batch x record length / computation time; "
                                   "and from a sweep's page-cache ceiling with --from) and the dataset the "
                                   "dataset-size rules demand for N, as one short table.")
    _workload_args(p, names)
    _sizing_args(p, True, "simulated accelerators", "per host (default: this host's MemTotal)")
    p.add_argument("--from", dest="source", type=Path, metavar="SWEEP", help="a sweep dir or its sweep.json")


def _args_datasize(sub, names) -> None:
    p = sub.add_parser("datasize", help="how many files a compliant dataset needs",
                       description="Size the dataset: max(5x host memory, the minimum-steps rule).")
    _workload_args(p, names)
    _sizing_args(p, True, "simulated accelerators in all (llama3-*: MPI processes)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--mode", choices=["default", "subset"], default="default",
                   help="llama3-* only: default (global storage) or subset (node-local, llama3-8b only)")
    record_defaults(p)


def _args_datagen(sub, names) -> None:
    p = sub.add_parser("datagen", help="write the training dataset in the workload's format",
                       description="Write D/train/img_<i>_of_<N>.<ext> (npz, TFRecord or hdf5) with seeded record "
                                   "sizes, in parallel (local processes or MPI ranks under mpiexec), resumably; "
                                   "D/generation_log.json records what was written.")
    _workload_args(p, names)
    p.add_argument("--data-dir", required=True, type=Path, help="the dataset goes to DATA_DIR/train")
    p.add_argument("--files", type=positive_int, help="number of training files (or size it with --accelerators)")
    _sizing_args(p, False, "size the dataset for this many accelerators")
    p.add_argument("--processes", type=positive_int, default=None,
                   help="local writer processes (default: the CPU count; 1 per rank under MPI)")
    p.add_argument("--seed", type=seed_int, default=None, help="content and record-size seed, 0..2^32-1 "
                   "(default: the workload's)")
    p.add_argument("--param", action="append", metavar="SECTION.KEY=VALUE",
                   help="workload override, e.g. dataset.format=hdf5 (open division); repeatable")
    _engine_arg(p)
