"""`suite mlpstorage ...`: a door for mlpstorage users. mlpstorage 2.0.0b1's command lines (`training
datasize|datagen|run`, `checkpointing datasize|run`, `reports reportgen`) are parsed from the flag table
(suite/mlpstorage_flags.py), mapped onto suite's own commands with the reference's units (its
--client-host-memory-in-gb is GiB) and paths (data in D/<model>, results in one root that later runs add
to), and the equivalent `suite ...` command is printed before it runs. A flag suite cannot honour is
refused in one line naming it and why (exit 2); none is dropped silently (docs/from-mlpstorage.md)."""

import argparse
import shlex
import sys
from pathlib import Path

from suite import mlpstorage_flags as table
from suite.errors import ExitCode, SuiteError

PROG = "suite mlpstorage"


def add_parser(sub) -> None:
    p = sub.add_parser("mlpstorage", help="run an mlpstorage 2.0 command line as its suite equivalent",
                       description="mlpstorage 2.0.0b1's command lines, mapped onto suite's commands and printed "
                                   "before they run (docs/from-mlpstorage.md)")
    programs = p.add_subparsers(dest="program", metavar="PROGRAM")
    programs.required = True
    for program in ("training", "checkpointing", "reports"):
        pp = programs.add_parser(program, help=f"mlpstorage {program}")
        commands = pp.add_subparsers(dest="mlps_command", metavar="COMMAND")
        commands.required = True
        for form in table.FORMS:
            if form.split()[0] == program:
                _add_form(commands, form)
        if program == "training":
            _add_not_mapped(commands, "configview")
    for program in ("vectordb", "history"):
        _add_not_mapped(programs, program)


def _add_form(commands, form: str) -> None:
    fp = commands.add_parser(form.split()[1], help=f"mlpstorage {form}")
    fp.set_defaults(form=form)
    for f in table.flags_for(form):
        names = [f.name] + ([f.short] if f.short else [])
        kw = {"dest": f.key, "required": form in f.required, "help": f.suite.replace("%", "%%")}
        if f.type == "flag":
            fp.add_argument(*names, action="store_true", **kw)
            continue
        if f.type == "list":
            kw["nargs"] = "+"
        elif f.type == "params":
            kw.update(nargs="+", action="append")
        elif f.type == "int":
            kw["type"] = int
        if f.choices:       # --model: training's models or checkpointing's, as mlpstorage takes them
            kw["choices"] = table.MODEL_CHOICES[form.split()[0]] if f.name == "--model" else f.choices
        fp.add_argument(*names, default=None, **kw)


def _add_not_mapped(sub, name: str) -> None:
    np_ = sub.add_parser(name, help="not mapped: " + table.NOT_MAPPED[_not_mapped_key(name)], add_help=False,
                         prefix_chars="\x01")         # every word after it is its (refused whole in run)
    np_.add_argument("rest", nargs=argparse.REMAINDER)
    np_.set_defaults(form=_not_mapped_key(name))


def _not_mapped_key(name: str) -> str:
    return "training configview" if name == "configview" else name


def run(args) -> int:
    if args.form in table.NOT_MAPPED:
        raise SuiteError(f"mlpstorage {args.form}: not mapped: {table.NOT_MAPPED[args.form]}")
    from suite.report.escape import terminal, terminal_lines    # control characters made visible; wrapped

    steps, notes, after = translate(args)
    for note in notes:
        print(terminal_lines(f"{PROG}: note: {note}"), file=sys.stderr)
    for argv in steps:
        print(_command_lines(terminal(f"{PROG}: equivalent: {shlex.join(['suite', *argv])}")), flush=True)
    if args.what_if:
        return ExitCode.OK
    code = ExitCode.OK
    for k, argv in enumerate(steps):
        if k:           # a v2.0 checkpoint's write phase ends 1 until its read phase is there: go on unless refused
            print(terminal(f"{PROG}: then: {shlex.join(['suite', *argv])}"), flush=True)
        code = dispatch(argv)
        if code not in (ExitCode.OK, ExitCode.FAILED):
            return code
    if after and code == ExitCode.OK:
        print(_command_lines(terminal(after)))
    return code


