"""`suite sweep` and `suite sizing` of a training workload (the training kind's Kind.sweeps): the
sweep over accelerator counts (suite.training.sweep.search) and the storage bandwidth and dataset size
for N accelerators (suite.training.sweep.sizing). suite/commands/ parses and checks the options."""

from suite.errors import ExitCode


def sweep(args) -> int:
    from suite.training.sweep import search

    return search.run(search.SweepOptions(
        workload=args.workload, accelerator_type=args.accelerator_type, accelerators=args.accelerators,
        find_max=args.find_max, ceiling=args.ceiling, data_dir=args.data_dir, results_dir=args.results_dir,
        runs=args.runs, start=args.start, max_accelerators=args.max_accelerators, memory_limit=args.memory_limit,
        division=args.division, ruleset=args.ruleset, params=args.param or [],
        allow_no_cache_drop=args.allow_no_cache_drop, sequential=not args.full_probes, level=args.level))


def sizing(args) -> int:
    from suite.training import workloads
    from suite.training.run.dlio_output import mem_total_bytes
    from suite.training.sweep import rederive, result, verify
    from suite.training.sweep import sizing as sized
    from suite.training.sweep import text as sweep_text

    doc = result.load(args.source) if args.source else None
    found = []
    if doc is not None:
        verify.refuse(doc, args.source)        # a claimed maximum its own points contradict: exit 2
        doc, found = rederive.review(doc, args.source)   # every figure from its runs, never from the claims
    # a sweep run with --param (a smaller record, another compute time): size with the same workload
    params = workloads.parse_params(doc["params"]) if doc else {}
    workload = workloads.resolve(args.workload, args.accelerator_type, params)
    memory = args.host_memory or mem_total_bytes()
    out = sized.sizing(workload, args.accelerators, args.client_hosts, memory, args.ruleset, doc)
    print(sweep_text.sizing(out, args.host_memory is None))
    if found:
        print(sweep_text.findings(found, args.source))
        return ExitCode.FAILED
    return ExitCode.OK
