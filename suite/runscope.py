"""Which `suite run` (and `suite datasize`) options each kind of workload uses; one given to a kind
that would ignore it is refused (one line, exit 2) rather than dropped: a result must not look as if
a setting applied.

Kinds: tpcx-ai (suite.tpcxai), checkpointing (llama3-*, suite.storage.checkpoint) and training (the
storage workloads, suite.storage.run). An option counts as given when its value differs from the
parser's default (`scope_defaults`, set by the `run` and `datasize` parsers). Options every kind uses (--workload,
--data-dir, --results-dir) and --engine (each branch refuses its own) are not in the table.
"""

from suite.errors import SuiteError

TPCX, CHECKPOINTING, TRAINING = "tpcx-ai", "checkpointing", "training"
STORAGE = (TRAINING, CHECKPOINTING)
KIND_TEXT = {TPCX: "--workload tpcx-ai", CHECKPOINTING: "a checkpointing workload (llama3-*)",
             TRAINING: "a training workload (unet3d, resnet50, cosmoflow, bert)"}

# option dest -> the kinds that use it
RUN_OPTIONS = {
    "accelerators": STORAGE, "runs": STORAGE, "memory_limit": STORAGE, "division": STORAGE, "ruleset": STORAGE,
    "hosts": STORAGE, "hostfile": STORAGE, "allow_no_cache_drop": STORAGE, "no_cache_drop": STORAGE,
    "param": (TRAINING,), "launcher": (TRAINING,), "accelerator_type": (TRAINING,), "debug_read_delay": (TRAINING,),
    "scale_factor": (TPCX,), "streams": (TPCX,), "use_cases": (TPCX,), "processes": (TPCX,), "seed": (TPCX,),
    "mode": (CHECKPOINTING,), "checkpoints_write": (CHECKPOINTING,), "checkpoints_read": (CHECKPOINTING,),
}
DATASIZE_OPTIONS = {"mode": (CHECKPOINTING,), "accelerator_type": (TRAINING,)}
SUITE_ENGINE_ONLY = ("debug_read_delay",)     # benchmarks' service-time knob: our reader has it, DLIO does not


def record_defaults(parser) -> None:
    """Keep the parser's defaults on the parsed args, so refuse_unused can tell what was given."""
    parser.set_defaults(scope_defaults={a.dest: a.default for a in parser._actions})


def kind(workload: str) -> str:
    if workload == TPCX:
        return TPCX
    return CHECKPOINTING if workload.startswith("llama3-") else TRAINING


def _shown(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def refuse_unused(args, table: dict = RUN_OPTIONS) -> None:
    """Raise SuiteError for the first option the workload's kind (or engine) would ignore."""
    defaults, k = getattr(args, "scope_defaults", {}), kind(args.workload)
    for dest, kinds in table.items():
        value = getattr(args, dest, None)
        if k not in kinds and value != defaults.get(dest):
            raise SuiteError(f"--{dest.replace('_', '-')}: expected only with {' or '.join(KIND_TEXT[x] for x in kinds)}, "
                             f"got {_shown(value)} with {args.workload}")
    if getattr(args, "engine", "suite") != "suite":
        for dest in SUITE_ENGINE_ONLY:
            if getattr(args, dest, None) != defaults.get(dest):
                raise SuiteError(f"--{dest.replace('_', '-')}: expected only with --engine suite, got "
                                 f"{_shown(getattr(args, dest))} with --engine {args.engine}")
