"""The bad-input corpus for where commands write and what they are pointed at: `suite run
--results-dir`, `suite datagen --data-dir`, `suite report` / `check --output` on trees with
non-UTF-8 names, values past float range, a full file system. Each case: a one-line error and
exit 2 (or a finding), never a traceback, nothing written where it was refused."""

import errno
import os
import shutil
import time

import pytest

from check_builders import dlio_benchmark, edit_json

RUN = ["run", "--workload", "unet3d", "--accelerators", "1", "--division", "open"]
DATAGEN = ["datagen", "--workload", "unet3d", "--accelerator-type", "h100"]


def one_line_exit_2(code, err, needle):
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert needle.lower() in err.lower(), err


def snapshot(root):
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*"))


# --------------------------------------------------------------------------- suite run --results-dir

def _earlier_run(r):
    (r / "run-1").mkdir(parents=True)
    (r / "run-1" / "summary.json").write_text("{}")
    (r / "run_set.json").write_text("{}")


def _a_file(r):
    r.parent.mkdir(parents=True, exist_ok=True)
    r.write_text("notes")


def _under_a_file(r):
    r.parent.parent.mkdir(parents=True, exist_ok=True)
    r.parent.write_text("x")                 # res/f is a file: res/f/r cannot be made


def _one_user_file(r):
    r.mkdir(parents=True)
    (r / "thesis.tex").write_text("mine")


RESULTS_DIR_CASES = [
    ("earlier-run", _earlier_run, "r", "expected a new or empty directory"),
    ("user-file", _one_user_file, "r", "expected a new or empty directory"),
    ("a-file", _a_file, "r", "got a file"),
    ("under-a-file", _under_a_file, "f/r", "expected a writable location"),
    ("proc", None, "/proc/suite-results", "expected a"),
]


@pytest.mark.parametrize("case", RESULTS_DIR_CASES, ids=[c[0] for c in RESULTS_DIR_CASES])
def test_results_dir_refused_before_any_run(run_cli, tmp_path, case):
    _, build, rel, needle = case
    r = tmp_path / "res" / rel if not rel.startswith("/") else __import__("pathlib").Path(rel)
    if build:
        build(r)
    before = snapshot(tmp_path)
    code, out, err = run_cli(*RUN, "--data-dir", tmp_path / "data", "--results-dir", r)
    one_line_exit_2(code, err, needle)
    assert snapshot(tmp_path) == before


# --------------------------------------------------------------------------- suite datagen --data-dir

def _foreign(d):
    d.mkdir()
    (d / "photos").mkdir()
    (d / "photos" / "a.jpg").write_text("x")


def _foreign_file(d):
    d.mkdir()
    (d / "README").write_text("x")


DATA_DIR_CASES = [
    ("fs-root", None, "/", ["--files", "2"], "file-system root"),
    ("fs-root-dotdot", None, "/tmp/../", ["--files", "2"], "file-system root"),
    ("foreign-dir", _foreign, "d", ["--files", "2"], "expected a new or empty directory"),
    ("foreign-file", _foreign_file, "d", ["--files", "2"], "expected a new or empty directory"),
    ("a-file", lambda d: d.write_text("x"), "d", ["--files", "2"], "got a file"),
    ("million-files", None, "d", ["--files", "1000000000"], "free space"),
    ("host-memory-1PiB", None, "d", ["--accelerators", "1", "--host-memory", "1PiB"], "free space"),
]


@pytest.mark.parametrize("case", DATA_DIR_CASES, ids=[c[0] for c in DATA_DIR_CASES])
def test_data_dir_refused_before_writing(run_cli, tmp_path, case):
    _, build, rel, argv, needle = case
    d = tmp_path / rel if not rel.startswith("/") else __import__("pathlib").Path(rel)
    if build:
        build(d)
    before = snapshot(tmp_path)
    root_before = sorted(os.listdir("/"))
    t0 = time.monotonic()
    code, out, err = run_cli(*DATAGEN, "--data-dir", d, *argv)
    one_line_exit_2(code, err, needle)
    assert time.monotonic() - t0 < 20            # arithmetic, not per-file work (was 73 s, or a hang)
    assert snapshot(tmp_path) == before and sorted(os.listdir("/")) == root_before


