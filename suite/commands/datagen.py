"""`suite datagen`: write a workload's dataset, through its kind (Kind.datagen: training's files, ours or
DLIO's generator; vector_database's vectors and ground truth)."""

from pathlib import Path

from suite.cliargs import unit_notes, engine_arg, positive_int, seed_int, sizing_args, workload_args
from suite.errors import SuiteError
from suite.storage.backend.select import location


def add_parser(sub) -> None:
    from suite.kinds import registry

    p = sub.add_parser("datagen", help="write the training dataset in the workload's format",
                       description="Write D/train/img_<i>_of_<N>.<ext> (npz, TFRecord, JPEG, hdf5 or Parquet) with seeded record "
                                   "sizes, in parallel (local processes or MPI ranks under mpiexec), resumably; "
                                   "D/generation_log.json records what was written.")
    workload_args(p, registry.workload_names(lambda k: k.datagen is not None))
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


def run(args) -> int:
    from suite.kinds import registry

    unit_notes(args)
    kind = registry.for_workload(args.workload)
    if args.data_dir is None:                   # the same default for every kind: ./results/data/<workload>
        args.data_dir = default_data_dir(args.workload)
    if kind.datagen is None:
        raise SuiteError(f"--workload {args.workload}: expected a workload whose kind writes a dataset, got a "
                         f"{kind.name} workload (its data is written by suite run)")
    return kind.datagen(args)    # training: suite.training.data.command; vector_database: vectors, ground truth
