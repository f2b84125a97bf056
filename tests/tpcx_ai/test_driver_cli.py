"""`suite run --workload tpcx-ai` and `suite list workloads`: bad input, Ctrl-C, a small run."""

import os
import subprocess
import sys

import pytest
import tpcx_toy

from suite import cli
from suite.errors import SuiteError
from suite.tpcx_ai import run as command
from suite.tpcx_ai import leaf as result


def main(*argv) -> int:
    try:
        return cli.main(list(argv))
    except SystemExit as exc:      # argparse's type= validators
        return exc.code


@pytest.mark.parametrize("argv,needle", [
    (["--scale-factor", "0"], "--scale-factor: expected a finite number > 0, got 0"),
    (["--scale-factor", "-1"], "expected a finite number > 0"),
    (["--scale-factor", "nan"], "expected a finite number > 0, got nan"),
    (["--scale-factor", "inf"], "expected a finite number > 0, got inf"),
    (["--scale-factor", "x"], "expected a number > 0"),
    (["--scale-factor", "1", "--use-cases", "11"], "expected distinct use cases among 1..10"),
    (["--scale-factor", "1", "--use-cases", "1,1"], "expected distinct use cases among 1..10"),
    (["--scale-factor", "1", "--streams", "1"], "--streams: value: expected at least 2 for a metric run"),
    ([], "--scale-factor: expected a number > 0 for --workload tpcx-ai, got none"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, needle):
    code = main("run", "--workload", "tpcx-ai", *argv)
    err = capsys.readouterr().err
    assert code == 2 and needle in err and err.count("\n") == 1


def test_a_use_case_that_is_not_installed_is_exit_2(tmp_path):
    """A registry holding use cases 1 and 2 only: asking for 1,3 is refused in one line before anything is written."""
    args = cli.build_parser().parse_args(["run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--use-cases", "1,3",
                                          "--results-dir", str(tmp_path / "r")])
    with pytest.raises(SuiteError) as exc:
        command.run(args, registry=tpcx_toy.registry(tmp_path / "toy", use_cases=(1, 2)), launcher="fork")
    message = str(exc.value)
    assert exc.value.exit_code == 2 and "\n" not in message
    assert "use case 3" in message and "installed: 1, 2" in message and "not installed" in message
    assert not (tmp_path / "r").exists()


def test_storage_run_still_needs_accelerators(capsys):
    assert main("run", "--workload", "unet3d") == 2
    assert "--accelerators: expected a number" in capsys.readouterr().err


def test_list_workloads_shows_the_ten_use_cases(capsys):
    assert cli.main(["list", "workloads"]) == 0
    out = capsys.readouterr().out
    assert "unet3d" in out and "TPCx-AI" in out
    for n in range(1, 11):
        assert f"UC{n:02d}" in out
    assert "word_error_rate <= 0.5" in out and "accuracy_score >= 0.65" in out
    from suite.tpcx_ai import usecase

    rows = usecase.list_rows(tpcx_toy.registry(__import__("pathlib").Path(os.environ.get("TMPDIR", "/tmp")) / "toy-list"))
    text = repr(rows)
    assert "toy-classify-1" in text and "accuracy_score >= 0.8" in text


def toy_cli(tmp, *argv, **kw):
    return subprocess.Popen([sys.executable, str(tpcx_toy.HERE / "tpcx_toy.py"), str(tmp), *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def test_small_subset_run_exit_codes(tmp_path):
    p = toy_cli(tmp_path, "--scale-factor", "0.01", "--use-cases", "2,3", "--results-dir", str(tmp_path / "r"),
                "--data-dir", str(tmp_path / "d"), "--processes", "2", "--seed", "5")
    out, err = p.communicate(timeout=180)
    # a subset has no AIUCpm: suite check says NOT VALID, and so do the run's last line and exit code (issue 38)
    assert p.returncode == 1 and out.splitlines()[-1] == "verdict: INVALID NOT PUBLISHABLE (not compliant)", err
    assert "no AIUCpm: only use cases 2,3 ran: AIUCpm needs all ten" in out
    doc = result.read(tmp_path / "r")
    assert doc["seed"] == 5 and doc["processes"] == 2 and doc["use_cases"] == [2, 3] and doc["metric"] is None
    assert cli.main(["metrics", str(tmp_path / "r")]) == 2      # a subset: phase times, no metric
