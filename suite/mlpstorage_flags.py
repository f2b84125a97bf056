"""mlpstorage 2.0.0b1's command-line flags and what `suite mlpstorage` does with each: the one table the
door's parser (suite/commands/mlpstorage.py) is built from and docs/from-mlpstorage.md's table is
generated from (tests/commands/test_mlpstorage.py holds the page to it).

Facts read from mlpstorage 2.0.0b1 (mlcommons/storage at caa90c9): its cli.py (flags, short forms,
types, defaults, which subcommand takes which), config.py (models, accelerators, the default results
dir), benchmarks/dlio.py and rules.py (what each flag means: --client-host-memory-in-gb times 1024^3,
the data dir D/<model>, results R/<benchmark>/<model>/<command>/<YYYYMMDD_HHMMSS>).

`action`: map (a suite option carries it), note (accepted; suite's own behaviour stands, said in one
line), refuse (one line naming the flag and why, exit 2).
"""

from dataclasses import dataclass

T_DS, T_DG, T_RUN = "training datasize", "training datagen", "training run"
C_DS, C_RUN = "checkpointing datasize", "checkpointing run"
R_GEN = "reports reportgen"
FORMS = (T_DS, T_DG, T_RUN, C_DS, C_RUN, R_GEN)
ALL = FORMS
TRAINING = (T_DS, T_DG, T_RUN)
CHECKPOINTING = (C_DS, C_RUN)
SIZED = (T_DS, T_RUN, C_DS, C_RUN)          # the forms that take --client-host-memory-in-gb

MODELS = ("cosmoflow", "resnet50", "unet3d")
LLM_MODELS = ("llama3-70b", "llama3-405b", "llama3-1t", "llama3-8b")
MODEL_CHOICES = {"training": MODELS, "checkpointing": LLM_MODELS}
ACCELERATORS = ("h100", "a100")
DEFAULT_RESULTS_DIR = "/tmp/mlperf_storage_results"     # tempfile.gettempdir()/mlperf_storage_results
LOCAL_HOSTS = ("127.0.0.1", "localhost")
# what `mlpstorage training datagen` writes without --params dataset.num_files_train (configs/dlio/workload/<model>_datagen.yaml)
DATAGEN_FILES = {"unet3d": 168, "resnet50": 1024, "cosmoflow": 524288}
# DLIO's config keys (mlpstorage --params) whose name differs in suite's workload files (suite --param)
PARAM_KEYS = {"dataset.record_length_bytes": "dataset.record_length",
              "dataset.record_length_bytes_stdev": "dataset.record_length_stdev",
              "dataset.record_length_bytes_resize": "dataset.record_length_resize",
              "model.model_size": "checkpoint.model_size"}


@dataclass(frozen=True)
class Flag:
    name: str                   # the long form, as mlpstorage spells it
    short: str                  # its short form ("" where none)
    forms: tuple                # the subcommands that take it
    type: str                   # int, str, list (nargs +), params (nargs + append), flag (store_true), choice
    action: str                 # map, note, refuse
    suite: str                  # the suite equivalent (docs), or why it is noted or refused
    units: str = ""             # its unit where it has one
    choices: tuple = ()
    default: object = None
    required: tuple = ()        # the forms where mlpstorage requires it
    dest: str = ""              # argparse dest when not the name's

    @property
    def key(self) -> str:
        return self.dest or self.name.lstrip("-").replace("-", "_")