def dispatch(argv: list[str]) -> int:
    """Run `suite ARGV` through its own command module and parser (the same code `suite ARGV` runs)."""
    from suite.cliargs import Parser
    from suite.commands import check, datagen, datasize, report, run as run_command

    module = {"datasize": datasize, "datagen": datagen, "run": run_command, "report": report, "check": check}[argv[0]]
    parser = Parser(prog="suite")
    sub = parser.add_subparsers(dest="command")
    module.add_parser(sub)
    args = parser.parse_args(argv)
    args.argv = list(argv)
    return int(module.run(args))


def translate(args) -> tuple[list[list[str]], list[str], str]:
    """(suite's argvs, in order, the notes for the flags accepted without effect, a line to print after)."""
    refuse_all(args)
    notes = noted(args)
    if args.open and args.closed:
        raise SuiteError("--open/--closed: expected one of them, got both (mlpstorage takes one)")
    build = {table.T_DS: _training_datasize, table.T_DG: _training_datagen, table.T_RUN: _training_run,
             table.C_DS: _checkpointing_datasize, table.C_RUN: _checkpointing_run, table.R_GEN: _reportgen}
    argv, after = build[args.form](args, notes)
    return (argv if isinstance(argv[0], list) else [argv]), notes, after


def refuse_all(args) -> None:
    for f in table.flags_for(args.form):
        given = getattr(args, f.key, None)
        if f.action == "refuse" and given not in (None, False):
            raise SuiteError(f"{f.name}: refused: {f.suite}")
    if getattr(args, "exec_type", None) == "docker":
        raise SuiteError("--exec-type docker: refused: suite runs no containers (its ranks run under MPI)")
    for f in table.flags_for(args.form):
        value = getattr(args, f.key, None)
        least = 0 if f.name.startswith("--num-checkpoints") else 1      # mlpstorage: 0 checkpoints is a phase left out
        if f.type == "int" and value is not None and value < least:
            raise SuiteError(f"{f.name}: expected an integer >= {least}, got {value}")


def noted(args) -> list[str]:
    out = []
    for f in table.flags_for(args.form):
        value = getattr(args, f.key, None)
        if f.action == "note" and value not in (None, False):
            out.append(f"{f.name}{'' if value is True else ' ' + str(value)}: {f.suite}")
    return out


def _model_dir(path: str, model: str) -> str:
    """mlpstorage's data layout: D/<model>, or D as given when it already ends with a model's name."""
    return path if any(path.endswith(m) for m in table.MODELS) else str(Path(path) / model)


def _leaf(parent: Path) -> Path:
    """parent/<stamp>: mlpstorage's DATETIME_STR on the rules' clock (local time), one no earlier run took
    (leafstamp.fresh waits for the next second: two runs started within one second get two leaves)."""
    from suite.harness import leafstamp

    return parent / leafstamp.fresh(parent)


def _hosts(args) -> list[str]:
    hosts = []
    for h in args.hosts or ["127.0.0.1"]:
        hosts += [x for x in h.split(",") if x]                # mlpstorage takes "h1 h2" and "h1,h2"
    return hosts or ["127.0.0.1"]


def _params(args) -> dict[str, str]:
    """--params k=v ... (repeatable), later keys over earlier ones as mlpstorage's dict does, DLIO's
    names renamed to suite's."""
    out: dict[str, str] = {}
    for group in args.params or []:
        for item in group:
            key, sep, value = item.partition("=")
            if not sep:
                raise SuiteError(f"--params {item}: expected KEY=VALUE, got no '='")
            key = key.strip().removeprefix("++workload.").removeprefix("workload.")
            out[table.PARAM_KEYS.get(key, key)] = value
    return out


def _memory(args) -> str:
    return f"{args.client_host_memory_in_gb}GiB"


