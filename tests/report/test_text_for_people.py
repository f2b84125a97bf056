"""Output people can read (issue 38, the terminal side): of a real small `suite run` (real mpiexec),
`suite check` and `suite metrics` in text, no line wider than 100 columns (but a path that cannot be
broken), no float with more than 4 decimals in the findings, the re-derivations as counts (every one
in --format json), the JSON with the exact values, the run ending on the verdict line, and none of
mpiexec's own lines on the terminal unless the launch failed."""

import json
import re
import sys

import pytest

from suite.harness import mpi
from suite.report import rounding
from suite.rules.verdict import parse
from suite.training.data import datagen
from suite.training import workloads
from suite.terminal import WIDTH, fit, headed, wrap

# a tiny unet3d dataset (30 files of ~0.2 MB): a real run in seconds, findings with floats in them
DATA_PARAMS = ["dataset.record_length=200000", "dataset.record_length_stdev=50000"]
# computation 0.1 ms a step: the AU falls below the threshold, a finding whose value is a long float
RUN_PARAMS = DATA_PARAMS + ["train.epochs=1", "train.computation_time=0.0001", "checkpoint.model_size=1000000"]
LONG_FLOAT = re.compile(r"(?<![\w.:])\d+\.\d{5,}")


@pytest.fixture(scope="module")
def said(tmp_path_factory):
    """{command: (exit code, stdout)} of run, check (text and JSON) and metrics over one real small run."""
    from suite import cli
    import contextlib
    import io

    base = tmp_path_factory.mktemp("people")
    wl = workloads.resolve("unet3d", "h100", workloads.parse_params(DATA_PARAMS))
    datagen.generate(wl, base / "data", 30, processes=1)
    res = base / "R"
    params = [a for p in RUN_PARAMS + [f"checkpoint.checkpoint_folder={base / 'ckpt'}"] for a in ("--param", p)]
    out = {}
    for name, argv in {
        "run": ["run", "--workload", "unet3d", "--accelerator-type", "h100", "--accelerators", 1, "--runs", 1,
                "--data-dir", base / "data", "--results-dir", res, "--division", "open", "--no-history", *params],
        "check": ["check", res], "check-json": ["check", res, "--format", "json"],
        "metrics": ["metrics", res], "metrics-json": ["metrics", res, "--format", "json"],
    }.items():
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = cli.main([str(a) for a in argv])
        out[name] = (code, buf.getvalue())
    out["res"] = res
    return out


def _too_wide(text: str) -> list[str]:
    """Lines over WIDTH columns that could have been broken (a lone unbreakable word may stay)."""
    return [line for line in text.splitlines() if len(line) > WIDTH and " " in line.strip()]


@pytest.mark.parametrize("command", ["run", "check", "metrics"])
def test_no_text_line_is_wider_than_100_columns(said, command):
    code, text = said[command]
    assert code in (0, 1) and text.strip(), (command, code)
    assert _too_wide(text) == [], command


def test_the_run_ends_on_its_verdict_line_and_says_why_in_short_lines(said):
    code, text = said["run"]
    lines = text.rstrip("\n").splitlines()
    verdict = parse(lines[-1])
    assert verdict is not None and code == (0 if verdict[2] else 1), lines[-1]
    # not compliant: a short headline, then one indented line per reason
    head = next(i for i, x in enumerate(lines) if x.startswith("results: ") and x.endswith("NOT compliant"))
    assert len(lines[head]) <= WIDTH and lines[head + 1].startswith("  - ")


def test_mpiexecs_own_lines_stay_off_the_terminal_of_a_run_that_went_well(said):
    _, text = said["run"]
    assert "[METRIC]" in text                                # the ranks' lines do reach it
    assert "[mpiexec@" not in text and "Exit codes" not in text
    logs = list(said["res"].rglob("mpiexec.log"))
    assert logs and any("Exit codes" in p.read_text() for p in logs)      # kept in the leaf instead


def _finding_text(text: str) -> list[str]:
    """The findings' lines of `suite check` text: each finding's line and its wrapped continuation."""
    out, inside = [], False
    for line in text.splitlines():
        if re.match(r"  (closed|open|invalid|fix-required)\s", line):
            inside = True
        elif not line.startswith(" " * 18):
            inside = False
        if inside:
            out.append(line)
    return out


def test_findings_text_rounds_numbers_and_the_json_keeps_them_exact(said):
    _, text = said["check"]
    found = [f for b in json.loads(said["check-json"][1])["benchmarks"] for f in b["findings"]]
    exact = [f for f in found if isinstance(f["actual"], float) and LONG_FLOAT.search(repr(f["actual"]))]
    assert exact, "no finding with a long float: this test would prove nothing"
    lines = _finding_text(text)
    assert lines and not [x for x in lines if LONG_FLOAT.search(x)]
    flat = " ".join(" ".join(lines).split())
    for f in exact:                                          # each said rounded, by its field's meaning
        assert f"got {rounding.number(f['actual'], f['field'])}" in flat, f["message"]
        assert repr(f["actual"]) in f["message"]             # the record's own message: exact