FLAGS = (
    Flag("--model", "-m", TRAINING + CHECKPOINTING, "choice", "map",
         "`--workload MODEL` (cosmoflow, resnet50, unet3d; checkpointing: llama3-8b, -70b, -405b, -1t)",
         choices=MODELS + LLM_MODELS, required=TRAINING + CHECKPOINTING),
    Flag("--accelerator-type", "-g", (T_DS, T_RUN), "choice", "map", "`--accelerator-type A` (h100, a100)",
         choices=ACCELERATORS, required=(T_DS, T_RUN)),
    Flag("--num-accelerators", "-na", (T_RUN,), "int", "map", "`--accelerators N`", "accelerators (MPI ranks)",
         required=(T_RUN,)),
    Flag("--max-accelerators", "-ma", (T_DS,), "int", "map", "`--accelerators N` of `suite datasize`",
         "accelerators", required=(T_DS,)),
    Flag("--num-processes", "-np", (T_DG,) + CHECKPOINTING, "int", "map",
         "datagen: `--processes N` (writer processes on this host); checkpointing: `--accelerators N` (MPI ranks)",
         "processes", required=(T_DG,) + CHECKPOINTING),
    Flag("--client-host-memory-in-gb", "-cm", SIZED, "int", "map",
         "datasize: `--host-memory NGiB`; run: `--memory-limit NGiB` (the ranks run in a memory cgroup of that "
         "size, and the dataset-size rule counts it, as mlpstorage's rule counts the number typed)",
         "GiB (x 1024^3 bytes), per host", required=SIZED),
    Flag("--num-client-hosts", "-nc", (T_DS, T_RUN), "int", "map",
         "datasize: `--client-hosts H` (default: the number of --hosts); run: must equal the number of --hosts "
         "(suite counts the hosts it runs on)", "hosts"),
    Flag("--hosts", "-s", TRAINING + CHECKPOINTING, "list", "map",
         "run: `--hosts h1,h2` (one host, 127.0.0.1 or localhost: a local run); datasize: their count is the client "
         "hosts; datagen: one host only (suite datagen writes from this host; across hosts run it under mpiexec)",
         default=("127.0.0.1",)),
    Flag("--data-dir", "-dd", TRAINING, "str", "map",
         "`--data-dir D/MODEL` (D as given when it already ends with the model's name, as mlpstorage does); "
         "datasize: the --data-dir of the datagen command it prints next"),
    Flag("--results-dir", "-rd", ALL, "str", "map",
         "run: `--results-dir R/training/MODEL/run/YYYYMMDD_HHMMSS` (checkpointing: the leaf R/checkpointing/MODEL/"
         "YYYYMMDD_HHMMSS), a new leaf under one root that later runs add to; reportgen: the path `suite report` "
         "reads; datasize, datagen: noted (suite datasize writes nothing; datagen's log is D/MODEL/generation_log.json)",
         default=DEFAULT_RESULTS_DIR),
    Flag("--params", "-p", TRAINING + CHECKPOINTING, "params", "map",
         "`--param KEY=VALUE` each (DLIO's record_length_bytes* and model.model_size keys renamed to suite's); "
         "datagen: dataset.num_files_train is `--files N`; refused with datasize (suite sizes the workload as "
         "its file has it) and checkpointing"),
    Flag("--loops", "", ALL, "int", "map",
         "run: `--runs N` (N measured runs in one results dir; without --loops, the round's series of 5); "
         "datasize, datagen: only 1", "runs", default=1),
    Flag("--open", "", ALL, "flag", "map", "run: `--division open`", dest="open"),
    Flag("--closed", "", ALL, "flag", "map", "run: `--division closed` (suite's default too)"),
    Flag("--what-if", "", ALL, "flag", "map", "print the equivalent `suite` command and run nothing"),
    Flag("--checkpoint-folder", "-cf", (T_DS, T_RUN) + CHECKPOINTING, "str", "map",
         "checkpointing run: `--data-dir C/MODEL` (where the checkpoints go, as mlpstorage's C/MODEL); "
         "training and checkpointing datasize: noted (mlpstorage 2.0.0b1 requires it for unet3d but passes it to "
         "nothing; suite writes unet3d's checkpoint under the results dir)"),
    Flag("--num-checkpoints-read", "-ncr", CHECKPOINTING, "int", "map",
         "`--checkpoints-read N` of the read phase: suite's round of mlpstorage 2.0 reads after a page-cache drop in an invocation of "
         "its own, so the door runs the write phase (LEAF/write), the read phase (LEAF/read), then `suite check "
         "LEAF`; 0: no read phase; datasize: noted", "checkpoints", default=10),
    Flag("--num-checkpoints-write", "-ncw", CHECKPOINTING, "int", "map",
         "`--checkpoints-write N` of the write phase; 0: the read phase alone (of an earlier write); datasize: noted",
         "checkpoints", default=10),
    Flag("--output-dir", "", (R_GEN,), "str", "map",
         "`suite report R --out DIR` (default: R-report beside R; suite report writes nowhere inside the results)"),
    Flag("--exec-type", "-et", TRAINING + (C_RUN,), "choice", "note",
         "suite runs its ranks under MPI always (mpi: noted; docker: refused, suite runs no containers)",
         choices=("mpi", "docker"), default="mpi"),
    Flag("--mpi-bin", "", TRAINING + (C_RUN,), "choice", "note",
         "suite launches with its own mpiexec (the mpich wheel), whichever is named", choices=("mpirun", "mpiexec"),
         default="mpirun"),
    Flag("--oversubscribe", "", TRAINING + (C_RUN,), "flag", "note",
         "mpich's mpiexec places any number of ranks on a host without it"),
    Flag("--allow-run-as-root", "", TRAINING + (C_RUN,), "flag", "note", "mpich's mpiexec runs as root without it"),
    Flag("--debug", "", ALL, "flag", "note", "suite has one output level (its errors are one line, its bugs "
         "keep their traceback)"),
    Flag("--verbose", "", ALL, "flag", "note", "suite has one output level"),
    Flag("--stream-log-level", "", ALL, "str", "note", "suite has one output level", default="INFO"),
    Flag("--dlio-bin-path", "-dp", TRAINING + CHECKPOINTING, "str", "refuse",
         "suite runs its own runner or its own pinned DLIO (`suite engine install dlio`, `--engine dlio`), never "
         "a dlio_benchmark from another path"),
    Flag("--config-file", "-c", ALL, "str", "refuse",
         "a YAML file of flag overrides applied after the command line: type the flags, so the command line "
         "printed is the whole run"),
    Flag("--allow-invalid-params", "-aip", ALL, "flag", "refuse",
         "suite refuses a closed-division violation before the run; use --open for an open run"),
)

