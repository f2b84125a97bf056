import json
import subprocess
import sys
import time

import pytest


def test_help_is_instant_and_imports_nothing_heavy():
    # CPU seconds of the process, not wall-clock: another job on the cores stretches the latter (issue 38)
    code = ("import sys, time; t=time.process_time(); from suite import cli; "
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: cli.main(['--help'])\n"
            "    except SystemExit: pass\n"
            "heavy = [m for m in ('numpy','h5py','mpi4py','sklearn','xgboost','yaml','jsonschema','matplotlib') if m in sys.modules]\n"
            "print(time.process_time()-t, heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    seconds, heavy = out.split(" ", 1)
    assert float(seconds) < 1.0 and heavy.strip() == "[]"


def test_python_dash_m_suite_works():
    proc = subprocess.run([sys.executable, "-m", "suite", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("suite ")


def test_list_workloads(run_cli):
    code, out, _ = run_cli("list", "workloads")
    assert code == 0
    assert "unet3d" in out and "h100" in out and "0.323" in out and "70%" in out and "v100" in out


def test_datasize_text_names_the_rule_and_next_command(run_cli):
    code, out, _ = run_cli("datasize", "--workload", "unet3d", "--accelerator-type", "h100",
                           "--accelerators", 8, "--client-hosts", 2, "--host-memory", "128GiB")
    assert code == 0
    assert "files         28000" in out and "minimum-steps rule" in out
    assert "suite datagen --workload unet3d --accelerator-type h100 --files 28000" in out
    assert "GiB" in out


def test_the_checkpoint_flow_is_the_rounds_own(run_cli):
    """Issue 47: `list workloads` and `datasize` printed v2.0's two invocations under v3.0 (one invocation
    writes, then reads); every line within 100 columns."""
    code, out, _ = run_cli("datasize", "--workload", "llama3-8b", "--accelerators", 8, "--host-memory", "256GiB",
                           "--ruleset", "v3.0")
    flat = " ".join(out.split())
    assert code == 0 and "--ruleset v3.0 --data-dir CHECKPOINT_DIR" in flat and "--checkpoints-read 0" not in flat
    assert "writes, then reads, in one invocation" in flat and max(map(len, out.splitlines())) <= 100
    code, out, _ = run_cli("datasize", "--workload", "llama3-8b", "--accelerators", 8, "--host-memory", "256GiB",
                           "--ruleset", "v2.0")
    flat = " ".join(out.split())
    assert code == 0 and "--ruleset v2.0 --checkpoints-read 0" in flat and "--checkpoints-write 0" in flat
    code, out, _ = run_cli("list", "workloads")
    flat = " ".join(out.split())
    assert "v3.0: suite run --workload NAME --accelerators N --ruleset v3.0 --data-dir D" in flat
    assert "v2.0: the same with --ruleset v2.0 --checkpoints-read 0" in flat and max(map(len, out.splitlines())) <= 100


def test_datasize_json(run_cli):
    code, out, _ = run_cli("datasize", "--workload", "cosmoflow", "--accelerators", 16,
                           "--host-memory", "64GiB", "--ruleset", "v2.0", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["num_files"] == 121_477 and doc["dictated_by"] == "memory"


def test_gb_and_gib_give_different_sizes(run_cli):
    _, gib, _ = run_cli("datasize", "--workload", "cosmoflow", "--accelerators", 1,
                        "--host-memory", "64GiB", "--format", "json")
    _, gb, _ = run_cli("datasize", "--workload", "cosmoflow", "--accelerators", 1,
                       "--host-memory", "64GB", "--format", "json")
    assert json.loads(gib)["num_files"] > json.loads(gb)["num_files"]


@pytest.mark.parametrize("argv,needle", [
    (["--workload", "nope", "--accelerators", "1", "--host-memory", "1GiB"], "invalid choice"),
    (["--workload", "unet3d", "--accelerators", "0", "--host-memory", "1GiB"], "positive integer"),
    (["--workload", "unet3d", "--accelerators", "1", "--host-memory", "128"], "137.4GB"),
    (["--workload", "unet3d", "--accelerator-type", "tpu", "--accelerators", "1", "--host-memory", "1GiB"],
     "expected one of a100, b200, h100, v100"),
])
def test_datasize_bad_input_is_one_line_exit_2(run_cli, argv, needle):
    code, out, err = run_cli("datasize", *argv)
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_closed_pipe_is_not_a_traceback():
    import subprocess
    import sys

    proc = subprocess.run(f"{sys.executable} -m suite list workloads | head -1", shell=True,
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.startswith("workload") and "Traceback" not in proc.stderr


def _subparser(parser, words):
    """The subparser `suite WORDS...` (e.g. ["submission", "init"])."""
    import argparse

    for w in words:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or w not in sub.choices:
            return parser
        parser = sub.choices[w]
    return parser


def test_the_docs_list_the_rulesets_the_cli_takes():
    """Issue 47: `--help` showed no choices and README's lists fell behind (v2.0). The parser's --ruleset
    metavar is the rounds argtype allows (rules/*/ruleset.yaml); every `--ruleset a|b|...` list in
    README.md and docs/ names exactly those, for its own command."""
    import re
    from pathlib import Path

    from suite import cli

    parser = cli.build_parser()
    repo = Path(__file__).resolve().parent.parent
    found = 0
    for page in [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]:
        for m in re.finditer(r"suite ((?:[a-z][\w-]* ?){1,2})(?:[^`|\n]|\\\|)*?--ruleset ([\w.]+(?:\\?\|[\w.]+)+)", page.read_text()):
            action = next(a for a in _subparser(parser, m.group(1).split())._actions if "--ruleset" in a.option_strings)
            listed = set(m.group(2).replace("\\|", "|").split("|"))
            assert listed == set(action.metavar.choices()), (page.name, m.group(0)[:80], sorted(listed))
            found += 1
    assert found >= 3
    help_text = _subparser(parser, ["check"]).format_help()
    assert "--ruleset auto|" in help_text and "v3.0" in help_text


def test_an_interrupt_caught_inside_an_import_still_exits_130_under_python_m(tmp_path):
    """A stop that lands while code runs from a string (a module imported lazily, a namedtuple or a dataclass
    being made) is caught and reported, and the process exits 130: CPython marked such an interrupt as
    unhandled and, under `python -m`, ended the process by SIGINT (-2) after `suite ...: interrupted`
    (issue 47: test_sigterm_during_package's flake). Here main() meets the interrupt inside an exec'd string,
    as a real command does when SIGTERM lands mid-import, and reports it as main() does."""
    (tmp_path / "stopped_mid_import.py").write_text(
        "import os, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)   # a CI job started in the background ignores it\n"
        "from suite import cli\n"
        "def main():\n"
        "    try:\n"
        "        exec('import os, signal, time\\nos.kill(os.getpid(), signal.SIGINT)\\ntime.sleep(1)')\n"
        "    except KeyboardInterrupt:\n"
        "        print('suite x: interrupted', file=sys.stderr)\n"
        "        return 130\n"
        "    return 0\n"
        "cli.main = main\n"
        "cli.entry()\n")
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "stopped_mid_import"], capture_output=True, text=True, env=env,
                          timeout=60)
    assert (done.returncode, done.stderr.strip()) == (130, "suite x: interrupted")
