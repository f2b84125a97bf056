"""DLIO as a second engine: `suite engine`, `suite run/datagen --engine dlio`, datasets both ways.

The tests that run DLIO itself need its venv (`suite engine install dlio`, about 1.7 GB from PyPI;
CI installs it before the tests) and skip with that command when it is absent. They are small
(a few files of a few hundred KB) but DLIO's start-up (TensorFlow's import) is 20-150 s a launch.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from suite import cli
from suite.engines import registry
from suite.training.engines import DLIO
from suite.training.data import formats
from suite.storage.backend.posix import PosixBackend

ENGINE = DLIO
DLIO_TIMEOUT_S = 900


def dlio_or_skip():
    if registry.installed(ENGINE) is None:
        pytest.skip(f"DLIO {ENGINE.version} is not installed in {registry.venv_dir(ENGINE)} "
                    f"(install it with: {ENGINE.install_command}; about 1.7 GB from PyPI)")


def one_line(code, err, needle):
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert needle in err, err


# --------------------------------------------------------------------------- without DLIO


def test_without_the_engine_one_line_says_how_to_install(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SUITE_ENGINES_DIR", str(tmp_path / "engines"))
    (tmp_path / "data").mkdir()     # results beside the data, not inside it (refused since issue 24)
    code, _, err = run_cli("run", "--engine", "dlio", "--workload", "unet3d", "--accelerators", 1, "--data-dir",
                           tmp_path / "data", "--division", "open", "--results-dir", tmp_path / "r")
    one_line(code, err, f"expected dlio 2.0.0 installed in {tmp_path / 'engines' / 'dlio-2.0.0'}, got nothing "
                        f"(run: suite engine install dlio; about 1.7 GB from PyPI)")
    assert not (tmp_path / "r").exists()
    code, _, err = run_cli("datagen", "--engine", "dlio", "--workload", "unet3d", "--files", 2, "--data-dir", tmp_path / "d")
    one_line(code, err, "suite engine install dlio")
    code, out, _ = run_cli("engine", "list")
    assert code == 0 and "not installed (suite engine install dlio)" in out and str(tmp_path / "engines") in out
    (tmp_path / "engines" / "dlio-2.0.0" / "bin").mkdir(parents=True)       # an interrupted install
    code, out, _ = run_cli("engine", "list", "--format", "json")
    assert code == 0 and json.loads(out)[1]["status"] == "incomplete"
    one_line(*run_cli("run", "--engine", "dlio", "--workload", "unet3d", "--accelerators", 1, "--data-dir", tmp_path,
                      "--division", "open")[::2], "got an incomplete install")


def test_engine_for_tpcx_ai_is_refused(run_cli):
    one_line(*run_cli("run", "--workload", "tpcx-ai", "--engine", "dlio")[::2], "expected suite for tpcx-ai")


def test_engine_install_runs_with_the_standard_library_only():
    """CI runs `python3 -m suite engine install dlio` before our dependencies exist: the kinds registered
    (their engines are theirs: suite/<kind>/engines.py), every engine known, nothing heavy imported."""
    code = ("import sys, suite.cli\n"
            "from suite.commands import engine\n"
            "engine.add_parser(__import__('argparse').ArgumentParser().add_subparsers())\n"
            "from suite.engines import registry\n"
            "assert registry.names() == ['dlio', 'diskann', 'milvus'], registry.names()\n"
            "heavy = {'yaml', 'jsonschema', 'numpy', 'mpi4py', 'h5py'} & {m.split('.')[0] for m in sys.modules}\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


def test_tfrecord2idx_shim_indexes_every_record(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").symlink_to(sys.executable)
    registry.write_shims(tmp_path, DLIO)
    data = tmp_path / "a.tfrecord"
    with PosixBackend(tmp_path).create(data.name, atomic=False) as out:
        sink = formats.Sink(out, formats.Content(1), 0)
        formats.write_tfrecord(sink, [100, 300, 50])
        sink.flush()
        out.commit()
    subprocess.run([str(tmp_path / "bin" / "tfrecord2idx"), str(data), str(tmp_path / "a.idx")], check=True)
    rows = [tuple(map(int, ln.split())) for ln in (tmp_path / "a.idx").read_text().splitlines()]
    assert [r[0] for r in rows] == [0, rows[0][1], rows[0][1] + rows[1][1]]
    assert sum(r[1] for r in rows) == data.stat().st_size


def test_dlio_ranks_nap_between_idle_mpi_polls_unless_the_user_says(monkeypatch):
    """MPICH busy-polls in DLIO's blocking MPI calls; its ranks get the progress throttle (a user's value wins)."""
    from suite.training.run import dlio

    monkeypatch.delenv("MPIR_CVAR_CH4_PROGRESS_THROTTLE", raising=False)
    assert dlio.environment(Path("/venv"))["MPIR_CVAR_CH4_PROGRESS_THROTTLE"] == "1"
    monkeypatch.setenv("MPIR_CVAR_CH4_PROGRESS_THROTTLE", "0")
    assert dlio.environment(Path("/venv"))["MPIR_CVAR_CH4_PROGRESS_THROTTLE"] == "0"


# --------------------------------------------------------------------------- with DLIO

SETS = {   # small: a few files, short records; batch and epochs cut (open division, non-compliant by size)
    "unet3d": ["--param", "dataset.record_length=200000", "--param", "dataset.record_length_stdev=20000"],
    "resnet50": ["--param", "dataset.record_length=10000", "--param", "dataset.num_samples_per_file=8"],
    "cosmoflow": ["--param", "dataset.record_length=20000", "--param", "dataset.record_length_stdev=1000"],
}


def suite_cli(*argv) -> tuple[int, str]:
    """`suite ...` (cli.main) in this process, what it says captured (DLIO's own output goes to its log; the
    test reads the files it wrote): (exit code, stdout + stderr). DLIO runs in its own processes either way;
    a child `python -m suite` per call only added its start-up (usable inside a session fixture, unlike
    run_cli's capsys)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as exc:       # argparse usage errors
            code = exc.code
    return code, out.getvalue() + err.getvalue()


@pytest.fixture(scope="module")
def dlio_data(tmp_path_factory):
    """DLIO's own generator (`suite datagen --engine dlio`, 1 rank: start-up is the cost) for the three
    workloads, made once a session across xdist's workers (tests/conftest.py `once`)."""
    from tests.conftest import once

    dlio_or_skip()
    return once(tmp_path_factory, "dlio-data", _dlio_data)


def _dlio_data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dlio-data")
    for name, params in SETS.items():
        code, out = suite_cli("datagen", "--engine", "dlio", "--workload", name, "--files", 4, "--processes", 1,
                              "--data-dir", root / name, *params)
        assert code == 0, out
    return root


@pytest.fixture(scope="module")
def suite_run_of(dlio_data, tmp_path_factory):
    """`suite run` (our runner) of one workload on DLIO's data, made once per workload a session (across
    xdist's workers too): (exit code, output, results dir). The generation-log test reads the unet3d one (a
    copy)."""
    from tests.conftest import once

    made = {}

    def make(name, factory):
        results = factory.mktemp(f"run-{name}") / "r"
        batch = ["--param", "reader.batch_size=2"]                # 4 files: a step of 2, not unet3d's 7
        code, out = suite_cli("run", "--workload", name, "--accelerators", 1, "--data-dir", dlio_data / name,
                              "--division", "open", "--runs", 1, "--memory-limit", "2GiB", "--results-dir",
                              results, "--param", "train.epochs=1", *SETS[name], *batch)
        return code, out, results

    def run(name):
        if name not in made:
            made[name] = once(tmp_path_factory, f"dlio-suite-run-{name}", lambda factory: make(name, factory))
        return made[name]

    return run


@pytest.mark.timeout(DLIO_TIMEOUT_S)
@pytest.mark.parametrize("name", sorted(SETS))
def test_dlio_generated_data_runs_under_suite(dlio_data, suite_run_of, name):
    data = dlio_data / name
    assert {"datagen", "train", "valid"} <= {p.name for p in data.iterdir()}
    assert not (data / "generation_log.json").exists()
    code, out, results = suite_run_of(name)
    doc = json.loads((results / "run-1" / "results.json").read_text())
    assert code == 1 and doc["status"] == "complete", out        # 1: non-compliant (a tiny dataset)
    assert doc["dataset"]["generator"] == "dlio" and doc["dataset"]["generation_log"] is None
    assert doc["dataset"]["files_scanned"] == 4 and doc["epochs"][0]["bytes_read"] > 0


@pytest.mark.timeout(DLIO_TIMEOUT_S)
def test_suite_check_takes_dlio_datagen_output_as_the_generation_log(dlio_data, suite_run_of, tmp_path, run_cli):
    import shutil

    code, out, results = suite_run_of("unet3d")
    assert code == 1, out
    tree = Path(shutil.copytree(results, tmp_path / "results", symlinks=True))
    shutil.copytree(dlio_data / "unet3d" / "datagen", tree / "datagen")
    from suite.layouts.benchdirs import tree as layout

    bench = layout.discover_tree(tree).benchmarks[0]
    logs = [(g.path.name, g.model, g.accelerator) for g in bench.generation_logs]
    assert logs == [("datagen", "unet3d", "h100")] and len(bench.runs) == 1
    code, out, err = run_cli("check", tree)
    assert code == 1, out + err


@pytest.mark.timeout(DLIO_TIMEOUT_S)
def test_suite_data_runs_under_dlio_with_two_ranks_enforced(tmp_path, run_cli):
    dlio_or_skip()
    data, results = tmp_path / "ours", tmp_path / "r"
    code, out = suite_cli("datagen", "--workload", "unet3d", "--files", 8, "--processes", 1, "--data-dir", data,
                          *SETS["unet3d"])     # 8 small files: one generator, not one a core
    assert code == 0 and (data / "valid").is_dir(), out
    code, out = suite_cli("run", "--engine", "dlio", "--workload", "unet3d", "--accelerators", 2, "--data-dir", data,
                          "--division", "open", "--runs", 1, "--memory-limit", "8GiB", "--results-dir", results,
                          "--param", "train.epochs=2", "--param", "reader.batch_size=2", *SETS["unet3d"])
    run = results / "run-1"
    doc = json.loads((run / "results.json").read_text())
    assert code == 1 and doc["status"] == "complete", out               # 1: non-compliant (a tiny dataset)
    assert doc["engine"]["name"] == "dlio" and doc["versions"]["dlio"] == "2.0.0"
    assert "tensorflow" in doc["engine"]["framework"] and doc["engine"]["startup_s"] > 0
    ev = doc["enforcement"]
    assert ev["cache_drop"]["succeeded"] and ev["memory_limit"]["applied_bytes"] == 8 * 1024**3
    assert ev["memory_limit"]["removed"] and ev["memory_limit"]["peak_bytes"] > 100 * 1024**2
    assert not os.path.exists(ev["memory_limit"]["path"])
    summary = json.loads((run / "summary.json").read_text())           # DLIO's own, as it wrote it
    assert summary["num_accelerators"] == 2 and len(summary["metric"]["train_au_percentage"]) == 2
    assert doc["metric"]["train_au_mean_percentage"] == summary["metric"]["train_au_mean_percentage"]
    assert (run / "0_output.json").is_file() and (run / "1_output.json").is_file()
    assert "- workload=unet3d_h100" in (run / "configs" / "overrides.yaml").read_text()
    assert doc["dataset"]["generator"] == "suite" and (data / "train").is_dir()   # DLIO kept our files
    code, out, err = run_cli("check", results, "--format", "json")
    findings = json.loads(out)["benchmarks"][0]["findings"]
    rules = {f["rule_id"] for f in findings}
    assert code == 1 and "ours-steps-present" not in rules and not any("unreadable" in r for r in rules), rules
    assert {"structure-run-count", "dataset-size"} <= rules
    code, out, err = run_cli("metrics", results)
    assert code == 0 and "run-1" in out, out + err


def test_dlio_datagen_output_run_directly_is_a_generation_log(tmp_path):
    """DLIO run by hand keeps Hydra's default `.hydra/` (not `configs/`): still its benchmark's generation log."""
    from suite.layouts.benchdirs import tree as layout

    run = tmp_path / "R" / "run-1" / "configs"
    run.mkdir(parents=True)
    (run / "overrides.yaml").write_text("- workload=unet3d_h100\n- ++workload.dataset.num_files_train=8\n")
    (run.parent / "summary.json").write_text('{"num_accelerators": 1}')   # a run, not an aborted dir (issue 9)
    gen = tmp_path / "R" / "hydra_log" / "unet3d" / "2026-11-22-22-56-23"
    (gen / ".hydra").mkdir(parents=True)
    (gen / ".hydra" / "overrides.yaml").write_text(
        "- workload=unet3d_h100\n- ++workload.workflow.generate_data=True\n- ++workload.workflow.train=False\n"
        "- ++workload.dataset.num_files_train=8\n")
    (gen / ".hydra" / "config.yaml").write_text("workload:\n  model: unet3d\n  workflow: {generate_data: true}\n")
    (gen / "dlio.log").write_text("[INFO] Generation done\n")
    tree = layout.discover_tree(tmp_path / "R")
    assert [(g.path, g.model, g.accelerator) for g in tree.benchmarks[0].generation_logs] == [(gen, "unet3d", "h100")]
    assert len(tree.benchmarks[0].runs) == 1
