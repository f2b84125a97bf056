"""`suite sizing`: storage bandwidth and dataset size for N accelerators (the workloads of kinds that sweep)."""

from pathlib import Path

from suite.cliargs import sizing_args, unit_notes, workload_args


def add_parser(sub) -> None:
    from suite.kinds import registry

    p = sub.add_parser("sizing", help="storage bandwidth and dataset size for N accelerators",
                       description="The MiB/s N accelerators demand (batch x record length / computation time; "
                                   "and from a sweep's page-cache ceiling with --from) and the dataset the "
                                   "dataset-size rules demand for N, as one short table.")
    workload_args(p, registry.workload_names(lambda k: k.sweeps is not None))
    sizing_args(p, True, "simulated accelerators", "per host (default: this host's MemTotal)")
    p.add_argument("--from", dest="source", type=Path, metavar="SWEEP", help="a sweep dir or its sweep.json")


def run(args) -> int:
    from suite.kinds import registry

    unit_notes(args)
    return registry.for_workload(args.workload).sweeps.sizing(args)   # training: suite.training.sweep.command