def _once(args, notes: list[str], what: str) -> None:
    if args.loops not in (None, 1):
        raise SuiteError(f"--loops {args.loops}: refused: {what} runs once (--loops is for run)")
    if args.results_dir is not None:
        notes.append(f"--results-dir {args.results_dir}: {what} writes no results dir "
                     f"({'it writes nothing' if 'datasize' in what else 'its log is DATA_DIR/generation_log.json'})")
    if args.open or args.closed:
        notes.append(f"--{'open' if args.open else 'closed'}: the division is a run's; {what} has none")


def _training_datasize(args, notes) -> tuple[list[str], str]:
    if args.params:
        raise SuiteError("--params: refused with datasize: suite datasize sizes the workload as its file has it")
    _once(args, notes, "suite datasize")
    hosts = args.num_client_hosts or len(_hosts(args))
    if args.checkpoint_folder:
        notes.append(f"--checkpoint-folder {args.checkpoint_folder}: datasize does not use it")
    argv = ["datasize", "--workload", args.model, "--accelerator-type", args.accelerator_type,
            "--accelerators", str(args.max_accelerators), "--client-hosts", str(hosts),
            "--host-memory", _memory(args), "--ruleset", table.ruleset()]
    from suite.training import workloads
    from suite.training import datasize

    files = datasize.compute(workloads.resolve(args.model, args.accelerator_type), args.max_accelerators, hosts,
                             args.client_host_memory_in_gb * 1024**3, table.ruleset()).num_files
    nxt = ["suite", "mlpstorage", "training", "datagen", "--model", args.model, "--num-processes",
           str(args.max_accelerators), "--data-dir", args.data_dir or "DATA_DIR", "--params",
           f"dataset.num_files_train={files}"]
    return argv, f"{PROG}: next (mlpstorage's form): {shlex.join(nxt)}"


def _training_datagen(args, notes) -> tuple[list[str], str]:
    _once(args, notes, "suite datagen")
    if len(_hosts(args)) > 1:
        raise SuiteError(f"--hosts {' '.join(_hosts(args))}: refused with datagen: suite datagen writes from this "
                         "host (across hosts: run `suite datagen` under mpiexec, docs/dataset.md)")
    if not args.data_dir:
        raise SuiteError("--data-dir: expected the directory the dataset goes under (D/MODEL), got none")
    params = _params(args)
    files = params.pop("dataset.num_files_train", table.DATAGEN_FILES[args.model])
    argv = ["datagen", "--workload", args.model, "--data-dir", _model_dir(args.data_dir, args.model),
            "--files", str(files), "--processes", str(args.num_processes)]
    for key, value in params.items():
        argv += ["--param", f"{key}={value}"]
    return argv, ""


def _training_run(args, notes) -> tuple[list[str], str]:
    hosts = _hosts(args)
    if args.num_client_hosts is not None and args.num_client_hosts != len(hosts):
        raise SuiteError(f"--num-client-hosts {args.num_client_hosts}: refused: suite counts the hosts it runs "
                         f"on, and --hosts names {len(hosts)}")
    if not args.data_dir:
        raise SuiteError("--data-dir: expected the directory holding DATA_DIR/MODEL (suite mlpstorage training "
                         "datagen writes it), got none")
    if args.checkpoint_folder:
        notes.append(f"--checkpoint-folder {args.checkpoint_folder}: mlpstorage 2.0.0b1 passes it to nothing in a "
                     "training run; suite writes unet3d's checkpoint under the results dir")
    results = _leaf(Path(args.results_dir or table.DEFAULT_RESULTS_DIR) / "training" / args.model / "run")
    argv = ["run", "--workload", args.model, "--accelerator-type", args.accelerator_type,
            "--accelerators", str(args.num_accelerators), "--data-dir", _model_dir(args.data_dir, args.model),
            "--results-dir", str(results), "--memory-limit", _memory(args), "--ruleset", table.ruleset()]
    argv += _run_common(args, hosts)
    for key, value in _params(args).items():
        argv += ["--param", f"{key}={value}"]
    return argv, ""


