"""The bad-input corpus for `suite check`: every case is a finding or a one-line error with exit 2,
never a traceback, never a read or write outside PATH."""

import json
import os
from pathlib import Path

import pytest

from check_builders import dlio_benchmark, dlio_run, ours_results, storage_report, write_json


def summary(p):
    return p / "run1" / "summary.json"


def over(p):
    return p / "run1" / "configs" / "overrides.yaml"


def w(path: Path, data: bytes | str):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not path.is_symlink():
        path.unlink()
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def outside_file(p) -> Path:
    o = p.parent / "outside-secret.json"
    o.write_text('{"secret": true}')
    return o


def link(target, at: Path):
    if at.exists() or at.is_symlink():
        at.unlink()
    os.symlink(target, at)


def fifo_outside(p):
    fifo = p.parent / "outside.fifo"
    os.mkfifo(fifo)                       # reading it would block forever: proves it is never opened
    link(fifo, summary(p))


def deep(p):
    d = p / "run1"
    for i in range(30):
        d = d / f"d{i}"
    d.mkdir(parents=True)
    (d / "x.json").write_text("{}")


def huge(p):
    with open(summary(p), "wb") as f:       # sparse: 17 MiB apparent size, no disk
        f.truncate(17 * 1024 * 1024)


def json_edit(path_fn, fn):
    def go(p):
        path = path_fn(p)
        doc = json.loads(path.read_text())
        fn(doc)
        path.write_text(json.dumps(doc))
    return go


def set_metric(key, value):
    return json_edit(summary, lambda d: d["metric"].__setitem__(key, value))


def summary_dir(p):
    summary(p).unlink()
    summary(p).mkdir()


def configs_file(p):
    import shutil
    shutil.rmtree(p / "run1" / "configs")
    (p / "run1" / "configs").write_text("not a dir")


def special(p):
    os.mkfifo(p / "run1" / "pipe.json")


def report_trunc(p):
    storage_report(p)
    w(p / "mlperf_storage_report.json", '{"overall": {"num_benchmark_runs": 5')


def report_wrong(p):
    storage_report(p)
    w(p / "mlperf_storage_report.json", '{"overall": [], "runs": 3}')


def dangling(p):
    link(p / "nowhere.json", summary(p))


def loop(p):
    link(p / "run1" / "b.json", p / "run1" / "a.json")
    link(p / "run1" / "a.json", p / "run1" / "b.json")
    link(p / "run1" / "a.json", summary(p))


def dotdot(p):
    outside_file(p)
    link("../../outside-secret.json", summary(p))


def dir_outside(p):
    d = p.parent / "outside-dir"
    dlio_run(d / "runX")
    link(d, p / "run6")


def all_runs(fn):
    def go(p):
        for k in range(1, 6):
            fn(p / f"run{k}")
    return go


def run_summary_edit(fn):
    return all_runs(lambda r: json_edit(lambda _: r / "summary.json", fn)(None))


def small_dataset(memory):
    """100 files (the steps part alone needs 3500) and host memory missing or zero."""
    def edit(d):
        d["num_files_train"] = 100
        if memory is None:
            d.pop("host_memory_GB")
        else:
            d["host_memory_GB"] = memory
    return run_summary_edit(edit)


def copies(p):
    import shutil
    for k in range(2, 6):
        shutil.rmtree(p / f"run{k}")
        shutil.copytree(p / "run1", p / f"run{k}")


def config_edit(section, key, value):
    def edit(r):
        import yaml
        path = r / "configs" / "config.yaml"
        doc = yaml.safe_load(path.read_text())
        doc["workload"][section][key] = value
        path.write_text(yaml.safe_dump(doc))
    return all_runs(edit)


def raw_replace(old, new):
    return lambda p: w(summary(p), summary(p).read_text().replace(old, new, 1))