def test_an_earlier_dataset_of_ours_is_still_accepted(run_cli, tmp_path):
    d = tmp_path / "d"
    argv = ["datagen", "--workload", "cosmoflow", "--accelerator-type", "h100", "--data-dir", d, "--files", "2"]
    assert run_cli(*argv)[0] == 0
    assert run_cli(*argv)[0] == 0                # train/ and generation_log.json: ours


# --------------------------------------------------------------------------- non-UTF-8 names, float range, ENOSPC

def _non_utf8_tree(tmp_path):
    """run5 renamed run\xff5, with an edited AU mean so that findings name its path."""
    b = dlio_benchmark(tmp_path / "in" / "bench")
    edit_json(b / "run5" / "summary.json", lambda d: d["metric"].update(train_au_mean_percentage=99.0))
    os.rename(os.fsencode(b / "run5"), os.fsencode(b) + b"/run\xff5")
    return b


def test_non_utf8_run_dir_name_in_check_output_and_report(run_cli, tmp_path):
    b = _non_utf8_tree(tmp_path)
    for fmt in ("text", "json"):
        code, out, err = run_cli("check", b, "--format", fmt, "--output", tmp_path / f"check.{fmt}")
        assert code in (0, 1) and "Traceback" not in err, err
        text = (tmp_path / f"check.{fmt}").read_text(encoding="utf-8")
        assert "\\xff" in text or "\\udcff" in text
    code, out, err = run_cli("report", b, "--out", tmp_path / "rep")
    assert code == 0, err
    assert (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    code, out, err = run_cli("check", b)
    assert "\udcff" not in out and "\\xff" in out


def _set_tp(value):
    return lambda d: d["metric"].update(train_throughput_samples_per_second=[value] * 3,
                                        train_throughput_mean_samples_per_second=value)


FLOAT_RANGE_CASES = [
    ("throughput-1e308", lambda b: edit_json(b / "run1" / "summary.json", _set_tp(1e308))),
    ("throughput-1e308-every-run", lambda b: [edit_json(b / f"run{k}" / "summary.json", _set_tp(1e308))
                                              for k in range(1, 6)]),
    ("throughput-max-float", lambda b: edit_json(b / "run2" / "summary.json", _set_tp(1.7976931348623157e308))),
    ("host-memory-1e308", lambda b: edit_json(b / "run1" / "summary.json",
                                              lambda d: d.update(host_memory_GB=[1e308, 1e308]))),
    ("throughput-tiny", lambda b: edit_json(b / "run1" / "summary.json", _set_tp(5e-324))),
]


@pytest.mark.parametrize("case", FLOAT_RANGE_CASES, ids=[c[0] for c in FLOAT_RANGE_CASES])
@pytest.mark.parametrize("command", ["check", "metrics", "report"])
def test_values_past_float_range_are_no_traceback(run_cli, tmp_path, case, command):
    b = dlio_benchmark(tmp_path / "in" / "bench")
    case[1](b)
    argv = [command, b] + (["--out", tmp_path / "out"] if command == "report" else [])
    code, out, err = run_cli(*argv)
    assert code in (0, 1) and "Traceback" not in err, err
    if command == "check":
        assert code == 1 and "verdict: CLOSED" not in out


def test_report_on_a_full_file_system_is_one_line(run_cli, tmp_path, monkeypatch):
    from suite.report import export

    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(export, "write_atomic", full)
    b = dlio_benchmark(tmp_path / "in" / "bench")
    code, out, err = run_cli("report", b, "--out", tmp_path / "out")
    one_line_exit_2(code, err, "No space left on device")
    assert not (tmp_path / "out").exists() and [p.name for p in tmp_path.iterdir()] == ["in"]


def test_check_output_on_a_full_file_system_is_one_line(run_cli, tmp_path, monkeypatch):
    from suite import files

    def full(path, data, **_):         # the disk is what is faked, not the writer
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(files, "write_atomic", full)
    b = dlio_benchmark(tmp_path / "in" / "bench")
    code, out, err = run_cli("check", b, "--output", tmp_path / "c.txt")
    one_line_exit_2(code, err, "No space left on device")


def test_corpus_size():
    assert len(RESULTS_DIR_CASES) + len(DATA_DIR_CASES) + 3 * len(FLOAT_RANGE_CASES) + 5 >= 25