def _run_common(args, hosts: list[str]) -> list[str]:
    out = []
    if args.loops is not None:
        out += ["--runs", str(args.loops)]
    if args.open or args.closed:
        out += ["--division", "open" if args.open else "closed"]
    if len(hosts) > 1 or hosts[0] not in table.LOCAL_HOSTS:
        out += ["--hosts", ",".join(hosts)]
    return out


def _checkpointing_datasize(args, notes) -> tuple[list[str], str]:
    if args.params:
        raise SuiteError("--params: refused with checkpointing: suite's checkpoint is the model's, as its file has it")
    _once(args, notes, "suite datasize")
    if args.checkpoint_folder:
        notes.append(f"--checkpoint-folder {args.checkpoint_folder}: datasize does not use it")
    _checkpoint_counts(args, notes)
    return ["datasize", "--workload", args.model, "--accelerators", str(args.num_processes),
            "--client-hosts", str(len(_hosts(args))), "--host-memory", _memory(args), "--ruleset", table.ruleset()], ""


def _checkpoint_counts(args, notes) -> None:
    given = [f"--num-checkpoints-{w} {v}" for w, v in (("read", args.num_checkpoints_read),
                                                       ("write", args.num_checkpoints_write)) if v is not None]
    if given:
        notes.append(f"{', '.join(given)}: datasize sizes one checkpoint")


def _checkpointing_run(args, notes) -> tuple[list[list[str]], str]:
    """mlpstorage writes then reads in one DLIO invocation; suite's v2.0 reads after a page-cache drop in an
    invocation of its own: the write phase, the read phase (each its own dir under the leaf), then
    `suite check` of the pair. One phase where the other's count is 0."""
    if args.params:
        raise SuiteError("--params: refused with checkpointing: suite's checkpoint is the model's, as its file has it")
    if not args.checkpoint_folder:
        raise SuiteError("--checkpoint-folder: expected where the checkpoints go (mlpstorage requires it), got none")
    leaf = _leaf(Path(args.results_dir or table.DEFAULT_RESULTS_DIR) / "checkpointing" / args.model)
    write = 10 if args.num_checkpoints_write is None else args.num_checkpoints_write
    read = 10 if args.num_checkpoints_read is None else args.num_checkpoints_read
    if write == read == 0:
        raise SuiteError("--num-checkpoints-write 0 --num-checkpoints-read 0: expected a phase to run, got neither")
    phases = [(name, w, r) for name, w, r in (("write", write, 0), ("read", 0, read)) if w or r]
    steps = [["run", "--workload", args.model, "--accelerators", str(args.num_processes),
              "--data-dir", str(Path(args.checkpoint_folder) / args.model),
              "--results-dir", str(leaf / name if len(phases) > 1 else leaf), "--memory-limit", _memory(args),
              "--ruleset", table.ruleset(), "--checkpoints-write", str(w), "--checkpoints-read", str(r),
              *_run_common(args, _hosts(args))] for name, w, r in phases]
    if len(phases) > 1:
        steps.append(["check", str(leaf), "--ruleset", table.ruleset()])
    return steps, ""


def _reportgen(args, notes) -> tuple[list[str], str]:
    if args.loops not in (None, 1):
        raise SuiteError(f"--loops {args.loops}: refused: suite report runs once (--loops is for run)")
    if args.open or args.closed:
        notes.append(f"--{'open' if args.open else 'closed'}: suite report shows each result's own division")
    root = Path(args.results_dir or table.DEFAULT_RESULTS_DIR)
    out = args.output_dir or str(root.parent / f"{root.name}-report")
    return ["report", str(root), "--out", out], ""


def _command_lines(line: str) -> str:
    """A long command line within the terminal's width, continued with backslashes (it still pastes)."""
    from suite.terminal import WIDTH, wrap

    parts = wrap(line, width=WIDTH - 2)
    return " \\\n".join(parts)
