"""`suite mlpstorage` (suite/commands/mlpstorage.py, the flag table suite/mlpstorage_flags.py): mlpstorage
2.0.0b1's command lines run as their suite equivalents; its datasize answer in 24 cases (3 models x 2
accelerators x 4 host/memory mixes) equals the door's; refused and unknown flags are one line, exit 2.

The reference answers: the real mlpstorage 2.0.0b1 (../shared/oracles/, installed by the session fixture
into a venv of its own by tests/reference_tool.py: skipped where the tarball or pip cannot be had), and the same answers
recorded in tests/data/mlpstorage/reference.json with the command that made them (always checked)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import paths
from suite import mlpstorage_flags as table

ORACLE = paths.REPO.parent / "shared" / "oracles" / "mlpstorage-2.0.0b1-caa90c9.tar.gz"
RECORDED = json.loads((paths.REPO / "tests" / "data" / "mlpstorage" / "reference.json").read_text())
# host mixes: (client hosts, GiB per host, accelerators): the steps rule dictates some, the memory rule others
MIXES = [(1, 128, 64), (2, 256, 8), (4, 512, 128), (8, 1024, 16)]
CASES = [(m, a, *mix) for m in ("unet3d", "resnet50", "cosmoflow") for a in ("a100", "h100") for mix in MIXES]
# the flags of each mlpstorage subcommand, from its own parser (run in its venv)
PROBE = """
import argparse, json, sys
from mlpstorage import cli
root = argparse.ArgumentParser()
sub = root.add_subparsers()
for name, add in (("training", cli.add_training_arguments), ("checkpointing", cli.add_checkpointing_arguments),
                  ("reports", cli.add_reports_arguments)):
    add(sub.add_parser(name))
out = {}
for name, p in sub.choices.items():
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, cp in action.choices.items():
                out[name + " " + command] = sorted(sorted(a.option_strings, key=len, reverse=True) for a in cp._actions
                                                   if a.option_strings and "--help" not in a.option_strings)
json.dump(out, sys.stdout, sort_keys=True)
"""


def _datasize_argv(model, accel, hosts, gib, n):
    return ["training", "datasize", "--model", model, "--accelerator-type", accel, "--max-accelerators", str(n),
            "--client-host-memory-in-gb", str(gib), "--num-client-hosts", str(hosts)]


@pytest.fixture(scope="session")
def mlpstorage_venv():
    """mlpstorage 2.0.0b1 in a venv of its own (tests/reference_tool.py: made once, under a lock across
    xdist workers); skipped where the oracle tarball is absent or pip cannot install it."""
    from tests.reference_tool import mlpstorage

    return mlpstorage().parent.parent


def oracle_files(venv: Path, tmp: Path, case) -> int:
    """`mlpstorage training datasize ...`'s "Number of training files" (HOME and its results in tmp)."""
    done = subprocess.run([venv / "bin" / "mlpstorage", *_datasize_argv(*case), "--results-dir", str(tmp / "r")],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp)})
    found = re.findall(r"Number of training files: (\d+)", done.stdout + done.stderr)
    assert done.returncode == 0 and found, done.stdout[-2000:] + done.stderr[-2000:]
    return int(found[-1])


def door_files(run_cli, case) -> int:
    code, out, err = run_cli("mlpstorage", *_datasize_argv(*case))
    assert code == 0, err
    return int(re.search(r"^files\s+(\d+)$", out, re.M).group(1))


