"""`suite run`: run a workload under the rules; its kind (the workload file's `benchmark:`) runs it."""

from suite.cliargs import unit_notes, engine_arg, record_defaults, workload_args


def add_parser(sub) -> None:
    from suite.kinds import registry

    p = sub.add_parser("run", help="run a workload: one MPI rank per simulated accelerator, rules enforced",
                       description="Run a storage workload under the rules: cache drop before each run, memory "
                                   "cgroup, closed-division refusals; writes DLIO-compatible results and "
                                   "results.json with the evidence. Without --data-dir: the miniature default.")
    workload_args(p, registry.workload_names())
    p.add_argument("--data-dir", help="the dataset (suite datagen), a directory or s3://bucket/prefix (object "
                                      "storage: docs/object-storage.md); omitted: the embedded miniature, "
                                      "generated on first use under ./results/data")
    p.add_argument("--results-dir", help="default: a fresh ./results/<name>-<UTC time>, claimed for this run "
                                         "(training <workload>_<accel>-<N>acc, checkpointing <workload>-<N>p "
                                         "(a round with phases: <workload>-<phase>-<N>p), "
                                         "vector DB <workload>-<index>, kv-cache, tpcx-ai-sf<SF>)")
    engine_arg(p, also=("local", "dask"))      # local, dask: tpcx-ai's engines (runscope refuses them elsewhere)
    for kind in registry.KINDS:
        if kind.options.add_run is not None:
            kind.options.add_run(p)
    history_args(p)
    record_defaults(p)


def history_args(p) -> None:
    p.add_argument("--history", metavar="PATH|URL", help="the results store this run is recorded in (default "
                   "$SUITE_HISTORY, else $XDG_DATA_HOME/suite/history.sqlite): docs/history.md")
    p.add_argument("--no-history", action="store_true", help="do not record this run in the history")


def run(args) -> int:
    from suite import runscope
    from suite.kinds import registry

    runscope.refuse_unused(args)
    unit_notes(args)
    kind = registry.for_workload(args.workload)
    if args.no_history:
        return kind.run(args)
    from suite.history import record

    begun = record.RunRecord(args)
    code, failure = None, None
    try:
        code = kind.run(args)
        return code
    except (Exception, KeyboardInterrupt) as exc:        # recorded as failed or interrupted, then raised on
        failure = exc
        raise
    finally:
        begun.finish(code if failure is None else getattr(failure, "exit_code", None), record.status_of(failure))
