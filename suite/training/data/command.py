"""`suite datagen` of a training workload (the training kind's Kind.datagen): its dataset written by
suite.training.data.datagen, or by DLIO's own generator (--engine dlio), sized by --files or by the
dataset-size rule for --accelerators and --host-memory."""

from pathlib import Path

from suite.errors import ExitCode, SuiteError


def datagen(args) -> int:
    from suite.report.escape import terminal
    from suite.report.progress import Progress, summary
    from suite.training import workloads
    from suite.training.data import datagen as writer

    params = workloads.parse_params(args.param)
    workload = workloads.resolve(args.workload, args.accelerator_type, params)
    extra = {"params": params}
    num_files = _file_count(args, workload, extra)
    if args.engine == "dlio":       # the reference code's own generator (suite/training/run/dlio.py)
        from suite.training.run import dlio
        if not isinstance(args.data_dir, Path):
            raise SuiteError(f"--engine dlio: expected a local --data-dir (DLIO's generator writes files), "
                             f"got {args.data_dir}")
        if args.seed is not None:
            raise SuiteError(f"--seed: expected only with --engine suite (DLIO generates with its own seed), "
                             f"got {args.seed}")
        return dlio.datagen(args, workload, num_files)
    seed = workload.seed if args.seed is None else args.seed
    extra["command"] = ["suite", "datagen", "--workload", workload.name, "--accelerator-type", workload.accelerator,
                        "--files", str(num_files), "--seed", str(seed), "--data-dir", str(args.data_dir),
                        *[f"--param={p}" for p in args.param or []]]
    from suite.storage.backend.select import resolve

    data = resolve(args.data_dir, workload)      # the one resolution of --data-dir: location and backend
    world = writer.mpi_world()
    rank0 = world is None or world[1] == 0
    with Progress(num_files, enabled=rank0) as progress:
        log = writer.generate(workload, data, num_files, args.processes, seed, progress, extra)
    if rank0:
        from suite.terminal import fit
        print(fit(terminal(summary(log, args.data_dir / writer.LOG_NAME))))     # within 100 columns
    return ExitCode.OK


def _file_count(args, workload, extra: dict) -> int:
    """--files, or the count the dataset-size rule gives for --accelerators and --host-memory."""
    from suite.training import datasize

    if args.files and (args.accelerators or args.host_memory):
        raise SuiteError("--files: expected either --files or --accelerators with --host-memory, got both")
    if args.accelerators or args.host_memory:
        if not (args.accelerators and args.host_memory):
            raise SuiteError("--accelerators/--host-memory: expected both (the dataset is sized from them), got one")
        sized = datasize.compute(workload, args.accelerators, args.client_hosts, args.host_memory, args.ruleset)
        extra["datasize"] = sized.to_dict()
        return sized.num_files
    if args.files or workload.num_files_train:
        if args.ruleset or args.client_hosts != 1:
            raise SuiteError("--client-hosts/--ruleset: expected only with --accelerators and --host-memory (they "
                             f"size the dataset), got {args.client_hosts}/{args.ruleset} with a file count")
        return args.files or workload.num_files_train
    raise SuiteError("dataset size: expected --files N or --accelerators N --host-memory SIZE, got neither")
