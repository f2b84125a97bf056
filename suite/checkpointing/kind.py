"""The checkpointing kind: MLPerf Storage v2.0's and v3.0's checkpoint write and read (`benchmark: checkpointing`:
the llama3 models), run by suite.checkpointing, checked by suite.check (rules/v{2,3}.0/checkpointing*),
shown by suite.checkpointing.page. Its results: phase directories (suite.checkpointing.check)."""

from __future__ import annotations

import json
from pathlib import Path

from suite.errors import ExitCode, SuiteError
from suite.benchmark import Checked, Kind, Options, Workloads
from suite.harness.storagerun import STORAGE_RUN_OPTIONS, refuse_storage_nodes, storage_dir
from suite.checkpointing import workloads


def add_run_arguments(p) -> None:
    from suite.checkpointing.command import add_run_arguments as add

    add(p)


def add_datasize_arguments(p) -> None:
    p.add_argument("--mode", choices=["default", "subset"], default="default",
                   help="checkpointing only: default (global storage) or subset (node-local, llama3-8b only)")


def run(args) -> int:
    from suite.checkpointing import command

    if args.accelerators is None:
        raise SuiteError(f"--accelerators: expected a number of simulated accelerators for {args.workload}, got none")
    return command.run(args)


def datasize(args) -> int:
    """The bytes and files of the checkpoints."""
    from suite.checkpointing import page as checkpoint_text
    from suite.checkpointing import command

    command.refuse_for_checkpointing(args)
    from suite.checkpointing import run as checkpoint_run
    from suite.checkpointing import writeread

    d = command.sizing(args.workload, args.accelerators, args.mode, args.client_hosts, args.host_memory)
    d["ruleset"] = checkpoint_run.ruleset(args.ruleset)        # its round says one invocation or two
    d["write_read"] = writeread.applies(d["ruleset"])
    print(json.dumps(d, indent=2, sort_keys=True) if args.format == "json" else checkpoint_text.datasize(d))
    return ExitCode.OK


def check(path: Path, args) -> Checked:
    """suite.checkpointing.check over a phase, a write+read pair or a tree of them."""
    from suite.checkpointing import check as checkpoint
    from suite.report import findings as report

    return report.checked(checkpoint.check(path, args.ruleset), args.format)


def check_reads(path: Path) -> list[Path]:
    """A run-<k>'s check reads its phase (checkpoint_run_set.json beside it and the other runs)."""
    from suite.checkpointing import check as checkpoint

    d = storage_dir(path)
    return [d.parent] if (d / "results.json").is_file() and (d.parent / checkpoint.RUN_SET).is_file() else []


def recognises(path: Path) -> bool:
    from suite.checkpointing import check as checkpoint

    return checkpoint.is_result(storage_dir(path))


def metrics(path: Path, form: str) -> int:
    """Write/read bandwidth per run and per rank."""
    from suite import files
    from suite.checkpointing import page as checkpoint_text

    summary = checkpoint_text.summarise(storage_dir(path))
    print(files.dump_json(summary, indent=2), end="") if form == "json" else print(checkpoint_text.metrics(summary))
    return ExitCode.OK


def report_page(path: Path, args):
    from suite.checkpointing import check as checkpoint
    from suite.checkpointing import page as checkpoint_text

    refuse_storage_nodes(path, args)
    path = storage_dir(path)
    built = checkpoint_text.build_page(checkpoint_text.summarise(path), checkpoint.check(path, "auto"))
    host = checkpoint_text.host_section(path)
    built.sections += [host] if host else []
    return built


def measured(path: Path) -> list:
    from suite.checkpointing import compared

    return compared.measured(path)


def listing() -> str:
    from suite.checkpointing import workloads

    from suite.rules import rulesets

    both = list(rulesets.covering("checkpointing"))
    one = [n for n in both if rulesets.get(n).checkpoint_invocation == "write_read"]
    two = [n for n in both if n not in one]
    flows = ([f"{', '.join(one)}: suite run --workload NAME --accelerators N --ruleset {one[-1]} --data-dir D "
              "(writes, then reads, in one invocation)"] if one else [])
    flows += ([f"{', '.join(two)}: the same with --ruleset {two[-1]} --checkpoints-read 0 (the write phase), then "
               "--checkpoints-write 0 (the read phase)"] if two else [])
    return f"Checkpointing: {', '.join(workloads.names())}\n" + "\n".join(f"    {x}" for x in flows)


def reference_judge(node, org, system, round_name: str, root, rules_too: bool = True):
    """A benchmark node of the reference tool's leaves a layout found: suite.checkpointing.reference.judge."""
    from suite.checkpointing.reference import judge

    return judge.judge(node, org, system, round_name, root, rules_too)


KIND = Kind(
    name="checkpointing",
    reference_judge=reference_judge,
    run=run,
    recognises=recognises,
    check=check,
    metrics=metrics,
    check_reads=check_reads,
    report_page=report_page,
    datasize=datasize,
    result_files=("checkpoint_run_set.json",),
    measured=measured,
    runs_on="processes",
    options=Options(add_run=add_run_arguments, add_datasize=add_datasize_arguments, run=(*STORAGE_RUN_OPTIONS, "launcher", "mode", "checkpoints_write", "checkpoints_read", "miniature"), datasize=("mode",)),
    workloads=Workloads(listing=listing, schema=workloads.SCHEMA, shown="llama3-*"))
