"""`suite datagen`: write a training workload's dataset (ours, or DLIO's generator)."""

from pathlib import Path

from suite.cliargs import unit_notes, engine_arg, positive_int, seed_int, sizing_args, workload_args
from suite.errors import ExitCode, SuiteError
from suite.storage.backend.select import location


def add_parser(sub) -> None:
    from suite.kinds import registry

    p = sub.add_parser("datagen", help="write the training dataset in the workload's format",
                       description="Write D/train/img_<i>_of_<N>.<ext> (npz, TFRecord, JPEG, hdf5 or Parquet) with seeded record "
                                   "sizes, in parallel (local processes or MPI ranks under mpiexec), resumably; "
                                   "D/generation_log.json records what was written.")
    workload_args(p, registry.workload_names(lambda k: k.datasize is not None or k.datagen is not None))
    p.add_argument("--data-dir", type=location, default=None,
                   help="the dataset goes to DATA_DIR/train; DATA_DIR may be s3://bucket/prefix (object storage: "
                        "endpoint, region and keys from the AWS environment, docs/object-storage.md); default "
                        "./results/data/<workload> (where `suite run` of a vector-database workload looks for it)")
    p.add_argument("--files", type=positive_int, help="number of training files (or size it with --accelerators)")
    sizing_args(p, False, "size the dataset for this many accelerators")
    p.add_argument("--processes", type=positive_int, default=None,
                   help="local writer processes (default: the CPU count; 1 per rank under MPI)")
    p.add_argument("--seed", type=seed_int, default=None, help="content and record-size seed, 0..2^32-1 "
                   "(default: the workload's)")
    p.add_argument("--param", action="append", metavar="SECTION.KEY=VALUE",
                   help="workload override, e.g. dataset.format=hdf5 (open division); repeatable")
    engine_arg(p)


def default_data_dir(workload: str) -> Path:
    """Where `suite datagen` writes without --data-dir (and `suite run` of a vector-database workload
    reads without it)."""
    return Path("results") / "data" / workload


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


def run(args) -> int:
    from suite.kinds import registry
    from suite.report.escape import terminal

    unit_notes(args)
    kind = registry.for_workload(args.workload)
    if args.data_dir is None:                   # the same default for every kind: ./results/data/<workload>
        args.data_dir = default_data_dir(args.workload)
    if kind.datagen is not None:                # a kind with its own data (vector_database: vectors + ground truth)
        return kind.datagen(args)
    from suite.report.progress import Progress, summary
    from suite.training.data import datagen
    from suite.training import workloads

    params = workloads.parse_params(args.param)
    workload = workloads.resolve(args.workload, args.accelerator_type, params)
    extra = {"params": params}
    num_files = _file_count(args, workload, extra)
    if args.engine == "dlio":       # the reference code's own generator (storage/run/dlio.py)
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
    world = datagen.mpi_world()
    rank0 = world is None or world[1] == 0
    with Progress(num_files, enabled=rank0) as progress:
        log = datagen.generate(workload, data, num_files, args.processes, seed, progress, extra)
    if rank0:
        from suite.terminal import fit
        print(fit(terminal(summary(log, args.data_dir / datagen.LOG_NAME))))     # within 100 columns
    return ExitCode.OK
