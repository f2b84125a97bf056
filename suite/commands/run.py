"""`suite run`: run a workload under the rules; its kind (the workload file's `benchmark:`) runs it."""

from suite.cliargs import engine_arg, record_defaults, workload_args


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
    p.add_argument("--results-dir", help="default ./results/<workload>_<accel>-<N>acc-<UTC time>")
    engine_arg(p, also=("local", "dask"))      # local, dask: tpcx-ai's engines (runscope refuses them elsewhere)
    for kind in registry.KINDS:
        if kind.add_run_arguments is not None:
            kind.add_run_arguments(p)
    record_defaults(p)


def run(args) -> int:
    from suite import runscope
    from suite.kinds import registry

    runscope.refuse_unused(args)
    return registry.for_workload(args.workload).run(args)