# name -> (mutation of a valid dlio benchmark dir, expected exit code, rule id or error text)
CASES = {
    "empty-summary": (lambda p: w(summary(p), b""), 1, "input-readable"),
    "truncated-summary": (lambda p: w(summary(p), '{"metric": {"train_au_percentage": [9'), 1, "input-readable"),
    "non-utf8-summary": (lambda p: w(summary(p), b'{"model": "\xff\xfe"}'), 1, "input-readable"),
    "summary-is-list": (lambda p: w(summary(p), "[1, 2, 3]"), 1, "input-readable"),
    "summary-is-number": (lambda p: w(summary(p), "42"), 1, "input-readable"),
    "metric-is-string": (json_edit(summary, lambda d: d.__setitem__("metric", "fast")), 1, "structure-summary-schema"),
    "au-list-of-strings": (set_metric("train_au_percentage", ["95", "96", "97"]), 1, "structure-summary-schema"),
    "au-mean-string": (set_metric("train_au_mean_percentage", "95.5"), 1, "structure-summary-schema"),
    "au-list-empty": (set_metric("train_au_percentage", []), 1, "structure-summary-schema"),
    "nan-au": (lambda p: w(summary(p), summary(p).read_text().replace('"train_au_mean_percentage": 95.5',
                                                                   '"train_au_mean_percentage": NaN')), 1, "au-threshold"),
    "files-as-string": (json_edit(summary, lambda d: d.__setitem__("num_files_train", "3500")), 1,
                        "structure-summary-schema"),
    "host-memory-wrong-type": (json_edit(summary, lambda d: d.__setitem__("host_memory_GB", "lots")), 1,
                               "structure-summary-schema"),
    "huge-summary": (huge, 1, "input-readable"),
    "summary-is-a-directory": (summary_dir, 1, "input-readable"),
    "configs-is-a-file": (configs_file, 1, "input-readable"),
    "special-file": (special, 1, "input-readable"),
    "bad-yaml-overrides": (lambda p: w(over(p), "- workload=unet3d_h100\n  - : [\n"), 1, "input-readable"),
    "overrides-mapping": (lambda p: w(over(p), "workload: unet3d_h100\n"), 1, "input-readable"),
    "overrides-ints": (lambda p: w(over(p), "- 1\n- 2\n"), 1, "input-readable"),
    "overrides-empty": (lambda p: w(over(p), ""), 1, "input-readable"),
    "overrides-non-utf8": (lambda p: w(over(p), b"- workload=\xc3\x28\n"), 1, "input-readable"),
    "config-tabs": (lambda p: w(p / "run1" / "configs" / "config.yaml", "workload:\n\tmodel: unet3d\n"), 1,
                    "input-readable"),
    "per-epoch-truncated": (lambda p: w(p / "run1" / "per_epoch_stats.json", '{"1": {'), 1, "input-readable"),
    "report-truncated": (report_trunc, 1, "input-readable"),
    "report-wrong-types": (report_wrong, 1, "integrity-report-schema"),
    "symlink-outside": (lambda p: link(outside_file(p), summary(p)), 1, "input-symlink-inside"),
    "symlink-dotdot-outside": (dotdot, 1, "input-symlink-inside"),
    "symlink-dir-outside": (dir_outside, 1, "input-symlink-inside"),
    "symlink-fifo-outside": (fifo_outside, 1, "input-symlink-inside"),
    "symlink-loop": (loop, 1, "input-symlink-inside"),
    "symlink-dangling": (dangling, 1, "input-readable"),
    "missing-summary": (lambda p: summary(p).unlink(), 1, "structure-summary-per-run"),
    "missing-run": (lambda p: __import__("shutil").rmtree(p / "run3"), 1, "structure-run-count"),
    "too-deep": (deep, 1, "input-readable"),
    "deeply-nested-json": (lambda p: w(summary(p), "[" * 100000 + "]" * 100000), 1, "input-readable"),
    "integer-too-long": (lambda p: w(summary(p), '{"num_files_train": ' + "1" * 5000 + "}"), 1, "input-readable"),
    "deeply-nested-yaml": (lambda p: w(over(p), "[" * 100000 + "]" * 100000), 1, "input-readable"),
    "deeply-indented-yaml": (lambda p: w(over(p), "".join(" " * i + f"a{i}:\n" for i in range(1500))), 1,
                             "input-readable"),
    "empty-run6-dir": (lambda p: (p / "run6").mkdir(), 1, "structure-summary-per-run"),
    "run-dir-with-empty-host": (lambda p: (p / "run7" / "c001").mkdir(parents=True), 1, "structure-run-count"),
    "empty-run-dir": (lambda p: [x.unlink() for x in (p / "run2").glob("*.json")], 1, "structure-summary-per-run"),
    # wrong verdicts: each of these passed as CLOSED
    "nan-in-au-list": (raw_replace("95.0,", "NaN,"), 1, "input-finite-numbers"),
    "inf-in-throughput-list": (raw_replace("3.1,", "Infinity,"), 1, "input-finite-numbers"),
    "minus-inf-in-au-list": (raw_replace("95.5,", "-Infinity,"), 1, "input-finite-numbers"),
    "nan-in-per-epoch-stats": (lambda p: w(p / "run1" / "per_epoch_stats.json", '{"1": {"duration": NaN}}'), 1,
                               "input-finite-numbers"),
    "nan-in-config-yaml": (config_edit("reader", "read_threads", float("nan")), 1, "input-finite-numbers"),
    "no-host-memory-100-files": (small_dataset(None), 1, "dataset-size-steps"),
    "zero-host-memory-100-files": (small_dataset([0.0]), 1, "dataset-size-steps"),
    "five-identical-runs": (copies, 1, "structure-runs-distinct-summaries"),
    "five-identical-runs-start": (copies, 1, "structure-runs-distinct-start"),
    "runs-out-of-order": (run_summary_edit(lambda d: d.update(start="2024-08-07T09:00:00")), 1,
                          "structure-runs-distinct-start"),
    "a100-relabelled-h100": (config_edit("train", "computation_time", 0.636), 1, "closed-effective-params"),
    "five-seconds-per-step": (config_edit("train", "computation_time", 5.0), 1, "closed-effective-params"),
    "batch-size-in-config-only": (config_edit("reader", "batch_size", 1), 1, "closed-effective-params"),
    "record-length-in-config-only": (config_edit("dataset", "record_length", 4096), 1, "closed-effective-params"),
    "negative-accelerators": (run_summary_edit(lambda d: d.update(num_accelerators=-36)), 1,
                              "structure-summary-schema"),
    "host-memory-1e308": (json_edit(summary, lambda d: d.__setitem__("host_memory_GB", [1e308, 1e308])), 1,
                          "dataset-size"),
    "throughput-1e308": (json_edit(summary, lambda d: d["metric"].__setitem__(
        "train_throughput_samples_per_second", [1e308, 1e308, 1e308])), 1, "integrity-throughput-mean"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_a_finding_not_a_traceback(tmp_path, run_cli, monkeypatch, name):
    mutate, code_expected, what = CASES[name]
    bench = dlio_benchmark(tmp_path / "in" / "bench")
    mutate(bench)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    code, out, err = run_cli("check", bench, "--format", "json")
    assert code == code_expected, err
    doc = json.loads(out)
    rule_ids = {f["rule_id"] for f in doc["findings"]} | {f["rule_id"] for b in doc["benchmarks"] for f in b["findings"]}
    assert what in rule_ids
    assert list(cwd.iterdir()) == []          # nothing written into the cwd
    assert '"secret": true' not in out and "secret\": true" not in out   # nothing read from outside PATH
    code, out, err = run_cli("check", bench)  # the text form works on it too
    assert code == code_expected and what in out and "verdict: CLOSED" not in out


def test_negative_accelerator_counts_are_a_finding_not_a_count(tmp_path):
    from suite.training.check import checker
    bench = dlio_benchmark(tmp_path / "bench")
    for k in range(1, 6):
        json_edit(lambda p: p / f"run{k}" / "summary.json", lambda d: d.update(num_accelerators=-36))(bench)
    result = checker.check(bench)
    assert "structure-summary-schema" in {f.rule_id for f in result.all_findings()}
    agg = result.benchmarks[0].aggregate
    assert agg is None or not str(agg["overall"].get("train_num_accelerators", "0")).startswith("-")


# whole-input errors: one line on stderr, exit 2
def _empty(tmp):
    (tmp / "empty").mkdir()
    return tmp / "empty"


def _file(tmp):
    (tmp / "f.txt").write_text("hello")
    return tmp / "f.txt"


def _only_junk(tmp):
    (tmp / "junk").mkdir()
    (tmp / "junk" / "notes.txt").write_text("x")
    return tmp / "junk"


def _root_link_loop(tmp):
    os.symlink(tmp / "b", tmp / "a")
    os.symlink(tmp / "a", tmp / "b")
    return tmp / "a"


ERRORS = {
    "missing-path": (lambda tmp: tmp / "nope", "expected an existing file or directory"),
    "empty-dir": (_empty, "expected run output"),
    "a-file": (_file, "expected a directory"),
    "no-run-output": (_only_junk, "expected run output"),
    "root-symlink-loop": (_root_link_loop, "expected an existing file or directory"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_unusable_input_is_one_line_exit_2(tmp_path, run_cli, name):
    build, text = ERRORS[name]
    code, out, err = run_cli("check", build(tmp_path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("suite check: error: ") and text in err


def test_usage_errors(tmp_path, run_cli):
    code, _, err = run_cli("check", tmp_path, "--ruleset", "v9")
    assert code == 2 and "invalid choice" in err and err.count("\n") == 1
    code, _, err = run_cli("check", tmp_path, "--format", "xml")
    assert code == 2


def test_output_is_written_where_asked_atomically(tmp_path, run_cli, monkeypatch):
    r = ours_results(tmp_path / "R", runs=5)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    target = tmp_path / "reports" / "check.json"
    target.parent.mkdir()
    code, out, err = run_cli("check", r, "--format", "json", "--output", target)
    assert code == 0 and f"wrote {target}" in out and err == ""
    doc = json.loads(target.read_text())
    assert doc["compliant"] is True and doc["benchmarks"][0]["aggregate"]["overall"]["num_benchmark_runs"] == 5
    assert list(cwd.iterdir()) == [] and sorted(p.name for p in target.parent.iterdir()) == ["check.json"]
    code, out, err = run_cli("check", r, "--output", tmp_path / "reports")           # a directory
    assert code == 2 and "expected a file path, got a directory" in err
    code, out, err = run_cli("check", r, "--output", tmp_path / "no" / "such" / "x.txt")
    assert code == 2 and "expected an existing directory" in err
    assert not (tmp_path / "no").exists()


def test_json_output_validates_against_its_schema(tmp_path, run_cli):
    from suite import files
    b = dlio_benchmark(tmp_path / "bench", au=(50.0, 60.0, 70.0))
    write_json(b / "mlperf_storage_report.json", {"overall": {}, "runs": {}})
    code, out, _ = run_cli("check", b, "--format", "json")
    assert code == 1 and files.schema_errors(json.loads(out), "check-result") == []
