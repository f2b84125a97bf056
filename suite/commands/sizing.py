"""`suite sizing`: storage bandwidth and dataset size for N accelerators (the workloads of kinds that sweep)."""

from pathlib import Path

from suite.cliargs import sizing_args, unit_notes, workload_args
from suite.errors import ExitCode


def add_parser(sub) -> None:
    from suite.kinds import registry

    p = sub.add_parser("sizing", help="storage bandwidth and dataset size for N accelerators",
                       description="The MiB/s N accelerators demand (batch x record length / computation time; "
                                   "and from a sweep's page-cache ceiling with --from) and the dataset the "
                                   "dataset-size rules demand for N, as one short table.")
    workload_args(p, registry.workload_names(lambda k: k.sweeps))
    sizing_args(p, True, "simulated accelerators", "per host (default: this host's MemTotal)")
    p.add_argument("--from", dest="source", type=Path, metavar="SWEEP", help="a sweep dir or its sweep.json")


def run(args) -> int:
    unit_notes(args)
    from suite.training.sweep import text as sweep_text
    from suite.training import workloads
    from suite.training.run.dlio_output import mem_total_bytes
    from suite.training.sweep import result
    from suite.training.sweep import sizing

    from suite.training.sweep import rederive, verify

    doc = result.load(args.source) if args.source else None
    found = []
    if doc is not None:
        verify.refuse(doc, args.source)        # a claimed maximum its own points contradict: exit 2
        doc, found = rederive.review(doc, args.source)   # every figure from its runs, never from the claims
    # a sweep run with --param (a smaller record, another compute time): size with the same workload
    params = workloads.parse_params(doc["params"]) if doc else {}
    workload = workloads.resolve(args.workload, args.accelerator_type, params)
    memory = args.host_memory or mem_total_bytes()
    out = sizing.sizing(workload, args.accelerators, args.client_hosts, memory, args.ruleset, doc)
    print(sweep_text.sizing(out, args.host_memory is None))
    if found:
        print(sweep_text.findings(found, args.source))
        return ExitCode.FAILED
    return ExitCode.OK
