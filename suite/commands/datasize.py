"""`suite datasize`: the dataset (or checkpoint) a workload's kind needs for N accelerators."""

from suite.cliargs import unit_notes, record_defaults, sizing_args, workload_args


def add_parser(sub) -> None:
    from suite.kinds import registry

    p = sub.add_parser("datasize", help="how many files a compliant dataset needs",
                       description="Size the dataset: max(5x host memory, the minimum-steps rule).")
    workload_args(p, registry.workload_names(lambda k: k.datasize is not None))
    sizing_args(p, True, "simulated accelerators in all (checkpointing: MPI processes)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    for kind in registry.KINDS:
        if kind.options.add_datasize is not None:
            kind.options.add_datasize(p)
    record_defaults(p)


def run(args) -> int:
    from suite import runscope
    from suite.kinds import registry

    runscope.refuse_unused(args, "datasize")
    unit_notes(args)
    return registry.for_workload(args.workload).datasize(args)