def test_rederived_claims_are_counted_in_text_and_listed_in_json(said):
    _, text = said["check"]
    records = [r for b in json.loads(said["check-json"][1])["benchmarks"] for r in b["rederived"]]
    agreed = sum(r["status"] == "rederived" for r in records)
    assert agreed > 5
    lines = text.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith(f"         re-derived: {agreed} claims agree"))
    block = [x for x in lines[at + 1:at + 20]]
    block = block[:next(i for i, x in enumerate(block) if not x.startswith(" " * 11))]
    sources = {r["from"] for r in records if r["status"] == "rederived"}
    assert 0 < len(block) <= 2 * len(sources) < agreed         # counts and a few names, never every claim


def test_metrics_json_keeps_the_full_values(said):
    doc = json.loads(said["metrics-json"][1])
    au = doc["benchmarks"][0]["overall"]["au_mean_percentage"]
    assert isinstance(au, float) and f"{au:.2f}" in said["metrics"][1]


@pytest.mark.parametrize("value,field,shown", [
    (26.696426993492032, "metric.train_au_mean_percentage", "26.70"),
    (26.696426993492032, "throughput", "26.70"),
    (0.123456789, "duration_s", "0.123"),
    (12.0, "bytes_read", "12"),
    (5 * 2**30 + 0.4, "bytes_read", "5368709120 (5.00 GiB)"),
    (0.000012345, "ratio", "1.23e-05"),
    (0.0123456, "ratio", "0.0123"),
    (85.0, "au", "85.00"),
    (85.0, "threshold", "85.0"),
])
def test_numbers_are_rounded_to_what_they_mean(value, field, shown):
    assert rounding.number(value, field) == shown


def test_free_text_rounds_long_floats_but_leaves_versions_times_and_names():
    text = "got 26.696426993492032 at 12:00:01.123456 with v1.2.34567 in run_1.000001x"
    assert rounding.rounded(text) == "got 26.70 at 12:00:01.123456 with v1.2.34567 in run_1.000001x"


def test_wrapping_keeps_columns_and_never_cuts_a_path():
    path = "/".join(["deep"] * 30)
    lines = wrap(f"  invalid error   {path}: field: expected 1, got 2 (rule)", hang=18)
    assert lines[0] == "  invalid error" and lines[1] == " " * 18 + path + ":"
    assert lines[2] == " " * 18 + "field: expected 1, got 2 (rule)"
    text = fit("a\n" + "word " * 30 + "\n")
    assert text.endswith("\n") and text.split() == ["a"] + ["word"] * 30
    first, second, third = text.splitlines()
    assert len(second) <= WIDTH < len(second) + 5 and third.startswith("    word")
    assert all(len(x) <= WIDTH for x in headed("results: x: NOT compliant", ["because " * 30]))


def _launch(tmp_path, capsys, code: int):
    passes_all = lambda stream, log: [sys.stdout.write(r.decode()) for r in iter(stream.readline, b"")]  # kv_cache's kind
    argv = mpi.mpiexec_argv(2) + [sys.executable, "-c", f"import sys; print('rank line'); sys.exit({code})"]
    rc = mpi.launch(argv, tmp_path, None, relay=passes_all)
    return rc, capsys.readouterr().out


def test_launcher_lines_reach_the_terminal_only_when_the_launch_failed(tmp_path, capsys):
    rc, out = _launch(tmp_path, capsys, 0)
    assert rc == 0 and out.count("rank line") == 2 and "[mpiexec@" not in out
    assert "Exit codes" in (tmp_path / "mpiexec.log").read_text()
    rc, out = _launch(tmp_path, capsys, 3)
    assert rc != 0 and out.count("rank line") == 2
    shown = out.split("mpiexec said", 1)[1].splitlines()
    assert "Exit codes" in shown[1] and all(len(x) <= WIDTH for x in shown[1:])


def test_the_workload_list_fits_100_columns(run_cli):
    """`suite list workloads`: the training table, the ten use cases (a list where their columns cannot
    sit side by side with no word cut) and the other kinds' one-line summaries, all within 100 columns."""
    code, out, _ = run_cli("list", "workloads")
    assert code == 0 and "UC10" in out and "vdb-mini" in out
    assert _too_wide(out) == [], _too_wide(out)


def test_a_proxys_line_of_bare_numbers_goes_to_the_log_not_the_terminal(tmp_path, capsys):
    """Issue 47: multi-host runs printed a stray `[suite-h2] 0,0` (Hydra's per-host proxy), unsaid what it
    is. A real launch whose output holds such a line: the terminal gets the ranks' lines only."""
    passes_all = lambda stream, log: [sys.stdout.write(r.decode()) for r in iter(stream.readline, b"")]
    argv = mpi.mpiexec_argv(1) + [sys.executable, "-c", "print('[suite-h2] 0,0'); print('rank line [1] 2,3')"]
    rc = mpi.launch(argv, tmp_path, None, relay=passes_all)
    out = capsys.readouterr().out
    assert rc == 0 and "rank line [1] 2,3" in out and "[suite-h2] 0,0" not in out
    assert "[suite-h2] 0,0" in (tmp_path / "mpiexec.log").read_text()