@pytest.mark.parametrize("case", CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_the_door_sizes_as_the_recorded_reference_does(run_cli, case):
    recorded = {tuple(c["case"]): c["files"] for c in RECORDED["datasize"]}
    assert door_files(run_cli, case) == recorded[case]


def test_the_door_sizes_as_the_real_reference_does_in_all_24_cases(run_cli, mlpstorage_venv, tmp_path):
    theirs = {case: oracle_files(mlpstorage_venv, tmp_path, case) for case in CASES}
    ours = {case: door_files(run_cli, case) for case in CASES}
    assert ours == theirs
    assert theirs == {tuple(c["case"]): c["files"] for c in RECORDED["datasize"]}     # the record is the tool's


def test_the_table_has_every_flag_of_the_real_reference(mlpstorage_venv):
    done = subprocess.run([mlpstorage_venv / "bin" / "python", "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    live = json.loads(done.stdout)
    assert set(live) - set(RECORDED["flags"]) == {"training configview"} <= set(table.NOT_MAPPED)
    assert {k: v for k, v in live.items() if k in RECORDED["flags"]} == RECORDED["flags"]


@pytest.mark.parametrize("form", table.FORMS)
def test_the_table_has_every_flag_the_reference_records(form):
    recorded = sorted(RECORDED["flags"][form])
    ours = sorted([f.name, f.short] if f.short else [f.name] for f in table.flags_for(form))
    assert ours == recorded


def test_28_training_and_checkpointing_flags_each_mapped_noted_or_refused():
    names = {f.name for f in table.FLAGS if set(f.forms) & set(table.TRAINING + table.CHECKPOINTING)}
    assert len(names) == 28
    assert all(f.action in ("map", "note", "refuse") and f.suite for f in table.FLAGS)


def test_the_docs_table_is_the_flag_table():
    page = (paths.REPO / "docs" / "from-mlpstorage.md").read_text()
    assert table.markdown_table() in page, "regenerate: python -c 'from suite import mlpstorage_flags as t; print(t.markdown_table())'"


def test_the_24_cases_cover_both_rules(run_cli):
    said = {run_cli("mlpstorage", *_datasize_argv(*case))[1].split("dictated by", 1)[1].split()[1] for case in CASES}
    assert said == {"minimum-steps", "5x"}


def _unwrapped(run_cli, *argv):
    """run_cli's (code, out, err), a command continued over lines (a backslash at the 100-column wrap) joined."""
    code, out, err = run_cli(*argv)
    return code, re.sub(r" \\\n +", " ", out), err


def _lines(text: str) -> int:
    """Lines said, a wrapped line's continuation (indented) not counted apart."""
    return len([x for x in text.splitlines() if x and not x.startswith(" ")])


def test_gib_is_what_the_reference_means_and_gb_says_so(run_cli):
    """The issue's case: 2 hosts x 256 GiB is 19,163 resnet50 files; typed 256GB in suite it is 17,847 and
    suite says which unit it took."""
    assert door_files(run_cli, ("resnet50", "h100", 2, 256, 8)) == 19163
    code, out, err = run_cli("datasize", "--workload", "resnet50", "--accelerators", 8, "--client-hosts", 2,
                             "--host-memory", "256GB", "--ruleset", "v2.0")
    assert code == 0 and re.search(r"^files\s+17847$", out, re.M)
    assert "238.42 GiB (256000000000 B)" in out and _lines(err) == 1 and "is 256GiB" in " ".join(err.split())
    code, out, err = run_cli("datasize", "--workload", "resnet50", "--accelerators", 8, "--host-memory", "137.4GB")
    assert code == 0 and err == ""


def test_what_if_prints_the_suite_command_with_the_references_paths_and_units(run_cli, tmp_path):
    code, out, err = _unwrapped(run_cli, "mlpstorage", "training", "run", "--model", "unet3d", "--num-accelerators", 8,
                             "--accelerator-type", "h100", "--client-host-memory-in-gb", 256, "--data-dir", tmp_path / "d",
                             "--results-dir", tmp_path / "r", "--loops", 5, "--closed", "--what-if",
                             "--params", "reader.read_threads=8", "dataset.record_length_bytes=1000", "--mpi-bin", "mpirun")
    assert code == 0, err
    line = out.strip().splitlines()[-1]
    assert line.startswith("suite mlpstorage: equivalent: suite run --workload unet3d --accelerator-type h100 "
                           f"--accelerators 8 --data-dir {tmp_path}/d/unet3d --results-dir {tmp_path}/r/training/unet3d/run/")
    assert "--memory-limit 256GiB --ruleset v2.0 --runs 5 --division closed" in line
    assert "--param reader.read_threads=8 --param dataset.record_length=1000" in line
    assert "--mpi-bin mpirun: suite launches with its own mpiexec" in err
    assert not (tmp_path / "r").exists() and not (tmp_path / "d").exists()      # --what-if runs nothing


def test_a_data_dir_ending_in_the_model_is_taken_as_given(run_cli):
    code, out, _ = _unwrapped(run_cli, "mlpstorage", "training", "datagen", "--model", "cosmoflow", "--num-processes", 2,
                           "--data-dir", "/x/cosmoflow", "--what-if")
    assert code == 0 and "--data-dir /x/cosmoflow --files 524288 --processes 2" in out


def test_checkpointing_goes_to_the_checkpoint_folder_and_model(run_cli):
    code, out, _ = _unwrapped(run_cli, "mlpstorage", "checkpointing", "run", "--model", "llama3-8b", "--num-processes", 8,
                           "--client-host-memory-in-gb", 512, "--checkpoint-folder", "/c", "--num-checkpoints-read", 0,
                           "--results-dir", "/r", "--what-if")
    assert code == 0
    assert re.search(r"suite run --workload llama3-8b --accelerators 8 --data-dir /c/llama3-8b --results-dir "
                     r"/r/checkpointing/llama3-8b/\d{8}_\d{6} --memory-limit 512GiB --ruleset v2.0 "
                     r"--checkpoints-write 10 --checkpoints-read 0$", out.strip())


def test_a_checkpoint_is_written_then_read_in_two_invocations_then_checked(run_cli):
    code, out, _ = _unwrapped(run_cli, "mlpstorage", "checkpointing", "run", "--model", "llama3-70b", "--num-processes", 64,
                           "--client-host-memory-in-gb", 1024, "--checkpoint-folder", "/c", "--results-dir", "/r",
                           "--what-if")
    lines = [line.split(": equivalent: ", 1)[1] for line in out.strip().splitlines()]
    leaf = re.match(r".* --results-dir (/r/checkpointing/llama3-70b/\d{8}_\d{6})/write ", lines[0]).group(1)
    assert code == 0 and len(lines) == 3
    assert lines[0].endswith("--checkpoints-write 10 --checkpoints-read 0")
    assert f"--results-dir {leaf}/read " in lines[1] and lines[1].endswith("--checkpoints-write 0 --checkpoints-read 10")
    assert lines[2] == f"suite check {leaf} --ruleset v2.0"


@pytest.mark.parametrize("argv,needle", [
    (["training", "datasize", "--model", "unet3d", "--max-accelerators", "1", "--accelerator-type", "h100",
      "--client-host-memory-in-gb", "1", "--bogus"], "unrecognized arguments: --bogus"),
    (["training", "datasize", "--model", "unet3d"], "required"),
    (["training", "datasize", "--model", "bert", "--max-accelerators", "1", "--accelerator-type", "h100",
      "--client-host-memory-in-gb", "1"], "invalid choice"),
    (["training", "datasize", "--model", "unet3d", "--max-accelerators", "1", "--accelerator-type", "h100",
      "--client-host-memory-in-gb", "256GB"], "invalid int value"),
    (["checkpointing", "datasize", "--model", "unet3d", "--num-processes", "8", "--client-host-memory-in-gb", "1"],
     "invalid choice"),
    (["training", "datasize", "--model", "unet3d", "--max-accelerators", "0", "--accelerator-type", "h100",
      "--client-host-memory-in-gb", "1"], "--max-accelerators: expected an integer >= 1, got 0"),
])
def test_bad_input_is_one_line_exit_2(run_cli, argv, needle):
    code, out, err = run_cli("mlpstorage", *argv)
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err


RUN = ["training", "run", "--model", "unet3d", "--num-accelerators", "1", "--accelerator-type", "h100",
       "--client-host-memory-in-gb", "1", "--data-dir", "/d"]


@pytest.mark.parametrize("extra,needle", [
    (["--config-file", "c.yaml"], "--config-file: refused: a YAML file"),
    (["--dlio-bin-path", "/opt/dlio"], "--dlio-bin-path: refused: suite runs its own"),
    (["--allow-invalid-params"], "--allow-invalid-params: refused"),
    (["--exec-type", "docker"], "--exec-type docker: refused"),
    (["--open", "--closed"], "--open/--closed: expected one of them"),
    (["--num-client-hosts", "2"], "--num-client-hosts 2: refused: suite counts the hosts"),
    (["--params", "reader.read_threads"], "expected KEY=VALUE"),
])
def test_a_flag_suite_cannot_honour_is_refused_in_one_line(run_cli, extra, needle):
    code, out, err = run_cli("mlpstorage", *RUN, *extra, "--what-if")
    assert code == 2 and err.startswith("suite mlpstorage: error: ") and needle in err and err.count("\n") == 1
    assert "equivalent" not in out


@pytest.mark.parametrize("argv", [["vectordb", "run-search"], ["history", "show"], ["training", "configview", "-na", "1"]])
def test_a_subcommand_the_door_does_not_take_names_suites_own(run_cli, argv):
    code, _, err = run_cli("mlpstorage", *argv)
    assert code == 2 and "not mapped: " in err and err.count("\n") == 1


def test_a_path_with_control_characters_is_printed_visibly(run_cli):
    code, out, _ = run_cli("mlpstorage", "training", "datagen", "--model", "unet3d", "--num-processes", 1,
                           "--data-dir", "/x/\x1b[2Jd", "--what-if")
    assert code == 0 and "\x1b" not in out


def test_a_second_run_in_the_same_second_gets_a_leaf_of_its_own(tmp_path):
    """Two door runs into one results root within one second: the second is not refused for a taken leaf."""
    from suite.commands import mlpstorage as door
    from suite.harness import leafstamp

    parent = tmp_path / "training" / "unet3d" / "run"
    first = door._leaf(parent)
    first.mkdir(parents=True)
    (first / "summary.json").write_text("{}")
    second = door._leaf(parent)
    assert second != first and second.name > first.name and leafstamp.is_stamp(second.name)
