"""The command line says what the docs say (issue 38): install hints name the checkout's extras, not a
PyPI package; `suite datagen` has one default data dir for every kind; --accelerator-type's help lists
every type the workload files define, read from them."""

import re
from pathlib import Path

from suite.storage import workloads

REPO = Path(__file__).resolve().parents[2]


def test_no_install_hint_names_a_pypi_package_the_docs_never_install():
    """README installs from the checkout (`pip install .`, `pip install '.[tpcx-ai]'`): an error that says
    `pip install 'suite[s3]'` sends the user to PyPI, where no such package is ours."""
    found = [f"{p.relative_to(REPO)}: {m}" for p in sorted((REPO / "suite").rglob("*.py"))
             for m in re.findall(r"pip install [\"']?suite\[[\w-]+\]", p.read_text())]
    assert found == []


def test_the_s3_extra_hint_is_the_one_the_docs_give():
    text = (REPO / "suite" / "storage" / "backend" / "s3io.py").read_text()
    assert "pip install '.[s3]'" in text
    assert "pip install -e \".[s3]\"" in (REPO / "docs" / "object-storage.md").read_text()


def test_accelerator_type_help_lists_every_type_the_workload_files_define(run_cli):
    defined = {t for name, path in workloads.paths().items() if workloads.benchmark_of(path) == "training"
               for t in workloads.load(name, "workload", "training")["accelerators"]}
    assert {"b200", "mi355", "h100", "a100", "v100"} <= defined
    for command in ("run", "datagen", "datasize"):
        code, out, err = run_cli(command, "--help")
        helptext = " ".join(out.split())
        assert code == 0 and "unet3d a100|b200|h100|v100" in helptext and "retinanet b200|mi355" in helptext, out
        assert all(t in helptext for t in defined)


def test_the_help_reads_accelerators_as_the_schema_checked_load_does():
    for name, path in workloads.paths().items():
        kind = workloads.benchmark_of(path)
        if kind in ("training", "checkpointing"):
            schema = {"training": "workload", "checkpointing": "checkpoint-workload"}[kind]
            assert workloads.accelerator_types(path) == sorted(workloads.load(name, schema, kind).get("accelerators") or []), name


def test_datagen_without_data_dir_writes_the_vector_dataset_where_run_reads_it(run_cli, tmp_path, monkeypatch):
    from suite.vector_database import workload

    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("datagen", "--workload", "vdb-mini")
    assert code == 0, err
    assert (tmp_path / workload.default_data_dir("vdb-mini") / "dataset.json").is_file()
    assert workload.default_data_dir("vdb-mini") == Path("results/data/vdb-mini")


def test_datagen_without_data_dir_writes_a_training_dataset_under_results_data(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("datagen", "--workload", "unet3d", "--files", 2, "--processes", 1,
                             "--param", "dataset.record_length=100000", "--param", "dataset.record_length_stdev=0")
    assert code == 0, err
    assert len(list((tmp_path / "results" / "data" / "unet3d" / "train").iterdir())) == 2
    assert (tmp_path / "results" / "data" / "unet3d" / "generation_log.json").is_file()
