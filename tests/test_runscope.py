"""suite/runscope.py: an option the chosen kind of run would ignore is refused, not dropped."""

import pytest

from suite import cli, runscope

ALL_KINDS = {"help", "command", "workload", "data_dir", "results_dir", "format", "engine", "scope_defaults", "history",
             "no_history"}


def run_parser_dests() -> set:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return {a.dest for a in sub.choices["run"]._actions}


def test_every_run_option_has_a_scope():
    """A new `suite run` option must say which kinds use it (or be one every kind uses)."""
    assert run_parser_dests() - ALL_KINDS == set(runscope.options("run"))


@pytest.mark.parametrize("argv, needle", [
    (["--workload", "tpcx-ai", "--scale-factor", "0.01", "--runs", "3"], "--runs: expected only with a training"),
    (["--workload", "tpcx-ai", "--scale-factor", "0.01", "--hosts", "a,b"], "got a,b with tpcx-ai"),
    (["--workload", "tpcx-ai", "--scale-factor", "0.01", "--mode", "subset"], "--mode: expected only with a check"),
    (["--workload", "resnet50", "--accelerators", "1", "--streams", "7"], "--streams: expected only with --workload tpcx-ai, got 7"),
    (["--workload", "unet3d", "--accelerators", "1", "--use-cases", "1,3"], "--use-cases: expected only with --workload tpcx-ai, got 1,3"),
    (["--workload", "llama3-8b", "--accelerators", "8", "--processes", "3"], "--processes: expected only with --workload tpcx-ai"),
    (["--workload", "llama3-8b", "--accelerators", "8", "--accelerator-type", "a100"], "--accelerator-type: expected only with a training"),
    (["--workload", "llama3-8b", "--accelerators", "8", "--param", "x=1"], "--param: expected only with a training"),
    (["--workload", "resnet50", "--accelerators", "1", "--engine", "dlio", "--debug-read-delay", "0.5"],
     "--debug-read-delay: expected only with --engine suite, got 0.5 with --engine dlio"),
])
def test_an_option_the_kind_ignores_is_one_line_exit_2_and_nothing_runs(run_cli, tmp_path, argv, needle):
    code, out, err = run_cli("run", *argv, "--results-dir", tmp_path / "r")
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r").exists()


def test_a_default_given_explicitly_is_not_a_refusal():
    args = cli.build_parser().parse_args(["run", "--workload", "tpcx-ai", "--division", "closed", "--streams", "2",
                                          "--scale-factor", "1"])
    runscope.refuse_unused(args)        # --division closed is the default: nothing was dropped
    assert runscope.kind("llama3-1t") == "checkpointing" and runscope.kind("cosmoflow") == "training"


@pytest.mark.parametrize("argv, needle", [
    (["sweep", "--workload", "resnet50", "--find-max", "--start", "100", "--max-accelerators", "8"],
     "--start: expected at most --max-accelerators 8, got 100"),
    (["sweep", "--workload", "resnet50", "--accelerators", "1,2", "--start", "4"],
     "--start/--max-accelerators: expected only with --find-max"),
    (["datagen", "--workload", "resnet50", "--files", "2", "--client-hosts", "8"],
     "--client-hosts/--ruleset: expected only with --accelerators and --host-memory"),
    (["datagen", "--workload", "resnet50", "--files", "2", "--ruleset", "v0.5"], "got 1/v0.5 with a file count"),
    (["datagen", "--workload", "resnet50", "--files", "2", "--engine", "dlio", "--seed", "7"],
     "--seed: expected only with --engine suite (DLIO generates with its own seed), got 7"),
    (["datasize", "--workload", "llama3-8b", "--accelerators", "8", "--host-memory", "64GiB", "--mode", "subset",
      "--client-hosts", "4"], "--mode subset: expected one client host (node-local storage), got --client-hosts 4"),
    (["run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--processes", "0"],
     "--processes: expected a positive number of generator processes, got 0"),
    (["run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--seed", "-5"], "--seed: expected an integer 0..2^32-1"),
    (["run", "--workload", "llama3-8b", "--accelerators", "8", "--checkpoints-read", "0", "--hosts", "h1,h2"],
     "(refused before anything started)"),     # checkpointing across hosts: every host probed first
])
def test_other_values_a_command_would_drop_or_misread_are_refused(run_cli, tmp_path, argv, needle):
    out_dir = "--data-dir" if argv[0] == "datagen" else "--results-dir"
    extra = [] if argv[0] == "datasize" else [out_dir, tmp_path / "o"]
    code, out, err = run_cli(*argv, *extra)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "o").exists()


def test_check_and_report_refuse_options_their_input_does_not_use(run_cli, tmp_path):
    import json

    from tests.paths import TESTS
    from tests.tpcx_ai.test_driver_check import good_doc
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "tpcxai-result.json").write_text(json.dumps(good_doc()))
    code, out, err = run_cli("check", tmp_path / "t", "--ruleset", "v0.5")
    assert code == 2 and "--ruleset: expected none for a TPCx-AI result" in err
    fdr = TESTS.parent / "submissions" / "examples" / "dell-sf10-fdr.yaml"
    code, out, err = run_cli("report", fdr, "--out", tmp_path / "rep", "--storage-nodes", 7)
    assert code == 2 and "--storage-nodes: expected only with a sweep dir" in err and not (tmp_path / "rep").exists()


def test_an_error_echoing_the_input_stays_one_line_with_control_characters_shown(run_cli):
    code, out, err = run_cli("run", "--workload", "tpcx-ai", "--scale-factor", "1", "--hosts", "a\x1b[31mred\nline2")
    assert code == 2 and err.count("\n") == 1 and "\x1b" not in err
    assert "got a\\x1b[31mred\\x0aline2 with tpcx-ai" in err