# mlpstorage subcommands the door does not take, and where suite does that instead
NOT_MAPPED = {
    "training configview": "suite run prints the workload it runs; `--what-if` prints the suite command",
    "vectordb": "suite's vector-database benchmark is `suite run --workload vdb-*` (docs/vector-database.md)",
    "history": "suite records every run: `suite history list`, `suite history rerun ID` (docs/history.md)",
}


def flags_for(form: str) -> list[Flag]:
    return [f for f in FLAGS if form in f.forms]


def markdown_table() -> str:
    """docs/from-mlpstorage.md's table, one row a flag."""
    rows = ["| mlpstorage flag | taken by | units | suite | |", "|---|---|---|---|---|"]
    for f in FLAGS:
        forms = "all" if f.forms == ALL else ", ".join(f.forms)
        name = f"`{f.name}`" + (f" (`{f.short}`)" if f.short else "")
        what = {"map": "mapped", "note": "accepted, noted", "refuse": "**refused**"}[f.action]
        default = f"mlpstorage's default: {' '.join(f.default) if isinstance(f.default, tuple) else f.default}"
        units = "; ".join(x for x in (f.units, default if f.default is not None else "") if x) or "-"
        rows.append(f"| {name} | {forms} | {units} | {f.suite} | {what} |")
    return "\n".join(rows)


def ruleset() -> str:
    """The round mlpstorage 2.0 implements: the first round whose runs leave its files (ruleset.yaml
    `reference_tool: mlpstorage`), oldest first; no round is named in code."""
    from suite.rules import rulesets

    found = rulesets.discover()
    ordered = sorted(found.values(), key=lambda r: len(r.chain))
    for r in ordered:
        if r.reference_tool == "mlpstorage" and "training" in r.covers and "checkpointing" in r.covers:
            return r.name
    from suite.errors import RuleError

    raise RuleError("rules/*/ruleset.yaml: reference_tool: expected a round whose tool is mlpstorage, got none")
