"""The command-line side of the checkpointing workloads (llama3-*): `suite run` options, the
dispatch into suite.checkpointing.run, and `suite datasize` for a checkpoint."""

from __future__ import annotations

import argparse
from pathlib import Path

from suite.errors import SuiteError
from suite.rules import rulesets


def count(text: str) -> int:
    if len(text) > 7 or not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected a number of checkpoints 0..1000000, got {text[:16]!r}")
    return int(text)


def add_run_arguments(p) -> None:
    from suite.checkpointing import workloads

    g = p.add_argument_group(f"checkpointing (--workload {'|'.join(workloads.names())})")
    g.add_argument("--mode", choices=["default", "subset"], default="default",
                   help="default: global storage, the whole checkpoint; subset: node-local, this host's "
                        "fraction (llama3-8b only)")
    g.add_argument("--checkpoints-write", type=count, default=None, metavar="N",
                   help="checkpoints to write per run (the reference's 10); the write phase passes "
                        "--checkpoints-read 0 (without either, under a round whose checkpoint_invocation is write_read: "
                        "write then read in one invocation)")
    g.add_argument("--checkpoints-read", type=count, default=None, metavar="N",
                   help="checkpoints to read back per run (10), after a cache drop; the read phase passes "
                        "--checkpoints-write 0 and its own --results-dir")
    g.add_argument("--miniature", action="store_true",
                   help="the miniature checkpoint (a few MiB per rank, not valid for submission) at --data-dir, "
                        "e.g. an s3:// bucket; without --data-dir the miniature is the default")


def refuse_for_checkpointing(args) -> None:
    """What a checkpointing workload refuses beyond suite.runscope's table (suite run, suite datasize)."""
    engine = getattr(args, "engine", "suite")
    if engine != "suite":    # DLIO 2.0.0 (PyPI, what `suite engine install dlio` builds) has no llama3 checkpointing
        raise SuiteError(f"--engine {engine}: expected suite for {args.workload} (the DLIO release `suite engine "
                         f"install dlio` installs has no LLM checkpointing), got {engine}")
    covering = rulesets.covering("checkpointing")      # the rounds with checkpointing rules (v2.0, v3.0)
    if args.ruleset not in (None, *covering):
        raise SuiteError(f"--ruleset: expected {' or '.join(covering)} for {args.workload} (the rulesets with "
                         f"checkpointing rules), got {args.ruleset}")


def run(args) -> int:
    """One invocation: a round with `checkpoint_invocation: write_read` (v3.0) through
    suite.checkpointing.writeread (write and read in one invocation, leaves), others one phase
    through suite.checkpointing.run."""
    from suite.checkpointing import run as checkpoint_run
    from suite.checkpointing import writeread as v3

    refuse_for_checkpointing(args)
    opts = checkpoint_run.Options(
        workload=args.workload, accelerators=args.accelerators, mode=args.mode,
        checkpoints_write=args.checkpoints_write, checkpoints_read=args.checkpoints_read,
        data_dir=args.data_dir, results_dir=args.results_dir, runs=args.runs, memory_limit=args.memory_limit,
        division=args.division, hosts=args.hosts.split(",") if args.hosts else None, hostfile=args.hostfile,
        launcher=getattr(args, "launcher", None),
        allow_no_cache_drop=args.allow_no_cache_drop, no_cache_drop=args.no_cache_drop,
        ruleset=checkpoint_run.ruleset(args.ruleset), miniature=True if args.miniature else None)
    made: list = []
    code = v3.run(opts, made) if v3.applies(opts.ruleset) else checkpoint_run.run(opts, made)
    return judged(made, opts.ruleset, failed=code != 0)


def judged(made: list, ruleset: str, failed: bool) -> int:
    """The run's last line: suite check's verdict line over what it wrote (`made`: its results dirs,
    one per phase; checked together, as the write and read of v3.0 pair: the folder holding them, which
    holds earlier leaves too where --results-dir was reused), failed where the run was; that line's exit
    code (suite.rules.verdict)."""
    import os
    from dataclasses import replace

    from suite.checkpointing import check
    from suite.harness.storagerun import say
    from suite.rules.verdict import Voice

    where = Path(os.path.commonpath([str(Path(d).resolve()) for d in made])) if made else None
    voice = check.check(where, ruleset).voice() if where is not None else Voice("invalid")
    voice = replace(voice, failed=failed or where is None)
    say(voice.line())
    return voice.code


def sizing(workload: str, processes: int, mode: str, hosts: int, host_memory: int | None) -> dict:
    """Bytes and files one checkpoint needs (and the folder for the reference's 10), per host too."""
    if mode == "subset" and hosts > 1:
        raise SuiteError(f"--mode subset: expected one client host (node-local storage), got --client-hosts {hosts}")
    from suite.checkpointing import workloads
    from suite.checkpointing import model
    from suite.checkpointing import run as checkpoint_run

    doc = workloads.load(workload)
    ckpt = model.from_workload(doc, processes, mode)
    n = doc["checkpoint"]["num_checkpoints_write"]
    per_host = ckpt.total_bytes / max(hosts, 1)
    out = {"workload": workload, "mode": mode, "processes": processes,
           "closed_processes": checkpoint_run.closed_processes(doc),
           "parallelism": {"tensor": ckpt.parallelism.tensor, "pipeline": ckpt.parallelism.pipeline,
                           "data": ckpt.parallelism.data, "zero_stage": ckpt.parallelism.zero_stage},
           "parameters": ckpt.model.parameters(), "checkpoint_bytes": ckpt.total_bytes,
           "checkpoint_gib": ckpt.total_bytes / 2**30, "published_checkpoint_size": doc["published"]["checkpoint_size"],
           "published_corrected_gib": (doc["published"].get("erratum") or {}).get("corrected_gib"),
           "files_per_checkpoint": ckpt.files_per_checkpoint, "checkpoints": n, "folder_bytes": n * ckpt.total_bytes,
           "rank_bytes_min": min(ckpt.rank_bytes), "rank_bytes_max": max(ckpt.rank_bytes),
           "bytes_per_host": int(per_host), "host_memory_bytes": host_memory}
    if host_memory:
        out["checkpoint_per_host_over_memory"] = per_host / host_memory
    return out
